"""Chapter 03's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's namespace is the notebook's: the course's ``variable.py`` (chapter 02's exercises),
then the chapter's ``%%mygrad`` cells and the FixedReLU cell, run in order in one dict."""
from __future__ import annotations

from typing import Any

from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package
from tests.course.exercise_data import Chapter, chapter_tests


def _library_cells(cell: dict) -> bool:
    source = "".join(cell["source"])
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    return source.startswith("%%mygrad function") or grade_id == "ch03-find-the-bug-code"


def _namespace(sources: list[str]) -> dict[str, Any]:
    pkg = build_package({"variable": REFERENCE_ROOT / PACKAGE / "variable.py"})
    namespace = dict(vars(pkg.variable))
    for source in sources:
        if source.startswith("%%"):
            source = source.split("\n", 1)[1]
        exec(compile(source, "<key cell>", "exec"), namespace)  # noqa: S102 - the key's cells
    return namespace


class _Chapter(Chapter):
    """Chapter 03's graded cells call the visible check first and the hidden one last; the
    shared ``arguments`` reads the call after ``### END HIDDEN TESTS``, so the hidden block
    is put first here (the calls are the same)."""

    def graded(self) -> dict[str, str]:
        found = {}
        for exercise_id, source in super().graded().items():
            head, hidden, tail = source.partition("### BEGIN HIDDEN TESTS")
            if hidden:
                block, end, rest = tail.partition("### END HIDDEN TESTS")
                source = f"{hidden}{block}{end}\n{head}{rest}"
            found[exercise_id] = source
        return found


CHAPTER = _Chapter("03_function.ipynb", "ch03", keep=_library_cells, namespace=_namespace)

globals().update(chapter_tests(CHAPTER))
