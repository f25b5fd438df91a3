"""`autograd-lab term` against one student who tries to bend or stop it: a notebook that is a
link to the key, an essay and a reason of 11 MB, planted rows; and the similarity report on a
synthetic class (honest variants, key copies, a renamed copy, a copy moved into added cells)."""
from __future__ import annotations

import copy
import csv
import itertools
import os

import pytest

from autograd_lab.course.authoring.notebooks import nbgrader_meta, read_notebook, write_notebook
from autograd_lab.course.grading.batch import Row, write_csv
from autograd_lab.course.grading.sanitize import MAX_PAGE_BYTES
from autograd_lab.course.grading.term import run_term
from autograd_lab.course.grading.term.similarity import compare, given_code, key_matches, \
    written_code
from tests._term_class import ANSWERS, MANUAL_ID, NOTEBOOK, make_key, make_submissions, write_run

pytest.importorskip("copydetect")

EXERCISES = [("ch00-center-rows", 2.0), ("ch00-pairwise-sq-dists", 2.0)]
HUGE = 11 * 1024 * 1024


@pytest.fixture
def term_class(tmp_path):
    solutions, course = make_key(tmp_path)
    subs = make_submissions(tmp_path, course)
    run = write_run(tmp_path / "run", EXERCISES, {
        "alice": [2, 2], "bob": [2, 2], "carol": [2, 0], "dave": [2, 2], "erin": [0, 0]})
    return {"run": run, "subs": subs, "solutions": solutions, "course": course}


def _term(c, **kw):
    return run_term(c["run"], c["subs"], solutions=c["solutions"], released=c["course"], **kw)


def test_term_refuses_a_link_to_the_key_as_grade_does(term_class):
    """mallory's notebook is a symbolic link to the key: grade refused it, and term neither
    shows the key's answers on the manual page nor compares them."""
    c = term_class
    target = c["subs"] / "erin" / f"{NOTEBOOK}.ipynb"
    target.unlink()
    target.symlink_to(c["solutions"] / f"{NOTEBOOK}.ipynb")
    hard = c["subs"] / "bob" / f"{NOTEBOOK}.ipynb"  # a hard link is refused too
    hard.unlink()
    os.link(c["solutions"] / f"{NOTEBOOK}.ipynb", hard)
    result = _term(c, steps=("manual", "similarity"), threshold=0.3)
    page = (c["run"] / "term" / "manual" / f"{NOTEBOOK}__{MANUAL_ID}.html").read_text()
    assert "It keeps the row axis so the means broadcast." not in page  # the key's answer
    assert page.count("no answer (missing)") == 2
    assert all("erin" not in (p.first, p.second) and "bob" not in (p.first, p.second)
               for p in result.flagged_pairs)
    assert not any(m.student in ("erin", "bob") for m in result.key_copies)


