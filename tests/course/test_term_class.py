"""A synthetic class through the term: late work with an extension, a filled manual CSV that
survives a new grade run, the Canvas export, the similarity flag and the class report's PNGs."""
from __future__ import annotations

import base64
import csv
import datetime as dt
import io
import re

import pytest

from autograd_lab.cli import main
from autograd_lab.course.authoring.notebooks import CourseError
from autograd_lab.course.grading.term import run_term
from autograd_lab.course.grading.term.export import CANVAS_FIXED, TOTALS_COLUMNS, safe_cell
from tests._term_class import (
    MANUAL_ID,
    NOTEBOOK,
    make_key,
    make_submissions,
    set_mtime,
    write_run,
)

pytest.importorskip("copydetect")

EXERCISES = [("ch00-center-rows", 2.0), ("ch00-pairwise-sq-dists", 2.0)]
DEADLINE = dt.datetime(2026, 10, 12, 23, 59, tzinfo=dt.timezone.utc)
CONFIG = '''
[defaults]
late = "linear"
per = "day"
rate = 10
cap = 50
zero_after = 96

[notebooks.00_welcome]
deadline = 2026-10-12T23:59:00Z
canvas = "Welcome (4521)"

[extensions.bob]
00_welcome = 48

[students.alice]
name = "Alice Liddell"
id = "101"
sis_user_id = "S1"
section = "=cmd|' /C calc'!A0"
'''


