"""``autograd-lab check``: the score table a learner reads, run through the console script."""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from autograd_lab.course.authoring.notebooks import write_notebook
from autograd_lab.course.learner.check import ExerciseResult, check_notebook, format_table
from tests._console import run_cli
from tests.fixtures import course_nb

ROOT = Path(__file__).resolve().parents[2]

WRONG_CENTER = "    return X"  # forgets to subtract the row means


@pytest.fixture(scope="module")
def student() -> nbformat.NotebookNode:
    pytest.importorskip("nbgrader")
    from autograd_lab.course.authoring.release import release_notebook
    return release_notebook(course_nb.key_notebook(), course_nb.NAME)


def rows(out: str) -> dict[str, str]:
    """Each exercise's row with its wrapped continuation lines joined into one line."""
    found: dict[str, str] = {}
    current = None
    for line in out.splitlines()[1:]:
        if line.startswith(" ") and current:
            found[current] += " " + line.strip()
        elif line.startswith("total"):
            found["total"] = line
            current = None
        elif line.strip():
            current = line.split()[0]
            found[current] = " ".join(line.split())
    return found


def message_of(nb: nbformat.NotebookNode, tmp_path, exercise: str) -> str:
    """The checker's own message for ``exercise``, read from the notebook run in-process."""
    from autograd_lab.course.learner.check import execute
    nb = nbformat.from_dict(nb)
    execute(nb, tmp_path, 60)
    cell = course_nb.find_cell(nb, exercise)
    return next(o.evalue for o in cell.outputs if o.output_type == "error")


def test_untouched_exercises_are_not_started_and_counted_apart(tmp_path, student) -> None:
    nb = course_nb.solved(student)
    course_nb.find_cell(nb, "ch00-center-rows-code").source = \
        course_nb.find_cell(student, "ch00-center-rows-code").source  # stub inside a function
    course_nb.find_cell(nb, "ch00-pairwise-sq-dists-code").source = \
        course_nb.find_cell(student, "ch00-pairwise-sq-dists-code").source  # stub at top level
    write_notebook(nb, tmp_path / "fresh.ipynb")
    done = run_cli("check", str(tmp_path / "fresh.ipynb"), "--timeout", "60")
    assert done.returncode == 1, done.stderr
    table = rows(done.stdout)
    for exercise in course_nb.EXERCISES:
        assert table[exercise].split()[1:4] == ["0/" + f"{course_nb.EXERCISES[exercise]:g}",
                                                "not", "started"]
        assert "NotImplementedError(...)" in table[exercise]
    assert table["total"].split()[1] == "0/5"
    assert "0 of 2 exercises passed, 2 not started" in table["total"]
    assert "failed" not in table["total"]


def test_one_done_one_failed_one_not_started_in_the_total(student) -> None:
    results = [ExerciseResult("a", 1, 1, True), ExerciseResult("b", 0, 2, False, "X: y"),
               ExerciseResult("c", 0, 3, False, "stub", not_started=True)]
    total = format_table(results, width=80).splitlines()[-1]
    assert total.split()[:2] == ["total", "1/6"]
    assert total.endswith("1 of 3 exercises passed, 1 failed, 1 not started")


def test_a_failure_shows_its_first_line_and_hint_in_full(tmp_path, student) -> None:
    nb = course_nb.solved(student, center=WRONG_CENTER)
    write_notebook(nb, tmp_path / "mine.ipynb")
    message = message_of(nb, tmp_path, "ch00-center-rows")
    first, hint = message.splitlines()[0], message.splitlines()[-1].strip()
    assert len(first) > 100 and hint.startswith("hint:")  # longer than any table column

    done = run_cli("check", str(tmp_path / "mine.ipynb"))
    assert done.returncode == 1
    row = rows(done.stdout)["ch00-center-rows"]
    assert row.startswith("ch00-center-rows 0/2 FAILED")
    assert f"AssertionError: {first} {hint}" in row  # whole, wrapped, in order
    assert "…" not in done.stdout and "received: [[" not in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 100
    assert "run with -v" in done.stdout
    assert rows(done.stdout)["ch00-pairwise-sq-dists"].split()[1:3] == ["3/3", "passed"]

    verbose = run_cli("check", "-v", str(tmp_path / "mine.ipynb"))
    assert verbose.returncode == 1
    for line in message.splitlines()[1:]:  # expected, received (arrays as printed), hint
        assert line.strip() in verbose.stdout or line.strip().startswith("hint:")
    assert "received: [[" in verbose.stdout and "run with -v" not in verbose.stdout


