"""A class on a real JupyterHub: nbgrader's exchange from release to feedback, on loopback.

The hub runs on 127.0.0.1 with the dummy authenticator and the simple local spawner (every
single-user server runs as this user, each with its own home). An instructor and two
students are made through the hub's REST API; the students fetch, fill and submit chapter
00 through the nbgrader endpoints of their own server behind the hub's proxy, as the
JupyterLab assignment list does; the instructor collects, grades with ``autograd-lab
grade --nbgrader-assignment`` and releases feedback, which each student fetches.

Every process started here carries a marker in its environment; the test checks that
none is left once the hub is stopped, and kills any that is (so a failure leaks nothing).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from autograd_lab.course.grading.nbgrader_root import make_source
from autograd_lab.course.authoring.notebooks import (checkout_root, exercises, nbgrader_meta,
                                           read_notebook)
from tests.fixtures import RUN_AS

pytestmark = pytest.mark.hub

COURSE = "autograd_lab"
ASSIGNMENT = "00_welcome"
INSTRUCTOR, STUDENTS = "teacher", ("ada", "ben")
BUDGET = 1500
"""Seconds the whole test may take (the machine may be slow); every wait is bounded by it."""


def _missing() -> str | None:
    for module in ("jupyterhub", "nbgrader"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e \".[hub,instructor]\")"
    if shutil.which("configurable-http-proxy") is None:
        return ("configurable-http-proxy is not on PATH; JupyterHub needs it "
                "(Node.js: npm install -g configurable-http-proxy)")
    return None


if _missing():
    pytest.skip(_missing(), allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Clock:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the hub test ran past its budget of {BUDGET} s")
        return left


def _http(url: str, token: str, method: str = "GET", body: dict | None = None,
          form: dict | None = None, timeout: float = 120) -> tuple[int, bytes]:
    headers = {"Authorization": f"token {token}"}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _marked(marker: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose environment holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() not in (entry / "environ").read_bytes():
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if (entry / "stat").read_text().split(") ")[-1].startswith("Z"):
                continue  # a zombie is gone already, only not yet reaped
        except OSError:
            continue
        found.append((int(entry.name), cmd.strip()))
    return found


def _write_config(root: Path, marker: str, token: str, ports: dict[str, int]) -> Path:
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    student_config = root / "student-config"
    student_config.mkdir()
    # All single-user servers run as this one user here, so nbgrader's student id (the Unix
    # user name) is taken from the hub's user instead; real spawners need no such line.
    (student_config / "nbgrader_config.py").write_text(
        "import os\nc = get_config()\n"
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "c.CourseDirectory.student_id = os.environ['JUPYTERHUB_USER']\n")
    (root / "jupyterhub_config.py").write_text(hub_config(root, ports, token, ADMIN_SCOPES) + f"""\
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(root / 'home' / '{username}')!r}
c.Spawner.args = {["--allow-root"] if os.getuid() == 0 else []!r}  # CI runs as root
c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": {str(student_config)!r},
                          "PYTHONPATH": {str(checkout_root())!r},
                          "AUTOGRAD_LAB_HUB_TEST": {marker!r}}}
""")
    return exchange


ADMIN_SCOPES = ["admin:users", "admin:servers", "admin:groups", "tokens", "access:servers"]


def hub_config(state: Path, ports: dict[str, int], token: str, scopes: list[str]) -> str:
    """The lines every test hub shares: loopback addresses, its files under ``state``, the
    dummy authenticator, this Python for the servers, and the admin service with ``scopes``."""
    return f"""\
