"""The exchange between real Unix users: an instructor and two students made by the test.

nbgrader's own commands (release_assignment, fetch_assignment, submit, collect) run as each of
those users, with the exchange classes of ``deploy/jupyterhub/nbgrader_config.py``, against an
exchange laid out by ``autograd_lab.course.grading.exchange.setup_exchange`` under a temporary folder.
The three attacks of the world-writable exchange are tried for real and must fail; an honest
submission must be collected.

Each command runs in a child of this process that has given up root for the user's ids
(``setgroups``, ``setgid``, ``setuid``) before it touches the exchange, so the kernel's
permission checks are the users' own. A child is used rather than ``runuser … nbgrader``
because the Python environment may live where other users cannot read it (a Python under
``/root``); the command is nbgrader's application, initialised and started as its console
script would.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import pickle
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import traceback
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.apps.collectapp import CollectApp  # noqa: E402
from nbgrader.apps.fetchassignmentapp import FetchAssignmentApp  # noqa: E402
from nbgrader.apps.fetchfeedbackapp import FetchFeedbackApp  # noqa: E402
from nbgrader.apps.releaseassignmentapp import ReleaseAssignmentApp  # noqa: E402
from nbgrader.apps.releasefeedbackapp import ReleaseFeedbackApp  # noqa: E402
from nbgrader.apps.submitapp import SubmitApp  # noqa: E402

from autograd_lab.course.grading import exchange as ex  # noqa: E402

# Modules the commands import lazily, loaded here, before a child gives up root: a child may not
# be able to read the environment's files (a Python under /root) once it is another user.
for _module in ("jupyter_core.migrate",):
    importlib.import_module(_module)

COURSE = "agl_course"
ASSIGNMENT = "ps1"
SECRET = "the instructor's private key file"


def _why_no_users() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create Unix users (useradd) and to act as them"
    for tool in ("useradd", "userdel"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def _notebook(text: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "answer",
                                  "metadata": {}, "outputs": [], "source": text}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


class User:
    def __init__(self, name: str, home: Path):
        self.name, self.home = name, home
        entry = pwd.getpwnam(name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid

    def run(self, fn, *args, cwd: Path | None = None):
        """fn(*args) in a child process with this user's ids; returns (value, log text)."""
        log = tempfile.TemporaryFile()
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                os.close(reader)
                os.dup2(log.fileno(), 2)
                sys.stderr = open(2, "w", closefd=False)  # the commands log to sys.stderr
                os.setgroups([])
                os.setgid(self.gid)
                os.setuid(self.uid)
                os.environ.update(HOME=str(self.home), USER=self.name, LOGNAME=self.name)
                os.environ.pop("JUPYTERHUB_USER", None)
                # jupyter_core stats sys.prefix to choose between the environment's and the
                # user's config folders unless told; a virtualenv in a private temporary
                # folder (as CI makes one) cannot be stat'ed by another user.
                os.environ["JUPYTER_PREFER_ENV_PATH"] = "0"
                os.chdir(cwd or self.home)
                try:
                    value = ("ok", fn(*args))
                except BaseException as exc:  # noqa: BLE001 - reported to the parent
                    value = ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
                with os.fdopen(writer, "wb") as out:
                    pickle.dump(value, out)
                code = 0
            finally:
                os._exit(code)
        os.close(writer)
        with os.fdopen(reader, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        log.seek(0)
        text = log.read().decode(errors="replace")
        log.close()
        assert data, f"the child running as {self.name} died: {text}"
        kind, value = pickle.loads(data)
        return kind, value, text


def _app(app_class, *argv):
    """An nbgrader command as its console script runs it; returns its exit status."""
    app = app_class.instance()
    try:
        app.initialize(list(argv))
        app.start()
    except SystemExit as exc:
        return exc.code or 0
    return 0


@pytest.fixture
def site():
    reason = _why_no_users()
    if reason:
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="agl-exchange-"))
    base.chmod(0o755)
    tag = secrets.token_hex(3)
    names = {"instructor": f"agl{tag}i", "alice": f"agl{tag}a", "bob": f"agl{tag}b"}
    made = []
    try:
        for name in names.values():
            home = base / "home" / name
            home.parent.mkdir(exist_ok=True)
            home.parent.chmod(0o755)
            done = subprocess.run(["useradd", "-M", "-U", "-d", str(home), "-s", "/bin/sh", name],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                pytest.skip(f"useradd could not create a test user: {done.stderr.strip()}")
            made.append(name)
            home.mkdir()
            os.chown(home, pwd.getpwnam(name).pw_uid, pwd.getpwnam(name).pw_gid)
            home.chmod(0o700)
        users = {role: User(name, base / "home" / name) for role, name in names.items()}
        yield base, users
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True)
            subprocess.run(["groupdel", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _configure(base: Path, users: dict[str, User]) -> tuple[Path, Path]:
    """The exchange (set up as root) and the instructor's course folder, as the deploy docs say."""
    exchange = base / "exchange"
    ex.setup_exchange(exchange, COURSE, users["instructor"].name)
    factory = ex.factory_config_lines()
    common = (f"c = get_config()\nc.CourseDirectory.course_id = {COURSE!r}\n"
              f"c.Exchange.root = {str(exchange)!r}\n{factory}")
    for role in ("alice", "bob"):
        user = users[role]
        config = user.home / "nbgrader_config.py"
        config.write_text(common)
        os.chown(config, user.uid, user.gid)
    instructor = users["instructor"]
    course = instructor.home / "course"
    release = course / "release" / ASSIGNMENT
    release.mkdir(parents=True)
    (release / "problem.ipynb").write_text(_notebook("answer = None"))
    (course / "nbgrader_config.py").write_text(
        common + f"c.CourseDirectory.root = {str(course)!r}\n")
    (instructor.home / "secret.txt").write_text(SECRET)
    (instructor.home / "secret.txt").chmod(0o600)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE) as gb:
        gb.update_or_create_assignment(ASSIGNMENT)  # made here: its alembic step runs as root
    for path in [course, *course.rglob("*"), instructor.home / "secret.txt"]:
        os.chown(path, instructor.uid, instructor.gid, follow_symlinks=False)
    return exchange, course


def _stamp(minutes: int) -> str:
    when = datetime.now(timezone.utc) + timedelta(minutes=minutes)
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _hand_made_submission(inbound: str, name: str, notebook: str, extra) -> str:
    """What a student can do in inbound/ without nbgrader: make a folder of any name."""
    folder = os.path.join(inbound, name)
    os.mkdir(folder)
    with open(os.path.join(folder, "problem.ipynb"), "w") as fh:
        fh.write(notebook)
    with open(os.path.join(folder, "timestamp.txt"), "w") as fh:
        fh.write(name.split("+")[2])
    extra(folder)
    os.chmod(folder, 0o777)
    return folder


def _tamper_with_course(exchange: str) -> list[str]:
    """Bob tries to take over the course folder and the release; returns what succeeded."""
    course = os.path.join(exchange, COURSE)
    succeeded = []
    attempts = {
        "rename the course folder": lambda: os.rename(course, course + ".old"),
        "make a course folder of his own": lambda: os.mkdir(os.path.join(exchange, "evil")),
        "rename outbound/": lambda: os.rename(os.path.join(course, "outbound"),
                                              os.path.join(course, "outbound.old")),
        "plant a release": lambda: os.mkdir(os.path.join(course, "outbound", "ps2")),
        "overwrite the release": lambda: open(
            os.path.join(course, "outbound", ASSIGNMENT, "problem.ipynb"), "w").close(),
        "list inbound/": lambda: os.listdir(os.path.join(course, "inbound")),
    }
    for what, attempt in attempts.items():
        try:
            attempt()
        except PermissionError:
            continue
        succeeded.append(what)
    return succeeded


def test_exchange_holds_between_real_users(site) -> None:
    base, users = site
    exchange, course = _configure(base, users)
    inbound = str(exchange / COURSE / "inbound")
    instructor, alice, bob = users["instructor"], users["alice"], users["bob"]

    kind, status, log = instructor.run(_app, ReleaseAssignmentApp, ASSIGNMENT, cwd=course)
    assert (kind, status) == ("ok", 0), (status, log)
    assert (exchange / COURSE / "outbound" / ASSIGNMENT / "problem.ipynb").is_file()

    # Attack 1: another user cannot move the course or plant or change a release.
    kind, succeeded, log = bob.run(_tamper_with_course, str(exchange))
    assert (kind, succeeded) == ("ok", []), log

    for student in (alice, bob):
        kind, status, log = student.run(_app, FetchAssignmentApp, ASSIGNMENT)
        assert (kind, status) == ("ok", 0), (status, log)
    work = alice.home / ASSIGNMENT / "problem.ipynb"
    alice.run(work.write_text, _notebook("answer = 42  # alice's own work"))
    kind, status, log = alice.run(_app, SubmitApp, ASSIGNMENT)
    assert (kind, status) == ("ok", 0), (status, log)

    # Attack 2: bob makes an inbound folder named after alice, later than her real one.
    forged = f"{alice.name}+{ASSIGNMENT}+{_stamp(5)}+forged"
    kind, _, log = bob.run(_hand_made_submission, inbound, forged,
                           _notebook("answer = 'copied by bob'"), lambda folder: None)
    assert kind == "ok", log
    # Attack 3: bob's own submission holds a link to the instructor's private file.
    secret = str(instructor.home / "secret.txt")
    linked = f"{bob.name}+{ASSIGNMENT}+{_stamp(-60)}+link"
    kind, _, log = bob.run(_hand_made_submission, inbound, linked, _notebook("answer = 1"),
                           lambda folder: os.symlink(secret, os.path.join(folder, "notes.txt")))
    assert kind == "ok", log

    kind, status, log = instructor.run(_app, CollectApp, ASSIGNMENT, cwd=course)
    assert (kind, status) == ("ok", 0), (status, log)
    submitted = course / "submitted"
    alice_nb = submitted / alice.name / ASSIGNMENT / "problem.ipynb"
    assert alice_nb.is_file(), log
    assert "alice's own work" in alice_nb.read_text()
    assert forged in log and f"belongs to {bob.name}" in log
    assert linked in log and "symbolic link" in log
    assert not (submitted / bob.name).exists()
    everything = b"".join(p.read_bytes() for p in submitted.rglob("*") if p.is_file())
    assert SECRET.encode() not in everything
    # the hand-in time is recorded in the course root, outside every student's folder, from the
    # last change time of what was copied (the kernel's, not the folder name's or timestamp.txt's)
    with open(course / "handin.csv", newline="", encoding="utf-8") as fh:
        record = {(r["student"], r["assignment"]): r for r in csv.DictReader(fh)}
    assert set(record) == {(alice.name, ASSIGNMENT)}
    handed_in = datetime.fromisoformat(record[(alice.name, ASSIGNMENT)]["handed_in"])
    now = datetime.now(timezone.utc)
    assert now - timedelta(minutes=10) < handed_in <= now

    # The other odd files, each in a newer submission of bob's (all dated before now, so that
    # his honest submission below is his newest): a FIFO, a hard link, a folder that is a link.
    def fifo(folder):
        os.mkfifo(os.path.join(folder, "pipe"))

    def hard_link(folder):
        own = os.path.join(str(bob.home), "mine.txt")
        with open(own, "w") as fh:
            fh.write("bob's")
        os.link(own, os.path.join(folder, "mine.txt"))

    def linked_folder(folder):
        os.symlink(str(instructor.home), os.path.join(folder, "home"))

    for minutes, (extra, expected) in enumerate(
            [(fifo, "a FIFO"), (hard_link, "hard link"), (linked_folder, "symbolic link")], -59):
        name = f"{bob.name}+{ASSIGNMENT}+{_stamp(minutes)}+odd{minutes}"
        kind, _, log = bob.run(_hand_made_submission, inbound, name, _notebook("x = 1"), extra)
        assert kind == "ok", log
        kind, status, log = instructor.run(_app, CollectApp, "--update", ASSIGNMENT, cwd=course)
        assert (kind, status) == ("ok", 0), (status, log)
        assert name in log and expected in log, log
        assert not (submitted / bob.name).exists()

    # The inbound folder itself a link, to the instructor's home.
    name = f"{bob.name}+{ASSIGNMENT}+{_stamp(-50)}+toplink"
    kind, _, log = bob.run(os.symlink, str(instructor.home), os.path.join(inbound, name))
    assert kind == "ok", log
    kind, status, log = instructor.run(_app, CollectApp, "--update", ASSIGNMENT, cwd=course)
    assert (kind, status) == ("ok", 0), log
    assert name in log and "symbolic link" in log, log
    assert not (submitted / bob.name).exists()

    # An honest submission of bob's, made by nbgrader submit, is collected; alice's stays hers.
    bob_work = bob.home / ASSIGNMENT / "problem.ipynb"
    bob.run(bob_work.write_text, _notebook("answer = 7  # bob's own work"))
    kind, status, log = bob.run(_app, SubmitApp, ASSIGNMENT)
    assert (kind, status) == ("ok", 0), (status, log)
    kind, status, log = instructor.run(_app, CollectApp, "--update", ASSIGNMENT, cwd=course)
    assert (kind, status) == ("ok", 0), (status, log)
    assert "bob's own work" in (submitted / bob.name / ASSIGNMENT / "problem.ipynb").read_text()
    assert "alice's own work" in alice_nb.read_text()
    for path in submitted.rglob("*"):
        mode = os.lstat(path).st_mode
        assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), path

    # Feedback goes back through the same exchange, to alice only.
    page = course / "feedback" / alice.name / ASSIGNMENT / "problem.html"

    def write_feedback():
        page.parent.mkdir(parents=True)
        page.write_text("<p>alice: 42 is right</p>")
        for name in ("timestamp.txt", "submission_secret.txt"):  # as grade writes them
            shutil.copy(submitted / alice.name / ASSIGNMENT / name, page.parent / name)

    kind, _, log = instructor.run(write_feedback)
    assert kind == "ok", log
    kind, status, log = instructor.run(_app, ReleaseFeedbackApp, ASSIGNMENT, cwd=course)
    assert (kind, status) == ("ok", 0), (status, log)
    for student in (alice, bob):
        kind, status, log = student.run(_app, FetchFeedbackApp, ASSIGNMENT)
        assert (kind, status) == ("ok", 0), (status, log)
    got = [p.read_text() for p in (alice.home / ASSIGNMENT / "feedback").rglob("*.html")]
    assert got == ["<p>alice: 42 is right</p>"]
    assert not list((bob.home / ASSIGNMENT).rglob("*.html"))


