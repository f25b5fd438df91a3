"""Chapter 09's exercises written as data (see ``tests/course/exercise_data.py``).

Only some of the chapter's exercises are written as ``observe`` and ``judge`` so far (the others
are in ``ch09/legacy.py`` and tested by ``tests/course/test_exercises_ch09*.py``): the graded
cells and the key's code cells are those of the package's ``EXERCISES``. Their solutions need
numpy only."""
from __future__ import annotations

from typing import Any

from autograd_lab.course.exercises import ch09
from tests.course.exercise_data import Chapter, chapter_tests

CONVERTED = {m.ID for m in ch09.EXERCISES}


class _Chapter(Chapter):
    def graded(self) -> dict[str, str]:
        """The graded cells of the exercises written as data, each with its visible check call
        also after the hidden block (the shared ``arguments`` reads the call that follows it;
        these cells have it before)."""
        return {k: v + "\n" + v.split("### BEGIN HIDDEN TESTS")[0]
                for k, v in super().graded().items() if k in CONVERTED}


def _keep(cell: dict[str, Any]) -> bool:
    grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
    return grade_id.removesuffix("-code") in CONVERTED or "import numpy" in "".join(
        cell["source"])


CHAPTER = _Chapter("09_training_digits.ipynb", "ch09", keep=_keep)

globals().update(chapter_tests(CHAPTER))
