"""Run one notebook with a fresh kernel; the only grading code that runs next to a submission.

Started by :mod:`autograd_lab.course.grading.sandbox` as a script (``python runner.py NOTEBOOK
TIMEOUT PROCESSES``), inside the job's sandbox, with the job's folder as working folder. It imports
nothing of ``autograd_lab`` (so it starts quickly) and writes one JSON object on the file
descriptor it was started with as standard output: ``{"ok": true, "cells": [...]}`` with
the outputs and execution count of every cell, or ``{"ok": false, "reason": ...}`` when the
notebook could not be run to the end. The kernel gets neither that descriptor nor the
terminal: its own standard output and error go to a file in the private ``/tmp``.

Nothing here is trusted by the grader: a submission can overwrite this process's output,
so the parent checks what comes back against the notebook it sent (see
:func:`autograd_lab.course.grading.sandbox.merge_outputs`).
"""
from __future__ import annotations

import json
import os
import signal
import sys
import tempfile

ERROR_ON_TIMEOUT = {
    "ename": "CellTimeoutError",
    "evalue": "",
    "traceback": ["\x1b[0;31mCellTimeoutError\x1b[0m: No reply from kernel before timeout"],
}


def _record_error(cell, execute_reply, **_):  # same rule as nbgrader's Execute preprocessor
    content = execute_reply["content"]
    if content["status"] != "error":
        return
    if any(o.get("output_type") == "error" and o.get("ename") == content["ename"]
           for o in cell.outputs):
        return
    import nbformat
    cell.outputs.append(nbformat.v4.new_output(
        "error", ename=content["ename"], evalue=content["evalue"],
        traceback=content["traceback"] or ["ERROR: An error occurred while showtraceback "
                                           "was disabled"]))


def _descendants() -> list[int]:
    """Every process below this one (Linux ``/proc``; elsewhere none are found)."""
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                    children = [int(c) for c in fh.read().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def _stop(signum, frame):  # the grader went away: take the kernel and its children along
    for pid in _descendants():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(1)


def limit_processes(count: int) -> None:
    """At most ``count`` more processes and threads for this process and its children.

    A count above the hard limit this process already has cannot be set without privilege
    (every job crashed on it): the hard limit, which is lower, is kept instead."""
    import resource
    if count > 0:
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        if hard != resource.RLIM_INFINITY:
            count = min(count, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (count, count))


def seed_numba_cache() -> int:
    """Copy the package's compiled kernels into this job's own numba cache; return how many files.

    A job's ``NUMBA_CACHE_DIR`` is a new folder in its private ``/tmp``, so without this every
    graded notebook compiled every kernel it used again (2-8 s a notebook). numba finds a
    function's cache in ``NUMBA_CACHE_DIR/<folder>_<sha1 of the folder's path>``, the folder
    of the source file as the job imports it, and checks each entry against a hash of the source,
    so a stale or foreign file is only a miss. The files come from the package's ``__pycache__``,
    which the job can read anyway; a copy is the job's own."""
    import hashlib
    import shutil

    cache = os.environ.get("NUMBA_CACHE_DIR")
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    kernels = os.path.join(package, "kernels")  # autograd_lab/kernels, from course/grading/
    source = os.path.join(kernels, "__pycache__")
    if not cache or not os.path.isdir(source):
        return 0
    # numba's rule (numba.core.caching._CacheLocator.get_suitable_cache_subpath), written out:
    # importing numba here would add 0.25-0.5 s to every job; tests/course/test_grading_jobs.py fails
    # if numba changes it
    target = os.path.join(cache, "kernels_" + hashlib.sha1(kernels.encode()).hexdigest())
    copied = 0
    try:
        names = [n for n in os.listdir(source) if n.endswith((".nbi", ".nbc"))]
        size = sum(os.path.getsize(os.path.join(source, n)) for n in names)
        os.makedirs(target, exist_ok=True)
        room = os.statvfs(target)
        if size > room.f_bavail * room.f_frsize // 4:  # a small --file-size: the room is the notebook's
            return 0
        for name in names:
            shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
            copied += 1
    except OSError:  # a full /tmp, say: the kernels then compile as before
        pass
    return copied


def main(path: str, timeout: int, processes: int) -> int:
    signal.signal(signal.SIGTERM, _stop)
    limit_processes(processes)
    seed_numba_cache()
    result = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the dup is not inherited
    log = tempfile.NamedTemporaryFile(prefix="kernel-", suffix=".log", delete=False)
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    # jsonschema (under nbformat) would load rfc3987_syntax, 2 s per job, for "iri" format checks
    # that nothing here makes (python-jsonschema/jsonschema#1428); without it, jobs start sooner
    # (None in sys.modules makes an import of that name fail, as importlib documents)
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout, interrupt_on_timeout=True, allow_errors=True,
        raise_on_iopub_timeout=True, error_on_timeout=ERROR_ON_TIMEOUT, kernel_name="python3",
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
        resources={"metadata": {"path": os.getcwd()}}, on_cell_executed=_record_error)
    outcome: dict[str, object]
    try:
        client.execute()
        outcome = {"ok": True}
    except DeadKernelError as err:
        outcome = {"ok": False, "reason": f"DeadKernelError: {err}"}
    except Exception as err:  # reported to the parent, which decides
        outcome = {"ok": False, "reason": f"{type(err).__name__}: {err}"}
    outcome["cells"] = [{"outputs": c.get("outputs", []),
                         "execution_count": c.get("execution_count")} for c in nb.cells]
    json.dump(outcome, result)
    result.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
