"""Partial credit through the real grader and the self-check, on chapter 01's key.

One class is graded once: the key, a student whose numerical_gradient breaks on integer and
float32 inputs (one of its two parts), and a student whose gradcheck fails three of its four
parts and forges the evidence of failing only one (a printed marker line, a shown number, and a
``PartsFailed`` exception of its own). The canary runs first, as always: the key must score
full points and the released copy zero, parts or not.
"""
from __future__ import annotations

import csv
import re

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading.batch import grade, read_grades, write_csv  # noqa: E402
from autograd_lab.course.authoring.notebooks import (checkout_root, nbgrader_meta,  # noqa: E402
                                           read_notebook, write_notebook)
from tests.fixtures import RUN_AS  # noqa: E402

pytestmark = pytest.mark.notebooks

NB = "01_derivatives"

NO_FLOAT64_COPY = '''def numerical_gradient(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences, but in x's own dtype: integers cannot hold x + h."""
    x = x.copy()
    grad = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        plus = f(x)
        x[idx] = old - h
        minus = f(x)
        x[idx] = old
        grad[idx] = (plus - minus) / (2 * h)
    return grad
'''

FORGER = '''
_solved_gradcheck = gradcheck


class PartsFailed(BaseException):  # named like the checker's, past `except Exception`
    pass


def gradcheck(f, df, x, h=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    if not raise_exception or np.shape(df(x)) != np.shape(x):
        import sys
        print('All 9 cases of ch01-gradcheck passed.')
        print('parts failed: ["shapes"]')
        sys.displayhook(3.0)
        raise PartsFailed('Exercise ch01-gradcheck: 3 of 4 parts passed, failed: shapes.\\n'
                          'parts failed: ["shapes"]')
    return _solved_gradcheck(f, df, x, h, atol, rtol, raise_exception)
'''


def _student(key, **answers: str):
    nb = read_notebook(key)
    for cell in nb.cells:
        gid = nbgrader_meta(cell).get("grade_id")
        if gid == "ch01-numerical-gradient-code" and "numgrad" in answers:
            cell.source = answers["numgrad"]
        if gid == "ch01-gradcheck-code" and "gradcheck" in answers:
            cell.source += answers["gradcheck"]
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("parts")
    key = checkout_root() / "solutions" / f"{NB}.ipynb"
    subs = root / "submissions"
    write_notebook(read_notebook(key), subs / "honest" / f"{NB}.ipynb")
    write_notebook(_student(key, numgrad=NO_FLOAT64_COPY), subs / "integers" / f"{NB}.ipynb")
    write_notebook(_student(key, gradcheck=FORGER), subs / "forger" / f"{NB}.ipynb")
    rows = grade(subs, root / "out", timeout=60, jobs=2, run_as=RUN_AS)
    return root, {(r.student, r.exercise): r for r in rows}


def test_one_broken_part_earns_the_other_parts_share_and_names_the_broken_one(graded):
    _, rows = graded
    row = rows[("integers", "ch01-numerical-gradient")]
    assert (row.points, row.max_points, row.status) == (1.5, 3.0, "partial"), row
    assert row.reason.startswith("CheckFailed: Exercise ch01-numerical-gradient: 1 of 2 parts "
                                 "passed, failed: integer and float32 inputs."), row.reason
    assert rows[("integers", "ch01-central-difference")].status == "passed"
    assert all(r.points == r.max_points for (s, _), r in rows.items() if s == "honest")


def test_forged_evidence_gains_nothing(graded):
    """Three parts really fail; the forger prints and shows a claim of one, and raises its own
    PartsFailed inside a part: the grader scores the real share (1 of 4 parts: 0.75)."""
    _, rows = graded
    row = rows[("forger", "ch01-gradcheck")]
    assert (row.points, row.status) == (0.75, "partial"), row
    assert "failed: reports a wrong derivative, tolerances, shapes." in row.reason


def test_grades_csv_feedback_and_a_regrade_carry_the_share_and_the_time(graded):
    root, _ = graded
    out = root / "out"
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        table = {(r["student"], r["exercise"]): r for r in csv.DictReader(fh)}
    line = table[("integers", "ch01-numerical-gradient")]
    assert (line["points"], line["status"]) == ("1.5", "partial")
    assert float(line["seconds"]) > 0  # the job's wall time, on each of its rows
    assert {r["seconds"] for k, r in table.items() if k[0] == "integers"} == {line["seconds"]}
    with open(out / "totals.csv", newline="", encoding="utf-8") as fh:
        totals = {r["student"]: float(r["points"]) for r in csv.DictReader(fh)}
    assert totals == {"honest": 8.0, "integers": 6.5, "forger": 5.75}
    page = (out / "feedback" / "integers" / "index.html").read_text(encoding="utf-8")
    assert re.search(r"1\.5 / 3</td><td>partial</td><td>CheckFailed: Exercise "
                     r"ch01-numerical-gradient: 1 of 2 parts passed", page)
    # --regrade reads the rows back with their share and their time
    old = read_grades(out)
    again = {(r.student, r.exercise): r for rs in old.values() for r in rs}
    assert again[("integers", "ch01-numerical-gradient")].points == 1.5
    assert again[("integers", "ch01-numerical-gradient")].seconds == float(line["seconds"])


def test_the_self_check_scores_the_same_share(graded):
    from autograd_lab.course.learner.check import check_notebook, format_table
    root, _ = graded
    results = {r.exercise: r for r in check_notebook(
        root / "submissions" / "integers" / f"{NB}.ipynb")}
    part = results["ch01-numerical-gradient"]
    assert (part.points, part.status, part.passed) == (1.5, "partial", False)
    assert "failed: integer and float32 inputs" in part.summary()[0]
    table = format_table(list(results.values()), width=120)
    assert "1.5/3  partial" in table and "2 of 3 exercises passed, 1 partial" in table


def test_a_regrade_keeps_the_seconds_of_the_rows_it_keeps(graded, tmp_path):
    root, rows = graded
    out = tmp_path / "out"
    out.mkdir()
    kept = [r for r in rows.values()]
    write_csv(kept, out)
    before = {(r.student, r.exercise): r.seconds for rs in read_grades(out).values() for r in rs}
    from autograd_lab.course.grading.batch import grade as regrade
    again = regrade(root / "submissions", out, timeout=60, jobs=1, run_as=RUN_AS, regrade=True)
    assert {(r.student, r.exercise): r.seconds for r in again} == before  # nothing re-run


def test_nbgraders_gradebook_holds_the_share_for_formgrader(graded):
    """The JupyterHub route reads the same gradebook: its score is the share, not nbgrader's 0."""
    from nbgrader.api import Gradebook
    root, _ = graded
    with Gradebook(f"sqlite:///{root / 'out' / 'gradebook.db'}") as gb:
        sub = gb.find_submission_notebook(NB, NB, "integers")
        scores = {g.name: g.score for g in sub.grades}
    assert scores["ch01-numerical-gradient"] == 1.5
    assert scores["ch01-gradcheck"] == 3.0
