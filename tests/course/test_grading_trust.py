"""Grading an instructor can trust: the second round of hostile submissions, the canary, the
environment wherever it lives, and grading as root.

One class is graded in the bubblewrap sandbox with every submission-shaped attack at once (links,
FIFOs, hard links, odd folder names, a notebook nested too deep, a cell that shows a value and
then raises, a cell that reads what the sandbox should hide); other tests grade a broken key, a
key under too small limits, an nbgrader course with a planted link, and a class graded from a
virtualenv under /tmp.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading import batch as grading  # noqa: E402
from autograd_lab.course.grading.autograde_jobs import Course, Job, JobSettings, run_jobs  # noqa: E402
from autograd_lab.course.grading.batch import Row, grade  # noqa: E402
from autograd_lab.course.authoring.notebooks import CourseError, write_notebook  # noqa: E402
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from autograd_lab.course.grading.sandbox import Limits, RunAs, bubblewrap_problem  # noqa: E402
from autograd_lab.course.grading.sanitize import BLOCKED, safe_markdown, safe_target  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402

pytestmark = pytest.mark.notebooks
TIMEOUT = 20
ROOT = Path(__file__).resolve().parents[2]
SECRET = "grader-secret-5be1"
SOLUTION_TEXT = course_nb.CENTER_SOLUTION.strip()

DISPLAY_THEN_RAISE = """    import sys
    sys.displayhook('all good')
    raise ValueError('not centred')"""

PROBE = """import os
try:
    print('ENVIRON', open('/proc/1/environ', 'rb').read())
except OSError as err:
    print('ENVIRON-REFUSED', type(err).__name__)
try:
    open('/etc/shadow').read()
    print('SHADOW-READ')
except OSError:
    print('SHADOW-REFUSED')
try:
    with open('/proc/sys/kernel/core_pattern', 'w') as fh:
        fh.write('|/bin/false')
    print('CORE-PATTERN-WRITTEN')
except OSError:
    print('CORE-PATTERN-REFUSED')
print('CAPEFF', [line.split()[1] for line in open('/proc/self/status')
                 if line.startswith('CapEff')][0])
try:
    with open('/dev/shm/fill', 'wb') as fh:
        for _ in range(64):
            fh.write(b'x' * (1 << 20))
    print('SHM-64MB-WRITTEN')
