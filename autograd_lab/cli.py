"""The ``autograd-lab`` command.

    autograd-lab start [--dir DIR] [--no-browser]     copy the course notebooks, open JupyterLab
    autograd-lab check NOTEBOOK                       run a notebook, print a score per exercise
    autograd-lab check FOLDER | NOTEBOOKS...          the same per chapter, and the course total
    autograd-lab release [--solutions DIR] [--out DIR]   solutions/ -> course/ (instructors)
    autograd-lab grade SUBMISSIONS --out DIR          batch-grade a class (instructors)
    autograd-lab export NOTEBOOKS... --to DIR         rebuild mygrad/ from saved notebooks
    autograd-lab nbgrader-source --to COURSE/source   the key as an nbgrader course's source/
    autograd-lab ownership [NOTEBOOKS...]             how much of mygrad the learner writes

Course modules are imported inside each command, so ``autograd-lab --help`` is quick
and the learner's commands do not need the instructor's nbgrader.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def positive_float(text: str) -> float:
    """argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value


def _start(args: argparse.Namespace) -> int:
    from .course.learner.start import start
    return start(args.dir, course=args.course, open_browser=not args.no_browser, port=args.port,
                 ip=args.ip, jupyter_args=args.passthrough, update_notebooks=args.update)


SCORE_NOTE = ("These are the grader's checks on the visible cases, run as the grader runs them "
              "(with the course's modules for earlier chapters). Hidden tests add cases when "
              "your instructor grades, and hand-graded answers are scored by your instructor.")


def _score_note() -> str:
    import shutil
    import textwrap
    return textwrap.fill(SCORE_NOTE, shutil.get_terminal_size((100, 24)).columns)


def _check(args: argparse.Namespace) -> int:
    from .course.authoring.notebooks import CourseError
    from .course.learner.check import (ChapterScore, check_notebook_and_library, format_course,
                                   format_table, notebooks_to_check)
    paths = notebooks_to_check(args.notebook)
    if len(paths) == 1 and not any(Path(p).is_dir() for p in args.notebook):
        results, library = check_notebook_and_library(paths[0], timeout=args.timeout)
        print(format_table(results, verbose=args.verbose))
        print("\n" + _score_note())
        if library:
            print("\nyour mygrad (what this notebook uses when you run it in JupyterLab):")
            for line in library:
                print("  " + line.removeprefix("mygrad: "))
        return 0 if all(r.passed or r.by_hand for r in results) else 1
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
    print("\n" + _score_note())
    return 0 if all(not c.error and all(r.passed or r.by_hand for r in c.results) for c in chapters) else 1


def _release(args: argparse.Namespace) -> int:
    from .course.authoring.notebooks import checkout_root, default_dir
    from .course.authoring.release import release
    solutions = args.solutions or default_dir("solutions")
    out = args.out or checkout_root() / "course"
    for path in release(solutions, out):
        print(f"wrote {path}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from .course.grading.batch import grade, needs_review
    from .course.grading.sandbox import Limits
    try:
        limits = Limits(memory_mb=args.memory, cpu_seconds=args.cpu_time,
                        file_mb=args.file_size, processes=args.processes)
    except ValueError as err:
        from .course.authoring.notebooks import CourseError
        raise CourseError(str(err)) from None
    if args.nbgrader_assignment:  # SUBMISSIONS is an nbgrader course root after `collect`
        from functools import partial
        from .course.grading.nbgrader_root import grade_collected
        grade = partial(grade_collected, assignment=args.nbgrader_assignment)
    rows = grade(args.submissions, args.out, solutions=args.solutions, timeout=args.timeout,
                 jobs=args.jobs, notebooks=args.notebooks, isolation=args.isolation,
                 limits=limits, run_as=args.run_as, regrade=args.regrade, progress=sys.stderr,
                 log=lambda message: print(message, file=sys.stderr, flush=True))
    from .course.grading.submissions import shown
    students = dict.fromkeys(r.student for r in rows)
    print(f"graded {len(students)} student(s): {args.out / 'grades.csv'}, feedback in "
          f"{args.out / 'feedback'}")
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
    return 0


def _export(args: argparse.Namespace) -> int:
    from .course.learner.export import export
    for path in export(args.notebooks, args.to, modules=args.modules):
        print(f"wrote {path}")
    return 0


def add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export", help="rebuild your mygrad/ package from saved notebooks",
        description="Rebuild DIR/mygrad/ from the %%mygrad cells of saved notebooks (a working "
                    "folder, single notebooks, or the key's solutions/: its export is the "
                    "reference library). Later notebooks' cells replace earlier ones of the same "
                    "module and section.")
    p.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOKS",
                   help="notebooks or folders of notebooks, e.g. autograd_lab_work")
    p.add_argument("--to", type=Path, required=True, metavar="DIR",
                   help="folder to write mygrad/ into (e.g. . to use it with `import mygrad`)")
    p.add_argument("--modules", nargs="+", default=None, metavar="MODULE",
                   help="write only these modules (e.g. variable function); the other files in "
                        "DIR/mygrad/ are left as they are")
    p.set_defaults(func=_export)


def _ownership(args: argparse.Namespace) -> int:
    from .course.authoring.notebooks import default_dir
    from .course.learner.ownership import format_table, key_table, learner_table
    if args.notebooks:
        course = args.course or default_dir("course")
        print(f"code lines of mygrad you wrote (not in the released notebooks of {course}):")
        print(format_table(learner_table(args.notebooks, course)))
    else:
        print("code lines of the key's %%mygrad cells that lie in solution regions "
              "(the learner writes them):")
        print(format_table(key_table([args.solutions or default_dir("solutions")])))
    return 0