def test_instructor_commands_refuse_a_world_writable_exchange(site) -> None:
    base, users = site
    exchange, course = _configure(base, users)
    exchange.chmod(0o777)  # what the setup used to do
    kind, status, log = users["instructor"].run(_app, ReleaseAssignmentApp, ASSIGNMENT, cwd=course)
    assert kind == "ok" and status != 0, log
    assert "not safe between users" in log and "mode 0777" in log
    assert "autograd_lab.course.grading.exchange setup" in log
    assert not (exchange / COURSE / "outbound" / ASSIGNMENT).exists()
    assert ex.layout_problems(exchange, COURSE, users["instructor"].uid)
    exchange.chmod(0o755)
    assert ex.layout_problems(exchange, COURSE, users["instructor"].uid) == []


def test_setup_refuses_a_link_and_names_the_fix(tmp_path) -> None:
    if os.geteuid() != 0:
        with pytest.raises(PermissionError, match="run it with sudo"):
            ex.setup_exchange(tmp_path / "x", COURSE, "root")
        return
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "exchange").symlink_to(target)
    with pytest.raises(ex.ExchangeLayoutError, match="symbolic link"):
        ex.setup_exchange(tmp_path / "exchange", COURSE, "root")
    with pytest.raises(ex.ExchangeLayoutError, match="no Unix account"):
        ex.setup_exchange(tmp_path / "new", COURSE, "no-such-user-agl")
    with pytest.raises(ValueError, match="plain folder name"):
        ex.setup_exchange(tmp_path / "new", "../up", "root")