except OSError as err:
    print('SHM-REFUSED', type(err).__name__)"""


LIVE_LINKS = ("[a](javascript:alert(1)) and [b][ref] and <javascript:alert(2)>\n\n"
              "[ref]: javascript:alert(3)\n\n![big](attachment:big.png)")
MARKDOWN_OUTPUT = """from IPython.display import Markdown, display
display(Markdown('[c](JavaScript:alert(4)) [d](&#106;avascript:alert(5))'))"""
ATTACHMENT_CHARS = 12_000_000


def _needs_bubblewrap() -> None:
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")


def _key(root: Path, nb=None) -> Path:
    write_notebook(nb or course_nb.key_notebook(), root / "solutions" / f"{course_nb.NAME}.ipynb")
    return root / "solutions"


def _student() -> object:
    return release_notebook(course_nb.key_notebook(), course_nb.NAME)


def _put(subs: Path, name: str | bytes, nb) -> Path:
    folder = Path(os.fsdecode(os.path.join(os.fsencode(subs), os.fsencode(name))))
    folder.mkdir(parents=True, exist_ok=True)
    write_notebook(nb, folder / f"{course_nb.NAME}.ipynb")
    return folder / f"{course_nb.NAME}.ipynb"


@pytest.fixture(scope="module")
def trust(tmp_path_factory: pytest.TempPathFactory) -> dict:
    _needs_bubblewrap()
    root = tmp_path_factory.mktemp("trust")
    key = _key(root) / f"{course_nb.NAME}.ipynb"
    subs = root / "subs"
    student = _student()
    good = _put(subs, "good", course_nb.solved(student))
    _put(subs, "display_then_raise", course_nb.solved(student, center=DISPLAY_THEN_RAISE))
    probe = course_nb.solved(student)
    probe.cells.insert(2, nbformat.v4.new_code_cell(PROBE))
    _put(subs, "prober", probe)
    links = course_nb.solved(student)
    cell = nbformat.v4.new_markdown_cell(LIVE_LINKS)
    cell["attachments"] = {"big.png": {"image/png": "A" * ATTACHMENT_CHARS}}
    links.cells[2:2] = [cell, nbformat.v4.new_code_cell(MARKDOWN_OUTPUT)]
    _put(subs, "live_links", links)
    (subs / "link_to_key").mkdir()
    (subs / "link_to_key" / f"{course_nb.NAME}.ipynb").symlink_to(key)
    (subs / "link_folder").symlink_to(good.parent)
    (subs / "hard_link").mkdir()
    os.link(key, subs / "hard_link" / f"{course_nb.NAME}.ipynb")
    (subs / "fifo").mkdir()
    os.mkfifo(subs / "fifo" / f"{course_nb.NAME}.ipynb")
    (subs / "deep").mkdir()
    (subs / "deep" / f"{course_nb.NAME}.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    _put(subs, "*", course_nb.solved(student))
    _put(subs, b"bad\xffname", course_nb.solved(student))
    _put(subs, "esc\x1b[31mred", course_nb.solved(student))
    _put(subs, '=HYPERLINK("evil.invalid")', course_nb.solved(student))
    messages: list[str] = []
    os.environ["AUTOGRAD_LAB_TEST_SECRET"] = SECRET
    try:
        rows = grade(subs, root / "out", solutions=key.parent, timeout=TIMEOUT, jobs=2,
                     isolation="bubblewrap", run_as=RUN_AS, log=messages.append)
    finally:
        del os.environ["AUTOGRAD_LAB_TEST_SECRET"]
    table: dict[str, list[Row]] = {}
    for row in rows:
        table.setdefault(row.student, []).append(row)
    return {"root": root, "out": root / "out", "rows": rows, "table": table,
            "messages": messages}


def _points(rows: list[Row]) -> float:
    return sum(r.points for r in rows)


def _graded_text(out: Path, student: str) -> str:
    """Every output of the student's graded notebook, as text (not the cells' sources)."""
    path = out / "autograded" / student / f"{course_nb.NAME}.ipynb"
    if not path.exists():
        return ""
    nb = nbformat.read(path, as_version=4)
    return "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     + str(o.get("evalue", "")) for c in nb.cells for o in c.get("outputs", []))


def test_honest_students_still_get_full_marks(trust) -> None:
    for student in ("good", "prober", '=HYPERLINK("evil.invalid")', "live_links"):
        assert _points(trust["table"][student]) == course_nb.TOTAL, trust["table"][student]


class _Targets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.targets += [value or "" for name, value in attrs if name in ("href", "src")]


def test_feedback_links_and_images_are_only_safe_kinds(trust) -> None:
    page = (trust["out"] / "feedback" / "live_links" / f"{course_nb.NAME}.html").read_text()
    parser = _Targets()
    parser.feed(page)
    assert parser.targets.count(BLOCKED) >= 4  # a, [b][ref], c and d: there, defused
    assert not [t for t in parser.targets if not safe_target(t)]
    assert _points(trust["table"]["live_links"]) == course_nb.TOTAL


def test_attachments_count_toward_the_size_cap(trust) -> None:
    page = trust["out"] / "feedback" / "live_links" / f"{course_nb.NAME}.html"
    assert page.stat().st_size < ATTACHMENT_CHARS
    assert "attachment 'big.png'" in page.read_text()


@pytest.mark.parametrize("text, kept", [
    ("[x](https://example.org/a_(b))", True), ("[x](notes.html#part)", True),
    ("![x](data:image/png;base64,iVBO)", True), ("[x](javascript:alert(1))", False),
    ("[x](<javascript:alert(1)>)", False), ("[x](&#106;avascript:alert(1))", False),
    ("![x](data:image/svg+xml;base64,PHN2Zz4=)", False), ("[x](vbscript:run)", False),
    ("[x][r]\n\n[r]: javascript:alert(1)", False), ("[x](data:text/html,<script>)", False),
    ("![x](attachment:plot.png)", True), ("![x](attachment:other.png)", False),
    ("<javascript:alert(1)>", False),
])
def test_markdown_keeps_only_safe_targets(text, kept) -> None:
    assert (safe_markdown(text, {"plot.png"}) == text) is kept
    assert kept or BLOCKED in safe_markdown(text) or "&lt;" in safe_markdown(text)


def test_a_value_shown_before_an_error_earns_nothing(trust) -> None:
    rows = {r.exercise: r for r in trust["table"]["display_then_raise"]}
    assert rows["ch00-center-rows"].points == 0 and rows["ch00-center-rows"].status == "failed"
    assert "all good" in _graded_text(trust["out"], "display_then_raise")  # it did show it


@pytest.mark.parametrize("student, words", [
    ("link_to_key", "symbolic link"),
    ("link_folder", "symbolic link"),
    ("hard_link", "hard link"),
    ("fifo", "FIFO"),
    ("deep", "RecursionError"),
    ("*", "file-pattern characters"),
    ("bad\\xffname", "not valid UTF-8"),
    ("esc\\x1b[31mred", "control characters"),
])
def test_what_is_not_a_plain_submission_is_refused_with_a_reason(trust, student, words) -> None:
    shown = {grading.shown(s): rows for s, rows in trust["table"].items()}
    rows = shown[student]
    assert {r.status for r in rows} == {"invalid"}, rows
    assert _points(rows) == 0
    assert all(words in r.reason for r in rows), rows[0].reason


def test_no_refused_submission_shows_the_key(trust) -> None:
    for student in ("link_to_key", "link_folder", "hard_link"):
        for folder in ("feedback", "autograded"):
            for path in (trust["out"] / folder / student).rglob("*"):
                text = path.read_text(encoding="utf-8", errors="replace")
                assert "BEGIN SOLUTION" not in text and "hidden=True" not in text, path
                assert SOLUTION_TEXT not in text, path


def test_a_star_folder_grades_no_classmate(trust) -> None:
    assert [r.student for r in trust["rows"]].count("good") == len(course_nb.EXERCISES)
    assert not (trust["out"] / "feedback" / "*").exists()


def test_the_sandbox_shows_nothing_of_the_graders_environment(trust) -> None:
    text = _graded_text(trust["out"], "prober")
    assert "ENVIRON" in text
    assert SECRET not in text and "AUTOGRAD_LAB_TEST_SECRET" not in text
    assert SECRET not in (trust["out"] / "feedback" / "prober" / f"{course_nb.NAME}.html").read_text()


def test_the_job_has_no_privilege(trust) -> None:
    text = _graded_text(trust["out"], "prober")
    assert "SHADOW-REFUSED" in text and "SHADOW-READ" not in text
    assert "CORE-PATTERN-REFUSED" in text
    assert "CAPEFF 0000000000000000" in text


def test_dev_shm_is_small(trust) -> None:
    text = _graded_text(trust["out"], "prober")
    assert "SHM-REFUSED" in text and "SHM-64MB-WRITTEN" not in text


def test_csv_cells_never_start_a_formula(trust) -> None:
    for name in ("grades.csv", "totals.csv"):
        with open(trust["out"] / name, newline="", encoding="utf-8") as fh:
            cells = [cell for row in csv.reader(fh) for cell in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], name
        assert "'=HYPERLINK(\"evil.invalid\")" in cells


def test_names_reach_the_terminal_escaped(trust) -> None:
    assert not [m for m in trust["messages"] if "\x1b" in m or "\udcff" in m]
    assert any("esc\\x1b[31mred" in m for m in trust["messages"])


# -- the canary ------------------------------------------------------------------------------
def _one_student(root: Path) -> Path:
    _put(root / "subs", "ann", course_nb.solved(_student()))
    return root / "subs"


def test_a_key_whose_graded_cell_passes_without_an_answer_stops_the_batch(tmp_path) -> None:
    key = course_nb.key_notebook()
    course_nb.find_cell(key, "ch00-pairwise-sq-dists").source = "pass"
    subs = _one_student(tmp_path)
    # the grader judges chapter 00's observations: a graded cell that calls no check scores
    # 0 on the key itself, which stops the batch as surely as a stub scoring full points would
    with pytest.raises(CourseError, match="canary failed.*key's 00_fixture scored 0 / 3 on "
                                          "ch00-pairwise-sq-dists"):
        grade(subs, tmp_path / "out", solutions=_key(tmp_path, key), timeout=TIMEOUT,
              run_as=RUN_AS)
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_limits_no_kernel_can_run_under_stop_the_batch(tmp_path) -> None:
    subs = _one_student(tmp_path)
    with pytest.raises(CourseError, match="canary failed.*key's 00_fixture scored 0.*do not run"):
        grade(subs, tmp_path / "out", solutions=_key(tmp_path), timeout=TIMEOUT,
              limits=Limits(memory_mb=40), run_as=RUN_AS)
    assert not (tmp_path / "out").exists()


def test_most_jobs_failing_alike_is_the_setup_not_the_class() -> None:
    def rows(reason: str, status: str = "crashed") -> list[Row]:
        return [Row("s", "n", "e", 0.0, 1.0, status, reason)]
    same = {(f"s{i}", "n"): rows("bwrap: execvp python3: No such file") for i in range(3)}
    assert "3 of 4 notebooks" in grading._infrastructure_failure(
        {**same, ("t", "n"): rows("", "passed")}, 4)
    mixed = {("a", "n"): rows("DeadKernelError"), ("b", "n"): rows("x"),
             ("c", "n"): rows("", "passed"), ("d", "n"): rows("", "passed")}
    assert grading._infrastructure_failure(mixed, 4) is None


# -- root --------------------------------------------------------------------------------------
def test_root_without_run_as_is_refused(tmp_path, monkeypatch) -> None:
    subs = _one_student(tmp_path)
    monkeypatch.setattr(grading.os, "geteuid", lambda: 0)
    monkeypatch.delenv(grading.RUN_AS_VARIABLE, raising=False)
    with pytest.raises(CourseError, match="Refusing to grade as root.*--run-as USER"):
        grade(subs, tmp_path / "out", solutions=_key(tmp_path), timeout=TIMEOUT)
    assert not (tmp_path / "out").exists()


def test_run_as_must_name_an_unprivileged_user() -> None:
    with pytest.raises(ValueError, match="is root"):
        RunAs.lookup("root")
    with pytest.raises(ValueError, match="no such user"):
        RunAs.lookup("no-such-user-8c1f")


# -- a job killed at its time limit ------------------------------------------------------------
def test_a_killed_job_leaves_no_notebook_behind(tmp_path) -> None:
    import logging
    key = _key(tmp_path) / f"{course_nb.NAME}.ipynb"
    course = Course(tmp_path / "course", tmp_path / "gradebook.db")
    course.add_students(["ann"])
    course.generate([key], logging.getLogger("test"))
    nb = course_nb.solved(_student())
    nb.cells.insert(2, nbformat.v4.new_code_cell("import time\ntime.sleep(600)"))
    write_notebook(nb, course.submitted("ann", course_nb.NAME))
    job = Job("ann", course_nb.NAME, tmp_path / "course" / "result-0.json", hard_limit=25)
    isolation = "process" if bubblewrap_problem() else "bubblewrap"
    user = RunAs.lookup(RUN_AS) if RUN_AS else None
    if user and isolation == "process":
        pytest.skip("needs bubblewrap when run as root")
    outcome = run_jobs(course, [job], JobSettings(600, isolation, Limits(), user), 1)
    assert "longer than 25 s" in outcome[("ann", course_nb.NAME)]["reason"]
    assert not job.workdir.exists()  # the merged notebook (hidden tests) lived there
    assert not list((tmp_path / "course").glob("*.work"))


# -- the nbgrader route ------------------------------------------------------------------------
def test_a_link_in_submitted_is_refused_and_its_target_not_released(tmp_path, capsys) -> None:
    _needs_bubblewrap()
    from autograd_lab.cli import main
    from autograd_lab.course.grading.nbgrader_root import make_source
    key = _key(tmp_path)
    course = tmp_path / "course"
    make_source(course / "source", solutions=key, groups=[f"a1={course_nb.NAME}"])
    for name in ("ann", "ben"):
        (course / "submitted" / name / "a1").mkdir(parents=True)
        (course / "submitted" / name / "a1" / "timestamp.txt").write_text("2026-01-05 10:00:00")
    write_notebook(course_nb.solved(_student()),
                   course / "submitted" / "ann" / "a1" / f"{course_nb.NAME}.ipynb")
    (course / "submitted" / "ben" / "a1" / f"{course_nb.NAME}.ipynb").symlink_to(
        key / f"{course_nb.NAME}.ipynb")
    args = ["grade", str(course), "--nbgrader-assignment", "a1", "--out", str(tmp_path / "out"),
            "--solutions", str(key), "--timeout", str(TIMEOUT), "--isolation", "bubblewrap"]
    code = main(args + (["--run-as", RUN_AS] if RUN_AS else []))
    assert code == 0, capsys.readouterr()
    with open(tmp_path / "out" / "grades.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["student"] == "ben"]
    assert {r["status"] for r in rows} == {"invalid"} and "symbolic link" in rows[0]["reason"]
    page = (course / "feedback" / "ben" / "a1" / f"{course_nb.NAME}.html").read_text()
    assert SOLUTION_TEXT not in page and "BEGIN SOLUTION" not in page


# -- the environment wherever it lives -----------------------------------------------------------
def _install_what_grading_needs(python: Path) -> None:
    """The course's and the instructor's packages, into a new virtualenv. ``--system-site-packages``
    shows it the *base* interpreter's packages, not those of the environment the tests run in, and
    a fresh machine's base Python has none of ours: install what is missing (nothing where the base
    has it all; from pip's cache where the test environment was installed on this machine)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the test extra brings tomli
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["instructor"]
    probe = ("import importlib.metadata as m, sys\n"
             "from packaging.requirements import Requirement\n"
             "missing = []\n"
             "for line in sys.argv[1:]:\n"
             "    req = Requirement(line)\n"
             "    if req.marker is not None and not req.marker.evaluate():\n"
             "        continue\n"
             "    try:\n"
             "        ok = m.version(req.name) in req.specifier or not req.specifier\n"
             "    except m.PackageNotFoundError:\n"
             "        ok = False\n"
             "    missing += [] if ok else [line]\n"
             "print('\\n'.join(missing))\n")
    found = subprocess.run([str(python), "-c", probe, *wanted], capture_output=True, text=True,
                           timeout=120)
    # without `packaging` in the base interpreter, install everything (pip skips what is there)
    missing = found.stdout.split("\n") if found.returncode == 0 else wanted
    missing = [line for line in missing if line.strip()]
    if missing:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *missing], check=True, timeout=900)


