"""The per-chapter tests of exercises written as data (``observe``, ``judge``, ``MISTAKES``).

A chapter's test module describes how to build the key's namespace and asks for the tests::

    from tests.course.exercise_data import Chapter, chapter_tests

    CHAPTER = Chapter("01_derivatives.ipynb", "ch01")
    globals().update(chapter_tests(CHAPTER))

Each concern is one test, parameterised over the chapter's declared data:

* every graded cell of the key has an exercise module, written as ``observe`` and ``judge``,
  whose hints all come from the chapter's catalog;
* the key passes, with and without hidden cases, after the observations' JSON round trip;
* each declared mistake (applied to the key's code cell) fails exactly the parts it declares,
  with the catalog's hint in the message;
* isolation: every *other* exercise keeps full marks under that mistake.
"""
from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from autograd_lab.course.exercises._exercise import Mistake, judge_record
from autograd_lab.course.exercises._observe import Observer
from autograd_lab.course.exercises._parts import PartsFailed
from autograd_lab.course.exercises.verdict import graded_calls

from ._checker_helpers import ROOT

SEEDS = [(0, False), (11, True), (2024, True)]


@dataclass
class Chapter:
    """One chapter's key notebook and checker package, and how to build its namespace.

    ``namespace(cells)`` runs the key's code cells (the ones ``keep`` selects, already mutated)
    and returns the namespace; the default executes them with ``exec`` in order."""

    notebook: str
    package: str
    keep: Callable[[dict], bool] = field(default=lambda cell: True)
    namespace: Callable[[list[str]], dict[str, Any]] | None = None
    keywords: bool = False
    """Whether the checks get the graded call's keyword objects (``Module=Module``) from the
    namespace; without, ``observe`` finds what it needs as the chapter's own tests arrange."""
    depends: dict[str, set[str]] = field(default_factory=dict)
    """Exercise id -> the exercises whose learner's code it runs, as the notebook builds it
    (hvp on the learner's grad): a mistake in one of those may cost it points."""

    @property
    def module(self) -> Any:
        return importlib.import_module(f"autograd_lab.course.exercises.{self.package}")

    def cells(self) -> list[dict]:
        data = json.loads((ROOT / "solutions" / self.notebook).read_text(encoding="utf-8"))
        return data["cells"]

    def graded(self) -> dict[str, str]:
        """Exercise id -> the source of its graded cell."""
        return {meta["grade_id"]: "".join(c["source"]) for c in self.cells()
                if (meta := c.get("metadata", {}).get("nbgrader", {})).get("grade")
                and c["cell_type"] == "code"}

    def run_key(self, mistake: Mistake | None = None, exercise: str | None = None
                ) -> dict[str, Any]:
        """The key's namespace, with ``mistake`` applied to ``exercise``'s code cell."""
        sources = []
        applied = 0
        for cell in self.cells():
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell["cell_type"] != "code" or meta.get("grade") or not self.keep(cell):
                continue
            source = "".join(cell["source"])
            if mistake is not None and meta.get("grade_id") == f"{exercise}-code":
                old, new = mistake.replace
                applied = source.count(old)
                source = source.replace(old, new)
            sources.append(source)
        if mistake is not None:
            assert applied == 1, (f"the mistake {mistake.name!r} of {exercise} should replace "
                                  f"one place of the key's code cell; it matches {applied}")
        if self.namespace is not None:
            return self.namespace(sources)
        ns: dict[str, Any] = {"__name__": "__key__"}
        for source in sources:
            exec(compile(_without_magics(source), "<key cell>", "exec"), ns)
        return ns


def solution_cell(cell: dict) -> bool:
    """A ``keep`` for :class:`Chapter`: only the key's solution cells."""
    return bool(cell["metadata"].get("nbgrader", {}).get("solution", False))


def library_namespace(sources: list[str]) -> dict[str, Any]:
    """A ``namespace`` for :class:`Chapter`: the key's cells run on autograd_lab's ``Variable``
    and ``Function`` (the library the checks build their inputs with by default)."""
    import numpy as np

    import autograd_lab as al
    ns: dict[str, Any] = {"__name__": "__key__", "np": np, "Variable": al.Variable,
                          "Function": al.Function}
    for source in sources:
        exec(compile(_without_magics(source), "<key cell>", "exec"), ns)
    return ns


def _without_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


class Objects(list):
    """The objects a graded cell passes to its checker: positional ones, and ``named``."""

    named: dict[str, Any]


