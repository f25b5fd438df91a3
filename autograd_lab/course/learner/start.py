"""``autograd-lab start``: copy the course notebooks into a working folder and open JupyterLab.

The learner's files are never overwritten: a notebook already in the working folder is
kept as it is, so running ``start`` again simply reopens the course where they left it.
A small record in the working folder (``.autograd_lab/manifest.json``) remembers which
version of each course notebook was copied; when the course has a newer one, ``start``
says so, and ``start --update`` writes it *beside* the learner's copy
(``03_function.new.ipynb``).

JupyterLab runs as a child of ``start`` and ends with it (Ctrl+C, SIGTERM, or the terminal
closing). Its own log goes to ``.autograd_lab/jupyterlab.log`` in the working folder, so the
terminal shows only what a learner needs: the address to open, where to begin, how to stop.
A second ``start`` on a folder that already has a server prints that server's address.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..authoring.notebooks import CourseError, default_dir, list_notebooks

DEFAULT_DIR = Path("autograd_lab_work")
STATE_DIR = ".autograd_lab"  # hidden in JupyterLab's file browser
MANIFEST = "manifest.json"
LOG = "jupyterlab.log"
READY_TIMEOUT = 120.0  # seconds JupyterLab may take to start serving
STOP_TIMEOUT = 15.0  # seconds it may take to shut down after SIGTERM before it is killed


class _Stop(Exception):
    """A signal asked ``start`` to end (SIGTERM, SIGHUP)."""


# -- the working folder ----------------------------------------------------------------------
def tell(message: str) -> None:
    """Print a line the learner must read now: flushed, because with the output going to a file
    or a pipe (a container's log, ``| tee``) Python buffers it until the process ends, and
    ``start`` does not end until JupyterLab is stopped."""
    print(message, flush=True)


def file_hash(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_manifest(work: Path) -> dict[str, str]:
    """Notebook name -> hash of the course version last given to the learner."""
    try:
        data = json.loads((Path(work) / STATE_DIR / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    notebooks = data.get("notebooks", {}) if isinstance(data, dict) else {}
    return {str(k): str(v) for k, v in notebooks.items()} if isinstance(notebooks, dict) else {}


def write_manifest(work: Path, notebooks: dict[str, str]) -> None:
    folder = Path(work) / STATE_DIR
    folder.mkdir(exist_ok=True)
    text = json.dumps({"notebooks": dict(sorted(notebooks.items()))}, indent=1) + "\n"
    (folder / MANIFEST).write_text(text, encoding="utf-8")


def copy_course(course: Path, work: Path) -> tuple[list[Path], list[Path]]:
    """Copy ``course/*.ipynb`` into ``work``; return (copied, kept) -- existing files are kept."""
    notebooks = list_notebooks(course)
    if not notebooks:
        raise CourseError(f"{course} holds no notebooks. Generate them from the key with "
                          "`autograd-lab release`, or pass the course folder with --course.")
    if work.exists() and not work.is_dir():
        raise CourseError(f"The working folder {work} is a file; pass another path with --dir.")
    work.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(work)
    copied, kept = [], []
    for source in notebooks:
        target = work / source.name
        if target.exists():
            kept.append(target)
            # a copy made before the record existed counts as the current version
            manifest.setdefault(source.name, file_hash(source))
            continue
        shutil.copyfile(source, target)
        manifest[source.name] = file_hash(source)
        copied.append(target)
    write_manifest(work, manifest)
    for page in sorted(course.glob("*.md")):  # the glossary the chapters link to
        if not (work / page.name).exists():
            shutil.copyfile(page, work / page.name)
    return copied, kept


def outdated(course: Path, work: Path) -> list[Path]:
    """Course notebooks newer than the version the learner got (their copy is still there)."""
    manifest = read_manifest(work)
    return [source for source in list_notebooks(course)
            if (work / source.name).exists() and source.name in manifest
            and manifest[source.name] != file_hash(source)
            and file_hash(work / source.name) != file_hash(source)]


def new_version_path(target: Path) -> Path:
    """``03_function.new.ipynb`` beside ``03_function.ipynb`` (``.new2``, ... if taken)."""
    for n in range(1, 1000):
        candidate = target.with_name(f"{target.stem}.new{n if n > 1 else ''}{target.suffix}")
        if not candidate.exists():
            return candidate
    raise CourseError(f"Too many new versions of {target.name} in {target.parent}; delete "
                      "the old .new files you do not need.")


def update(course: Path, work: Path) -> list[tuple[Path, Path]]:
    """Write each newer course notebook beside the learner's copy; return (theirs, new) pairs.

    The learner's notebooks are never touched."""
    manifest = read_manifest(work)
    written = []
    for source in outdated(course, work):
        theirs = work / source.name
        new = new_version_path(theirs)
        shutil.copyfile(source, new)
        manifest[source.name] = file_hash(source)
        written.append((theirs, new))
    for source in list_notebooks(course):  # a copy equal to the course version is current
        if (work / source.name).exists() and file_hash(work / source.name) == file_hash(source):
            manifest[source.name] = file_hash(source)
    write_manifest(work, manifest)
    return written


# -- JupyterLab ------------------------------------------------------------------------------
def running_servers(work: Path) -> list[dict[str, Any]]:
    """Jupyter servers serving ``work``, from Jupyter's own runtime files (jpserver-*.json)."""
    from jupyter_server.serverapp import list_running_servers

    root = Path(work).resolve()
    found = []
    for info in list_running_servers():
        try:
            if Path(info.get("root_dir") or info.get("notebook_dir") or "").resolve() == root:
                found.append(info)
        except (OSError, TypeError):
            continue
    return found


def server_url(info: dict[str, Any]) -> str:
    """The address of a running server's JupyterLab, with its token."""
    url = str(info.get("url", "")).rstrip("/") + "/lab"
    token = info.get("token")
    return f"{url}?token={token}" if token else url


def jupyter_command(work: Path, open_browser: bool = True, port: int | None = None,
                    ip: str | None = None, extra: Sequence[str] = ()) -> list[str]:
    """The JupyterLab command line for ``work``; ``extra`` goes to JupyterLab as it is."""
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={Path(work).resolve()}"]
    if not open_browser:
        command.append("--no-browser")
    if port is not None:
        command.append(f"--port={port}")
    if ip is not None:
        command.append(f"--ip={ip}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # JupyterLab refuses to run as root unless told; a learner in a container often is root
        command.append("--allow-root")
    return command + list(extra)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the child gets SIGTERM when ``start`` dies, even by SIGKILL."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def accepts_connections(info: dict[str, Any]) -> bool:
    """Whether the server of ``info`` (a jpserver-*.json) takes TCP connections yet.

    jupyter_server writes that file before its event loop binds the port, so the file alone
    does not mean a browser (or a test) can connect."""
    if info.get("sock"):  # a Unix socket: there is no port to try
        return True
    host = urllib.parse.urlsplit(str(info.get("url", ""))).hostname or "127.0.0.1"
    try:
        port = int(info.get("port") or 0)
    except (TypeError, ValueError):
        return True  # nothing to try: trust the file, as before
    for candidate in dict.fromkeys((host, "127.0.0.1")):
        try:
            with socket.create_connection((candidate, port), timeout=1.0):
                return True
        except OSError:
            continue
    return False


def wait_until_serving(child: subprocess.Popen, timeout: float = READY_TIMEOUT
                       ) -> dict[str, Any] | None:
    """The runtime info of the server ``child`` started, once it serves: its runtime file is
    written and its port takes connections (None if it exited or the time ran out)."""
    from jupyter_server.serverapp import list_running_servers

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return None
        for info in list_running_servers():
            if info.get("pid") == child.pid and accepts_connections(info):
                return info
        time.sleep(0.2)
    return None


def stop_child(child: subprocess.Popen, timeout: float = STOP_TIMEOUT) -> int:
    """End JupyterLab: SIGTERM (it shuts its kernels down), then SIGKILL if it hangs."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return child.returncode


def _log_tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in text[-lines:])


def launch_jupyter(work: Path, open_browser: bool = True, port: int | None = None,
                   ip: str | None = None, extra: Sequence[str] = (),
                   say: Callable[[str], None] = tell,
                   first: str | None = None) -> int:
    """Run JupyterLab in ``work`` until ``start`` is stopped; return an exit code.

    JupyterLab's log goes to ``work/.autograd_lab/jupyterlab.log``; once it serves, the
    learner sees a short block with its address. Ctrl+C, SIGTERM and SIGHUP end it too.
    """
    work = Path(work)
    (work / STATE_DIR).mkdir(parents=True, exist_ok=True)
    log_path = work / STATE_DIR / LOG
    command = jupyter_command(work, open_browser, port, ip, extra)

    def stop(signum: int, frame: Any) -> None:
        raise _Stop(signum)

    # Ctrl+C too, by our own handler: a process started with SIGINT ignored (as some launchers
    # and background jobs do) would otherwise never get Python's KeyboardInterrupt
    handled = [s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
               if s]
    previous = {s: signal.signal(s, stop) for s in handled}
    child = None
    try:
        with open(log_path, "ab") as log:
            # its own session: a Ctrl+C reaches only `start`, which then stops JupyterLab cleanly
            child = subprocess.Popen(
                command, cwd=work, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        info = wait_until_serving(child)
        if info is None:
            code = stop_child(child)
            say(f"JupyterLab did not start (exit code {code}). The end of its log, "
                f"{log_path}:\n{_log_tail(log_path)}")
            return code or 1
        say(start_block(work, info, log_path, first))
        return child.wait() or 0
    except (KeyboardInterrupt, _Stop):  # Ctrl+C, kill or closing the terminal: the normal ways out
        say("Stopping JupyterLab ...")
        return 0
    finally:
        if child is not None:
            stop_child(child)
        for s, handler in previous.items():
            signal.signal(s, handler)


def start_block(work: Path, info: dict[str, Any], log_path: Path, first: str | None) -> str:
    """What the learner reads once JupyterLab serves."""
    lines = ["", "JupyterLab is running. Open this address in your browser (it holds your "
             "access token):", "", f"    {server_url(info)}", ""]
    if first:
        lines.append(f"  - Open {first} first.")
    lines += [f"  - Your work is saved in {Path(work).resolve()}; `autograd-lab start` never "
              "overwrites a notebook there.",
              "  - To stop: press Ctrl+C here (or close this terminal). Run `autograd-lab start` "
              "again to go on where you left off.",
              f"  - JupyterLab's own log: {log_path.resolve()}", ""]
    return "\n".join(lines)


def start(work: Path = DEFAULT_DIR, course: Path | None = None, open_browser: bool = True,
          launch: bool = True, say: Callable[[str], None] = tell, port: int | None = None,
          ip: str | None = None, jupyter_args: Sequence[str] = (), update_notebooks: bool = False
          ) -> int:
    """Set up ``work`` from ``course`` (the checkout's ``course/`` by default) and open it."""
    course = Path(course) if course is not None else default_dir("course")
    work = Path(work)
    copied, kept = copy_course(course, work)
    names = [p.name for p in list_notebooks(course)]
    if copied and not kept:
        say(f"Copied the {len(copied)} course notebooks into {work.resolve()}.")
    elif copied:
        say(f"Copied {len(copied)} new course notebook(s) into {work.resolve()}: "
            + ", ".join(p.name for p in copied) + f"; your {len(kept)} own are kept as they are.")
    else:
        say(f"Your {len(kept)} notebooks in {work.resolve()} are kept as they are.")
    if update_notebooks:
        written = update(course, work)
        for theirs, new in written:
            say(f"New version of {theirs.name} written beside yours as {new.name} "
                "(yours is unchanged).")
        if not written:
            say("Every notebook you have is the course's newest version.")
    else:
        newer = outdated(course, work)
        if newer:
            say(f"The course has a newer version of {len(newer)} notebook(s) you already "
                "have: " + ", ".join(p.name for p in newer) + ". Run `autograd-lab start "
                "--update` to get each one beside yours (e.g. "
                f"{new_version_path(work / newer[0].name).name}); yours is never changed.")
    if not launch:
        return 0
    servers = running_servers(work)
    if servers:
        say(f"JupyterLab is already running for this folder (process {servers[0].get('pid')}); "
            f"open:\n\n    {server_url(servers[0])}\n\nStop it from the terminal where it "
            "was started (Ctrl+C), or in JupyterLab with File > Shut Down.")
        if open_browser:
            import webbrowser
            webbrowser.open(server_url(servers[0]))
        return 0
    return launch_jupyter(work, open_browser, port, ip, jupyter_args, say,
                          first=names[0] if names else None)
