"""One student never stops a batch or a term, nor pushes a file we write past its cap.

mallory's answer raises an exception with an 11 MB message and her notebook carries an 11 MB
code cell and 11 MB of cell metadata. Graded for real (in the sandbox where there is one), her
row's reason is cut with a note, grades.csv, the graded notebook and the feedback page stay
under the documented 10 MB, and `grade --regrade` and `term` read what grade wrote.
"""
from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.authoring.notebooks import write_notebook  # noqa: E402
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from autograd_lab.course.grading import batch as grading  # noqa: E402
from autograd_lab.course.grading.sanitize import (MAX_NOTEBOOK_CHARS, MAX_PAGE_BYTES,  # noqa: E402
                                                  cap_outputs)
from autograd_lab.course.grading.term import run_term  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402

HUGE = 11 * 1024 * 1024


def _mallory(copy: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = course_nb.solved(copy)
    course_nb.find_cell(nb, "ch00-center-rows-code").source = (
        "def center_rows(X):\n    raise ValueError('x' * %d)\ncenter_rows(None)" % HUGE)
    filler = nbformat.v4.new_code_cell("# " + "y" * HUGE)
    filler.metadata["padding"] = "z" * HUGE
    nb.cells += [filler, nbformat.v4.new_markdown_cell("An essay. " + "word " * (HUGE // 5))]
    return nb


def test_caps_hold_for_sources_metadata_and_exception_messages() -> None:
    nb = _mallory(release_notebook(course_nb.key_notebook(), course_nb.NAME))
    cell = course_nb.find_cell(nb, "ch00-center-rows-code")
    cell.outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="x" * HUGE,
                                           traceback=["x" * HUGE])]
    capped = cap_outputs(nb)
    assert len(nbformat.writes(capped)) < MAX_NOTEBOOK_CHARS
    filler, essay = capped.cells[-2:]
    assert "the cell's source (11,534,338 characters) was cut to 100,000 by the grader" in \
        filler.source
    assert "cell's metadata" in filler.source and "padding" not in filler.metadata
    assert len(essay.source) < 101_000 and "[grader] the cell's source" in essay.source
    assert len(cell.outputs[0]["evalue"]) < 21_000  # kept, shortened, never dropped


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("bounded")
    write_notebook(course_nb.key_notebook(), root / "solutions" / f"{course_nb.NAME}.ipynb")
    copy = release_notebook(course_nb.key_notebook(), course_nb.NAME)
    write_notebook(course_nb.solved(copy), root / "subs" / "alice" / f"{course_nb.NAME}.ipynb")
    write_notebook(_mallory(copy), root / "subs" / "mallory" / f"{course_nb.NAME}.ipynb")
    for name in ("bob", "\uff42ob"):  # "bob" and full-width "ｂob" read the same
        write_notebook(course_nb.solved(copy), root / "subs" / name / f"{course_nb.NAME}.ipynb")
    grading.grade(root / "subs", root / "out", solutions=root / "solutions", timeout=20,
                  jobs=1, run_as=RUN_AS)
    return {"root": root, "out": root / "out"}


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_reason_is_cut_and_every_file_stays_under_the_cap(graded) -> None:
    out = graded["out"]
    rows = {r["student"] + "/" + r["exercise"]: r for r in _rows(out)}
    reason = rows["mallory/ch00-center-rows"]["reason"]
    assert rows["mallory/ch00-center-rows"]["status"] == "failed"
    assert "ValueError: xxx" in reason and reason.endswith("characters]"), reason[-200:]
    assert "cut by the grader at 2,000 of" in reason
    assert rows["alice/ch00-center-rows"]["status"] == "passed"
    assert (out / "grades.csv").stat().st_size < 100_000
    graded_nb = out / "autograded" / "mallory" / f"{course_nb.NAME}.ipynb"
    assert "An essay. word" in graded_nb.read_text()  # cut, not dropped
    for path in [graded_nb,
                 out / "feedback" / "mallory" / f"{course_nb.NAME}.html",
                 out / "feedback" / "mallory" / "index.html"]:
        assert path.stat().st_size <= MAX_PAGE_BYTES, path


def test_names_that_read_the_same_are_refused_with_a_clear_message(graded) -> None:
    rows = [r for r in _rows(graded["out"]) if r["student"] in ("bob", "\uff42ob")]
    assert len(rows) == 2 * len(course_nb.EXERCISES)
    for r in rows:
        assert r["status"] == "invalid" and float(r["points"]) == 0
        assert "the student folder was refused: its name reads the same as" in r["reason"]
        assert "rename the folders" in r["reason"]


def test_regrade_and_term_read_what_grade_wrote(graded) -> None:
    root, out = graded["root"], graded["out"]
    grading.grade(root / "subs", out, solutions=root / "solutions", timeout=20, jobs=1,
                  run_as=RUN_AS, regrade=True)
    result = run_term(out, root / "subs", solutions=root / "solutions",
                      released=root / "solutions", steps=("late", "export"))
    assert {r["student"] for r in result.rows} == {"alice", "mallory", "bob", "\uff42ob"}
    assert (out / "term" / "canvas.csv").is_file()