def arguments(source: str, exercise: str, ns: dict[str, Any]) -> Objects:
    """The objects the graded cell's visible call passes to its checker, looked up in ``ns``
    (keyword objects such as ``Module=Module`` too; ``seed`` and ``hidden`` are the test's)."""
    name = exercise.replace("-", "_")
    visible = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", source, flags=re.S)
    match = re.search(rf"check\.{name}\(([^)]*)\)", visible)
    assert match, f"the graded cell of {exercise} does not call check.{name}"
    found = Objects()
    found.named = {}
    for arg in (a.strip() for a in match.group(1).split(",") if a.strip()):
        key, _, value = arg.partition("=")
        if not value:
            found.append(ns[key])
        elif key.strip() not in ("seed", "hidden"):
            found.named[key.strip()] = ns.get(value.strip())
    return found


def verdict(module: Any, objects: list[Any], seed: int, hidden: bool,
            named: dict[str, Any] | None = None) -> tuple[set[str], str]:
    """The parts the judge fails (after the JSON round trip) and its message."""
    ob = Observer(module.ID, seed, hidden)
    module.observe(ob, *objects, seed=seed, hidden=hidden, **(named or {}))
    try:
        judge_record(module, ob.record())
    except PartsFailed as err:
        return set(err.failed), str(err)
    except (AssertionError, NotImplementedError) as err:
        return set(module.PARTS) or {None}, str(err)
    return set(), ""


def chapter_tests(chapter: Chapter) -> dict[str, Callable[..., None]]:
    """The parameterised tests of one chapter (see the module docstring)."""

    def judged(exercise_id: str, ns: dict[str, Any], graded: dict[str, str], seed: int = 11,
               hidden: bool = True) -> tuple[set[str], str]:
        objects = arguments(graded[exercise_id], exercise_id, ns)
        return verdict(exercises[exercise_id], objects, seed, hidden,
                       objects.named if chapter.keywords else None)

    package = chapter.module
    exercises = {m.ID: m for m in package.EXERCISES}
    mistakes = [(m.ID, k) for m in package.EXERCISES for k in m.MISTAKES]
    hints = importlib.import_module(f"{package.__name__}.messages").HINTS

    def test_every_graded_cell_is_an_exercise_written_as_data() -> None:
        graded = chapter.graded()
        assert set(graded) == set(exercises)
        for exercise_id, source in graded.items():
            module = exercises[exercise_id]
            assert callable(module.observe) and callable(module.judge)
            assert graded_calls(source, exercise_id), exercise_id
            assert all(k.hint in hints for k in module.MISTAKES), exercise_id
            assert all(k.failed_parts <= set(module.PARTS or (None,))
                       for k in module.MISTAKES), exercise_id
        assert sum(len(m.MISTAKES) for m in package.EXERCISES) >= len(exercises)

    @pytest.mark.parametrize("seed,hidden", SEEDS)
    @pytest.mark.parametrize("exercise_id", sorted(exercises))
    def test_the_key_passes(exercise_id: str, seed: int, hidden: bool) -> None:
        failed, message = judged(exercise_id, chapter.run_key(), chapter.graded(), seed, hidden)
        assert not failed, message

    @pytest.mark.parametrize("exercise_id,mistake", mistakes,
                             ids=[f"{e}:{k.name}" for e, k in mistakes])
    def test_a_declared_mistake_fails_its_part_with_its_hint(exercise_id: str,
                                                             mistake: Mistake) -> None:
        failed, message = judged(exercise_id, chapter.run_key(mistake, exercise_id),
                                 chapter.graded())
        assert failed == set(mistake.failed_parts), message
        assert hints[mistake.hint] in message, message

    @pytest.mark.parametrize("exercise_id,mistake", mistakes,
                             ids=[f"{e}:{k.name}" for e, k in mistakes])
    def test_a_mistake_costs_no_other_exercise_a_point(exercise_id: str,
                                                       mistake: Mistake) -> None:
        ns = chapter.run_key(mistake, exercise_id)
        graded = chapter.graded()
        for other_id in exercises:
            if other_id == exercise_id or exercise_id in chapter.depends.get(other_id, ()):
                continue
            failed, message = judged(other_id, ns, graded)
            assert not failed, f"{mistake.name} in {exercise_id} costs {other_id}: {message}"

    return {f.__name__: f for f in (test_every_graded_cell_is_an_exercise_written_as_data,
                                    test_the_key_passes,
                                    test_a_declared_mistake_fails_its_part_with_its_hint,
                                    test_a_mistake_costs_no_other_exercise_a_point)}