def test_a_virtualenv_under_tmp_grades_the_key_with_full_marks(tmp_path) -> None:
    _needs_bubblewrap()
    venv = Path(tempfile.mkdtemp(prefix="autograd_lab_venv_", dir="/tmp"))
    try:
        os.chmod(venv, 0o755)  # as `python -m venv /tmp/x` leaves it: the job's user reads it
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       check=True, timeout=120)
        _install_what_grading_needs(venv / "bin" / "python")
        key = _key(tmp_path)
        subs = tmp_path / "subs"
        (subs / "key").mkdir(parents=True)
        shutil.copyfile(key / f"{course_nb.NAME}.ipynb", subs / "key" / f"{course_nb.NAME}.ipynb")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        env.pop("VIRTUAL_ENV", None)
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "autograd_lab", "grade", str(subs), "--out",
             str(tmp_path / "out"), "--solutions", str(key), "--timeout", str(TIMEOUT),
             "--isolation", "bubblewrap"] + (["--run-as", RUN_AS] if RUN_AS else []),
            capture_output=True, text=True, env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        with open(tmp_path / "out" / "totals.csv", newline="") as fh:
            totals = {r["student"]: float(r["points"]) for r in csv.DictReader(fh)}
        assert totals == {"key": course_nb.TOTAL}
    finally:
        shutil.rmtree(venv, ignore_errors=True)
