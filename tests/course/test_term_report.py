"""The class report's time per job and its count of partial credit apart from full points."""
from __future__ import annotations

import base64
import csv
import io
import re

import pytest

from autograd_lab.course.grading.term import run_term
from tests._term_class import NOTEBOOK, make_key, make_submissions, write_run

pytest.importorskip("matplotlib")

EXERCISES = [("ch00-center-rows", 2.0), ("ch00-pairwise-sq-dists", 2.0)]
SECONDS = {"alice": 11.5, "bob": 9.0, "carol": 30.25, "dave": 10.0}  # erin's ran no job


@pytest.fixture
def report(tmp_path):
    solutions, course = make_key(tmp_path)
    subs = make_submissions(tmp_path, course)
    run = write_run(tmp_path / "run", EXERCISES, {
        "alice": [2, 2], "bob": [2, 1.5], "carol": [2, 0.5], "dave": [2, 0], "erin": [0, 0]},
        reasons={"bob": "PartsFailed: Exercise ch00-pairwise-sq-dists: 3 of 4 parts passed, "
                        "failed: shapes."}, seconds=SECONDS)
    run_term(run, subs, solutions=solutions, released=course, steps=("late", "report"))
    return run, (run / "term" / "report" / f"{NOTEBOOK}.html").read_text(encoding="utf-8")


def test_grades_csv_has_the_seconds_column_and_term_carries_it(report):
    run, _ = report
    for path in (run / "grades.csv", run / "term" / "grades.csv"):
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert {(r["student"], r["seconds"]) for r in rows} >= {("carol", "30.2"),
                                                                 ("erin", "0.0")}, path


def test_the_time_per_job_picture_renders_with_its_median_and_max(report):
    import matplotlib.image as mpimg
    _, page = report
    images = dict(re.findall(r"<img alt='([^']+)' src='data:image/png;base64,([A-Za-z0-9+/=]+)'",
                             page))
    assert set(images) == {"score histogram", "pass rate per exercise", "time per job"}
    pixels = mpimg.imread(io.BytesIO(base64.b64decode(images["time per job"])), format="png")
    assert pixels.ndim == 3 and pixels.shape[0] > 50 and pixels.shape[1] > 50
    # four jobs ran (erin's notebook ran none): median of 9, 10, 11.5, 30.25 is 10.75
    assert "4 jobs; median 10.8 s, max 30.2 s (carol)" in page


def test_partial_credit_is_counted_apart_from_full_points(report):
    _, page = report
    # pairwise: only alice has full points (20 %), bob and carol have partial credit (40 %)
    assert "Hardest exercise:</b> ch00-pairwise-sq-dists (20% with full points, 40% with " \
           "partial credit)" in page
    assert "failed: shapes." in page  # the reason names the failing part


def test_a_run_without_times_says_so(tmp_path):
    from autograd_lab.course.grading.term.report import notebook_page
    rows = [{"student": "a", "notebook": NOTEBOOK, "exercise": "e", "points": "1",
             "max_points": "1", "status": "passed", "reason": ""}]
    page = notebook_page(NOTEBOOK, rows)
    assert "No time recorded" in page and "alt='time per job'" not in page