c = get_config()
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {ports['public']}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {ports['hub']}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{ports['proxy_api']}"
c.ConfigurableHTTPProxy.pid_file = {str(state / 'proxy.pid')!r}
c.JupyterHub.db_url = "sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(state / 'cookie_secret')!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_existing_users = True  # the users made through the REST API
c.Spawner.ip = "127.0.0.1"
c.Spawner.cmd = [{sys.executable!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
c.JupyterHub.services = [{{"name": "course-admin", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "course-admin", "scopes": {scopes!r}, "services": ["course-admin"]}}]
"""


class Hub:
    """The running hub, its REST API as the admin service, and each user's own token."""

    def __init__(self, root: Path, clock: Clock, write_config=None) -> None:
        """``write_config(root, marker, token, ports)`` writes ``root/jupyterhub_config.py``
        and returns the exchange folder (default: this file's single-user hub)."""
        self.root, self.clock = root, clock
        self.marker = f"autograd-lab-hub-{secrets.token_hex(8)}"
        self.admin = secrets.token_hex(32)
        self.ports = {k: _free_port() for k in ("public", "hub", "proxy_api")}
        self.url = f"http://127.0.0.1:{self.ports['public']}"
        self.exchange = (write_config or _write_config)(root, self.marker, self.admin, self.ports)
        self.tokens: dict[str, str] = {}
        self.log = open(root / "jupyterhub.log", "wb")
        env = dict(os.environ, AUTOGRAD_LAB_HUB_TEST=self.marker)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(root / "jupyterhub_config.py")],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            self.wait("the hub's API", lambda: self.api("GET", "/")[0] == 200)
        except BaseException:
            self.shutdown()
            raise

    def wait(self, what: str, ready) -> None:
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"the hub exited ({self.proc.returncode}) while waiting for "
                                     f"{what}:\n{self.tail()}")
            try:
                if ready():
                    return
            except (OSError, ValueError):
                pass
            if self.clock.left() < 1:
                raise TimeoutError(what)
            time.sleep(1)

    def tail(self) -> str:
        self.log.flush()
        return (self.root / "jupyterhub.log").read_text(errors="replace")[-4000:]

    def api(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        status, data = _http(f"{self.url}/hub/api{path}", self.admin, method, body=body,
                             timeout=min(120, self.clock.left()))
        return status, json.loads(data) if data.strip() else None

    def start_server(self, user: str) -> None:
        (self.root / "home" / user).mkdir(parents=True, exist_ok=True)
        status, reply = self.api("POST", f"/users/{user}/server")
        assert status in (201, 202), (status, reply, self.tail())

    def server_ready(self, user: str) -> bool:
        status, reply = self.api("GET", f"/users/{user}")
        assert status == 200, (status, reply)
        assert "" in reply["servers"], f"{user}'s server stopped while starting:\n{self.tail()}"
        return bool(reply["servers"][""].get("ready"))

    def as_user(self, user: str, method: str, path: str, **kw) -> tuple[int, bytes]:
        """A request to ``user``'s own server, through the proxy, with ``user``'s token."""
        return _http(f"{self.url}/user/{user}{path}", self.tokens[user], method,
                     timeout=min(300, self.clock.left()), **kw)

    def nbgrader(self, user: str, action: str) -> list[dict]:
        """What the assignment list's button does: POST /assignments/ACTION, returns the list."""
        status, data = self.as_user(user, "POST", f"/assignments/{action}",
                                    form={"course_id": COURSE, "assignment_id": ASSIGNMENT})
        assert status == 200, (user, action, status, data[:2000])
        reply = json.loads(data)
        assert reply["success"], (user, action, reply["value"])
        return reply["value"]

    def shutdown(self) -> list[tuple[int, str]]:
        """Stop the hub (it stops the proxy and the servers); kill what is still there after
        a minute, and return it."""
        self.stop()
        deadline = time.monotonic() + 60
        left = _marked(self.marker)
        while left and time.monotonic() < deadline:
            time.sleep(1)
            left = _marked(self.marker)
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return left

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()


def _run(args: list[str], cwd: Path, clock: Clock) -> str:
    env = dict(os.environ, PYTHONPATH=str(checkout_root()))
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=clock.left())
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout + done.stderr


