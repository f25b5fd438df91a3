"""Chapter 06's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's ``%%mygrad`` cells run, in order, in the globals of a fresh copy of the key's
``mygrad.grad_mode`` (as the magic runs them in the learner's package); the plain solution cells
(``train_step``, ``predictions``) run in the same namespace, which also holds ``al``, ``np`` and
the package as ``mygrad``."""
from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises._exercise import judge_record
from autograd_lab.course.exercises._observe import Observer
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package
from tests.course.exercise_data import Chapter, chapter_tests


def _keep(cell: dict) -> bool:
    source = "".join(cell["source"])
    return bool(cell["metadata"].get("nbgrader", {}).get("solution", False)
                or source.startswith("%%mygrad"))


def _namespace(sources: list[str]) -> dict[str, Any]:
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 6}
    pkg = build_package(files)
    namespace = dict(vars(pkg.grad_mode))
    namespace.update(al=al, np=np, mygrad=pkg)
    for source in sources:
        if source.startswith("%%mygrad"):
            source = source.split("\n", 1)[1]
        exec(compile(source, "<key cell>", "exec"), namespace)  # noqa: S102 - the key's cells
    return namespace


class _Chapter(Chapter):
    """The graded cells without their hidden block: this notebook's cells call the checker
    before the hidden block, and ``arguments`` reads the call after it."""

    def graded(self) -> dict[str, str]:
        return {grade_id: re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", source,
                                 flags=re.S)
                for grade_id, source in super().graded().items()}


CHAPTER = _Chapter("06_grad_modes_inplace.ipynb", "ch06", keep=_keep, namespace=_namespace)

globals().update(chapter_tests(CHAPTER))


def test_a_kernel_that_patches_numpy_and_the_checker_changes_no_verdict(monkeypatch):
    """An uphill train_step, observed in a kernel whose numpy.allclose and Checker always agree:
    the judge, run afterwards with neither patch, still fails it (the grader finds the module)."""
    from autograd_lab.course.exercises import _common
    from autograd_lab.course.exercises.ch06 import train_step
    from autograd_lab.course.exercises.verdict import exercise_module
    from tests.course.exercise_data import arguments, verdict

    mistake = next(k for k in train_step.MISTAKES if k.name == "uphill")
    ns = CHAPTER.run_key(mistake, train_step.ID)
    objects = arguments(CHAPTER.graded()[train_step.ID], train_step.ID, ns)
    assert exercise_module(train_step.ID) is train_step
    with monkeypatch.context() as patched:
        patched.setattr(np, "allclose", lambda *args, **kwargs: True)
        patched.setattr(_common.Checker, "check", lambda *args, **kwargs: None)
        patched.setattr(_common.Checker, "close", lambda *args, **kwargs: None)
        ob = Observer(train_step.ID, 11, True)
        train_step.observe(ob, *objects, seed=11, hidden=True)
    record = ob.record()
    with pytest.raises(AssertionError, match="stepped uphill"):
        judge_record(train_step, record)
    assert verdict(train_step, objects, 11, True)[0] == {None}
