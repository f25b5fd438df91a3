"""How long does ``autograd-lab grade`` take for a class, and how far does it scale?

Builds a synthetic class of N students (default 30) who each hand in the given notebooks
(default: every notebook of the key, 13) and grades it in one ``grade`` call per ``--jobs``
value. With ``--mix term`` (the default) the class is what a term brings:

* honest: the key (every exercise right);
* partial: the key with one or two exercises put back to the released stub;
* broken: a file that is not JSON, or a notebook whose first cell ends the kernel;
* late: the key, handed in (the files' modification time, which ``grade`` records) two days after
  the deadline of ``course.toml``;
* copied: the same file as an earlier partial student's.

It prints the wall time, the jobs (notebooks graded, and the canary's), jobs per minute per
core, each notebook's median job time, the largest memory a kernel used, then projects a
course of ``--project`` students (default 300) on 2, 16 and 64 cores. After grading, the
term's steps (late work, export, similarity, report) run once on the result and are timed.

``--mix keycopy`` is the earlier class: half hand in the key, half the untouched copy.

``--baseline DIR`` first grades the same class with the ``autograd_lab`` of another
checkout (e.g. the code before a change; this script runs there in a child process), then
with this one, and prints the ratio: before and after in one run, on one machine state.

    python benchmarks/grade_class.py --jobs 2                      # 30 students x 13 notebooks
    python benchmarks/grade_class.py --students 2 --notebooks 00_welcome 01_derivatives --jobs 1
    python benchmarks/grade_class.py --mix keycopy --notebooks 00_welcome 01_derivatives \\
        --jobs 2 --baseline ../old-checkout
"""
from __future__ import annotations

import argparse
import copy
import inspect
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograd_lab.course.grading.batch import grade
from autograd_lab.course.authoring.notebooks import (checkout_root, exercises, list_notebooks,
                                           nbgrader_meta, read_notebook, write_notebook)

KINDS = ("honest", "partial", "honest", "late", "partial", "broken", "honest", "copied",
         "partial", "honest")
"""The kind of student ``i`` is ``KINDS[i % 10]``: in a class of 30, 12 honest, 9 partial,
3 late, 3 broken, 3 copied."""

DEADLINE = "2026-10-12T23:59:00Z"
LATE_AT = "2026-10-14 21:00:00.000000 UTC"
ON_TIME_AT = "2026-10-12 20:00:00.000000 UTC"
_GRADED = re.compile(r"^(?P<who>[^/]+)/(?P<nb>\S+): (?:graded|crashed) in (?P<s>[\d.]+) s")


def _epoch(stamp: str) -> float:
    """The POSIX time of a ``YYYY-MM-DD HH:MM:SS.ffffff UTC`` stamp."""
    import datetime as dt
    moment = dt.datetime.fromisoformat(stamp.removesuffix(" UTC"))
    return moment.replace(tzinfo=dt.timezone.utc).timestamp()


def build_class(root: Path, students: int, notebooks: list[str]) -> Path:
    """The earlier class (``--mix keycopy``): alternating key copies and untouched copies."""
    subs = root / "submissions"
    for i in range(students):
        source = checkout_root() / ("solutions" if i % 2 == 0 else "course")
        folder = subs / f"student{i:02d}"
        folder.mkdir(parents=True)
        for name in notebooks:
            shutil.copyfile(source / f"{name}.ipynb", folder / f"{name}.ipynb")
    return subs


def partial_notebook(key, released, student: int):
    """The key with one or two exercises' solution cells put back to the released stub."""
    nb = copy.deepcopy(key)
    stubs = {str(nbgrader_meta(c).get("grade_id")): c.source for c in released.cells
             if nbgrader_meta(c).get("solution") and c.cell_type == "code"}
    ids = [ex.id for ex in exercises(key)]
    if not ids:
        return nb
    broken = {ids[student % len(ids)]} | ({ids[(student + 3) % len(ids)]} if len(ids) > 3 else set())
    for cell in nb.cells:
        gid = str(nbgrader_meta(cell).get("grade_id", ""))
        if gid.removesuffix("-code") in broken and gid in stubs:
            cell.source = stubs[gid]
    return nb


