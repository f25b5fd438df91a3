"""Run one notebook of one student where it can harm nothing else.

``execute(nb, ...)`` sends a notebook (the student's answers with the key's graded cells
already merged in by the trusted parent) to :mod:`autograd_lab.course.grading.runner` and returns
its outputs. Two isolation levels:

``bubblewrap``
    A bubblewrap sandbox: read-only ``/usr``, ``/etc``, Python environment and
    ``autograd_lab`` package (mounted alone, without the checkout around it), a private
    size-limited ``/job`` holding only the notebook, a private ``/tmp``, no network, its own
    PID namespace (every process the notebook starts ends with the sandbox) and user
    namespace, no terminal. The key, the gradebook, the submissions and the grader's
    folders are not mounted, so they do not exist in there.
``process``
    Where bubblewrap or user namespaces are missing: a separate process in a new session
    with the same resource limits, working in a private copy; afterwards every process it
    left behind is killed (the grader is their subreaper on Linux). It hides no file.

Both apply the :class:`Limits`. Nothing that comes back is trusted: the parent keeps its
own notebook and takes only outputs, checked, from the sandbox (:func:`merge_outputs`).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from ..exercises._observe import OBSERVE_ONLY

ISOLATIONS = ("auto", "bubblewrap", "process")
PACKAGE = Path(__file__).resolve().parents[2]
"""The ``autograd_lab`` package folder, mounted read-only in the sandbox."""
LIB = "/grader/lib"
"""Where the sandbox sees the package: ``/grader/lib/autograd_lab`` (and nothing beside it)."""
MAX_RESULT_BYTES = 200_000_000
"""The most the grader reads back from a job; more means the job is stopped."""


class SandboxError(RuntimeError):
    """The job could not run, or what came back cannot be used; the message says why."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one job (each process in it; memory is address space)."""

    memory_mb: int = 2048
    cpu_seconds: int = 1800
    file_mb: int = 256
    processes: int = 512

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_seconds", "file_mb", "processes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive whole number; got {value!r}.")

    def apply(self) -> None:
        """Set the limits on the calling process (run in the child before it starts).

        The process count is set by the runner instead: inside the sandbox it counts the
        sandbox's own processes (its user namespace), outside it counts the whole user's.
        """
        import resource
        mib = 1024 * 1024
        for which, value in ((resource.RLIMIT_AS, self.memory_mb * mib),
                             (resource.RLIMIT_CPU, self.cpu_seconds),
                             (resource.RLIMIT_FSIZE, self.file_mb * mib),
                             (resource.RLIMIT_CORE, 0)):
            hard = resource.getrlimit(which)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))


def _system_binds() -> list[str]:
    """``--ro-bind`` (or ``--symlink``) arguments for the system folders."""
    args: list[str] = []
    for top in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args + ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]


def environment_roots() -> list[str]:
    """The folders of the Python environment a job needs (outside ``/usr`` and ``/etc``),
    none inside another: a virtualenv's, its base interpreter's, their site-packages."""
    import site
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.realpath(sys.prefix),
             os.path.realpath(sys.base_prefix), os.path.dirname(os.path.realpath(sys.executable))}
    roots |= {p for p in site.getsitepackages() + [site.getusersitepackages()]
              if os.path.isdir(p)}
    kept: list[str] = []
    for root in sorted(roots, key=len):
        if root.startswith(("/usr/", "/etc/")) or root in ("/usr", "/etc") or any(
                root == k or root.startswith(k.rstrip("/") + "/") for k in kept):
            continue
        kept.append(root)
    return kept


def _ro_binds() -> list[str]:
    """``--ro-bind`` pairs for the system and the Python environment (not the checkout)."""
    args = _system_binds()
    for root in environment_roots():
        args += ["--ro-bind", root, root]
    return args


def visible_in_sandbox(path: Path) -> bool:
    """Whether ``path`` lies inside something the sandbox mounts (the system, the Python
    environment, the package): then a job could read it."""
    args = _ro_binds()
    sources = [Path(args[i + 1]) for i, arg in enumerate(args) if arg == "--ro-bind"]
    target = Path(os.path.realpath(path))
    return any(target == Path(os.path.realpath(s)) or Path(os.path.realpath(s)) in target.parents
               for s in sources + [PACKAGE])


