"""The batch grader: exact scores for good and broken submissions of a tiny fixture chapter.

One class of eleven students is graded once (two jobs in parallel, 10 s per cell);
each student is one robustness case from ``tests/fixtures/course_nb.py``.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading.batch import grade  # noqa: E402
from autograd_lab.course.authoring.notebooks import CourseError, write_notebook  # noqa: E402
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402

TIMEOUT = 10


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    root = tmp_path_factory.mktemp("grading")
    write_notebook(course_nb.key_notebook(), root / "solutions" / f"{course_nb.NAME}.ipynb")
    student = release_notebook(course_nb.key_notebook(), course_nb.NAME)
    for name, submission in course_nb.class_of_submissions(student).items():
        folder = root / "submissions" / name
        folder.mkdir(parents=True)
        path = folder / f"{course_nb.NAME}.ipynb"
        if submission is None:
            (folder / "notes.txt").write_text("forgot to upload\n")
        elif isinstance(submission, str):
            path.write_text(submission)
        else:
            write_notebook(submission, path)
    rows = grade(root / "submissions", root / "out", solutions=root / "solutions",
                 timeout=TIMEOUT, jobs=2, run_as=RUN_AS)
    return root / "out", rows


def _csv(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(fh)}


@pytest.mark.parametrize("student", sorted(course_nb.EXPECTED))
def test_each_case_gets_its_exact_score_and_a_reason(graded, student: str) -> None:
    out, _ = graded
    table = _csv(out)
    points, statuses = course_nb.EXPECTED[student]
    for exercise, want_points, want_status in zip(course_nb.EXERCISES, points, statuses):
        row = table[(student, exercise)]
        assert (float(row["points"]), row["status"]) == (want_points, want_status), row
        assert float(row["max_points"]) == course_nb.EXERCISES[exercise]
        if want_status != "passed":
            assert row["reason"], f"{student}/{exercise} lost points without a reason"


def test_csv_has_one_row_per_student_and_exercise(graded) -> None:
    out, rows = graded
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header == ["student", "notebook", "exercise", "points", "max_points", "status",
                      "reason", "isolation", "flags", "key_version", "submission_version",
                      "seconds", "checker_version", "handed_in"]
    assert len(rows) == len(course_nb.EXPECTED) * len(course_nb.EXERCISES)
    with open(out / "totals.csv", newline="", encoding="utf-8") as fh:
        totals = {r["student"]: float(r["points"]) for r in csv.DictReader(fh)}
    assert totals == {s: float(sum(p)) for s, (p, _) in course_nb.EXPECTED.items()}


@pytest.mark.parametrize("student, exercise, words", [
    # chapter 00's checks are judged by the grader from the kernel's observations: the reason
    # is the judge's verdict (its details, such as "not done yet", are on the feedback page)
    ("untouched", "ch00-center-rows", "CheckFailed: Exercise ch00-center-rows failed"),
    ("untouched", "ch00-pairwise-sq-dists", "the answer cell failed: NotImplementedError"),
    ("invalid_json", "ch00-center-rows", "not valid JSON"),
    ("missing", "ch00-center-rows", "no 00_fixture.ipynb"),
    ("deleted_graded_cell", "ch00-center-rows", "graded cell was deleted"),
    ("edited_graded_cell", "ch00-pairwise-sq-dists", "graded cell was edited"),
    ("edited_graded_cell", "ch00-pairwise-sq-dists", "CheckFailed: Exercise ch00-pairwise"),
    ("infinite_loop", "ch00-center-rows", f"ran longer than {TIMEOUT} s"),
    ("kernel_killed", "ch00-pairwise-sq-dists", "DeadKernelError"),
    ("replaced_checkers", "ch00-pairwise-sq-dists", "CheckFailed"),
])
def test_reasons_name_the_cause(graded, student: str, exercise: str, words: str) -> None:
    assert words in _csv(graded[0])[(student, exercise)]["reason"]


def test_huge_output_is_cut_in_the_graded_copy_and_feedback(graded) -> None:
    out, _ = graded
    assert (out / "autograded" / "huge_output" / f"{course_nb.NAME}.ipynb").stat().st_size < 500_000
    assert (out / "feedback" / "huge_output" / f"{course_nb.NAME}.html").stat().st_size < 2_000_000


def test_feedback_and_gradebook_are_written(graded) -> None:
    out, _ = graded
    assert (out / "gradebook.db").stat().st_size > 0
    index = (out / "feedback" / "edited_graded_cell" / "index.html").read_text()
    assert "2 / 5 points" in index and "graded cell was edited" in index
    page = (out / "feedback" / "good" / f"{course_nb.NAME}.html").read_text()
    assert "ch00-center-rows" in page
    # a notebook that was never run has a summary but no nbgrader page
    assert (out / "feedback" / "invalid_json" / "index.html").exists()
    assert not (out / "feedback" / "invalid_json" / f"{course_nb.NAME}.html").exists()


def test_gradebook_holds_the_autograded_scores(graded) -> None:
    from nbgrader.api import Gradebook
    out, _ = graded
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}", "") as gb:
        sub = gb.find_submission_notebook(course_nb.NAME, course_nb.NAME, "edited_graded_cell")
        assert {g.name: g.score for g in sub.grades} == {"ch00-center-rows": 2.0,
                                                          "ch00-pairwise-sq-dists": 0.0}


def test_out_folder_with_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    write_notebook(course_nb.key_notebook(), tmp_path / "sol" / f"{course_nb.NAME}.ipynb")
    write_notebook(course_nb.key_notebook(), tmp_path / "subs" / "ann" / f"{course_nb.NAME}.ipynb")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "precious.txt").write_text("keep me")
    with pytest.raises(CourseError, match="not empty"):
        grade(tmp_path / "subs", tmp_path / "out", solutions=tmp_path / "sol", run_as=RUN_AS)
    assert (tmp_path / "out" / "precious.txt").read_text() == "keep me"


def test_an_empty_default_key_folder_is_named_in_the_error(tmp_path: Path, monkeypatch) -> None:
    from autograd_lab.course.grading import batch as grading
    (tmp_path / "key").mkdir()
    monkeypatch.setattr(grading, "default_dir", lambda name: tmp_path / "key")
    with pytest.raises(CourseError, match=re.escape(f"{tmp_path / 'key'} holds no notebooks")):
        grade(tmp_path / "submissions", tmp_path / "out")


def test_no_student_folders_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    write_notebook(course_nb.key_notebook(), tmp_path / "sol" / f"{course_nb.NAME}.ipynb")
    with pytest.raises(CourseError, match="no student folders"):
        grade(tmp_path / "subs", tmp_path / "out", solutions=tmp_path / "sol")


def test_prelude_sends_warnings_to_stdout_so_nbgrader_does_not_zero_the_cell(capsys, monkeypatch) -> None:
    import sys
    import warnings

    import autograd_lab
    from autograd_lab.course.grading.autograde_jobs import PRELUDE
    # The prelude takes the checkers out of sys.modules and imports them afresh. Put the old ones
    # back afterwards, so the tests that run later in this process patch the modules the checkers use.
    for name in [n for n in sys.modules if n.startswith("autograd_lab.course.exercises")]:
        monkeypatch.setitem(sys.modules, name, sys.modules[name])
    monkeypatch.setattr(autograd_lab.course, "exercises", autograd_lab.course.exercises)
    saved = warnings.showwarning
    try:
        exec(PRELUDE, {})
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = warnings.showwarning  # keep the prelude's hook inside the block
            warnings.warn("overflow in exp", RuntimeWarning, stacklevel=1)
        out = capsys.readouterr()
        assert "RuntimeWarning: overflow in exp" in out.out and out.err == ""
    finally:
        warnings.showwarning = saved