def test_nbgraders_own_collect_falls_for_both_attacks(site) -> None:
    """The control: the same two inbound folders, collected by nbgrader's default collect on the
    old layout, give alice bob's notebook and copy the instructor's file (so the test above
    would see it)."""
    base, users = site
    exchange, course = _configure(base, users)
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + 'c.ExchangeFactory.collect = '
                      '"nbgrader.exchange.default.collect.ExchangeCollect"\n')
    exchange.chmod(0o777)  # nbgrader's collect wants the root writable, as the old setup made it
    instructor, alice, bob = users["instructor"], users["alice"], users["bob"]
    inbound = str(exchange / COURSE / "inbound")
    forged = f"{alice.name}+{ASSIGNMENT}+{_stamp(5)}+forged"
    linked = f"{bob.name}+{ASSIGNMENT}+{_stamp(6)}+link"
    secret = str(instructor.home / "secret.txt")
    bob.run(_hand_made_submission, inbound, forged, _notebook("answer = 'copied by bob'"),
            lambda folder: None)
    bob.run(_hand_made_submission, inbound, linked, _notebook("answer = 1"),
            lambda folder: os.symlink(secret, os.path.join(folder, "notes.txt")))
    kind, status, log = instructor.run(_app, CollectApp, ASSIGNMENT, cwd=course)
    assert (kind, status) == ("ok", 0), (status, log)
    submitted = course / "submitted"
    assert "copied by bob" in (submitted / alice.name / ASSIGNMENT / "problem.ipynb").read_text()
    assert (submitted / bob.name / ASSIGNMENT / "notes.txt").read_text() == SECRET