def _env(home: str, tmp: str, pythonpath: str) -> dict[str, str]:
    bindir = os.path.dirname(sys.executable)
    return {"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": tmp,
            "PYTHONPATH": pythonpath, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
            "MPLCONFIGDIR": f"{tmp}/matplotlib", "JUPYTER_RUNTIME_DIR": f"{tmp}/jupyter",
            "JUPYTER_CONFIG_DIR": f"{tmp}/jupyter-config", "IPYTHONDIR": f"{tmp}/ipython",
            "NUMBA_CACHE_DIR": f"{tmp}/numba", "JUPYTER_PLATFORM_DIRS": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "NUMBA_NUM_THREADS": "1", OBSERVE_ONLY: "1"}


SHM_MB = 16
"""Size of the sandbox's private ``/dev/shm`` (shared memory is memory no limit counts)."""


def _parents(path: str) -> list[str]:
    """Every folder above ``path``, outermost first (``/a/b/c`` -> ``/a``, ``/a/b``)."""
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]


def bubblewrap_command(limits: Limits, tmp_mb: int, files: dict[str, int],
                       argv: list[str], run_as: "RunAs | None" = None,
                       userns_fd: int | None = None) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in ``/job`` holding ``files`` (name -> fd).

    The private file systems (``/tmp``, ``/job``, ``/proc``, ``/dev``, a small ``/dev/shm``)
    are mounted first and the read-only binds after them, so a Python environment that lives
    under ``/tmp`` (or anywhere) is mounted over the private ``/tmp``, not hidden by it.

    As root (``run_as`` and ``userns_fd`` from :func:`user_namespace`): bwrap mounts inside
    a user namespace that maps only root and ``run_as``, so it can still reach an
    environment only root can read (a Python installed under ``/root``, say); then ``setpriv`` becomes ``run_as``
    with no capabilities, not even in the bounding set, before the runner starts.
    """
    size = str(tmp_mb * 1024 * 1024)
    private = ["--perms", "1777", "--size", size, "--tmpfs", "/tmp",
               "--perms", "1777", "--size", size, "--tmpfs", "/job",
               "--proc", "/proc", "--dev", "/dev",
               "--perms", "1777", "--size", str(SHM_MB * 1024 * 1024), "--tmpfs", "/dev/shm"]
    if run_as is None:
        cmd = [shutil.which("bwrap") or "bwrap", "--unshare-user", "--unshare-all"]
    else:
        cmd = [shutil.which("bwrap") or "bwrap", "--userns", str(userns_fd), "--uid", "0",
               "--gid", "0", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try"]
    cmd += ["--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    if run_as is not None:  # only what setpriv needs to drop to run_as, and it drops them all
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    cmd += [*private, *_system_binds()]
    made: set[str] = set()
    for root, target in [(r, r) for r in environment_roots()] + [
            (str(PACKAGE), f"{LIB}/autograd_lab")]:
        for parent in _parents(target):
            if parent not in made and parent not in ("/tmp", "/usr", "/etc", "/dev", "/proc"):
                made.add(parent)
                cmd += ["--perms", "0755", "--dir", parent]
        cmd += ["--ro-bind", root, target]
    for name, fd in files.items():  # a relative name goes into /job
        cmd += ["--perms", "0644", "--file", str(fd),
                name if name.startswith("/") else f"/job/{name}"]
    for key, value in _env("/job", "/tmp", LIB).items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", "/job", "--"]
    if run_as is not None:
        cmd += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={run_as.uid}",
                f"--regid={run_as.gid}", "--clear-groups", "--no-new-privs",
                "--inh-caps=-all", "--bounding-set=-all", "--"]
    return cmd + argv


@contextlib.contextmanager
def user_namespace(run_as: "RunAs") -> Any:
    """An open user namespace (its file descriptor) in which uid and gid 0 are root and
    ``run_as``'s are themselves, nothing else: bwrap joins it with ``--userns``. Made by a
    short-lived ``unshare --user`` process whose maps the grader (root) writes."""
    proc = subprocess.Popen([shutil.which("unshare") or "unshare", "--user", "cat"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env={})
    try:
        own = os.readlink("/proc/self/ns/user")
        deadline = time.monotonic() + 10
        while True:
            try:
                if os.readlink(f"/proc/{proc.pid}/ns/user") != own:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SandboxError("could not create a user namespace for --run-as "
                                   "(`unshare --user` failed)")
            time.sleep(0.005)
        for kind, own_id in (("uid", run_as.uid), ("gid", run_as.gid)):
            with open(f"/proc/{proc.pid}/{kind}_map", "w", encoding="ascii") as fh:
                fh.write(f"0 0 1\n{own_id} {own_id} 1\n")
        fd = os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    try:
        yield fd
    finally:
        os.close(fd)


@dataclass(frozen=True)
class RunAs:
    """The unprivileged user a job runs as when the grader is root (``--run-as``)."""

    name: str
    uid: int
    gid: int

    @classmethod
    def lookup(cls, name: str) -> "RunAs":
        import pwd
        try:
            entry = pwd.getpwnam(name) if not name.isdigit() else pwd.getpwuid(int(name))
        except KeyError:
            raise ValueError(f"--run-as {name!r}: no such user on this machine; name an "
                             "existing unprivileged user, e.g. nobody.") from None
        if entry.pw_uid == 0:
            raise ValueError(f"--run-as {name!r} is root (uid 0); name an unprivileged user, "
                             "e.g. nobody.")
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid)


@functools.lru_cache(maxsize=None)
def bubblewrap_problem(run_as: RunAs | None = None) -> str | None:
    """``None`` if a bubblewrap sandbox starts here, else why not (tried, not guessed).

    The check starts the interpreter inside a sandbox mounted as the jobs' are (as
    ``run_as`` where given), not only ``true``: an environment the sandbox hides or cannot
    reach fails here, before any job."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return "the `bwrap` command is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = ("import os, nbclient, nbformat; "
             f"assert os.path.isfile('{LIB}/autograd_lab/course/grading/runner.py'), 'no package'")
    with contextlib.ExitStack() as stack:
        try:
            fd = stack.enter_context(user_namespace(run_as)) if run_as is not None else None
            cmd = bubblewrap_command(Limits(), 16, {}, [sys.executable, "-c", probe],
                                     run_as=run_as, userns_fd=fd)
            done = subprocess.run(cmd, capture_output=True, timeout=60, env={},
                                  pass_fds=() if fd is None else (fd,))
        except (OSError, subprocess.TimeoutExpired, SandboxError) as err:
            return f"`bwrap` could not be started ({type(err).__name__}: {err})"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        last = why[-1] if why else f"exit code {done.returncode}"
        if any(w in last for w in ("execvp", "ModuleNotFoundError", "No such file",
                                   "Permission denied", "failed to execute", "no package")):
            return (f"a sandbox starts, but the Python environment does not run in it ({last}); "
                    f"the environment's folders {', '.join(environment_roots())} must be "
                    "readable" + (f" by {run_as.name}" if run_as else ""))
        return ("`bwrap` is installed but cannot create a sandbox here (user namespaces off?): "
                + last)
    return None


