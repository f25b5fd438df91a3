"""Releasing a solution notebook into the student copy (no kernel needed)."""
from __future__ import annotations

import copy
import os

import nbformat
import pytest

pytest.importorskip("nbgrader")

from nbgrader.utils import compute_checksum  # noqa: E402

from autograd_lab.course.authoring.notebooks import (RAISES_TAG, CourseError, nbgrader_meta,  # noqa: E402
                                           notebook_text, read_notebook, write_notebook)
from autograd_lab.course.authoring.release import (cells_that_can_fail, release,  # noqa: E402
                                         release_notebook, stub_for)
from autograd_lab.course.grading.submissions import Prepared, load, restore_graded_cells  # noqa: E402
from tests.fixtures import course_nb  # noqa: E402
from tests.fixtures.course_nb import find_cell  # noqa: E402


@pytest.fixture()
def student() -> nbformat.NotebookNode:
    return release_notebook(course_nb.key_notebook(), course_nb.NAME)


def test_solution_regions_become_stubs_naming_the_exercise(student) -> None:
    text = notebook_text(student)
    assert course_nb.CENTER_SOLUTION.strip() not in text
    assert "(A[:, None, :] - B[None, :, :])" not in text
    center = find_cell(student, "ch00-center-rows-code").source
    assert center == ("def center_rows(X):\n    # YOUR CODE HERE\n    raise NotImplementedError("
                      "\"Exercise ch00-center-rows: write your code here, then run the check "
                      "cell below\")")
    pairwise = find_cell(student, "ch00-pairwise-sq-dists-code").source
    assert pairwise == stub_for("ch00-pairwise-sq-dists-code")
    assert 'NotImplementedError("Exercise ch00-pairwise-sq-dists: ' in pairwise


def test_stub_raises_the_documented_error() -> None:
    with pytest.raises(NotImplementedError, match=r"^Exercise ch01-central-difference: write"):
        exec(stub_for("ch01-central-difference-code"), {})


def test_hidden_tests_and_outputs_are_removed(student) -> None:
    text = notebook_text(student)
    assert "HIDDEN TESTS" not in text and "hidden=True" not in text
    assert find_cell(student, "ch00-center-rows").source == "check.ch00_center_rows(center_rows)"
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_cells_are_locked_and_checksummed(student) -> None:
    for grade_id in course_nb.EXERCISES:
        meta = find_cell(student, grade_id).metadata
        assert meta["deletable"] is False and meta["editable"] is False
        assert find_cell(student, f"{grade_id}-code").metadata["deletable"] is False
    intro = find_cell(student, "intro")
    assert intro.metadata["editable"] is False
    for cell in student.cells:
        if nbgrader_meta(cell):
            assert nbgrader_meta(cell)["checksum"] == compute_checksum(cell)


def test_raises_exception_tags_only_where_the_stubs_make_cells_fail(student) -> None:
    tagged = {nbgrader_meta(c).get("grade_id") or c.source for c in student.cells
              if RAISES_TAG in c.metadata.get("tags", [])}
    assert tagged == {"ch00-center-rows-code", "ch00-center-rows",
                      "ch00-pairwise-sq-dists-code", "ch00-pairwise-sq-dists"}
    assert not any(RAISES_TAG in c.metadata.get("tags", [])
                   for c in course_nb.key_notebook().cells)


def test_cells_using_exercise_code_are_found_transitively() -> None:
    nb = course_nb.key_notebook()
    demo = ["y = center_rows(np.ones((2, 2)))", "print(y.sum())", "print(3)",
            "%timeit pairwise_sq_dists(A, A)", "center = 1"]
    at = nb.cells.index(find_cell(nb, "ch00-pairwise-sq-dists")) + 1
    for offset, source in enumerate(demo):
        nb.cells.insert(at + offset, nbformat.v4.new_code_cell(source))
    failing = {nb.cells[i].source for i in cells_that_can_fail(nb)}
    assert {demo[0], demo[1], demo[3]} <= failing
    assert demo[2] not in failing and demo[4] not in failing
    assert "import numpy as np\nfrom autograd_lab.course.exercises import check" not in failing


