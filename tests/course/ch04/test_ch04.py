"""Chapter 04's exercises written as data (see ``tests/course/exercise_data.py``).

ch04-engine-backward, still a classic checker, is tested in tests/course/test_exercises_ch04.py
only; until it is converted, the test that every graded cell is an exercise written as data is
replaced by one over the converted exercises."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package

from tests.course.exercise_data import Chapter, chapter_tests


@dataclass
class _Chapter(Chapter):
    """Chapter 04's graded cells call the checker before their hidden block, which the shared
    ``arguments`` does not look at: it reads the cells without that block."""

    def graded(self) -> dict[str, str]:
        return {k: re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", v, flags=re.S)
                for k, v in super().graded().items()}


def _namespace(sources: list[str]) -> dict[str, Any]:
    """The key's solution cells run: the Scalar ones as plain code, the ``%%mygrad engine``
    ones in the namespace of a mygrad built from the course's variable, function and engine
    modules (so that they replace the engine's functions, as the magic does)."""
    pkg = build_package({name: REF / f"{name}.py" for name in ("variable", "function", "engine")})
    engine = dict(vars(pkg.engine))
    ns: dict[str, Any] = {"__name__": "__key__", "mygrad": pkg}
    for source in sources:
        lines = source.splitlines()
        if lines and lines[0].startswith("%%mygrad"):
            exec(compile("\n".join(lines[1:]), "<key cell>", "exec"), engine)
        else:
            exec(compile(source, "<key cell>", "exec"), ns)
    ns.update({k: v for k, v in engine.items() if k in _ENGINE_NAMES})
    return ns


_ENGINE_NAMES = ("topological_order", "register_hook", "retain_grad", "_run_hooks")
"""The engine's names the graded cells pass (its ``backward`` would hide the Scalar one)."""
REF = REFERENCE_ROOT / PACKAGE

CHAPTER = _Chapter("04_engine.ipynb", "ch04", keep=lambda cell: cell["metadata"].get(
    "nbgrader", {}).get("solution", False), namespace=_namespace)

_TESTS = chapter_tests(CHAPTER)
globals().update({k: v for k, v in _TESTS.items()
                  if k != "test_every_graded_cell_is_an_exercise_written_as_data"})


def test_every_converted_exercise_is_written_as_data() -> None:
    from autograd_lab.course.exercises.ch04 import EXERCISES
    from autograd_lab.course.exercises.ch04.messages import HINTS
    graded = CHAPTER.graded()
    for module in EXERCISES:
        assert module.ID in graded
        assert callable(module.observe) and callable(module.judge)
        assert len(module.MISTAKES) >= 2, module.ID
        assert all(k.hint in HINTS for k in module.MISTAKES), module.ID
        assert all(k.failed_parts <= set(module.PARTS or (None,)) for k in module.MISTAKES)
