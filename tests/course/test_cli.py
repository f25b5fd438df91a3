"""The ``autograd-lab`` command: start, check, release, grade, and the subcommand registry."""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys

import nbformat
import pytest

from autograd_lab import cli
from autograd_lab.course.learner import start as start_module
from autograd_lab.course.authoring.notebooks import write_notebook
from autograd_lab.course.learner.check import ExerciseResult, format_table
from tests.fixtures import course_nb


@pytest.fixture(scope="module")
def student() -> nbformat.NotebookNode:
    pytest.importorskip("nbgrader")
    from autograd_lab.course.authoring.release import release_notebook
    return release_notebook(course_nb.key_notebook(), course_nb.NAME)


def test_help_lists_every_command(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("start", "check", "release", "grade", "train"):
        assert command in out


def test_a_command_does_without_the_slow_iri_checker(tmp_path) -> None:
    """rfc3987_syntax (which jsonschema loads under nbformat, for "iri" formats nobody here checks)
    takes seconds to import; a command's process reads and writes notebooks without it."""
    pytest.importorskip("nbgrader")
    write_notebook(course_nb.key_notebook(), tmp_path / "solutions" / f"{course_nb.NAME}.ipynb")
    code = ("import sys\nfrom autograd_lab.cli import main\n"
            f"code = main(['release', '--solutions', {str(tmp_path / 'solutions')!r}, "
            f"'--out', {str(tmp_path / 'course')!r}])\n"
            "import jsonschema\n"
            "print(code, sys.modules.get('rfc3987_syntax', 'absent'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split()[-2:] == ["0", "None"], done.stdout + done.stderr
    assert nbformat.read(tmp_path / "course" / f"{course_nb.NAME}.ipynb", as_version=4).cells


def test_registry_takes_new_commands(monkeypatch, capsys) -> None:
    def add_hello(sub: argparse._SubParsersAction) -> None:
        p = sub.add_parser("hello", help="say hello")
        p.add_argument("--times", type=int, default=1)
        p.set_defaults(func=lambda args: print(f"hello {args.times}") or 0)

    monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, add_hello])
    assert cli.main(["hello", "--times", "3"]) == 0
    assert capsys.readouterr().out == "hello 3\n"


def test_train_command_trains_and_writes_the_curves(tmp_path, capsys) -> None:
    png = tmp_path / "curves.png"
    assert cli.main(["train", "--model", "mlp", "--epochs", "2", "--no-progress", "--out", str(png)]) == 0
    assert "test accuracy" in capsys.readouterr().out and png.stat().st_size > 10_000


def test_release_writes_the_student_copies(tmp_path, capsys) -> None:
    pytest.importorskip("nbgrader")
    write_notebook(course_nb.key_notebook(), tmp_path / "sol" / f"{course_nb.NAME}.ipynb")
    code = cli.main(["release", "--solutions", str(tmp_path / "sol"), "--out",
                     str(tmp_path / "course")])
    assert code == 0
    text = (tmp_path / "course" / f"{course_nb.NAME}.ipynb").read_text()
    assert "NotImplementedError" in text and "BEGIN SOLUTION" not in text
    assert "wrote" in capsys.readouterr().out


