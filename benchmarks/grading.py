"""How long does ``autograd-lab grade`` take for a class, and does ``--jobs`` help?

Builds a class of N students (default 30) who each hand in the given notebooks (default
00_welcome and 01_derivatives): every other student hands in the key (all exercises
right), the rest the untouched student copy (all exercises wrong, each failing fast).
Grades the class once per ``--jobs`` value and prints the wall time.

    python benchmarks/grading.py                      # 30 students x 2 notebooks, jobs 1 and 2
    python benchmarks/grading.py --students 4 --jobs 2
"""
from __future__ import annotations

import argparse
import os
import shutil
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--notebooks", nargs="+", default=["00_welcome", "01_derivatives"])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--timeout", type=int, default=120)
    args = parser.parse_args()
    print(f"{args.students} students x {len(args.notebooks)} notebooks "
          f"({', '.join(args.notebooks)}), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        subs = build_class(Path(tmp), args.students, args.notebooks)
        for jobs in args.jobs:
            out = Path(tmp) / f"out-{jobs}"
            start = time.perf_counter()
            rows = grade(subs, out, timeout=args.timeout, jobs=jobs, notebooks=args.notebooks)
            seconds = time.perf_counter() - start
            graded = args.students * len(args.notebooks)
            crashed = sum(r.status == "crashed" for r in rows)
            print(f"jobs={jobs}: {seconds:6.1f} s total, {seconds / graded:5.2f} s per notebook"
                  f"{f', {crashed} crashed rows' if crashed else ''}")


if __name__ == "__main__":
    main()
