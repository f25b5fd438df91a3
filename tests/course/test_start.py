"""``autograd-lab start``: the working folder, updates beside the learner's copies, and a real
JupyterLab started through the console script, reached over HTTP and stopped with ``start``."""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from autograd_lab import cli
from autograd_lab.course.learner import start as start_module
from autograd_lab.course.authoring.notebooks import write_notebook
from tests._console import cli_env, console_script

URL = re.compile(r"^\s+(http://\S+/lab\?token=\w+)\s*$", re.M)


def make_course(folder: Path, names=("00_welcome", "01_b", "02_c")) -> Path:
    for name in names:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {name} v1")])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        write_notebook(nb, folder / f"{name}.ipynb")
    return folder


def change(path: Path, text: str) -> None:
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[0].source = text
    write_notebook(nb, path)


# -- the working folder: copies, the record of versions, updates beside -------------------------
def test_newer_course_notebooks_are_offered_and_written_beside(tmp_path) -> None:
    course, work = make_course(tmp_path / "course"), tmp_path / "work"
    said: list[str] = []
    assert start_module.start(work, course, launch=False, say=said.append) == 0
    assert said == [f"Copied the 3 course notebooks into {work.resolve()}."]
    change(work / "01_b.ipynb", "# my answers")          # the learner's work
    change(course / "01_b.ipynb", "# 01_b v2")           # the course changes under it
    change(course / "02_c.ipynb", "# 02_c v2")           # and an untouched one changes too
    mine = (work / "01_b.ipynb").read_bytes()

    said.clear()
    start_module.start(work, course, launch=False, say=said.append)
    assert "newer version of 2 notebook(s) you already have: 01_b.ipynb, 02_c.ipynb" in said[-1]
    assert "autograd-lab start --update" in said[-1] and "01_b.new.ipynb" in said[-1]
    assert not (work / "01_b.new.ipynb").exists()  # only offered

    said.clear()
    start_module.start(work, course, launch=False, say=said.append, update_notebooks=True)
    assert (work / "01_b.ipynb").read_bytes() == mine  # never over the learner's copy
    assert (work / "01_b.new.ipynb").read_bytes() == (course / "01_b.ipynb").read_bytes()
    assert (work / "02_c.new.ipynb").read_bytes() == (course / "02_c.ipynb").read_bytes()
    assert "New version of 01_b.ipynb written beside yours as 01_b.new.ipynb" in " ".join(said)

    said.clear()  # once given, a version is not offered again
    start_module.start(work, course, launch=False, say=said.append)
    assert not any("newer version" in s for s in said)
    change(course / "01_b.ipynb", "# 01_b v3")  # a third version goes to a fresh name
    start_module.start(work, course, launch=False, say=said.append, update_notebooks=True)
    assert "# 01_b v3" in (work / "01_b.new2.ipynb").read_text()
    assert "# 01_b v2" in (work / "01_b.new.ipynb").read_text()
    assert (work / "01_b.ipynb").read_bytes() == mine


def test_a_folder_from_before_the_record_raises_no_false_alarm(tmp_path) -> None:
    course, work = make_course(tmp_path / "course"), tmp_path / "work"
    work.mkdir()
    (work / "00_welcome.ipynb").write_text("my own old copy")
    said: list[str] = []
    start_module.start(work, course, launch=False, say=said.append)
    assert (work / "00_welcome.ipynb").read_text() == "my own old copy"
    assert said == [f"Copied 2 new course notebook(s) into {work.resolve()}: 01_b.ipynb, "
                    "02_c.ipynb; your 1 own are kept as they are."]
    record = json.loads((work / ".autograd_lab" / "manifest.json").read_text())["notebooks"]
    assert sorted(record) == ["00_welcome.ipynb", "01_b.ipynb", "02_c.ipynb"]


