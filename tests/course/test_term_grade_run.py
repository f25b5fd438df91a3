"""`term` on a real `grade` run of two tiny submissions: it reads the grader's grades.csv, and a
second grade run into the same folder keeps the term's manual scores."""
from __future__ import annotations

import csv
import shutil

import pytest

from autograd_lab.course.grading.term import run_term
from tests._term_class import MANUAL_ID, make_key, make_submissions

pytest.importorskip("nbgrader")
pytest.importorskip("copydetect")
pytestmark = pytest.mark.notebooks


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_term_after_a_real_grade_run_and_a_regrade(tmp_path):
    from autograd_lab.course.grading.batch import grade
    solutions, course = make_key(tmp_path)
    subs = make_submissions(tmp_path, course)
    for student in ("bob", "dave", "erin"):
        shutil.rmtree(subs / student)
    run = tmp_path / "run"
    grade(subs, run, solutions=solutions, timeout=60, isolation="auto")
    result = run_term(run, subs, solutions=solutions, released=course)
    rows = _rows(run / "term" / "grades.csv")
    by = {(r["student"], r["exercise"]): r for r in rows}
    # both answers are correct: the grader passed them, and term carries its columns along
    assert by[("alice", "ch00-center-rows")]["status"] == "passed"
    assert by[("carol", "ch00-pairwise-sq-dists")]["final"] == "2"
    assert by[("alice", "ch00-center-rows")]["isolation"] in ("bubblewrap", "process")
    assert by[("alice", MANUAL_ID)]["status"] == "ungraded"
    assert result.ungraded == 2

    scores = run / "term" / "manual" / "scores.csv"
    lines = _rows(scores)
    for line in lines:
        line["score"] = "1"
    with open(scores, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(lines[0]))
        writer.writeheader()
        writer.writerows(lines)
    grade(subs, run, solutions=solutions, timeout=60, isolation="auto")  # grade again
    assert scores.exists()
    run_term(run, subs, solutions=solutions, released=course)
    manual = [r for r in _rows(run / "term" / "grades.csv") if r["exercise"] == MANUAL_ID]
    assert [(r["status"], r["final"]) for r in manual] == [("manual", "1"), ("manual", "1")]
    totals = {r["student"]: r for r in _rows(run / "term" / "totals.csv")}
    assert totals["alice"]["final"] == "5" and totals["alice"]["max_points"] == "6"