def _user_args(run_as: RunAs | None) -> dict[str, Any]:
    """``subprocess`` arguments that start the child as ``run_as`` (no other groups)."""
    if run_as is None:
        return {}
    return {"user": run_as.uid, "group": run_as.gid, "extra_groups": []}


def process_problem(run_as: "RunAs | None") -> str | None:
    """``None`` if the interpreter and the notebook runner's packages load as ``run_as``
    outside a sandbox (``--isolation process``), else why not."""
    if run_as is None:
        return None
    try:
        done = subprocess.run([sys.executable, "-c", "import nbclient, nbformat"],
                              capture_output=True, timeout=60, env={}, cwd="/",
                              **_user_args(run_as))
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{sys.executable} does not start as {run_as.name} ({type(err).__name__}: {err})"
    if done.returncode:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        return (f"the Python environment ({', '.join(environment_roots())}) does not load as "
                f"{run_as.name} ({why[-1] if why else done.returncode}): every folder above it "
                f"must be readable by {run_as.name} for --isolation process")
    return None


def choose_isolation(wanted: str, run_as: RunAs | None = None) -> str:
    """``auto`` -> ``bubblewrap`` where it works, else ``process``; an explicit choice is checked."""
    if wanted not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}; got {wanted!r}.")
    if wanted == "process":
        return "process"
    problem = bubblewrap_problem(run_as) if run_as is not None else bubblewrap_problem()
    if problem is None:
        return "bubblewrap"
    if wanted == "bubblewrap":
        raise SandboxError(f"--isolation bubblewrap was asked for, but {problem}.")
    return "process"


