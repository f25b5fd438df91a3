"""Chapter 05's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's ``%%mygrad`` cells run as the notebook runs them: in the namespace of the course's
``mygrad/ops.py`` (chapters 02-05), one after another."""
from __future__ import annotations

from typing import Any

from tests.course.exercise_data import Chapter, _without_magics, chapter_tests


def _is_code_cell(cell: dict) -> bool:
    return cell["metadata"].get("nbgrader", {}).get("grade_id", "").endswith("-code")


def _namespace(sources: list[str]) -> dict[str, Any]:
    from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
    from autograd_lab.course.learner.loader import build_package
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 5}
    namespace = dict(vars(build_package(files).ops))
    for source in sources:
        exec(compile(_without_magics(source), "<key cell>", "exec"), namespace)  # noqa: S102
    return namespace


class _Chapter05(Chapter):
    """The chapter's graded cells, each with its first call only (a cell ends with its hidden
    call, which the shared lookup of the checker's arguments would miss), and only those of
    the exercises written as data (the others are :data:`NOT_YET_DATA`)."""

    def graded(self) -> dict[str, str]:
        done = {m.ID for m in self.module.EXERCISES}
        return {k: v.split("### BEGIN HIDDEN TESTS")[0] for k, v in super().graded().items()
                if k in done}


NOT_YET_DATA: set[str] = set()
"""The exercises whose checker is still one function (in ``ch05/_legacy.py``)."""

CHAPTER = _Chapter05("05_tensors_broadcasting.ipynb", "ch05", keep=_is_code_cell,
                     namespace=_namespace)

globals().update(chapter_tests(CHAPTER))


def test_every_graded_cell_is_data_or_still_a_checker_of_its_own():
    every = set(Chapter.graded(CHAPTER))
    done = {m.ID for m in CHAPTER.module.EXERCISES}
    assert every == done | NOT_YET_DATA and not done & NOT_YET_DATA
