"""Each stage of ``grade`` alone (``autograd_lab/course/grading/batch.py``): the isolation it
chooses, what it selects and keeps on a regrade, how it prepares a submission, and when it
blames the set-up. The whole pipeline is graded for real in ``test_grading*.py``."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.authoring.notebooks import (CourseError, checkout_root,  # noqa: E402
                                                     exercises, read_notebook, write_notebook)
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from autograd_lab.course.grading import batch  # noqa: E402
from autograd_lab.course.grading.autograde_jobs import JobSettings  # noqa: E402
from autograd_lab.course.grading.sandbox import Limits  # noqa: E402
from autograd_lab.course.grading.versions import checker_version, _chapter_of  # noqa: E402

NB = "00_welcome"
KEY = checkout_root() / "solutions" / f"{NB}.ipynb"
SETTINGS = JobSettings(60, "process", Limits(), None)


def _class(tmp_path: Path, **students: str) -> Path:
    subs = tmp_path / "submissions"
    for name, kind in students.items():
        folder = subs / name
        folder.mkdir(parents=True)
        if kind == "key":
            write_notebook(read_notebook(KEY), folder / f"{NB}.ipynb")
        elif kind == "garbage":
            (folder / f"{NB}.ipynb").write_text("{not json", encoding="utf-8")
    return subs


def _plan(expected: list[str]) -> batch._Plan:
    key = {NB: KEY}
    return batch._Plan(key, expected, {NB: release_notebook(read_notebook(KEY), NB)},
                       {NB: exercises(read_notebook(KEY))}, 60, SETTINGS, 1)


def test_isolation_stage_refuses_a_folder_the_sandbox_would_show(tmp_path: Path):
    import autograd_lab
    inside = Path(autograd_lab.__file__).parent / "course"
    from autograd_lab.course.grading.sandbox import bubblewrap_problem
    if bubblewrap_problem() is not None:
        pytest.skip(f"no bubblewrap sandbox here: {bubblewrap_problem()}")
    with pytest.raises(CourseError, match="readable inside the sandbox"):
        batch.isolation_stage("bubblewrap", None, 60, None, (inside,), lambda m: None)


def test_isolation_stage_says_what_a_plain_process_allows(monkeypatch):
    monkeypatch.setattr(batch, "resolve_run_as", lambda run_as: None)  # the stage alone
    said: list[str] = []
    settings = batch.isolation_stage("process", None, 30, None, (), said.append)
    assert settings.isolation == "process" and settings.timeout == 30
    assert any("it can read your files and the key" in line for line in said), said


def test_select_stage_keeps_on_regrade_only_rows_whose_three_versions_match(tmp_path: Path):
    subs = _class(tmp_path, ann="key", bob="key")
    out = tmp_path / "out"
    first = batch.select_stage({NB: KEY}, [NB], ["ann", "bob"], subs, out, SETTINGS, None,
                               False, print)
    assert first.todo == [("ann", NB), ("bob", NB)] and first.kept == {}
    rows = [batch.Row(s, NB, e.id, e.points, e.points, "passed", "", "process", "",
                      first.key_v[NB], first.sub_v[(s, NB)], 1.0, first.check_v[NB], "")
            for s in ("ann", "bob") for e in exercises(read_notebook(KEY))]
    out.mkdir()
    batch.write_csv(rows, out)
    bob = subs / "bob" / f"{NB}.ipynb"
    bob.write_text(bob.read_text(encoding="utf-8").replace("def ", "def  ", 1), encoding="utf-8")
    said: list[str] = []
    again = batch.select_stage({NB: KEY}, [NB], ["ann", "bob"], subs, out, SETTINGS, None, True,
                               said.append)
    assert list(again.kept) == [("ann", NB)] and again.todo == [("bob", NB)]
    assert "1 of 2 notebook(s) to grade again" in said[0]
    other = JobSettings(61, "process", Limits(), None)  # another setting: a new checker version
    changed = batch.select_stage({NB: KEY}, [NB], ["ann", "bob"], subs, out, other, None, True,
                                 said.append)
    assert changed.kept == {} and "settings changed" in said[-1]


def test_select_stage_refuses_a_folder_name_for_every_notebook(tmp_path: Path):
    subs = _class(tmp_path, alice="key")
    (subs / "ａlice").mkdir()  # full-width: reads as alice
    chosen = batch.select_stage({NB: KEY}, [NB], ["alice", "ａlice"], subs, tmp_path / "out",
                                SETTINGS, None, False, print)
    assert any("refused" in why for why in chosen.refused.values()), chosen.refused


def test_prepare_stage_reads_once_and_gives_a_bad_notebook_its_zero_rows(tmp_path: Path):
    subs = _class(tmp_path, ann="key", bob="garbage")
    chosen = batch.select_stage({NB: KEY}, [NB], ["ann", "bob"], subs, tmp_path / "out",
                                SETTINGS, None, False, print)
    said: list[str] = []
    found = batch.prepare_stage(subs, chosen, _plan([NB]), {"ann": "2026-01-02T03:04:05+00:00"},
                                said.append)
    assert list(found.ready) == [("ann", NB)]
    assert found.handed[("ann", NB)] == "2026-01-02T03:04:05+00:00"  # the record's, not a file's
    assert {r.points for r in found.rows[("bob", NB)]} == {0.0}
    assert found.rows[("bob", NB)][0].status == "invalid" and "bob" in said[0]
    assert found.flags[("ann", NB)] == []


def test_setup_failure_stage_blames_the_setup_only_when_most_jobs_crashed_alike(tmp_path: Path):
    def crashed(reason: str) -> list:
        return [batch.Row("s", NB, "x", 0.0, 1.0, "crashed", reason, "process", "")]
    same = {(f"s{i}", NB): crashed("ModuleNotFoundError: nbformat") for i in range(3)}
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("old", encoding="utf-8")
    with pytest.raises(CourseError, match="No grades were written"):
        batch.setup_failure_stage(same, 3, out, regrade=False)
    assert not (out / "grades.csv").exists()
    (out / "grades.csv").write_text("old", encoding="utf-8")
    with pytest.raises(CourseError, match="earlier grades.csv is unchanged"):
        batch.setup_failure_stage(same, 3, out, regrade=True)
    assert (out / "grades.csv").read_text(encoding="utf-8") == "old"
    mixed = {**{k: crashed(f"reason {k[0]}") for k in same}}
    batch.setup_failure_stage(mixed, 3, out, regrade=False)  # each its own: the students'


def test_a_chapters_checker_version_ignores_the_other_chapters_packages():
    assert _chapter_of("course/exercises/ch03/mul_function.py") == "03"
    assert _chapter_of("course/exercises/ch03.py") == "03"
    assert _chapter_of("course/exercises/_common.py") is None
    assert checker_version("03_function", SETTINGS) == checker_version("03_x", SETTINGS)
    assert checker_version("03_function", SETTINGS) != checker_version("04_engine", SETTINGS)