# -- running and cleaning up ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> None:
    """Orphans of this process's children become its children (Linux), so they can be killed."""
    if sys.platform.startswith("linux"):
        try:
            _libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                found += [int(p) for p in fh.read().split()]
    except OSError:
        pass
    return found


def kill_descendants(keep: frozenset[int] = frozenset()) -> int:
    """Kill every process below this one (and reap them); return how many were killed.

    ``keep``: children this process had before the job started (e.g. multiprocessing's fork
    server) -- they and what runs below them are not the job's and stay."""
    killed = 0
    for _ in range(50):
        todo, seen = [p for p in _children(os.getpid()) if p not in keep], []
        while todo:
            pid = todo.pop()
            seen.append(pid)
            todo += _children(pid)
        if not seen:
            break
        for pid in seen:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.05)
        _reap()
    _reap()
    return killed


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _user_tasks(run_as: "RunAs | None" = None) -> int:
    """Processes and threads the job's user runs now (Linux; the process-count limit is per user)."""
    uid, count = (run_as.uid if run_as is not None else os.getuid()), 0
    try:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if os.stat(f"/proc/{pid}").st_uid == uid:
                        count += len(os.listdir(f"/proc/{pid}/task"))
                except OSError:
                    pass
    except OSError:
        return -10**9  # unknown: the runner sets no process limit
    return count


def _drain(stream: Any, cap: int, into: list[bytes], over: threading.Event) -> None:
    size = 0
    while chunk := stream.read(1 << 16):
        size += len(chunk)
        if size > cap:
            over.set()
            return
        into.append(chunk)


def _child_setup(limits: Limits) -> None:
    """In the forked child, before ``exec``: resource limits, and end if the grader dies."""
    limits.apply()
    if sys.platform.startswith("linux"):
        try:
            _libc().prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: the runner then
            # kills its kernel; bwrap ends its sandbox
        except (OSError, AttributeError):
            pass


def _run(cmd: list[str], limits: Limits, seconds: float, pass_fds: tuple[int, ...] = (),
         cwd: str | None = None, env: dict[str, str] | None = None,
         run_as: RunAs | None = None) -> tuple[bytes, str]:
    """Run ``cmd`` (as ``run_as`` if given, with exactly the environment ``env``); return its
    standard output and how it ended ('' if it exited by itself)."""
    if sys.platform.startswith("linux"):
        _libc()  # loaded before the fork: the child only calls into it
    # the user changes before _child_setup runs (subprocess's order), so the parent-death
    # signal it sets survives; env={} starts bwrap with nothing of the grader's environment,
    # which --clearenv cannot do (/proc/1/environ keeps what a process was started with)
    before = frozenset(_children(os.getpid()))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, pass_fds=pass_fds, cwd=cwd,
                            env=env if env is not None else {},
                            start_new_session=True, preexec_fn=functools.partial(_child_setup, limits),
                            **_user_args(run_as))
    out: list[bytes] = []
    err: list[bytes] = []
    over = threading.Event()
    readers = [threading.Thread(target=_drain, args=(proc.stdout, MAX_RESULT_BYTES, out, over)),
               threading.Thread(target=_drain, args=(proc.stderr, 1_000_000, err, threading.Event()))]
    for reader in readers:
        reader.daemon = True
        reader.start()
    deadline = time.monotonic() + seconds
    ended = ""
    while proc.poll() is None:
        if over.is_set():
            ended = f"it sent back more than {MAX_RESULT_BYTES:,} bytes of output"
        elif time.monotonic() > deadline:
            ended = f"it ran longer than {seconds:.0f} s"
        if ended:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break
        time.sleep(0.1)
    proc.wait()
    kill_descendants(keep=before)
    for reader in readers:
        reader.join(timeout=5)
    if not ended and proc.returncode:
        tail = b"".join(err).decode(errors="replace").strip().splitlines()
        ended = f"the runner ended with exit code {proc.returncode}" + (
            f" ({tail[-1][:300]})" if tail else "")
    return b"".join(out), ended


def _matplotlib_caches() -> list[Path]:
    """matplotlib's font list from the grader's cache, copied into each sandbox's private
    ``/tmp/matplotlib`` so that every job need not rebuild it (a read-only file; a job's copy
    is its own)."""
    base = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    try:
        return sorted(p for p in Path(base).glob("fontlist-*.json")
                      if p.is_file() and p.stat().st_size < 10_000_000)
    except OSError:
        return []