def _read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _dicts(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def term_class(tmp_path):
    solutions, course = make_key(tmp_path)
    subs = make_submissions(tmp_path, course)
    (subs / "course.toml").write_text(CONFIG, encoding="utf-8")
    # alice: on time; bob: 30 h late with a 48 h extension; carol: 30 h late, with a planted
    # timestamp.txt saying on time; dave: 100 h late (past zero_after); erin: on time
    set_mtime(subs / "alice" / f"{NOTEBOOK}.ipynb",
              (DEADLINE - dt.timedelta(hours=4)).timestamp())
    set_mtime(subs / "bob" / f"{NOTEBOOK}.ipynb", (DEADLINE + dt.timedelta(hours=30)).timestamp())
    (subs / "carol" / "timestamp.txt").write_text("2026-10-12 20:00:00.000000 UTC\n")
    set_mtime(subs / "carol" / f"{NOTEBOOK}.ipynb",
              (DEADLINE + dt.timedelta(hours=30)).timestamp())
    set_mtime(subs / "dave" / f"{NOTEBOOK}.ipynb",
              (DEADLINE + dt.timedelta(hours=100)).timestamp())
    set_mtime(subs / "erin" / f"{NOTEBOOK}.ipynb", (DEADLINE - dt.timedelta(days=1)).timestamp())
    run = write_run(tmp_path / "run", EXERCISES, {
        "alice": [2, 2], "bob": [2, 2], "carol": [2, 0], "dave": [2, 2], "erin": [0, 0]},
        reasons={"carol": "=HYPERLINK(\"x\"); AssertionError: wrong shape",
                 "erin": "NotImplementedError: Exercise ch00: write your code here"},
        flags={"dave": "cell 3: IPython internals (get_ipython)"})
    return {"run": run, "subs": subs, "solutions": solutions, "course": course}


def _term(c, **kw):
    return run_term(c["run"], c["subs"], solutions=c["solutions"], released=c["course"], **kw)


def test_late_work_with_an_extension(term_class):
    result = _term(term_class, steps=("late", "export"))
    rows = _dicts(term_class["run"] / "term" / "grades.csv")
    assert {"student", "points", "reason", "isolation", "flags"} <= set(rows[0])  # kept
    first = {r["student"]: r for r in rows if r["exercise"] == "ch00-center-rows"}
    assert first["alice"]["time_source"] == "mtime"
    assert first["carol"]["time_source"] == "mtime"  # not carol's own timestamp.txt
    assert "timestamp.txt in the submission says 2026-10-12T20:00:00" in first["carol"]["flags"]
    assert first["alice"]["late_penalty"] == "0" and first["alice"]["final"] == "2"
    # bob: 30 h after the deadline, inside his 48 h extension
    assert first["bob"]["extension"] == "48 h more" and first["bob"]["hours_late"] == "0"
    assert first["bob"]["final"] == "2"
    # carol: 30 h late = 2 started days x 10% of the raw 2 points
    assert float(first["carol"]["hours_late"]) == pytest.approx(30)
    assert (first["carol"]["raw"], first["carol"]["late_penalty"], first["carol"]["final"]) \
        == ("2", "0.4", "1.6")
    # dave: past zero_after (96 h): everything goes
    assert (first["dave"]["raw"], first["dave"]["final"]) == ("2", "0")
    assert [s for s, _, _ in result.late] == ["carol", "dave"]
    totals = {r["student"]: r for r in _dicts(term_class["run"] / "term" / "totals.csv")}
    assert tuple(_read(term_class["run"] / "term" / "totals.csv")[0]) == TOTALS_COLUMNS
    assert (totals["carol"]["raw"], totals["carol"]["late_penalty"], totals["carol"]["final"]) \
        == ("2", "0.4", "1.6")
    assert totals["carol"]["late_notebooks"] == NOTEBOOK
    assert totals["dave"]["flagged_notebooks"] == NOTEBOOK
    assert totals["alice"]["percent"] == "100"


def test_manual_items_pages_csv_and_merge_never_lose_a_score(term_class):
    _term(term_class, steps=("manual",))
    folder = term_class["run"] / "term" / "manual"
    page = (folder / f"{NOTEBOOK}__{MANUAL_ID}.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    for student in ("alice", "bob", "carol", "dave", "erin"):
        assert student not in page  # anonymised: answers are known by their code
    codes = re.findall(r"<h3 id='(\w+)'>", page)
    assert len(codes) == 5 and codes == sorted(codes)
    assert all(re.fullmatch("[A-Z]{8}", code) for code in codes)
    scores = _dicts(folder / "scores.csv")
    assert {r["answer"] for r in scores} == set(codes)
    assert all(r["score"] == "" and r["max_points"] == "2" for r in scores)
    rows = _dicts(term_class["run"] / "term" / "grades.csv")
    manual = [r for r in rows if r["exercise"] == MANUAL_ID]
    assert len(manual) == 5 and {r["status"] for r in manual} == {"ungraded"}

    # the instructor fills two lines; which student is which is found again from the code
    from autograd_lab.course.grading.term.manual import answer_code, manual_items
    item = manual_items({NOTEBOOK: term_class["solutions"] / f"{NOTEBOOK}.ipynb"},
                        [NOTEBOOK])[0]
    salt = (folder / "salt.txt").read_text().strip()
    alice, bob = answer_code(salt, item, "alice"), answer_code(salt, item, "bob")
    for r in scores:
        if r["answer"] == alice:
            r.update(score="1.5", comment="clear, but no word on shapes")
        if r["answer"] == bob:
            r.update(score="2")
    with open(folder / "scores.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(scores[0]))
        writer.writeheader()
        writer.writerows(scores)

    # a new grade run rewrites grades.csv; bob edits his answer afterwards
    write_run(term_class["run"], EXERCISES, {s: [2, 2] for s in
                                             ("alice", "bob", "carol", "dave", "erin")})
    nb = term_class["subs"] / "bob" / f"{NOTEBOOK}.ipynb"
    nb.write_text(nb.read_text().replace("looped over the rows", "looped over rows"))
    result = _term(term_class)
    rows = {r["student"]: r for r in _dicts(term_class["run"] / "term" / "grades.csv")
            if r["exercise"] == MANUAL_ID}
    assert (rows["alice"]["status"], rows["alice"]["raw"]) == ("manual", "1.5")
    assert rows["alice"]["reason"] == "clear, but no word on shapes"
    assert (rows["bob"]["status"], rows["bob"]["raw"]) == ("manual", "2")
    assert rows["carol"]["status"] == "ungraded" and rows["carol"]["raw"] == "0"
    assert result.ungraded == 3
    kept = {r["answer"]: r for r in _dicts(folder / "scores.csv")}
    assert kept[alice]["score"] == "1.5" and kept[bob]["score"] == "2"
    assert "changed after it was scored" in kept[bob]["note"]
    assert kept[alice]["note"] == ""
    totals = {r["student"]: r for r in _dicts(term_class["run"] / "term" / "totals.csv")}
    assert totals["alice"]["max_points"] == "6" and totals["alice"]["ungraded_items"] == "0"

    # a bad score is refused with the line
    text = (folder / "scores.csv").read_text().replace(",1.5,", ",9,")
    (folder / "scores.csv").write_text(text)
    with pytest.raises(CourseError, match=r"line \d+: score 9 is outside 0..2"):
        _term(term_class, steps=("manual",))


def test_canvas_export_and_feedback(term_class):
    _term(term_class, steps=("late", "export"))
    out = term_class["run"] / "term"
    table = _read(out / "canvas.csv")
    # Canvas's gradebook CSV: Student, ID, SIS User ID, SIS Login ID, Section, then assignments
    assert table[0] == [*CANVAS_FIXED, "Welcome (4521)"]
    assert table[1][0] == "Points Possible" and table[1][5] == "4"
    lines = {row[2]: row for row in table[2:]}
    assert lines["S1"][:2] == ["Alice Liddell", "101"]
    assert lines["S1"][4] == "'=cmd|' /C calc'!A0"  # a formula is written as text
    assert lines["carol"][5] == "1.6" and lines["dave"][5] == "0" and lines["bob"][5] == "4"
    grades = _dicts(out / "grades.csv")
    assert any(r["reason"].startswith("'=HYPERLINK") for r in grades)
    assert all(not r["reason"].startswith(("=", "+", "-", "@")) for r in grades)
    for student in ("alice", "bob", "carol", "dave", "erin"):
        page = (out / "feedback" / f"{student}.html").read_text(encoding="utf-8")
        assert NOTEBOOK in page
    carol = (out / "feedback" / "carol.html").read_text(encoding="utf-8")
    assert "30.00 h late</b>: 10% per started day late, at most 50%; 0 after 96 h.</p>" in carol


@pytest.mark.parametrize("value, expected", [
    ("=1+2", "'=1+2"), ("+A1", "'+A1"), ("-A1", "'-A1"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("-1.5", "-1.5"), (2.0, "2"), ("plain", "plain"),
])
def test_safe_cell(value, expected):
    assert safe_cell(value) == expected


def test_similarity_flags_the_copied_pair_only(term_class):
    result = _term(term_class, steps=("similarity",), threshold=0.5)
    assert [(p.first, p.second) for p in result.flagged_pairs] == [("carol", "dave")]
    page = (term_class["run"] / "term" / "similarity.html").read_text(encoding="utf-8")
    assert "carol and dave" in page and "<mark>" in page
    assert "alice and bob" not in page


def test_class_report_pictures_are_pngs(term_class):
    import matplotlib.image as mpimg
    _term(term_class)
    page = (term_class["run"] / "term" / "report" / f"{NOTEBOOK}.html").read_text()
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(images) == 2
    for data in images:
        pixels = mpimg.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert pixels.ndim == 3 and pixels.shape[0] > 50 and pixels.shape[1] > 50
    assert "NotImplementedError: Exercise ch00" in page  # erin's failure reason
    assert "cell 3: IPython internals" in page  # dave's flag
    assert "carol and dave" in page  # the similar pair
    # carol lost ch00-pairwise-sq-dists (erin both); the unscored manual item is not counted
    assert "Hardest exercise:</b> ch00-pairwise-sq-dists (60% with full points)" in page


def test_cli_term(term_class, capsys):
    c = term_class
    code = main(["term", str(c["run"]), "--submissions", str(c["subs"]), "--solutions",
                 str(c["solutions"]), "--course", str(c["course"]), "--threshold", "50%"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "late: carol/00_welcome 30.00 h" in printed
    assert "similar (review, not a penalty): 00_welcome: carol and dave" in printed
    assert "manual: 5 answer(s) not scored yet" in printed
    code = main(["term", str(c["run"] / "nothing"), "--submissions", str(c["subs"])])
    assert code == 2
    assert "finished `autograd-lab grade` run" in capsys.readouterr().err


def test_manual_scores_kept_elsewhere_with_their_salt(term_class, tmp_path):
    """--manual-scores FILE: the CSV and its salt live there, so a fresh --out loses nothing."""
    kept = tmp_path / "kept" / "scores.csv"
    kept.parent.mkdir()
    _term(term_class, steps=("manual",), manual_scores=kept)
    assert (kept.parent / "salt.txt").exists()
    lines = _dicts(kept)
    lines[0]["score"] = "2"
    with open(kept, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(lines[0]))
        writer.writeheader()
        writer.writerows(lines)
    import shutil
    shutil.rmtree(term_class["run"] / "term")
    _term(term_class, steps=("manual",), manual_scores=kept)
    rows = [r for r in _dicts(term_class["run"] / "term" / "grades.csv")
            if r["exercise"] == MANUAL_ID]
    assert sorted(r["status"] for r in rows) == ["manual"] + ["ungraded"] * 4
