"""Chapter 08's exercises written as data (see ``tests/course/exercise_data.py``); the others
are still tested by ``tests/course/test_exercises_ch07_ch08.py`` and its neighbours."""
from __future__ import annotations

from tests.course.exercise_data import Chapter, chapter_tests

from . import _key


class _Converted(Chapter):
    """The chapter, restricted to the exercises already written as ``observe`` and ``judge``."""

    def graded(self) -> dict[str, str]:
        done = {m.ID for m in self.module.EXERCISES}
        return {k: _hidden_first(v) for k, v in super().graded().items() if k in done}


def _hidden_first(source: str) -> str:
    """The graded cell with its hidden block moved to the front: ``exercise_data.arguments``
    reads the visible call after ``### END HIDDEN TESTS``, and chapter 08's cells end with it."""
    start, end = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
    if start not in source or source.rstrip().endswith(end) is False:
        return source
    head, _, rest = source.partition(start)
    hidden, _, tail = rest.partition(end)
    return f"{start}{hidden}{end}\n{head}{tail}"


CHAPTER = _Converted("08_modules_optimizers.ipynb", "ch08", keep=_key.keep,
                     namespace=_key.namespace)

globals().update(chapter_tests(CHAPTER))