def test_an_eleven_megabyte_essay_and_reason_stop_nothing(term_class):
    c = term_class
    nb = read_notebook(c["subs"] / "carol" / f"{NOTEBOOK}.ipynb")
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == MANUAL_ID:
            cell.source = "word " * (HUGE // 5)
    write_notebook(nb, c["subs"] / "carol" / f"{NOTEBOOK}.ipynb")
    rows = [Row(s, NOTEBOOK, e, 0.0, p, "failed", "ValueError: " + "x" * HUGE if s == "carol"
                else "AssertionError") for s in ("alice", "carol") for e, p in EXERCISES]
    write_csv(rows, c["run"])  # what an earlier grader wrote, before its reasons were capped
    with open(c["run"] / "grades.csv", "a", encoding="utf-8") as fh:
        fh.write("zed,00_welcome,ch00-center-rows,not-a-number\n")  # a broken row
    _term(c)
    page = c["run"] / "term" / "manual" / f"{NOTEBOOK}__{MANUAL_ID}.html"
    assert page.stat().st_size < 1_000_000
    assert "cut by the grader at 20,000 of" in page.read_text()
    for path in (c["run"] / "term").rglob("*"):
        if path.is_file():
            assert path.stat().st_size < MAX_PAGE_BYTES + 4 * HUGE // 3, path
    assert (c["run"] / "term" / "canvas.csv").is_file()
    with open(c["run"] / "term" / "totals.csv", newline="", encoding="utf-8") as fh:
        assert {r["student"] for r in csv.DictReader(fh)} >= {"alice", "carol", "zed"}


def test_the_graders_csv_writer_caps_every_field_it_takes_from_a_submission(tmp_path):
    from autograd_lab.course.grading.sanitize import clip
    text = clip("ValueError: " + "x" * HUGE)
    assert len(text) < 2_100 and text.endswith(f"cut by the grader at 2,000 of {HUGE + 12:,} "
                                               "characters]")


# --- similarity on a synthetic class -------------------------------------------------------

HONEST = {
    "frank": ('''def center_rows(X: np.ndarray) -> np.ndarray:
    """Return X minus the mean of each of its rows (X is 2-D and left unchanged)."""
    m = np.mean(X, axis=1)
    return X - m[:, np.newaxis]
''', '''def pairwise_sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared distances D[i, j] between rows A[i] (A is (n, d)) and B[j] (B is (m, d))."""
    return np.sum(A**2, axis=1)[:, None] + np.sum(B**2, axis=1)[None, :] - 2 * np.dot(A, B.T)
'''),
    "gina": ('''def center_rows(X: np.ndarray) -> np.ndarray:
    """Return X minus the mean of each of its rows (X is 2-D and left unchanged)."""
    rows = []
    for r in X:
        rows.append(r - r.mean())
    return np.array(rows)
''', '''def pairwise_sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared distances D[i, j] between rows A[i] (A is (n, d)) and B[j] (B is (m, d))."""
    n, m = len(A), len(B)
    D = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            D[i, j] = ((A[i] - B[j]) ** 2).sum()
    return D
'''),
}


def _class(c) -> tuple[dict[str, str], str, str, set[tuple[str, str]]]:
    """Written code of: the five honest students of the term fixture and two more, two key
    copies, dave (carol's, renamed) and mallory (bob's, pasted into an added cell after the
    untouched stubs); with the true copy pairs."""
    released = read_notebook(c["course"] / f"{NOTEBOOK}.ipynb")
    key = read_notebook(c["solutions"] / f"{NOTEBOOK}.ipynb")
    given = given_code(released)
    ids = [str(nbgrader_meta(x)["grade_id"]) for x in released.cells
           if nbgrader_meta(x).get("solution") and x.cell_type == "code"]
    texts = {}
    for student, answers in {**ANSWERS, **HONEST}.items():
        nb = copy.deepcopy(released)
        for cell in nb.cells:
            if nbgrader_meta(cell).get("grade_id") in ids:
                cell.source = answers[ids.index(nbgrader_meta(cell)["grade_id"])]
        texts[student] = written_code(nb, given)
    for student in ("keyone", "keytwo"):
        texts[student] = written_code(key, given)
    moved = copy.deepcopy(released)
    import nbformat
    moved.cells.append(nbformat.v4.new_code_cell("\n".join(ANSWERS["bob"])))
    texts["mallory"] = written_code(moved, given)
    return texts, given, written_code(key, given), {("carol", "dave"), ("bob", "mallory")}


def test_all_written_code_is_compared_and_the_planted_copy_ranks_first(term_class):
    texts, given, key, copies = _class(term_class)
    assert "np.einsum" in texts["mallory"]  # the added cell is compared
    pairs = compare(NOTEBOOK, texts, given, 0.5, key)
    top = {(p.first, p.second) for p in pairs[:2]}
    assert top == copies, [(p.first, p.second, round(p.similarity, 2)) for p in pairs[:5]]
    keyed = [(p.first, p.second) for p in pairs if {p.first, p.second} == {"keyone", "keytwo"}]
    assert keyed and all(p.similarity < 0.5 for p in pairs
                         if {p.first, p.second} == {"keyone", "keytwo"})
    # alice's one-line answers are the key's own: reported with the key copies, not as pairs
    assert {m.student for m in key_matches(NOTEBOOK, texts, given, key)} == \
        {"alice", "keyone", "keytwo"}


def test_precision_on_a_synthetic_class(term_class):
    """The figure docs/grading.md states: at the default threshold every flagged pair is a
    real copy (precision 1.0) and every real copy is flagged (recall 1.0)."""
    texts, given, key, copies = _class(term_class)
    pairs = compare(NOTEBOOK, texts, given, 0.5, key)
    assert len(pairs) == len(list(itertools.combinations(texts, 2)))
    flagged = {(p.first, p.second) for p in pairs if p.similarity >= 0.5}
    assert len(flagged & copies) / len(flagged) == 1.0
    assert len(flagged & copies) / len(copies) == 1.0


# --- identity -------------------------------------------------------------------------------

def test_a_duplicate_sis_id_is_refused_at_export(term_class):
    """A folder S0001 with no roster entry and the roster's alice, whose SIS User ID is S0001:
    canvas.csv has one line for S0001, alice's, and the term says why the other was left out."""
    c = term_class
    write_run(c["run"], EXERCISES, {"alice": [2, 2], "S0001": [0, 0], "\uff45rin": [1, 1],
                                    "erin": [2, 2]})
    (c["subs"] / "course.toml").write_text('[students.alice]\nsis_user_id = "S0001"\n',
                                           encoding="utf-8")
    result = _term(c, steps=("export",))
    with open(c["run"] / "term" / "canvas.csv", newline="", encoding="utf-8") as fh:
        lines = list(csv.reader(fh))[2:]
    sis = [line[2] for line in lines]
    assert sis.count("S0001") == 1 and lines[sis.index("S0001")][0] == "alice"
    assert "its SIS User ID 'S0001' is also that of 'alice'" in result.refused["S0001"]
    assert len([s for s in sis if s in ("erin", "\uff45rin")]) == 1  # read the same: one line
    assert set(result.refused) == {"S0001", "erin"} or set(result.refused) == {"S0001", "\uff45rin"}


@pytest.mark.parametrize("roster, words", [
    ('[students.alice]\nname = "A"\n[students."\uff41lice"]\nname = "B"\n', "read the same"),
    ('[students.a]\nsis_user_id = "S1"\n[students.b]\nsis_user_id = "s1"\n',
     "the same sis_user_id"),
])
def test_a_roster_with_two_names_or_ids_that_read_the_same_is_refused(tmp_path, roster, words):
    from autograd_lab.course.authoring.notebooks import CourseError
    from autograd_lab.course.grading.term.config import load_config
    (tmp_path / "course.toml").write_text(roster, encoding="utf-8")
    with pytest.raises(CourseError, match=words):
        load_config(tmp_path / "course.toml")