def test_errors_are_one_clear_line_and_exit_code_2(tmp_path, capsys) -> None:
    assert cli.main(["release", "--solutions", str(tmp_path / "nope"), "--out",
                     str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autograd-lab release: error:") and "is not a folder" in err
    assert cli.main(["check", str(tmp_path / "missing.ipynb")]) == 2
    assert "No notebook at" in capsys.readouterr().err


# -- check ----------------------------------------------------------------------------------
def test_check_scores_a_solved_notebook(tmp_path, student, capsys) -> None:
    path = tmp_path / "mine.ipynb"
    write_notebook(course_nb.solved(student), path)
    assert cli.main(["check", str(path), "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert "ch00-center-rows" in out and "5/5" in out and "FAILED" not in out
    assert nbformat.read(str(path), as_version=4).cells[1].outputs == []  # file untouched


def test_check_reports_stubs_timeouts_and_a_dead_kernel(tmp_path, student, capsys) -> None:
    from autograd_lab.course.learner.check import check_notebook
    nb = course_nb.solved(student, center="    while True:\n        pass")
    dead = nbformat.v4.new_code_cell("import os\nos._exit(1)")
    nb.cells.insert(nb.cells.index(course_nb.find_cell(nb, "ch00-center-rows")) + 1, dead)
    write_notebook(nb, tmp_path / "mine.ipynb")
    first, second = check_notebook(tmp_path / "mine.ipynb", timeout=4)
    assert (first.points, first.passed) == (0, False)
    assert first.detail == "the cell ran longer than 4 s and was interrupted"
    assert (second.points, second.passed) == (0, False)
    assert second.detail.startswith("not run: the kernel died")
    assert not first.not_started and not second.not_started


def test_format_table_shows_points_and_first_failure_line() -> None:
    table = format_table([ExerciseResult("ch01-a", 2, 2, True),
                          ExerciseResult("ch01-long-name", 0, 3, False, "AssertionError: x")])
    lines = table.splitlines()
    assert lines[1].split() == ["ch01-a", "2/2", "passed"]
    assert lines[2].split()[:3] == ["ch01-long-name", "0/3", "FAILED"]
    assert lines[2].endswith("AssertionError: x")
    assert lines[3].split()[:2] == ["total", "2/5"]


# -- start ----------------------------------------------------------------------------------
def test_start_copies_without_overwriting_and_launches(tmp_path, monkeypatch, capsys) -> None:
    launched = []
    monkeypatch.setattr(start_module, "launch_jupyter",
                        lambda work, open_browser=True, *a, **k: launched.append((work, open_browser)) or 0)
    monkeypatch.setattr(start_module, "running_servers", lambda work: [])
    course = tmp_path / "course"
    for name in ("00_a.ipynb", "01_b.ipynb"):
        write_notebook(nbformat.v4.new_notebook(), course / name)
    work = tmp_path / "work"
    work.mkdir()
    (work / "00_a.ipynb").write_text("my work")
    assert cli.main(["start", "--dir", str(work), "--course", str(course), "--no-browser"]) == 0
    assert (work / "00_a.ipynb").read_text() == "my work"
    assert (work / "01_b.ipynb").read_bytes() == (course / "01_b.ipynb").read_bytes()
    assert launched == [(work, False)]
    out = capsys.readouterr().out
    assert "Copied 1 new course notebook(s)" in out and ": 01_b.ipynb; your 1 own are kept" in out


def test_start_finds_the_checkout_course_folder(tmp_path, monkeypatch) -> None:
    from autograd_lab.course.authoring.notebooks import checkout_root, list_notebooks
    if not list_notebooks(checkout_root() / "course"):
        pytest.skip("course/ has no notebooks yet")
    monkeypatch.setattr(start_module, "launch_jupyter", lambda *a, **k: 0)
    monkeypatch.setattr(start_module, "running_servers", lambda work: [])
    assert cli.main(["start", "--dir", str(tmp_path / "w")]) == 0
    assert sorted(p.name for p in (tmp_path / "w").glob("*.ipynb")) == \
        [p.name for p in list_notebooks(checkout_root() / "course")]


def test_start_without_course_notebooks_says_how_to_fix(tmp_path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    assert cli.main(["start", "--dir", str(tmp_path / "w"), "--course",
                     str(tmp_path / "empty")]) == 2
    assert "autograd-lab release" in capsys.readouterr().err


def test_missing_checkout_folder_is_explained(monkeypatch, tmp_path) -> None:
    from autograd_lab.course.authoring import notebooks
    monkeypatch.setattr(notebooks, "checkout_root", lambda: tmp_path)
    with pytest.raises(notebooks.CourseError, match="pip install -e"):
        notebooks.default_dir("course")


# -- grade ----------------------------------------------------------------------------------
def test_grade_command_reports_broken_submissions(tmp_path, capsys) -> None:
    """Only broken submissions: after the canary (the key and its copy), the batch reports each one."""
    pytest.importorskip("nbgrader")
    write_notebook(course_nb.key_notebook(), tmp_path / "sol" / f"{course_nb.NAME}.ipynb")
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    (tmp_path / "subs" / "ann" / f"{course_nb.NAME}.ipynb").write_text("not json")
    (tmp_path / "subs" / "bob").mkdir()
    code = cli.main(["grade", str(tmp_path / "subs"), "--out", str(tmp_path / "out"),
                     "--solutions", str(tmp_path / "sol"), "--jobs", "2"])
    assert code == 0
    assert "ann: 0 / 5" in capsys.readouterr().out
    with open(tmp_path / "out" / "grades.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["student"], r["status"]) for r in rows] == [
        ("ann", "invalid"), ("ann", "invalid"), ("bob", "missing"), ("bob", "missing")]


def test_jupyter_command_runs_lab_in_the_work_folder_and_allows_root(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(start_module.os, "geteuid", lambda: 0, raising=False)
    command = start_module.jupyter_command(tmp_path, open_browser=False)
    assert command[1:3] == ["-m", "jupyterlab"]
    assert f"--ServerApp.root_dir={tmp_path.resolve()}" in command
    assert "--no-browser" in command and "--allow-root" in command
    monkeypatch.setattr(start_module.os, "geteuid", lambda: 1000, raising=False)
    command = start_module.jupyter_command(tmp_path)
    assert "--allow-root" not in command and "--no-browser" not in command


@pytest.mark.parametrize("command, words", [
    ("start", ["never overwritten", "Ctrl+C", "already runs", "-- JUPYTERLAB OPTIONS"]),
    ("check", ["fresh kernel", "first line", "-v"]),
    ("release", ["student copy", "nbgrader"]),
    ("train", ["digits", "PNG"]),
])
def test_each_command_explains_itself_in_its_help(command, words) -> None:
    from tests._console import run_cli
    done = run_cli(command, "--help", timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    usage, _, rest = done.stdout.partition("\n\n")
    assert usage.startswith(f"usage: autograd-lab {command}")
    description = rest.split("\n\n")[0]
    assert not description.startswith(("positional arguments", "options"))  # one is there
    text = " ".join(done.stdout.split())
    for word in words:
        assert word in text, word
