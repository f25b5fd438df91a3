"""``autograd-lab grade SUBMISSIONS --out DIR``: batch-grade a class, for instructors."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "grade", help="autograde a folder of submissions (one subfolder per student); writes "
        "grades.csv and per-student feedback",
        description="For instructors: grade a class. SUBMISSIONS holds one folder per student "
                    "with their notebooks. Each (student, notebook) pair runs with the key's "
                    "graded cells and hidden tests in its own bubblewrap sandbox (or, where none "
                    "can be made, a limited process), with a per-cell timeout; a broken or "
                    "hostile submission gets a score, a reason and flags, and the batch goes on. "
                    "Writes grades.csv, totals.csv, gradebook.db and per-student feedback to "
                    "--out. Needs nbgrader: pip install -e '.[instructor]'.")
    p.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    p.add_argument("--out", type=Path, required=True,
                   help="folder for grades.csv, totals.csv, gradebook.db and feedback/")
    p.add_argument("--solutions", type=Path, default=None,
                   help="folder of solution notebooks (default: solutions/ of the checkout)")
    p.add_argument("--notebooks", nargs="+", default=None, metavar="NAME",
                   help="the notebooks to grade, e.g. 00_welcome 01_derivatives (default: the "
                        "key's notebooks that at least one student submitted)")
    p.add_argument("--timeout", type=int, default=60,
                   help="seconds a cell may run before it is stopped (default: 60)")
    p.add_argument("--jobs", type=int, default=None,
                   help="notebooks graded at the same time (default: the cores this process "
                   "may use, no more than the available memory divided by --memory)")
    add_isolation_arguments(p)
    p.add_argument("--nbgrader-assignment", default=None, metavar="ASSIGNMENT",
                   help="SUBMISSIONS is an nbgrader course root: grade its "
                   "submitted/STUDENT/ASSIGNMENT/ (as `nbgrader collect` left it) and write "
                   "feedback/STUDENT/ASSIGNMENT/ for `nbgrader release_feedback`")
    p.add_argument("--regrade", action="store_true",
                   help="keep the rows of the earlier --out/grades.csv whose key and submission "
                   "are unchanged (columns key_version, submission_version) and grade only the "
                   "others; prints every row that changed. Manual scores in --out/term/ are "
                   "not touched")
    p.set_defaults(func=run)


def add_isolation_arguments(p: argparse.ArgumentParser) -> None:
    """How each job is kept apart and what it may use: --isolation, the limits, --run-as."""
    from ..grading.sandbox import Limits
    limits = Limits()
    p.add_argument("--isolation", choices=("auto", "bubblewrap", "process"), default="auto",
                   help="how each notebook is kept apart: a bubblewrap sandbox (read-only "
                   "system, no network, no access to the key, the gradebook or other students), "
                   "or a separate process with the same limits that can still read your files; "
                   "auto uses bubblewrap where it works (default: auto)")
    p.add_argument("--memory", type=int, default=limits.memory_mb, metavar="MB",
                   help=f"address space per process of a job, in MB (default: {limits.memory_mb})")
    p.add_argument("--cpu-time", type=int, default=limits.cpu_seconds, metavar="SECONDS",
                   help=f"CPU time per process of a job (default: {limits.cpu_seconds})")
    p.add_argument("--file-size", type=int, default=limits.file_mb, metavar="MB",
                   help="largest file a job may write, and the size of its private folders, in "
                   f"MB (default: {limits.file_mb})")
    p.add_argument("--processes", type=int, default=limits.processes, metavar="N",
                   help=f"processes and threads a job may run (default: {limits.processes})")
    p.add_argument("--run-as", default=None, metavar="USER",
                   help="run every notebook as this unprivileged user (e.g. nobody); needed when "
                   "grading as root, which is refused otherwise (default: "
                   "$AUTOGRAD_LAB_RUN_AS). The user needs no access to the key, the "
                   "submissions or --out; with --isolation process it must be able to read "
                   "the Python environment")


def run(args: argparse.Namespace) -> int:
    from ..authoring.notebooks import CourseError
    from ..grading.batch import grade
    from ..grading.sandbox import Limits
    try:
        limits = Limits(memory_mb=args.memory, cpu_seconds=args.cpu_time,
                        file_mb=args.file_size, processes=args.processes)
    except ValueError as err:
        raise CourseError(str(err)) from None
    if args.nbgrader_assignment:  # SUBMISSIONS is an nbgrader course root after `collect`
        from functools import partial
        from ..grading.nbgrader_root import grade_collected
        grade = partial(grade_collected, assignment=args.nbgrader_assignment)
    rows = grade(args.submissions, args.out, solutions=args.solutions, timeout=args.timeout,
                 jobs=args.jobs, notebooks=args.notebooks, isolation=args.isolation,
                 limits=limits, run_as=args.run_as, regrade=args.regrade, progress=sys.stderr,
                 log=lambda message: print(message, file=sys.stderr, flush=True))
    print_summary(rows, args.out)
    return 0


def print_summary(rows: list[Any], out: Path) -> None:
    """Where the grades went, each student's total, the isolation used, what needs review."""
    from ..grading.batch import needs_review
    from ..grading.submissions import shown
    students = dict.fromkeys(r.student for r in rows)
    print(f"graded {len(students)} student(s): {out / 'grades.csv'}, feedback in "
          f"{out / 'feedback'}")
    for student in students:
        got = sum(r.points for r in rows if r.student == student)
        total = sum(r.max_points for r in rows if r.student == student)
        print(f"  {shown(student)}: {got:g} / {total:g}")
    levels = sorted({r.isolation for r in rows if r.isolation != "none"})
    if levels:
        print(f"isolation: {', '.join(levels)} (column `isolation` of grades.csv)")
    review = needs_review(rows)
    if review:
        print(f"needs review: {len(review)} notebook(s) use what no exercise needs "
              "(column `flags` of grades.csv):")
        for line in review:
            print(f"  {line}")