def _fill(fetched: dict, key: dict) -> dict:
    """The fetched notebook with the key's code in every answer cell."""
    answers = {nbgrader_meta(c).get("grade_id"): c.source for c in key.cells
               if nbgrader_meta(c).get("solution")}
    for cell in fetched["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    return fetched


def _submissions(listed: list[dict]) -> list[dict]:
    """The student's submissions of the assignment, oldest first, from the list reply."""
    return [s for a in listed if a["assignment_id"] == ASSIGNMENT and "submissions" in a
            for s in a["submissions"]]


def _feedback_total(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index("Total: ") + len("Total: ")
    return text[start:text.index(" points.", start)]


def test_a_class_runs_through_nbgrader_on_a_real_hub(tmp_path: Path) -> None:
    clock = Clock(BUDGET)
    key_path = checkout_root() / "solutions" / f"{ASSIGNMENT}.ipynb"
    key = read_notebook(key_path)
    max_points = sum(e.points for e in exercises(key))
    assert max_points > 0
    hub = Hub(tmp_path, clock)
    try:
        # 2. the class, made through the REST API, and everyone's server
        status, _ = hub.api("POST", "/users", {"usernames": [INSTRUCTOR, *STUDENTS]})
        assert status == 201, hub.tail()
        status, _ = hub.api("POST", f"/groups/formgrade-{COURSE}", {"users": [INSTRUCTOR]})
        assert status == 201, hub.tail()
        assert hub.api("GET", f"/groups/formgrade-{COURSE}")[1]["users"] == [INSTRUCTOR]
        for user in (INSTRUCTOR, *STUDENTS):
            status, reply = hub.api("POST", f"/users/{user}/tokens", {"note": "hub test"})
            assert status == 201, (reply, hub.tail())
            hub.tokens[user] = reply["token"]
            hub.start_server(user)
        for user in (INSTRUCTOR, *STUDENTS):
            hub.wait(f"{user}'s server", lambda u=user: hub.server_ready(u))
        # a student's token does not open another student's server
        status, _ = _http(f"{hub.url}/user/{STUDENTS[1]}/api/status", hub.tokens[STUDENTS[0]])
        assert status == 403 or status // 100 == 3

        # 3. the instructor generates and releases the chapter
        course = tmp_path / "home" / INSTRUCTOR / "course"
        course.mkdir()
        (course / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.CourseDirectory.course_id = {COURSE!r}\n"
            f"c.CourseDirectory.root = {str(course)!r}\n"
            f"c.Exchange.root = {str(hub.exchange)!r}\n")
        make_source(course / "source", groups=[f"{ASSIGNMENT}={ASSIGNMENT}"])
        nbgrader = [sys.executable, "-m", "nbgrader"]
        _run([*nbgrader, "generate_assignment", ASSIGNMENT], course, clock)
        _run([*nbgrader, "release_assignment", ASSIGNMENT], course, clock)

        # ... each student fetches it through their own server, fills it (or not), submits
        path = f"/api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        for student in STUDENTS:
            listed = hub.nbgrader(student, "fetch")
            assert any(a["assignment_id"] == ASSIGNMENT and a.get("status") == "fetched"
                       for a in listed), listed
            status, data = hub.as_user(student, "GET", path + "?content=1")
            assert status == 200, data[:500]
            fetched = json.loads(data)["content"]
            if student == STUDENTS[0]:
                status, data = hub.as_user(student, "PUT", path, body={
                    "type": "notebook", "format": "json", "content": _fill(fetched, key)})
                assert status == 200, data[:500]
            listed = hub.nbgrader(student, "submit")
            assert _submissions(listed)[-1]["status"] == "submitted", listed

        # 4. collect, grade with our grader, release feedback
        _run([*nbgrader, "collect", ASSIGNMENT], course, clock)
        assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(STUDENTS)
        out = tmp_path / "grades"
        printed = _run([sys.executable, "-m", "autograd_lab", "grade", str(course),
                        "--nbgrader-assignment", ASSIGNMENT, "--out", str(out),
                        *(["--run-as", RUN_AS] if RUN_AS else [])], course, clock)
        assert "graded 2 student(s)" in printed, printed
        _run([*nbgrader, "release_feedback", ASSIGNMENT], course, clock)

        # 5. the scores, and each student fetches their own feedback
        totals = dict(line.split(",", 1) for line in
                      (out / "totals.csv").read_text().splitlines()[1:])
        full = f"{max_points:g}"
        assert totals == {STUDENTS[0]: f"{full},{full}", STUDENTS[1]: f"0,{full}"}, totals
        for student, expected in zip(STUDENTS, (full, "0")):
            listed = hub.nbgrader(student, "fetch_feedback")
            assert _submissions(listed)[-1]["has_local_feedback"], listed
            home = tmp_path / "home" / student / ASSIGNMENT / "feedback"
            pages = sorted(home.glob(f"*/{ASSIGNMENT}.html"))
            assert len(pages) == 1, pages
            assert _feedback_total(pages[0]) == f"{expected} / {full}"
    finally:
        # 6. stop everything; nothing may be left
        for user in (INSTRUCTOR, *STUDENTS):
            try:
                hub.api("DELETE", f"/users/{user}/server")
            except (OSError, TimeoutError, ValueError):
                pass
        left = hub.shutdown()
    assert hub.proc.returncode is not None
    assert left == [], f"processes left after the hub stopped: {left}"
