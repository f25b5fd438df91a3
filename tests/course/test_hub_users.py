"""The exchange between real Unix users, on a real JupyterHub on loopback.

`tests/course/test_hub.py` runs the whole class on one Unix user; this test runs it the way
`deploy/jupyterhub/` deploys it: an instructor and two students made with ``useradd``, the hub as
root with JupyterHub's local process spawner (each student's server runs as that student), and
the exchange laid out by ``autograd_lab.course.grading.exchange setup`` with the checking classes of the
deploy config. The instructor releases; each student fetches, edits and submits through the
nbgrader endpoints of their own server, behind the hub's proxy, as JupyterLab's assignment list
does; one student then forges a hand-in in the other's name, from her own Unix account; the
instructor collects. Each student's own work must arrive under their name, the forgery must be
refused with its reason, and every file collected must be a plain file.

The students' servers run the Python of this test, so that environment has to be readable by
other users (as a class's environment under /opt is); a Python under /root or inside a private
temporary folder is not, and the test says so and skips. `.ci/run` runs it from such an
environment.
"""
from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograd_lab.course.grading import exchange as ex
from autograd_lab.course.authoring.notebooks import checkout_root
from tests.course.test_hub import ASSIGNMENT, BUDGET, COURSE, Clock, Hub, _submissions, hub_config

pytestmark = pytest.mark.hub


def _tool(name: str) -> str | None:
    """Where ``name`` is, on the PATH or in the system folders root's PATH may leave out."""
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root: it creates Unix users and the hub spawns servers as them"
    for tool in ("useradd", "userdel", "configurable-http-proxy"):
        if _tool(tool) is None:
            return f"{tool} is not installed"
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import autograd_lab, jupyterhub, nbgrader"], cwd="/",
            user="nobody", group=pwd.getpwnam("nobody").pw_gid, extra_groups=[],
            env={"PATH": os.environ.get("PATH", ""), "HOME": "/",
                 "PYTHONPATH": str(checkout_root())}, capture_output=True, text=True)
        failure = probe.stderr.strip()[-300:] if probe.returncode else None
    except OSError as exc:
        failure = str(exc)
    if failure:
        return (f"this Python environment ({sys.prefix}) or the checkout cannot be used by "
                "another user (it lies under /root or a private folder), so no student's server "
                "could start; a class's environment lives where every user can read it "
                f"(deploy/jupyterhub uses /opt/class): {failure}")
    return None


def _notebook(text: str) -> dict:
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": "answer",
                       "metadata": {}, "outputs": [], "source": text}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


class Users:
    """Unix users made for the test (removed at the end) with homes under ``base/home``."""

    def __init__(self, base: Path) -> None:
        self.base, self.made = base, []
        (base / "home").mkdir()
        (base / "home").chmod(0o755)

    def add(self, name: str) -> pwd.struct_passwd:
        home = self.base / "home" / name
        done = subprocess.run([_tool("useradd") or "useradd", "-M", "-U", "-d", str(home), "-s", "/bin/sh", name],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"useradd could not create a test user: {done.stderr.strip()}")
        self.made.append(name)
        entry = pwd.getpwnam(name)
        home.mkdir()
        os.chown(home, entry.pw_uid, entry.pw_gid)
        home.chmod(0o700)
        return entry

    def remove(self) -> None:
        for name in self.made:
            subprocess.run([_tool("userdel") or "userdel", name], capture_output=True)
            subprocess.run([_tool("groupdel") or "groupdel", name], capture_output=True)


def _as(user: pwd.struct_passwd, args: list[str], cwd: Path, clock: Clock,
        marker: str) -> subprocess.CompletedProcess:
    """``args`` run as ``user`` (its own uid, gid and no other groups), with its own HOME."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": user.pw_dir, "USER": user.pw_name,
           "LOGNAME": user.pw_name, "PYTHONPATH": str(checkout_root()),
           "JUPYTER_PREFER_ENV_PATH": "0", "AUTOGRAD_LAB_HUB_TEST": marker}
    return subprocess.run(args, cwd=cwd, env=env, user=user.pw_uid, group=user.pw_gid,
                          extra_groups=[], capture_output=True, text=True,
                          timeout=min(300, clock.left()))


FORGE = """
import os, sys, json, datetime
inbound, name, text = sys.argv[1:]
folder = os.path.join(inbound, name)
os.mkdir(folder)
with open(os.path.join(folder, "00_welcome.ipynb"), "w") as fh:
    fh.write(text)
with open(os.path.join(folder, "timestamp.txt"), "w") as fh:
    fh.write(name.split("+")[2])
