"""Chapter 04's exercises written as data (see ``tests/course/exercise_data.py``).

The graded cells of the Scalar engine (topological_sort, backward, reused_node,
second_backward) run from the key's solution cells; the exercises on mygrad's Variables are
still classic checkers (tests/course/test_exercises_ch04.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from tests.course.exercise_data import Chapter, chapter_tests


@dataclass
class _Chapter(Chapter):
    """Chapter 04's graded cells call the checker before their hidden block, which the shared
    ``arguments`` does not look at: it reads the cells without that block."""

    def graded(self) -> dict[str, str]:
        return {k: re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", v, flags=re.S)
                for k, v in super().graded().items()}


CHAPTER = _Chapter("04_engine.ipynb", "ch04", keep=lambda cell: cell["metadata"].get(
    "nbgrader", {}).get("solution", False) and "%%mygrad" not in "".join(cell["source"]))

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
