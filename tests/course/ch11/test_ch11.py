"""Chapter 11's exercises written as data (see ``tests/course/exercise_data.py``); ch11-grad and
ch11-tanh-function are still single checkers, tested by ``tests/course/test_exercises_ch11*.py``."""
from __future__ import annotations

from tests.course.exercise_data import Chapter, chapter_tests

from . import _key


class _Converted(Chapter):
    """The chapter, restricted to the exercises written as ``observe`` and ``judge``; each
    graded cell with its hidden block first (``exercise_data.arguments`` reads the visible call
    after ``### END HIDDEN TESTS``, and chapter 11's cells end with it)."""

    def graded(self) -> dict[str, str]:
        done = {m.ID for m in self.module.EXERCISES}
        return {k: _hidden_first(v) for k, v in super().graded().items() if k in done}


def _hidden_first(source: str) -> str:
    start, end = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
    if start not in source or not source.rstrip().endswith(end):
        return source
    head, _, rest = source.partition(start)
    hidden, _, tail = rest.partition(end)
    return f"{start}{hidden}{end}\n{head}{tail}"


CHAPTER = _Converted("11_higher_order.ipynb", "ch11", keep=_key.keep, namespace=_key.namespace)

globals().update(chapter_tests(CHAPTER))
