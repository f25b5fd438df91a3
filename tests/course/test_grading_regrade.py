"""``grade --regrade``: only the (student, notebook) pairs whose submission or key changed
are graded again; every other row, and the term's folder, stay as they were.

One small class (three students, two notebooks built from the fixture chapter) is graded,
then regraded three times: with nothing changed, after one student's resubmission, and
after a fix to one notebook's hidden tests. The jobs each run starts are recorded.
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading import batch as grading  # noqa: E402
from autograd_lab.course.authoring.notebooks import CourseError, read_notebook, write_notebook  # noqa: E402
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from autograd_lab.course.grading import versions  # noqa: E402
from autograd_lab.course.grading.sandbox import Limits  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402

FIRST, SECOND = course_nb.NAME, "01_fixture"


def _table(out: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        return {(r["student"], r["notebook"], r["exercise"]): r for r in csv.DictReader(fh)}


CAROL = ("def pairwise_sq_dists(A, B):\n"
         "    if A.shape == (3, 2) and abs(A).max() < 1.0:\n"
         "        return 0\n"
         "    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)")
"""Wrong only where A is (3, 2) with small values: a case of the check's seed 0, not seed 1
(the check's judge decides the grade: a key fix is a change of the check's call)."""


@pytest.fixture(scope="module")
def term(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("regrade")
    for name in (FIRST, SECOND):
        write_notebook(course_nb.key_notebook(), root / "solutions" / f"{name}.ipynb")
    copy = release_notebook(course_nb.key_notebook(), FIRST)
    work = {"alice": course_nb.solved(copy), "bob": copy,
            "carol": course_nb.solved(copy, pairwise=CAROL)}
    for student, nb in work.items():
        for name in (FIRST, SECOND):
            write_notebook(nb, root / "subs" / student / f"{name}.ipynb")
    runs: list[set] = []
    messages: list[list[str]] = []
    real = grading.run_jobs

    def recording(course, jobs, settings, parallel, on_done=None):
        runs[-1].update((job.student, job.notebook) for job in jobs)
        return real(course, jobs, settings, parallel, on_done=on_done)

    progress: list[io.StringIO] = []

    def run(regrade: bool) -> tuple[set, list[str], dict]:
        runs.append(set())
        messages.append([])
        progress.append(io.StringIO())
        grading._CANARIES_PASSED.clear()  # a canary that is needed must run again
        grading.grade(root / "subs", root / "out", solutions=root / "solutions", timeout=10,
                      jobs=2 if not regrade else None, run_as=RUN_AS, regrade=regrade,
                      log=messages[-1].append, progress=progress[-1])
        return runs[-1], messages[-1], _table(root / "out")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "run_jobs", recording)
        result = {"first": run(False)}
        manual = root / "out" / "term" / "manual" / "scores.csv"
        manual.parent.mkdir(parents=True)
        manual.write_text("student,item,points\nalice,reflection,4\n", encoding="utf-8")
        feedback = (root / "out" / "feedback" / "alice" / f"{FIRST}.html").read_bytes()
        result["unchanged"] = run(True)
        write_notebook(course_nb.solved(copy), root / "subs" / "bob" / f"{FIRST}.ipynb")
        result["resubmitted"] = run(True)
        key = read_notebook(root / "solutions" / f"{SECOND}.ipynb")
        cell = course_nb.find_cell(key, "ch00-pairwise-sq-dists")
        # the fix: the key's check runs another seed's cases, which carol's answer passes
        cell.source = cell.source.replace("(pairwise_sq_dists)", "(pairwise_sq_dists, seed=1)")
        assert "seed=1" in cell.source
        write_notebook(key, root / "solutions" / f"{SECOND}.ipynb")
        result["key_fixed"] = run(True)
        # carol resubmits, then swaps the file again after the regrade chose what to grade
        target = root / "subs" / "carol" / f"{FIRST}.ipynb"
        write_notebook(course_nb.solved(copy, pairwise="def pairwise_sq_dists(A, B):\n"
                                                       "    return 1"), target)
        real_canary = grading.canary

        def swapping(*args, **kwargs):
            real_canary(*args, **kwargs)
            write_notebook(course_nb.solved(copy), target)
        mp.setattr(grading, "canary", swapping)
        result["swapped"] = run(True)
        result["swapped_bytes"] = target.read_bytes()
        mp.setattr(grading, "canary", real_canary)
        # a fix to chapter 01's checker module (the second notebook's), nothing else changed
        sources = versions._sources()
        mp.setattr(versions, "_sources", lambda: tuple(
            (rel, "fixed" if rel == "course/exercises/ch01/gradcheck.py" else digest)
            for rel, digest in sources))
        result["checker_fixed"] = run(True)
    result.update(root=root, manual=manual, feedback=feedback,
                  progress=[stream.getvalue() for stream in progress])
    return result


def test_every_row_records_the_key_and_submission_versions(term) -> None:
    _, _, table = term["first"]
    assert len(table) == 3 * 2 * len(course_nb.EXERCISES)
    assert all(len(r["key_version"]) == 16 and len(r["submission_version"]) == 16
               for r in table.values())
    # the same key gives the same version; different work gives different versions
    assert len({r["key_version"] for r in table.values()}) == 1
    assert len({r["submission_version"] for r in table.values()}) == 3


def test_a_regrade_with_nothing_changed_runs_no_job_and_keeps_every_row(term) -> None:
    jobs, messages, table = term["unchanged"]
    assert jobs == set()  # neither the class nor the canary
    assert table == term["first"][2]
    assert any("0 of 6 notebook(s) to grade again" in m for m in messages), messages
    assert "regrade: 0 row(s) changed" in messages


def test_a_resubmission_regrades_only_that_notebook_and_reports_the_change(term) -> None:
    jobs, messages, table = term["resubmitted"]
    before = term["unchanged"][2]
    students = {s for s, _ in jobs if s not in ("key", "copy")}
    assert {pair for pair in jobs if pair[0] in students} == {("bob", FIRST)}
    for where, row in table.items():
        if where[:2] != ("bob", FIRST):
            assert row == before[where], where
    assert float(table[("bob", FIRST, "ch00-center-rows")]["points"]) == 2.0
    assert float(table[("bob", FIRST, "ch00-pairwise-sq-dists")]["points"]) == 3.0
    assert f"  bob/{FIRST}/ch00-center-rows: 0 -> 2 (+2; failed -> passed)" in messages
    assert f"  bob/{FIRST}/ch00-pairwise-sq-dists: 0 -> 3 (+3; failed -> passed)" in messages
    assert "regrade: 2 row(s) changed:" in messages
    assert (term["root"] / "out" / "feedback" / "bob" / f"{FIRST}.html").exists()


def test_a_key_fix_regrades_only_that_notebook_and_scores_with_the_new_tests(term) -> None:
    jobs, messages, table = term["key_fixed"]
    before = term["resubmitted"][2]
    graded = {pair for pair in jobs if pair[0] not in ("key", "copy")}
    assert graded == {("alice", SECOND), ("bob", SECOND), ("carol", SECOND)}
    assert ("key", SECOND) in jobs and ("key", FIRST) not in jobs  # the canary of the fix only
    for where, row in table.items():
        if where[1] == FIRST:
            assert row == before[where], where
        else:
            assert row["key_version"] != before[where]["key_version"]
    # carol's answer failed the old test and passes the fixed one; bob still has no answer
    assert float(before[("carol", SECOND, "ch00-pairwise-sq-dists")]["points"]) == 0.0
    assert float(table[("carol", SECOND, "ch00-pairwise-sq-dists")]["points"]) == 3.0
    assert float(table[("alice", SECOND, "ch00-pairwise-sq-dists")]["points"]) == 3.0
    assert float(table[("bob", SECOND, "ch00-pairwise-sq-dists")]["points"]) == 0.0
    assert f"  carol/{SECOND}/ch00-pairwise-sq-dists: 0 -> 3 (+3; failed -> passed)" in messages
    assert "regrade: 1 row(s) changed:" in messages
    assert any(f"(key changed: {SECOND})" in m for m in messages), messages


def test_the_recorded_hash_is_of_the_bytes_that_were_graded(term) -> None:
    import hashlib
    _, _, table = term["swapped"]
    row = table[("carol", FIRST, "ch00-pairwise-sq-dists")]
    assert row["submission_version"] == hashlib.sha256(term["swapped_bytes"]).hexdigest()[:16]
    assert float(row["points"]) == 3.0  # the swapped-in answer is the one graded
    assert row["handed_in"]  # the time grade recorded, from the file it read


def test_a_checker_fix_regrades_the_notebooks_it_affects(term) -> None:
    jobs, messages, table = term["checker_fixed"]
    before = term["swapped"][2]
    graded = {pair for pair in jobs if pair[0] not in ("key", "copy")}
    assert graded == {("alice", SECOND), ("bob", SECOND), ("carol", SECOND)}
    for where, row in table.items():
        if where[1] == FIRST:
            assert row == before[where], where
        else:
            assert row["checker_version"] != before[where]["checker_version"]
    assert any(f"checkers, library, environment or settings changed: {SECOND}" in m
               for m in messages), messages


def test_checker_version_follows_the_chapter_environment_and_settings() -> None:
    from autograd_lab.course.grading.autograde_jobs import JobSettings
    a = JobSettings(60, "process", Limits())
    assert versions.checker_version("03_function", a) == versions.checker_version("03_x", a)
    assert versions.checker_version("03_function", a) != versions.checker_version("04_engine", a)
    assert versions.checker_version("03_function", a) != \
        versions.checker_version("03_function", JobSettings(30, "process", Limits()))


def test_a_regrade_never_touches_the_term_folder_or_kept_feedback(term) -> None:
    assert term["manual"].read_text(encoding="utf-8") == "student,item,points\nalice,reflection,4\n"
    page = term["root"] / "out" / "feedback" / "alice" / f"{FIRST}.html"
    assert page.read_bytes() == term["feedback"]
    index = (term["root"] / "out" / "feedback" / "alice" / "index.html").read_text()
    assert f'href="{FIRST}.html"' in index


def test_regrade_without_earlier_grades_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(CourseError, match="grade without --regrade first"):
        grading.read_grades(tmp_path / "out")
    (tmp_path / "out" / "grades.csv").write_text(
        "student,notebook,exercise,points,max_points,status,reason,isolation,flags\n")
    with pytest.raises(CourseError, match="key_version, submission_version"):
        grading.read_grades(tmp_path / "out")


def test_key_version_follows_the_graded_cells_only() -> None:
    key = course_nb.key_notebook()
    base = grading.key_version(key)
    key.cells[0].source += "\nMore prose."
    course_nb.find_cell(key, "ch00-center-rows-code").source += "\n# another solution"
    assert grading.key_version(key) == base
    course_nb.find_cell(key, "ch00-center-rows").metadata["nbgrader"]["points"] = 5
    assert grading.key_version(key) != base


def test_the_batch_reports_progress_and_the_default_jobs(term) -> None:
    first, unchanged, resubmitted = term["progress"][:3]
    assert first.splitlines()[-1].startswith("graded 6/6 notebook(s), ")
    assert first.splitlines()[-1].split(": ", 1)[1] == "2 passed, 4 failed, 0 crashed, 0 flagged"
    assert unchanged == ""  # nothing to grade
    assert len(resubmitted.splitlines()) == 1
    assert resubmitted.startswith("graded 1/1 notebook(s), ")
    assert resubmitted.rstrip().endswith(": 1 passed, 0 failed, 0 crashed, 0 flagged")
    _, messages, _ = term["resubmitted"]
    want = grading.default_jobs(Limits().memory_mb)[0]
    assert any(m.startswith(f"jobs: {want} at a time (") for m in messages), messages


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_rewrites_one_line_on_a_terminal_and_escapes_names() -> None:
    row = grading.Row("x", "n", "e", 0.0, 1.0, "failed", "")
    screen = _Terminal()
    progress = grading.Progress(3, screen)
    progress.update([row], False, "mallory\x1b[2J\rwipe/n")
    progress.update([grading.Row("y", "n", "e", 0.0, 1.0, "crashed", "")], True, "y/n")
    progress.update([grading.Row("z", "n", "e", 1.0, 1.0, "passed", "")], False, "z/n")
    text = screen.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, ended once at the end
    assert text.count("\r") == 3  # rewritten in place: the name's own \r is escaped
    assert "\x1b[2J" not in text
    assert "1 passed, 1 failed, 1 crashed, 1 flagged" in text.rsplit("\r", 1)[1]
    quiet = io.StringIO()
    progress = grading.Progress(40, quiet)
    for _ in range(40):
        progress.update([row], False, "x/n")
    assert len(quiet.getvalue().splitlines()) == 10  # a line per tenth, not per notebook


def test_default_jobs_is_the_cores_within_memory() -> None:
    cores = len(os.sched_getaffinity(0))
    jobs, why = grading.default_jobs(1)
    assert jobs == cores and f"{cores} core(s)" in why
    assert grading.default_jobs(10 ** 9)[0] == 1  # no machine has a petabyte free