def execute(nb: NotebookNode, name: str, timeout: int, limits: Limits, isolation: str,
            seconds: float, run_as: RunAs | None = None,
            workdir: str | None = None) -> tuple[list[dict], str]:
    """Run ``nb`` (as ``name``.ipynb) in a job of the given isolation, as ``run_as`` if given.

    Returns the raw per-cell results and, if the notebook did not run to the end, why.
    ``timeout`` is per cell; ``seconds`` bounds the whole job. The job's files (the merged
    notebook holds the hidden tests) live in a new folder inside ``workdir``, which the
    batch removes even if this process is killed.
    """
    text = nbformat.writes(nb, version=4).encode("utf-8")
    runner = "autograd_lab/course/grading/runner.py"
    with tempfile.TemporaryDirectory(prefix="autograd_lab_job_", dir=workdir) as job:
        if isolation == "bubblewrap":
            source = Path(job) / "in.ipynb"
            source.write_bytes(text)
            with contextlib.ExitStack() as stack:
                files = {f"{name}.ipynb": stack.enter_context(open(source, "rb")).fileno()}
                for cache in _matplotlib_caches():
                    files[f"/tmp/matplotlib/{cache.name}"] = stack.enter_context(
                        open(cache, "rb")).fileno()
                userns = (stack.enter_context(user_namespace(run_as))
                          if run_as is not None else None)
                cmd = bubblewrap_command(limits, limits.file_mb, files,
                                         [sys.executable, f"{LIB}/{runner}",
                                          f"/job/{name}.ipynb", str(timeout),
                                          str(limits.processes)], run_as=run_as,
                                         userns_fd=userns)
                # bwrap starts as root in a namespace where root is only itself; the
                # runner runs as run_as (see bubblewrap_command)
                raw, ended = _run(cmd, limits, seconds, env={},
                                  pass_fds=tuple(files.values()) + (
                                      () if userns is None else (userns,)))
        else:
            work, tmp = Path(job) / "work", Path(job) / "tmp"
            work.mkdir()
            tmp.mkdir()
            (work / f"{name}.ipynb").write_bytes(text)
            if run_as is not None:
                for path in (Path(job), work, tmp, work / f"{name}.ipynb"):
                    os.chown(path, run_as.uid, run_as.gid)
            env = _env(str(work), str(tmp), str(PACKAGE.parent))
            raw, ended = _run([sys.executable, str(PACKAGE.parent / runner),
                               str(work / f"{name}.ipynb"), str(timeout),
                               str(limits.processes + _user_tasks(run_as))], limits, seconds,
                              cwd=str(work), env=env, run_as=run_as)
    if ended and not raw:
        return [], ended
    try:
        payload = json.loads(raw.decode("utf-8"))
        cells = payload["cells"]
        reason = "" if payload.get("ok") else str(payload.get("reason", "it did not say why"))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return [], ended or "what the notebook's runner sent back is not a result"
    return (cells if isinstance(cells, list) else []), ended or reason[:500]


def merge_outputs(nb: NotebookNode, cells: list[Any]) -> NotebookNode:
    """Put the outputs that came back into the parent's own notebook ``nb``.

    Only ``outputs`` and ``execution_count`` are taken, cell by cell; sources and metadata
    (points, ids) stay the parent's. Raises :class:`SandboxError` when the result does not
    match the notebook or is not valid nbformat.
    """
    if len(cells) != len(nb.cells):
        raise SandboxError(f"the executed notebook came back with {len(cells)} cells instead of "
                           f"{len(nb.cells)}")
    for cell, got in zip(nb.cells, cells):
        if cell.cell_type != "code":
            continue
        if not isinstance(got, dict) or not isinstance(got.get("outputs"), list):
            raise SandboxError("the executed notebook came back malformed")
        count = got.get("execution_count")
        cell.execution_count = count if isinstance(count, int) and count >= 0 else None
        cell.outputs = [nbformat.from_dict(o) for o in got["outputs"]]
    try:
        nbformat.validate(nb)
    except Exception as err:  # nbformat raises several kinds
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise SandboxError(f"the executed notebook came back invalid ({first[:200]})") from None
    return nb