def build_term_class(root: Path, students: int, notebooks: list[str]) -> tuple[Path, dict]:
    """The ``--mix term`` class; returns the submissions folder and each student's kind."""
    subs = root / "submissions"
    key = {n: read_notebook(checkout_root() / "solutions" / f"{n}.ipynb") for n in notebooks}
    released = {n: read_notebook(checkout_root() / "course" / f"{n}.ipynb") for n in notebooks}
    kinds: dict[str, str] = {}
    last_partial = None
    for i in range(students):
        kind = KINDS[i % len(KINDS)]
        if kind == "copied" and last_partial is None:
            kind = "partial"
        student = f"student{i:02d}"
        kinds[student] = kind
        folder = subs / student
        folder.mkdir(parents=True)
        for n, nb in key.items():
            target = folder / f"{n}.ipynb"
            if kind in ("honest", "late"):
                write_notebook(nb, target)
            elif kind == "partial":
                write_notebook(partial_notebook(nb, released[n], i), target)
            elif kind == "copied":
                shutil.copyfile(subs / last_partial / f"{n}.ipynb", target)
            elif i % 2:  # broken: not JSON
                target.write_text('{"cells": [ this is not JSON', encoding="utf-8")
            else:  # broken: the kernel ends in the first cell
                crash = copy.deepcopy(nb)
                first = next(c for c in crash.cells if c.cell_type == "code")
                first.source = "import os\nos._exit(3)\n" + first.source
                write_notebook(crash, target)
        handed_in = _epoch(LATE_AT if kind == "late" else ON_TIME_AT)
        for target in folder.iterdir():  # the hand-in time grade records: the file's mtime
            os.utime(target, (handed_in, handed_in))
        if kind == "partial":
            last_partial = student
    config = ["[defaults]", 'late = "linear"', 'per = "day"', "rate = 10", "cap = 50", ""]
    for n in notebooks:
        config += [f"[notebooks.{n}]", f'deadline = "{DEADLINE}"', ""]
    (subs / "course.toml").write_text("\n".join(config), encoding="utf-8")
    return subs, kinds


