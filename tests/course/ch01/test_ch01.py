"""Chapter 01's exercises, from their declared data (see ``tests/course/exercise_data.py``)."""
from __future__ import annotations

from tests.course.exercise_data import Chapter, chapter_tests

CHAPTER = Chapter("01_derivatives.ipynb", "ch01", keep=lambda cell: cell["metadata"].get(
    "nbgrader", {}).get("solution", False) or "import numpy" in "".join(cell["source"]))

globals().update(chapter_tests(CHAPTER))
