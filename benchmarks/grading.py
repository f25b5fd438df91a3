"""How long does ``autograd-lab grade`` take for a class, and does ``--jobs`` help?

Builds a class of N students (default 30) who each hand in the given notebooks (default
00_welcome and 01_derivatives): every other student hands in the key (all exercises
right), the rest the untouched student copy (all exercises wrong, each failing fast).
Grades the class once per ``--jobs`` value and prints the wall time.

``--baseline DIR`` first grades the same class with the ``autograd_lab`` of another
checkout (e.g. the code before a change; this script runs there in a child process), then
with this one, and prints the ratio: before and after in one run, on one machine state.

    python benchmarks/grading.py                      # 30 students x 2 notebooks, jobs 1 and 2
    python benchmarks/grading.py --students 4 --jobs 2
    python benchmarks/grading.py --jobs 2 --baseline ../old-checkout
"""
from __future__ import annotations

import argparse
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograd_lab.course.grading import grade
from autograd_lab.course.notebooks import checkout_root


def build_class(root: Path, students: int, notebooks: list[str]) -> Path:
    """One folder per student, alternating key copies and untouched student copies."""
    subs = root / "submissions"
    for i in range(students):
        source = checkout_root() / ("solutions" if i % 2 == 0 else "course")
        folder = subs / f"student{i:02d}"
        folder.mkdir(parents=True)
        for name in notebooks:
            shutil.copyfile(source / f"{name}.ipynb", folder / f"{name}.ipynb")
    return subs


def time_class(args: argparse.Namespace) -> list[tuple[int, float, str]]:
    """Grade the class once per ``--jobs`` value; ``(jobs, seconds, isolation)`` each."""
    timings = []
    extra = {"isolation": args.isolation} if "isolation" in inspect.signature(grade).parameters \
        else {}
    with tempfile.TemporaryDirectory() as tmp:
        subs = build_class(Path(tmp), args.students, args.notebooks)
        for jobs in args.jobs:
            out = Path(tmp) / f"out-{jobs}"
            start = time.perf_counter()
            rows = grade(subs, out, timeout=args.timeout, jobs=jobs, notebooks=args.notebooks,
                         **extra)
            seconds = time.perf_counter() - start
            graded = args.students * len(args.notebooks)
            crashed = sum(r.status == "crashed" for r in rows)
            level = ", ".join(sorted({getattr(r, "isolation", "process (no sandbox)")
                                      for r in rows}))
            print(f"jobs={jobs}: {seconds:6.1f} s total, {seconds / graded:5.2f} s per notebook"
                  f" [{level}]{f', {crashed} crashed rows' if crashed else ''}", flush=True)
            reasons = sorted({r.reason for r in rows if r.status == "crashed"})
            for reason in reasons[:3]:  # a crashed row makes the timing meaningless: say why
                print(f"  crashed: {reason[:300]}", flush=True)
            timings.append((jobs, seconds, level))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--notebooks", nargs="+", default=["00_welcome", "01_derivatives"])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--isolation", default="auto", choices=("auto", "bubblewrap", "process"))
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="a checkout whose autograd_lab grades the class first")
    args = parser.parse_args()
    print(f"{args.students} students x {len(args.notebooks)} notebooks "
          f"({', '.join(args.notebooks)}), {os.cpu_count()} CPUs", flush=True)
    before: dict[int, float] = {}
    if args.baseline is not None:
        print(f"before: the autograd_lab of {args.baseline}", flush=True)
        argv = [a for a in sys.argv[1:]]
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
