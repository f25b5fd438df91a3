"""``autograd-lab check NOTEBOOK | FOLDER | NOTEBOOKS...``: run notebooks headless and print a
score per exercise (and, for several, per chapter and for the course)."""
from __future__ import annotations

import argparse
from pathlib import Path

SCORE_NOTE = ("These are the grader's checks on the visible cases, run as the grader runs them "
              "(with the course's modules for earlier chapters). Hidden tests add cases when "
              "your instructor grades, and hand-graded answers are scored by your instructor.")


def positive_float(text: str) -> float:
    """argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="run a notebook headless and print a score per exercise",
        description="Run your notebook top to bottom in a fresh kernel (the file is not "
        "changed) and print a table: each exercise's points and, when it failed, the first "
        "line of what is wrong and the hint (-v: the whole message). Exit code 0 when every "
        "exercise passed.")
    p.add_argument("notebook", type=Path, nargs="+",
                   help="the .ipynb file to check; several, or a folder (its NN_*.ipynb "
                        "chapters), print a table per chapter and the course-wide score")
    p.add_argument("--timeout", type=positive_float, default=120.0,
                   help="seconds a cell may run before it is interrupted (default: 120)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show each failure's whole message (expected, received, hint)")
    p.set_defaults(func=run)


def score_note() -> str:
    """SCORE_NOTE wrapped to the terminal's width."""
    import shutil
    import textwrap
    return textwrap.fill(SCORE_NOTE, shutil.get_terminal_size((100, 24)).columns)


def run(args: argparse.Namespace) -> int:
    from ..learner.check import notebooks_to_check
    paths = notebooks_to_check(args.notebook)
    if len(paths) == 1 and not any(Path(p).is_dir() for p in args.notebook):
        return check_one(paths[0], args)
    return check_course(paths, args)


def check_one(path: Path, args: argparse.Namespace) -> int:
    """One notebook: its table, the note, and the learner's mygrad it uses."""
    from ..learner.check import check_notebook_and_library, format_table
    results, library = check_notebook_and_library(path, timeout=args.timeout)
    print(format_table(results, verbose=args.verbose))
    print("\n" + score_note())
    if library:
        print("\nyour mygrad (what this notebook uses when you run it in JupyterLab):")
        for line in library:
            print("  " + line.removeprefix("mygrad: "))
    return 0 if all(r.passed or r.by_hand for r in results) else 1


def check_course(paths: list[Path], args: argparse.Namespace) -> int:
    """Several notebooks: a table per chapter (one that cannot run says why), then the course."""
    from ..authoring.notebooks import CourseError
    from ..learner.check import (ChapterScore, check_notebook_and_library, format_course,
                                 format_table)
    chapters = []
    for path in paths:
        print(f"== {path.name} ==", flush=True)
        try:
            results, _ = check_notebook_and_library(path, timeout=args.timeout)
        except CourseError as err:
            print(f"not checked: {err}\n", flush=True)
            chapters.append(ChapterScore(path.name, error=str(err).split(". ")[0]))
            continue
        print(format_table(results, verbose=args.verbose) + "\n", flush=True)
        chapters.append(ChapterScore(path.name, tuple(results)))
    print("== the course ==")
    print(format_course(chapters))
    print("\n" + score_note())
    return 0 if all(not c.error and all(r.passed or r.by_hand for r in c.results) for c in chapters) else 1
