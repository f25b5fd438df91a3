"""Chapter 12's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's solution cells run on autograd_lab's ``Variable`` and ``Function`` (the library the
checks use by default), so that BakeryLoss and PinballLoss are Functions of the library its check builds inputs
with."""
from __future__ import annotations

from tests.course.exercise_data import Chapter, chapter_tests, library_namespace, solution_cell

CHAPTER = Chapter("12_capstone.ipynb", "ch12", keep=solution_cell, namespace=library_namespace)

globals().update(chapter_tests(CHAPTER))