def add_ownership(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ownership", help="how many lines of mygrad the learner writes, per module",
        description="Count the code lines (not blank, not comments) of the %%mygrad cells. "
        "Without NOTEBOOKS: the key's, where solution regions are the learner's part. With "
        "NOTEBOOKS (your working folder): the lines you wrote, i.e. those not in the released "
        "student copy of the same cell.")
    p.add_argument("notebooks", nargs="*", type=Path, metavar="NOTEBOOKS",
                   help="your notebooks or working folder (default: count the key)")
    p.add_argument("--solutions", type=Path, default=None,
                   help="folder of solution notebooks (default: solutions/ of the checkout)")
    p.add_argument("--course", type=Path, default=None,
                   help="folder of released notebooks (default: course/ of the checkout)")
    p.set_defaults(func=_ownership)


def port_number(text: str) -> int:
    """argparse type: a TCP port, 1-65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number such as 8888, got {text!r}") \
            from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, got {value}")
    return value


def add_start(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "start", help="copy the course notebooks into a working folder and open JupyterLab "
        "there (your own files are never overwritten)",
        usage="%(prog)s [options] [-- JUPYTERLAB OPTIONS ...]",
        description="Copy the course notebooks into your working folder (a notebook you "
        "already have there is never overwritten) and open JupyterLab on it. JupyterLab runs "
        "until you press Ctrl+C; run start again to go on where you left off. If JupyterLab "
        "already runs for the folder, its address is printed instead. Options after `--` go "
        "to JupyterLab as they are, e.g. autograd-lab start -- --ServerApp.open_browser=False.")
    p.add_argument("--dir", type=Path, default=Path("autograd_lab_work"),
                   help="working folder (default: ./autograd_lab_work)")
    p.add_argument("--course", type=Path, default=None,
                   help="folder of course notebooks (default: course/ of the checkout)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.add_argument("--port", type=port_number, default=None,
                   help="port for JupyterLab (default: 8888, or the next free one)")
    p.add_argument("--ip", default=None,
                   help="address JupyterLab listens on (default: localhost)")
    p.add_argument("--update", action="store_true",
                   help="write the course's newer version of a notebook beside yours, as "
                        "NAME.new.ipynb (yours is never changed)")
    # what follows `--` is not parsed here: main() hands it over as `passthrough`
    p.set_defaults(func=_start, passthrough=[], takes_passthrough=True)


def add_check(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=_check)


def add_release(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "release", help="generate the student notebooks (course/) from the solution key "
        "(solutions/); needs the instructor extra",
        description="For instructors: turn each solution notebook into its student copy, as "
        "nbgrader's generate_assignment does (solutions replaced by stubs, hidden tests and "
        "outputs removed, cells locked), and write it to the course folder. Releasing twice "
        "gives the same bytes. Needs nbgrader: pip install -e '.[instructor]'.")
    p.add_argument("--solutions", type=Path, default=None,
                   help="folder of solution notebooks (default: solutions/ of the checkout)")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for the student notebooks (default: course/ of the checkout)")
    p.set_defaults(func=_release)


def add_grade(sub: argparse._SubParsersAction) -> None:
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
    from .course.grading.sandbox import Limits
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
    p.add_argument("--nbgrader-assignment", default=None, metavar="ASSIGNMENT",
                   help="SUBMISSIONS is an nbgrader course root: grade its "
                   "submitted/STUDENT/ASSIGNMENT/ (as `nbgrader collect` left it) and write "
                   "feedback/STUDENT/ASSIGNMENT/ for `nbgrader release_feedback`")
    p.add_argument("--regrade", action="store_true",
                   help="keep the rows of the earlier --out/grades.csv whose key and submission "
                   "are unchanged (columns key_version, submission_version) and grade only the "
                   "others; prints every row that changed. Manual scores in --out/term/ are "
                   "not touched")
    p.set_defaults(func=_grade)


# -- subcommand registry -------------------------------------------------------------------
# Each entry adds one subcommand: it receives the subparsers object, adds its parser and sets
# `func`, which main() calls with the parsed arguments and which returns the exit code.
# To add a command (e.g. `train`), write `add_train(sub)` in its own module and append it here.
def add_train(sub: argparse._SubParsersAction) -> None:
    from .train_command import add_train_parser  # the library loads only when the CLI is built
    add_train_parser(sub)


def add_nbgrader_source(sub: argparse._SubParsersAction) -> None:
    from .course.grading.nbgrader_root import add_nbgrader_source as add
    add(sub)


def add_term(sub: argparse._SubParsersAction) -> None:
    from .course.grading.term.cli import add_term_parser
    add_term_parser(sub)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_start, add_check, add_release, add_grade, add_train, add_export, add_nbgrader_source,
    add_ownership, add_term,
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="autograd-lab", description="Build a PyTorch-style autograd library, one notebook "
        "at a time. Start with: autograd-lab start")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``autograd-lab`` console script; returns the exit code."""
    # nbformat imports jsonschema, which imports rfc3987_syntax where it is installed (JupyterLab
    # brings it), and that builds a grammar for about 2 s (python-jsonschema/jsonschema#1428).
    # It only checks the "iri" formats, which nothing here asks for: without it, every command
    # starts 2 s sooner.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: import fails
    from .course.authoring.notebooks import CourseError
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:  # e.g. `start ... -- --ServerApp.base_url=/x/`: the rest is not ours
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if passthrough and not getattr(args, "takes_passthrough", False):
        unknown += ["--", *passthrough]
    if unknown:  # reported with the subcommand's usage, not the top-level one
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        subparsers.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    args.passthrough = passthrough
    try:
        return int(args.func(args))
    except CourseError as err:
        print(f"autograd-lab {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