class KernelMemory:
    """The largest resident memory of any one kernel process while the class is graded,
    sampled from ``/proc`` every second (Linux; elsewhere nothing is found)."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "KernelMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        if b"ipykernel" not in fh.read():
                            continue
                    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
                        rss = next((int(line.split()[1]) for line in fh
                                    if line.startswith("VmRSS:")), 0)
                except (OSError, ValueError):
                    continue
                self.peak_mb = max(self.peak_mb, rss / 1024)


def project(seconds: float, jobs_done: int, cores_used: int, students: int, notebooks: int,
            cores: tuple[int, ...] = (2, 16, 64)) -> list[tuple[int, float]]:
    """Hours a class of ``students`` x ``notebooks`` takes on each core count, at the measured
    jobs per minute per core (jobs are independent, so the rate scales with the cores)."""
    per_core = jobs_done / (seconds / 60) / cores_used
    return [(c, students * notebooks / (per_core * c) / 60) for c in cores]


def time_class(args: argparse.Namespace) -> list[tuple[int, float, str]]:
    """Grade the class once per ``--jobs`` value; ``(jobs, seconds, isolation)`` each."""
    timings = []
    known = inspect.signature(grade).parameters
    extra = {"isolation": args.isolation} if "isolation" in known else {}
    if "progress" in known:  # a line at every tenth of the class
        extra["progress"] = sys.stdout
    with tempfile.TemporaryDirectory() as tmp:
        kinds: dict[str, str] = {}
        if args.mix == "term":
            subs, kinds = build_term_class(Path(tmp), args.students, args.notebooks)
            counts = {k: list(kinds.values()).count(k) for k in dict.fromkeys(KINDS)}
            print("class: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n), flush=True)
        else:
            subs = build_class(Path(tmp), args.students, args.notebooks)
        for jobs in args.jobs:
            out = Path(tmp) / f"out-{jobs}"
            canary = {"jobs": 0}  # the canary runs once per process and notebook
            per_job: list[tuple[str, str, float]] = []
            started = time.perf_counter()
            stream = open(args.jobs_log, "a", encoding="utf-8") if args.jobs_log else None

            def log(message: str, per_job: list = per_job) -> None:
                """Every job's time as it ends (and the canary's end), so that a run stopped
                before the end still tells its rate."""
                if message.startswith("canary: grading the key and the student copy of "):
                    names = message.split(" of ", 1)[1].removesuffix(" first").split(", ")
                    canary["jobs"] = 2 * len(names)
                found = _GRADED.match(message)
                if found:
                    per_job.append((found["who"], found["nb"], float(found["s"])))
                if stream is not None and (found or message.startswith("canary: the key")):
                    record = {"at": round(time.perf_counter() - started, 1),
                              "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else 0}
                    record.update({"student": found["who"], "notebook": found["nb"],
                                   "seconds": float(found["s"])} if found else
                                  {"canary_done": canary["jobs"]})
                    stream.write(json.dumps(record) + "\n")
                    stream.flush()

            load_before = os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0)
            start = time.perf_counter()
            with KernelMemory() as memory:
                rows = grade(subs, out, timeout=args.timeout, jobs=jobs,
                             notebooks=args.notebooks, log=log, **extra)
            seconds = time.perf_counter() - start
            canary_jobs = canary["jobs"]
            if stream is not None:
                stream.close()
            load_after = os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0)
            graded = len(per_job)
            crashed = sum(r.status == "crashed" for r in rows)
            level = ", ".join(sorted({getattr(r, "isolation", "process (no sandbox)")
                                      for r in rows}))
            cores_used = max(1, min(jobs, os.cpu_count() or 1))
            print(f"jobs={jobs}: {seconds:6.1f} s total, {seconds / max(1, graded):5.2f} s per "
                  f"notebook [{level}]{f', {crashed} crashed rows' if crashed else ''}",
                  flush=True)
            reasons = sorted({r.reason for r in rows if r.status == "crashed"})
            if args.mix == "keycopy":
                for reason in reasons[:3]:  # a crashed row makes the timing meaningless: say why
                    print(f"  crashed: {reason[:300]}", flush=True)
            else:
                summary = _summary(rows, per_job, canary_jobs, seconds, cores_used,
                                   memory.peak_mb, load_before, load_after, args)
                print(summary, flush=True)
                if args.json:
                    args.json.write_text(json.dumps(_record(rows, per_job, canary_jobs, seconds,
                                                            jobs, cores_used, memory.peak_mb,
                                                            load_before, load_after, kinds,
                                                            args), indent=1) + "\n",
                                         encoding="utf-8")
                if not args.no_term:
                    _time_term(out, subs)
            timings.append((jobs, seconds, level))
    return timings


def _summary(rows, per_job, canary_jobs, seconds, cores_used, peak_mb, load_before, load_after,
             args) -> str:
    ran = len(per_job) + canary_jobs
    rate = ran / (seconds / 60) / cores_used
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    lines = [f"  jobs: {ran} ({len(per_job)} submissions, {canary_jobs} of the canary; invalid "
             "files need none); "
             f"rows by status: {', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}",
             f"  jobs per minute per core: {rate:.2f} ({cores_used} core(s) used of "
             f"{os.cpu_count()}; load average {load_before[0]:.1f} before, "
             f"{load_after[0]:.1f} after)",
             f"  largest kernel resident memory seen: {peak_mb:.0f} MB",
             "  median job time per notebook (s): " + ", ".join(
                 f"{n[:2]} {statistics.median(s for _, m, s in per_job if m == n):.1f}"
                 for n in args.notebooks if any(m == n for _, m, _ in per_job))]
    for c, hours in project(seconds, ran, cores_used, args.project,
                            len(args.notebooks)):
        lines.append(f"  projection: {args.project} students x {len(args.notebooks)} notebooks "
                     f"on {c} cores: {hours:.2f} h")
    return "\n".join(lines)


def _record(rows, per_job, canary_jobs, seconds, jobs, cores_used, peak_mb, load_before,
            load_after, kinds, args) -> dict:
    ran = len(per_job) + canary_jobs
    return {"students": args.students, "notebooks": args.notebooks, "jobs": jobs,
            "cpus": os.cpu_count(), "cores_used": cores_used, "seconds": round(seconds, 1),
            "jobs_run": ran, "canary_jobs": canary_jobs, "load_before": load_before, "load_after": load_after,
            "peak_kernel_mb": round(peak_mb), "kinds": kinds,
            "job_seconds": [[who, nb, s] for who, nb, s in per_job],
            "projection_hours": {str(c): round(h, 3) for c, h in project(
                seconds, ran, cores_used, args.project, len(args.notebooks))},
            "statuses": {s: sum(r.status == s for r in rows) for s in {r.status for r in rows}}}


def _time_term(out: Path, subs: Path) -> None:
    """Run the term's steps once on the graded class and print how long they took."""
    try:
        from autograd_lab.course.grading.term import run_term
    except ImportError:  # an older checkout (--baseline) has no term
        return
    start = time.perf_counter()
    result = run_term(out, subs)
    print(f"  term (late, manual, export, similarity, report): "
          f"{time.perf_counter() - start:.1f} s; {len(result.late)} late notebook(s), "
          f"{len(result.flagged_pairs)} similar pair(s) flagged", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--notebooks", nargs="+", default=None,
                        help="default: every notebook of the key")
    parser.add_argument("--mix", choices=("term", "keycopy"), default="term")
    parser.add_argument("--jobs", type=int, nargs="+", default=[2])
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--isolation", default="auto", choices=("auto", "bubblewrap", "process"))
    parser.add_argument("--project", type=int, default=300, metavar="STUDENTS",
                        help="the course size to project (default 300)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the measurements (every job's time) to FILE")
    parser.add_argument("--no-term", action="store_true", help="do not time the term's steps")
    parser.add_argument("--jobs-log", type=Path, default=None, metavar="FILE",
                        help="append one JSON line per finished job to FILE as the class runs")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="a checkout whose autograd_lab grades the class first")
    args = parser.parse_args(argv)
    if args.notebooks is None:
        args.notebooks = [p.stem for p in list_notebooks(checkout_root() / "solutions")]
    print(f"{args.students} students x {len(args.notebooks)} notebooks "
          f"({', '.join(args.notebooks)}), {os.cpu_count()} CPUs", flush=True)
    before: dict[int, float] = {}
    if args.baseline is not None:
        print(f"before: the autograd_lab of {args.baseline}", flush=True)
        argv = list(sys.argv[1:] if argv is None else argv)
        at = argv.index("--baseline")
        del argv[at:at + 2]
        env = dict(os.environ, PYTHONPATH=str(args.baseline.resolve()))
        with tempfile.TemporaryDirectory() as elsewhere:  # no autograd_lab/ in the working folder
            done = subprocess.run([sys.executable, os.path.abspath(__file__), *argv], env=env,
                                  text=True, capture_output=True, check=True, cwd=elsewhere)
        print(done.stdout, end="", flush=True)
        for line in done.stdout.splitlines():
            if line.startswith("jobs="):
                before[int(line[5:line.index(":")])] = float(line.split(":")[1].split("s")[0])
        print("after: this checkout", flush=True)
    for jobs, seconds, _ in time_class(args):
        if jobs in before:
            print(f"jobs={jobs}: after / before = {seconds / before[jobs]:.2f}", flush=True)


if __name__ == "__main__":
    main()