def test_release_is_byte_identical_and_leaves_the_key_alone(tmp_path) -> None:
    key = tmp_path / "solutions" / f"{course_nb.NAME}.ipynb"
    write_notebook(course_nb.key_notebook(), key)
    before = key.read_bytes()
    (out,) = release(tmp_path / "solutions", tmp_path / "course")
    first = out.read_bytes()
    nbformat.validate(read_notebook(out))
    os.utime(out, (1_000_000, 1_000_000))
    release(tmp_path / "solutions", tmp_path / "course")
    assert out.read_bytes() == first and out.stat().st_mtime == 1_000_000  # not rewritten
    release(tmp_path / "solutions", tmp_path / "again")
    assert (tmp_path / "again" / out.name).read_bytes() == first
    assert key.read_bytes() == before


def test_cells_without_ids_get_stable_ones() -> None:
    nb = course_nb.key_notebook()
    for cell in nb.cells:
        del cell["id"]
    one = notebook_text(release_notebook(copy.deepcopy(nb), "x"))
    assert one == notebook_text(release_notebook(copy.deepcopy(nb), "x"))
    assert all(c.get("id") for c in nbformat.reads(one, as_version=4).cells)


def test_unclosed_solution_region_is_a_clear_error() -> None:
    nb = course_nb.key_notebook()
    find_cell(nb, "ch00-center-rows-code").source = "def center_rows(X):\n    ### BEGIN SOLUTION\n"
    with pytest.raises(CourseError, match="Cannot release broken.*BEGIN/END SOLUTION"):
        release_notebook(nb, "broken")


def test_solution_region_outside_a_solution_cell_is_an_error() -> None:
    nb = course_nb.key_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"))
    with pytest.raises(CourseError, match="non-solution cell"):
        release_notebook(nb, "broken")


def test_empty_solutions_folder_is_an_error(tmp_path) -> None:
    (tmp_path / "solutions").mkdir()
    with pytest.raises(CourseError, match="No notebooks to release"):
        release(tmp_path / "solutions", tmp_path / "course")


# -- reading submissions --------------------------------------------------------------------
def _prepared(nb: nbformat.NotebookNode) -> Prepared:
    return Prepared("ok", nb=copy.deepcopy(nb))


def test_deleted_graded_cell_is_put_back_after_its_exercise(student) -> None:
    sub = _prepared(student)
    sub.nb.cells.remove(find_cell(sub.nb, "ch00-center-rows"))
    restore_graded_cells(sub, student)
    ids = [nbgrader_meta(c).get("grade_id") for c in sub.nb.cells]
    assert ids.index("ch00-center-rows") == ids.index("ch00-center-rows-code") + 1
    assert "deleted" in sub.notes["ch00-center-rows"][0]
    nbformat.validate(sub.nb)


def test_edited_and_unmarked_graded_cells_are_noted(student) -> None:
    sub = _prepared(student)
    find_cell(sub.nb, "ch00-center-rows").source = "pass"
    find_cell(sub.nb, "ch00-pairwise-sq-dists").metadata.pop("nbgrader")
    find_cell(sub.nb, "ch00-pairwise-sq-dists-code").metadata["nbgrader"]["grade_id"] = "other"
    restore_graded_cells(sub, student)
    assert "edited" in sub.notes["ch00-center-rows"][0]
    assert "deleted" in sub.notes["ch00-pairwise-sq-dists"][0]
    assert sum(nbgrader_meta(c).get("grade_id") == "ch00-pairwise-sq-dists"
               for c in sub.nb.cells) == 1


def test_old_format_notebook_gets_no_cell_ids(student) -> None:
    old = nbformat.convert(copy.deepcopy(student), 4)
    old.nbformat_minor = 4
    for cell in old.cells:
        cell.pop("id", None)
    sub = _prepared(old)
    sub.nb.cells.remove(find_cell(sub.nb, "ch00-center-rows"))
    restore_graded_cells(sub, student)
    nbformat.validate(sub.nb)


@pytest.mark.parametrize("text, status, words", [
    (None, "missing", "no x.ipynb"),
    ("{oops", "invalid", "not valid JSON"),
    ('{"cells": 3}', "invalid", "not a valid notebook"),
    (b"\xff\xfe\x00", "invalid", "not valid JSON"),
])
def test_unreadable_submissions_get_a_status(tmp_path, text, status, words) -> None:
    path = tmp_path / "x.ipynb"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    got = load(path)
    assert got.status == status and words in got.reason
