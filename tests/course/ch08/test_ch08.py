"""Chapter 08's exercises, from their declared data (see ``tests/course/exercise_data.py``)."""
from __future__ import annotations

from tests.course.exercise_data import Chapter, chapter_tests

from . import _key


class _Chapter(Chapter):
    def graded(self) -> dict[str, str]:
        return {k: _hidden_first(v) for k, v in super().graded().items()}


def _hidden_first(source: str) -> str:
    """The graded cell with its hidden block moved to the front: ``exercise_data.arguments``
    reads the visible call after ``### END HIDDEN TESTS``, and chapter 08's cells end with it."""
    start, end = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
    if start not in source or not source.rstrip().endswith(end):
        return source
    head, _, rest = source.partition(start)
    hidden, _, tail = rest.partition(end)
    return f"{start}{hidden}{end}\n{head}{tail}"


CHAPTER = _Chapter("08_modules_optimizers.ipynb", "ch08", keep=_key.keep,
                   namespace=_key.namespace)

globals().update(chapter_tests(CHAPTER))