def test_options_reach_jupyterlab(tmp_path, monkeypatch) -> None:
    seen = {}
    monkeypatch.setattr(start_module, "launch_jupyter",
                        lambda work, open_browser, port, ip, extra, say, first: seen.update(
                            open_browser=open_browser, port=port, ip=ip, extra=extra,
                            first=first) or 0)
    monkeypatch.setattr(start_module, "running_servers", lambda work: [])
    course = make_course(tmp_path / "course")
    assert cli.main(["start", "--dir", str(tmp_path / "w"), "--course", str(course),
                     "--no-browser", "--port", "9999", "--ip", "0.0.0.0", "--",
                     "--ServerApp.base_url=/x/", "--debug"]) == 0
    assert seen == dict(open_browser=False, port=9999, ip="0.0.0.0",
                        extra=["--ServerApp.base_url=/x/", "--debug"], first="00_welcome.ipynb")
    command = start_module.jupyter_command(tmp_path, False, 9999, "0.0.0.0", ["--debug"])
    assert command[-1] == "--debug" and "--port=9999" in command and "--ip=0.0.0.0" in command


@pytest.mark.parametrize("args, message", [
    (["--port", "0"], "argument --port: must be a port number from 1 to 65535, got 0"),
    (["--port", "http"], "argument --port: expected a port number"),
    (["--prot", "80"], "unrecognized arguments: --prot 80"),
])
def test_bad_start_options_get_starts_usage(tmp_path, capsys, args, message) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["start", *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("usage: autograd-lab start")


# -- a real JupyterLab ----------------------------------------------------------------------------
class _FakeChild:
    """Stands in for the JupyterLab process: a pid, and poll() saying whether it ended."""

    def __init__(self, pid: int = 424242, ended: bool = False) -> None:
        self.pid, self.ended = pid, ended

    def poll(self):
        return 1 if self.ended else None


def test_start_waits_for_the_port_not_only_for_the_runtime_file(monkeypatch):
    """jupyter_server writes its jpserver-*.json before its event loop binds the port: the URL is
    shown only once the port takes connections (a test that connected at once was refused)."""
    import jupyter_server.serverapp as serverapp

    placeholder = socket.socket()
    placeholder.bind(("127.0.0.1", 0))  # bound, not listening: connecting is refused
    port = placeholder.getsockname()[1]
    info = {"pid": 424242, "port": port, "url": f"http://127.0.0.1:{port}/", "token": "t"}
    monkeypatch.setattr(serverapp, "list_running_servers", lambda: [info])
    assert not start_module.accepts_connections(info)
    assert start_module.wait_until_serving(_FakeChild(), timeout=1.0) is None  # never listened

    def listen_later():
        time.sleep(0.6)
        placeholder.listen()

    threading.Thread(target=listen_later).start()
    begin = time.monotonic()
    try:
        assert start_module.wait_until_serving(_FakeChild(), timeout=20) == info
        assert time.monotonic() - begin >= 0.5  # it waited for the port
        assert start_module.accepts_connections(info)
    finally:
        placeholder.close()
    assert start_module.wait_until_serving(_FakeChild(ended=True), timeout=5) is None  # it exited
    assert start_module.accepts_connections({"sock": "/tmp/jupyter.sock", "port": 0})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its parent counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


class Started:
    """``autograd-lab start`` in a subprocess; its output read line by line in a thread."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([console_script(), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     text=True, env=env, cwd=cwd)
        self.lines: queue.Queue[str] = queue.Queue()
        self.out = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: re.Pattern, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.search(self.out)
            if found:
                return found
            try:
                self.out += self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
        raise AssertionError(f"no {pattern.pattern!r} within {timeout} s; output:\n{self.out}")

    def finish(self, timeout: float) -> int:
        code = self.proc.wait(timeout)
        time.sleep(0.2)
        while not self.lines.empty():
            self.out += self.lines.get()
        return code


def jupyter_pids(runtime: Path) -> list[int]:
    pids = []
    for path in runtime.glob("jpserver-*.json"):
        try:
            pids.append(int(json.loads(path.read_text())["pid"]))
        except (ValueError, KeyError, OSError):
            continue
    return pids


def status(url: str) -> dict:
    base, token = url.split("/lab?token=")
    request = urllib.request.Request(f"{base}/api/status",
                                     headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


@pytest.fixture
def lab_env(tmp_path):
    pytest.importorskip("jupyterlab")
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    env = cli_env(JUPYTER_RUNTIME_DIR=str(runtime), BROWSER="true")
    yield env, runtime
    for pid in jupyter_pids(runtime):  # whatever happened, leave no server behind
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("stop_with", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_real_jupyterlab_serves_the_folder_and_ends_with_start(tmp_path, lab_env,
                                                                 stop_with) -> None:
    env, runtime = lab_env
    course, work = make_course(tmp_path / "course"), tmp_path / "work"
    port = free_port()
    first = Started(["start", "--dir", str(work), "--course", str(course), "--no-browser",
                     "--port", str(port), "--ip", "127.0.0.1", "--",
                     "--ServerApp.base_url=/lab-test/"], env, tmp_path)
    second = None
    try:
        url = first.wait_for(URL, timeout=180).group(1)
        assert url.startswith(f"http://127.0.0.1:{port}/lab-test/lab?token=")  # -- reached it
        info = status(url)
        assert "started" in info and info["kernels"] == 0
        first.wait_for(re.compile(r"own log: .*\n"), timeout=30)  # the end of the block
        block = first.out
        assert "Open 00_welcome.ipynb first" in block and "Ctrl+C" in block
        assert f"saved in {work.resolve()}" in block and "never overwrites" in block
        log = work / ".autograd_lab" / "jupyterlab.log"
        assert f"log: {log.resolve()}" in block and "ServerApp" in log.read_text()
        assert "copied 00" not in block.lower() and "[I " not in block and "[W " not in block
        assert "nbgrader_config" not in block
        [pid] = jupyter_pids(runtime)

        second = Started(["start", "--dir", str(work), "--course", str(course), "--no-browser"],
                         env, tmp_path)
        assert second.finish(timeout=120) == 0
        assert "already running for this folder" in second.out and url in second.out
        assert jupyter_pids(runtime) == [pid]  # no second server

        first.proc.send_signal(stop_with)
        assert first.finish(timeout=60) == 0
        assert "Stopping JupyterLab" in first.out
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(pid), f"JupyterLab (pid {pid}) outlived start"
        with pytest.raises(OSError):
            status(url)
    finally:
        for started in (first, second):
            if started is not None and started.proc.poll() is None:
                started.proc.kill()
                started.proc.wait(10)


def test_jupyterlab_ends_even_when_start_is_killed(tmp_path, lab_env) -> None:
    if not os.path.exists("/proc/self"):
        pytest.skip("the parent-death signal is Linux-only")
    env, runtime = lab_env
    course, work = make_course(tmp_path / "course"), tmp_path / "work"
    first = Started(["start", "--dir", str(work), "--course", str(course), "--no-browser",
                     "--port", str(free_port()), "--ip", "127.0.0.1"], env, tmp_path)
    try:
        first.wait_for(URL, timeout=180)
        [pid] = jupyter_pids(runtime)
        first.proc.kill()
        first.finish(timeout=30)
        deadline = time.monotonic() + 30
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(pid)
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
            first.proc.wait(10)


def test_the_address_reaches_a_file_while_jupyterlab_runs(tmp_path, lab_env) -> None:
    """With its output going to a file (a container's log, ``| tee``), Python buffers ``print``
    until the process ends; ``start`` ends only when JupyterLab is stopped, so the learner must
    get each line flushed, the address block included, while it runs."""
    env, runtime = lab_env
    env = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}
    course, work = make_course(tmp_path / "course"), tmp_path / "work"
    out = tmp_path / "start.log"
    with open(out, "wb") as fh:
        proc = subprocess.Popen([console_script(), "start", "--dir", str(work), "--course",
                                 str(course), "--no-browser", "--port", str(free_port()),
                                 "--ip", "127.0.0.1"], stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)
    try:
        deadline, text = time.monotonic() + 180, ""
        while time.monotonic() < deadline and proc.poll() is None and not URL.search(text):
            time.sleep(0.5)
            text = out.read_text(errors="replace")
        assert URL.search(text), f"no address in the file while start ran; it holds:\n{text}"
        assert proc.poll() is None  # still running: the line came out by flushing, not at exit
        assert text.index("Copied the 3 course notebooks") < text.index("JupyterLab is running")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