@pytest.mark.parametrize("code, error, line, text", [
    ("def pairwise_sq_dists(A, B):\n    d = (A - B\n    return d", "SyntaxError", 2,
     "'(' was never closed"),
    ("def pairwise_sq_dists(A, B):\nreturn A", "IndentationError", 2,
     "expected an indented block"),
])
def test_an_exercise_cells_own_error_is_reported_with_its_line(tmp_path, student, code, error,
                                                               line, text) -> None:
    write_notebook(course_nb.solved(student, pairwise=code), tmp_path / "mine.ipynb")
    results = check_notebook(tmp_path / "mine.ipynb", timeout=60)
    assert [r.status for r in results] == ["passed", "FAILED"]
    summary = results[1].summary()[0]
    assert summary.startswith(f"{error} in your exercise cell, line {line} "), summary
    assert text in summary and "NameError" not in summary
    assert f"(`{code.splitlines()[line - 1].strip()}`)" in summary
    assert "NameError: name 'pairwise_sq_dists' is not defined" in results[1].detail


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_timeout_must_be_a_positive_number(tmp_path, value) -> None:
    done = run_cli("check", str(tmp_path / "any.ipynb"), "--timeout", value, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: autograd-lab check")
    assert re.search(r"argument --timeout: .*(above 0|number)", done.stderr)


def test_wrapping_keeps_every_word_at_any_width() -> None:
    detail = "AssertionError: " + " ".join(f"word{i}" for i in range(60)) + \
        "\n  expected: 1\n  hint: " + " ".join(f"tip{i}" for i in range(30))
    for width in (60, 100, 200):
        table = format_table([ExerciseResult("ch01-x", 0, 1, False, detail)], width=width)
        words = table.split()
        assert all(f"word{i}" in words and f"tip{i}" in words for i in range(30))
        assert "expected:" not in words
        assert "expected:" in format_table([ExerciseResult("ch01-x", 0, 1, False, detail)],
                                           width=width, verbose=True)


def test_check_reports_which_mygrad_modules_were_used_and_leaves_them_alone(tmp_path) -> None:
    """The learner's mygrad/ beside the notebook is reported (each module checked by its
    chapter) and left as it was; the score comes from the run the grader makes."""
    import shutil

    from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
    shutil.copy(ROOT / "course" / "03_function.ipynb", tmp_path)
    own = tmp_path / PACKAGE
    own.mkdir()
    (own / "variable.py").write_text((REFERENCE_ROOT / PACKAGE / "variable.py").read_text())
    before = {p.name: p.read_text() for p in own.iterdir() if p.suffix == ".py"}
    done = run_cli("check", str(tmp_path / "03_function.ipynb"), timeout=600)
    assert "your mygrad (what this notebook uses when you run it" in done.stdout, done.stdout + done.stderr
    assert "your variable.py (each passed its chapter's checks)" in done.stdout
    assert "Hidden tests add cases when your instructor grades" in done.stdout
    assert {p.name: p.read_text() for p in own.iterdir() if p.suffix == ".py"} == before


def test_check_scores_with_the_modules_the_grader_uses(tmp_path, monkeypatch) -> None:
    """One score: the grader runs a notebook alone (the course's modules for earlier chapters),
    so check runs it with an empty mygrad/ of its own, not the learner's folder."""
    import shutil

    from autograd_lab.course.learner import check as check_module
    from autograd_lab.course.learner.export import DIR_ENV, PACKAGE, REFERENCE_ROOT
    shutil.copy(ROOT / "course" / "04_engine.ipynb", tmp_path)
    (tmp_path / PACKAGE).mkdir()
    for name in ("variable", "function"):
        (tmp_path / PACKAGE / f"{name}.py").write_text((REFERENCE_ROOT / PACKAGE / f"{name}.py").read_text())
    seen = {}

    def execute(nb, cwd, timeout):
        folder = Path(os.environ[DIR_ENV])
        seen["folder"], seen["content"] = folder, sorted(p.name for p in folder.iterdir())
        return None

    monkeypatch.setattr(check_module, "execute", execute)
    monkeypatch.delenv(DIR_ENV, raising=False)
    _, lines = check_module.check_notebook_and_library(tmp_path / "04_engine.ipynb")
    assert seen["folder"] != tmp_path and seen["content"] == []
    assert lines == ["mygrad: your variable.py, function.py (each passed its chapter's checks)"]


# -- the course-wide score: `autograd-lab check FOLDER` or several notebooks -------------------
def test_the_course_table_has_a_row_per_chapter_and_the_total() -> None:
    from autograd_lab.course.learner.check import ChapterScore, format_course
    done = ExerciseResult("a", 2, 2, True)
    failed = ExerciseResult("b", 0, 3, False, "X: y")
    stub = ExerciseResult("c", 0, 1, False, "stub", not_started=True)
    text = format_course([ChapterScore("03_function.ipynb", (done, failed)),
                          ChapterScore("04_engine.ipynb", (stub,)),
                          ChapterScore("05_ops.ipynb", error="not a readable notebook")])
    table = {line.split("  ")[0].strip(): " ".join(line.split()) for line in text.splitlines()}
    assert table["03_function.ipynb"] == "03_function.ipynb 2/5 1 of 2 exercises passed, 1 failed"
    assert table["04_engine.ipynb"] == "04_engine.ipynb 0/1 0 of 1 exercises passed, 1 not started"
    assert table["05_ops.ipynb"] == "05_ops.ipynb - not checked: not a readable notebook"
    assert table["course total"] == ("course total 2/6 1 of 3 exercises passed, 1 failed, "
                                     "1 not started (33%)")
    assert "could not be checked and count no points: 05_ops.ipynb" in text


def test_a_folder_means_its_chapter_notebooks_in_order(tmp_path) -> None:
    from autograd_lab.course.authoring.notebooks import CourseError
    from autograd_lab.course.learner.check import notebooks_to_check
    for name in ("10_conv.ipynb", "02_variable.ipynb", "notes.ipynb", "02_variable-copy.txt"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "11_higher.ipynb").mkdir()
    assert [p.name for p in notebooks_to_check([tmp_path])] == ["02_variable.ipynb",
                                                                "10_conv.ipynb"]
    twice = notebooks_to_check([tmp_path / "10_conv.ipynb", tmp_path])
    assert [p.name for p in twice] == ["10_conv.ipynb", "02_variable.ipynb"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CourseError, match="no chapter notebooks"):
        notebooks_to_check([empty])


def test_check_over_a_folder_prints_each_chapter_and_the_course_score(tmp_path, student) -> None:
    write_notebook(course_nb.solved(student), tmp_path / "00_done.ipynb")
    write_notebook(student, tmp_path / "01_fresh.ipynb")
    (tmp_path / "scratch.ipynb").write_text("not a notebook")      # not a chapter: left out
    done = run_cli("check", str(tmp_path), "--timeout", "60")
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert out.index("== 00_done.ipynb ==") < out.index("== 01_fresh.ipynb ==") \
        < out.index("== the course ==")
    course = out.split("== the course ==")[1]
    rows_ = {line.split()[0]: " ".join(line.split()) for line in course.splitlines() if line}
    assert rows_["00_done.ipynb"] == "00_done.ipynb 5/5 2 of 2 exercises passed"
    assert rows_["01_fresh.ipynb"] == ("01_fresh.ipynb 0/5 0 of 2 exercises passed, "
                                       "2 not started")
    assert rows_["course"] == ("course total 5/10 2 of 4 exercises passed, 2 not started (50%)")
    assert "scratch" not in out


def test_check_of_several_notebooks_names_one_that_is_missing(tmp_path, student) -> None:
    write_notebook(course_nb.solved(student), tmp_path / "00_done.ipynb")
    done = run_cli("check", str(tmp_path / "00_done.ipynb"), str(tmp_path / "01_gone.ipynb"),
                   "--timeout", "60")
    assert done.returncode == 1, done.stderr
    course = done.stdout.split("== the course ==")[1]
    assert "01_gone.ipynb" in course and "not checked: No notebook at" in course
    assert "course total" in course and "5/5" in course


def test_answers_graded_by_hand_are_listed_and_not_scored() -> None:
    """Chapter 12's three written answers (4 points) are graded by the instructor: check lists
    them as such instead of reporting 100 % with the answers left empty."""
    from autograd_lab.course.authoring.notebooks import read_notebook
    from autograd_lab.course.learner.check import ChapterScore, by_hand, format_course
    hand = by_hand(read_notebook(ROOT / "course" / "12_capstone.ipynb"))
    assert [(r.exercise, r.max_points) for r in hand] == [
        ("ch12-pinball-kink", 1), ("ch12-pinball-forecast", 2), ("ch12-pinball-compare", 1)]
    done = ExerciseResult("ch12-log-cosh", 2, 2, True)
    table = format_table([done, *hand], width=100)
    assert rows(table)["ch12-pinball-forecast"].split()[1:4] == ["-/2", "by", "instructor"]
    assert rows(table)["total"].split()[1] == "2/2"
    assert "(and 4 point(s) in 3 answer(s) your instructor grades by hand)" in table
    course = format_course([ChapterScore("12_capstone.ipynb", (done, *hand))])
    assert "2/2" in course and "(and 4 point(s) your instructor grades by hand)" in course
