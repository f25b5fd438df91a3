"""The course in nbgrader's folders: source/ from the key, grading of submitted/, feedback/.

The collected layout is built as ``nbgrader collect`` leaves it (with the submission's
``timestamp.txt`` and ``submission_secret.txt``); the real exchange runs in test_hub.py.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.cli import main  # noqa: E402
from autograd_lab.course.commands import nbgrader_source  # noqa: E402
from autograd_lab.course.grading.nbgrader_root import (collected, make_source,  # noqa: E402
                                                 parse_groups)
from autograd_lab.course.authoring.notebooks import CourseError, write_notebook  # noqa: E402
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402

KEY = ["00_welcome", "01_derivatives", "02_variable_graph"]


@pytest.fixture
def key_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "solutions"
    folder.mkdir()
    for name in KEY:
        (folder / f"{name}.ipynb").write_text(f'{{"name": "{name}"}}\n')
    return folder


def test_source_has_one_assignment_per_chapter_by_default(tmp_path, key_dir) -> None:
    written = make_source(tmp_path / "source", solutions=key_dir)
    assert written == [tmp_path / "source" / n / f"{n}.ipynb" for n in KEY]
    for name in KEY:
        copied = tmp_path / "source" / name / f"{name}.ipynb"
        assert copied.read_bytes() == (key_dir / f"{name}.ipynb").read_bytes()


def test_source_groups_chapters_as_asked(tmp_path, key_dir) -> None:
    make_source(tmp_path / "source", solutions=key_dir,
                groups=["week1=00_welcome,01_derivatives.ipynb", "week2=02_variable_graph"])
    assert sorted(p.relative_to(tmp_path / "source").as_posix()
                  for p in (tmp_path / "source").rglob("*.ipynb")) == [
        "week1/00_welcome.ipynb", "week1/01_derivatives.ipynb", "week2/02_variable_graph.ipynb"]


def test_source_never_overwrites_an_edited_notebook(tmp_path, key_dir) -> None:
    make_source(tmp_path / "source", solutions=key_dir)
    edited = tmp_path / "source" / "01_derivatives" / "01_derivatives.ipynb"
    edited.write_text('{"edited": true}\n')
    with pytest.raises(CourseError, match="01_derivatives.ipynb already exist"):
        make_source(tmp_path / "source", solutions=key_dir)
    assert edited.read_text() == '{"edited": true}\n'
    make_source(tmp_path / "source", solutions=key_dir, groups=["a=00_welcome"])  # same bytes


@pytest.mark.parametrize("spec, words", [
    ("week1", "NAME=NOTEBOOK"), ("=00_welcome", "NAME=NOTEBOOK"), ("w=", "NAME=NOTEBOOK"),
    ("w=07_nope", "Unknown notebook"), ("a/b=00_welcome", "cannot hold"),
    ("a+b=00_welcome", "cannot hold")])
def test_bad_groupings_say_what_is_expected(spec: str, words: str) -> None:
    with pytest.raises(CourseError, match=words):
        parse_groups([spec], KEY)


def test_a_group_given_twice_is_refused() -> None:
    with pytest.raises(CourseError, match="given twice"):
        parse_groups(["w=00_welcome", "w=01_derivatives"], KEY)


def test_the_subcommand_writes_source(tmp_path, key_dir, capsys) -> None:
    parser = argparse.ArgumentParser()
    nbgrader_source.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["nbgrader-source", "--to", str(tmp_path / "source"),
                              "--solutions", str(key_dir), "--assignment", "w1=00_welcome"])
    assert args.func(args) == 0
    assert (tmp_path / "source" / "w1" / "00_welcome.ipynb").exists()
    assert "wrote" in capsys.readouterr().out


def test_collected_layout_errors_name_the_fix(tmp_path) -> None:
    with pytest.raises(CourseError, match="no submitted/ folder"):
        collected(tmp_path, "00_welcome")
    (tmp_path / "submitted" / "alice" / "other").mkdir(parents=True)
    with pytest.raises(CourseError, match="nbgrader collect 00_welcome"):
        collected(tmp_path, "00_welcome")


def _submit(course: Path, student: str, nb, secret: str) -> None:
    folder = course / "submitted" / student / "a1"
    folder.mkdir(parents=True)
    write_notebook(nb, folder / f"{course_nb.NAME}.ipynb")
    (folder / "timestamp.txt").write_text("2026-01-05 10:00:00.000000 UTC")
    (folder / "submission_secret.txt").write_text(secret)


def test_grade_reads_submitted_and_writes_feedback_for_release(tmp_path, capsys) -> None:
    key = tmp_path / "solutions"
    write_notebook(course_nb.key_notebook(), key / f"{course_nb.NAME}.ipynb")
    course = tmp_path / "course"
    make_source(course / "source", solutions=key, groups=[f"a1={course_nb.NAME}"])
    student = release_notebook(course_nb.key_notebook(), course_nb.NAME)
    _submit(course, "ann", course_nb.solved(student), "secret-ann")
    _submit(course, "ben", student, "secret-ben")
    from autograd_lab.course.grading.exchange import record_handin
    record_handin(course, "ann", "a1", 1_790_000_000.0)  # what collect records for ann
    code = main(["grade", str(course), "--nbgrader-assignment", "a1", "--out",
                 str(tmp_path / "out"), "--solutions", str(key), "--timeout", "20"]
                + (["--run-as", RUN_AS] if RUN_AS else []))
    assert code == 0, capsys.readouterr()
    with open(tmp_path / "out" / "totals.csv", newline="") as fh:
        totals = {r["student"]: (float(r["points"]), float(r["max_points"]))
                  for r in csv.DictReader(fh)}
    assert totals == {"ann": (course_nb.TOTAL, course_nb.TOTAL), "ben": (0.0, course_nb.TOTAL)}
    with open(tmp_path / "out" / "grades.csv", newline="") as fh:
        handed = {r["student"]: r["handed_in"] for r in csv.DictReader(fh)}
    assert handed["ann"] == "2026-09-21T14:13:20+00:00"  # collect's record, not timestamp.txt
    assert handed["ben"] and not handed["ben"].startswith("2026-01-05")
    for name, total in (("ann", course_nb.TOTAL), ("ben", 0)):
        folder = course / "feedback" / name / "a1"
        assert sorted(p.name for p in folder.iterdir()) == [
            f"{course_nb.NAME}.html", "submission_secret.txt", "timestamp.txt"]
        assert (folder / "submission_secret.txt").read_text() == f"secret-{name}"
        page = (folder / f"{course_nb.NAME}.html").read_text()
        assert f"Total: {total:g} / {course_nb.TOTAL:g} points." in page
        assert "ch00-pairwise-sq-dists" in page


def _load_config(path: Path, env: dict[str, str], monkeypatch) -> object:
    from traitlets.config import Config
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = Config()
    exec(compile(path.read_text(), str(path), "exec"),  # noqa: S102 (our own file)
         {"get_config": lambda: config, "__file__": str(path)})
    return config


def test_the_deploy_configs_agree_on_the_course(monkeypatch) -> None:
    deploy = Path(__file__).resolve().parents[2] / "deploy" / "jupyterhub"
    hub = _load_config(deploy / "jupyterhub_config.py",
                       {"AUTOGRAD_LAB_INSTRUCTOR": "prof"}, monkeypatch)
    everyone = _load_config(deploy / "nbgrader_config.py", {}, monkeypatch)
    course = _load_config(deploy / "course_nbgrader_config.py", {}, monkeypatch)
    course_id = everyone.CourseDirectory.course_id
    assert course.CourseDirectory.course_id == course_id == "autograd_lab"
    assert course.Exchange.root == everyone.Exchange.root
    assert course.CourseDirectory.root == str(deploy)
    assert hub.JupyterHub.load_groups == {f"formgrade-{course_id}": {"users": ["prof"]}}
    assert hub.Authenticator.admin_users == {"prof"}
    roles = {r["name"]: r for r in hub.JupyterHub.load_roles}
    assert roles[f"instructor-{course_id}"]["groups"] == [f"formgrade-{course_id}"]
    assert {s["name"] for s in hub.JupyterHub.services} == set(roles) - {
        f"instructor-{course_id}"}