os.chmod(folder, 0o777)
"""


def test_the_exchange_holds_between_unix_users_on_a_real_hub() -> None:
    reason = _why_not()
    if reason and os.environ.get("AUTOGRAD_LAB_REQUIRE_HUB_USERS"):
        pytest.fail(reason)  # .ci/run sets it where the test must run, so a skip cannot hide there
    if reason:
        pytest.skip(reason)
    clock = Clock(BUDGET)
    base = Path(tempfile.mkdtemp(prefix="agl-hub-users-"))
    base.chmod(0o755)
    users = Users(base)
    hub = None
    try:
        tag = secrets.token_hex(3)
        teacher = users.add(f"agl{tag}t")
        ada, ben = users.add(f"agl{tag}a"), users.add(f"agl{tag}b")
        exchange = base / "exchange"
        ex.setup_exchange(exchange, COURSE, teacher.pw_name)
        common = (f"c = get_config()\nc.CourseDirectory.course_id = {COURSE!r}\n"
                  f"c.Exchange.root = {str(exchange)!r}\n{ex.factory_config_lines()}")
        student_config = base / "student-config"
        student_config.mkdir()
        (student_config / "nbgrader_config.py").write_text(common)
        student_config.chmod(0o755)

        # the instructor's course folder, with a release of one notebook
        course = Path(teacher.pw_dir) / "course"
        release = course / "release" / ASSIGNMENT
        release.mkdir(parents=True)
        (release / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(_notebook("answer = None")))
        (course / "nbgrader_config.py").write_text(
            common + f"c.CourseDirectory.root = {str(course)!r}\n")
        from nbgrader.api import Gradebook
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE) as gb:
            gb.update_or_create_assignment(ASSIGNMENT)
        for path in [course, *course.rglob("*")]:
            os.chown(path, teacher.pw_uid, teacher.pw_gid, follow_symlinks=False)

        def write_config(root: Path, marker: str, token: str, ports: dict[str, int]) -> Path:
            hub_dir = root / "hub"
            hub_dir.mkdir(mode=0o700)
            scopes = ["admin:users", "admin:servers", "tokens", "access:servers"]
            (root / "jupyterhub_config.py").write_text(hub_config(hub_dir, ports, token, scopes) + f"""\
c.JupyterHub.spawner_class = "localprocess"  # each server runs as its Unix user
c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": {str(student_config)!r},
                          "PYTHONPATH": {str(checkout_root())!r},
                          "JUPYTER_PREFER_ENV_PATH": "0",
                          "AUTOGRAD_LAB_HUB_TEST": {marker!r}}}
""")
            return exchange

        hub = Hub(base, clock, write_config=write_config)
        nbgrader = [sys.executable, "-m", "nbgrader"]
        done = _as(teacher, [*nbgrader, "release_assignment", ASSIGNMENT], course, clock,
                   hub.marker)
        assert done.returncode == 0, done.stdout + done.stderr
        # the release is the instructor's and no one else may change it
        outbound = exchange / COURSE / "outbound" / ASSIGNMENT
        assert outbound.stat().st_uid == teacher.pw_uid

        students = (ada, ben)
        status, _ = hub.api("POST", "/users", {"usernames": [s.pw_name for s in students]})
        assert status == 201, hub.tail()
        for student in students:
            status, reply = hub.api("POST", f"/users/{student.pw_name}/tokens", {"note": "test"})
            assert status == 201, (reply, hub.tail())
            hub.tokens[student.pw_name] = reply["token"]
            hub.start_server(student.pw_name)
        for student in students:
            hub.wait(f"{student.pw_name}'s server", lambda u=student.pw_name: hub.server_ready(u))

        # each student's server runs as that student
        for student in students:
            owners = {int(line.split()[1]) for pid, _ in _server_pids(hub.marker)
                      for line in (Path("/proc") / str(pid) / "status").read_text().splitlines()
                      if line.startswith("Uid:")}
            assert student.pw_uid in owners, (student.pw_name, owners)

        path = f"/api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        for student in students:
            name = student.pw_name
            listed = hub.nbgrader(name, "fetch")
            assert any(a["assignment_id"] == ASSIGNMENT and a.get("status") == "fetched"
                       for a in listed), listed
            fetched = Path(student.pw_dir) / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            assert fetched.stat().st_uid == student.pw_uid  # fetched as the student
            status, data = hub.as_user(name, "PUT", path, body={
                "type": "notebook", "format": "json",
                "content": _notebook(f"answer = 'the own work of {name}'")})
            assert status == 200, data[:500]
            listed = hub.nbgrader(name, "submit")
            assert _submissions(listed)[-1]["status"] == "submitted", listed

        # ada, from her own account, hands in a folder in ben's name, later than his
        when = (datetime.now(timezone.utc) + timedelta(minutes=5)).strftime(
            "%Y-%m-%d %H:%M:%S.%f UTC")
        forged = f"{ben.pw_name}+{ASSIGNMENT}+{when}+forged"
        done = _as(ada, [sys.executable, "-c", FORGE, str(exchange / COURSE / "inbound"), forged,
                         json.dumps(_notebook("answer = 'written by ada'"))],
                   Path(ada.pw_dir), clock, hub.marker)
        assert done.returncode == 0, done.stderr

        done = _as(teacher, [*nbgrader, "collect", ASSIGNMENT], course, clock, hub.marker)
        log = done.stdout + done.stderr
        assert done.returncode == 0, log
        submitted = course / "submitted"
        assert sorted(p.name for p in submitted.iterdir()) == sorted(s.pw_name for s in students)
        for student in students:
            got = (submitted / student.pw_name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
            assert f"the own work of {student.pw_name}" in got, (student.pw_name, got[:300], log)
        assert forged in log and f"belongs to {ada.pw_name}" in log, log
        for path_ in submitted.rglob("*"):
            mode = os.lstat(path_).st_mode
            assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), path_
    finally:
        left = []
        if hub is not None:
            for user in list(hub.tokens):
                try:
                    hub.api("DELETE", f"/users/{user}/server")
                except (OSError, TimeoutError, ValueError):
                    pass
            left = hub.shutdown()
        users.remove()
        shutil.rmtree(base, ignore_errors=True)
    assert left == [], f"processes left after the hub stopped: {left}"


def _server_pids(marker: str) -> list[tuple[int, str]]:
    from tests.course.test_hub import _marked
    return [(pid, cmd) for pid, cmd in _marked(marker) if "singleuser" in cmd]