def test_deploy_config_selects_every_exchange_class() -> None:
    from traitlets.config import Config

    from autograd_lab.course.authoring.notebooks import checkout_root

    path = checkout_root() / "deploy" / "jupyterhub" / "nbgrader_config.py"
    config = Config()
    exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: config})
    chosen = dict(config.ExchangeFactory)
    assert chosen == {key: f"{ex.__name__}.{cls.__name__}"
                      for key, cls in ex.EXCHANGE_FACTORY.items()}
    assert "chmod 777" not in path.read_text()
    assert str(config.Exchange.root) == "/srv/nbgrader/exchange"


def test_setup_makes_the_layout_and_check_reports_a_broken_one(tmp_path, capsys) -> None:
    if os.geteuid() != 0:
        pytest.skip("the exchange is set up by root")
    base = Path(tempfile.mkdtemp(prefix="agl-layout-"))
    try:
        root = base / "srv" / "nbgrader" / "exchange"  # parents missing, as on a new machine
        assert ex.main(["setup", "--root", str(root), "--course", COURSE,
                        "--instructor", "root"]) == 0
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [root, *(root / COURSE).iterdir()]}
        assert modes == {"exchange": 0o755, "outbound": 0o755, "inbound": 0o3733,
                         "feedback": 0o711}
        assert ex.main(["check", "--root", str(root), "--course", COURSE,
                        "--instructor", "root"]) == 0
        (root / COURSE / "inbound").chmod(0o733)  # no sticky bit: a student may remove others'
        (root / COURSE / "outbound").chmod(0o777)
        capsys.readouterr()
        assert ex.main(["check", "--root", str(root), "--course", COURSE,
                        "--instructor", "root"]) == 1
        err = capsys.readouterr().err
        assert "inbound has mode 0733 without the sticky bit" in err, err
        assert "outbound has mode 0777" in err and "fix: as root:" in err
        assert ex.main(["setup", "--root", str(root), "--course", COURSE,
                        "--instructor", "root"]) == 0  # repairs it
        assert ex.layout_problems(root, COURSE, 0) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)
