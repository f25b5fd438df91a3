"""The ``autograd-lab`` command line: one module per subcommand, and the dispatcher.

    autograd-lab start [--dir DIR] [--no-browser]     copy the course notebooks, open JupyterLab
    autograd-lab check NOTEBOOK                       run a notebook, print a score per exercise
    autograd-lab check FOLDER | NOTEBOOKS...          the same per chapter, and the course total
    autograd-lab release [--solutions DIR] [--out DIR]   solutions/ -> course/ (instructors)
    autograd-lab grade SUBMISSIONS --out DIR          batch-grade a class (instructors)
    autograd-lab train [--model mlp|cnn] ...          train a digits model with the library
    autograd-lab export NOTEBOOKS... --to DIR         rebuild mygrad/ from saved notebooks
    autograd-lab nbgrader-source --to COURSE/source   the key as an nbgrader course's source/
    autograd-lab ownership [NOTEBOOKS...]             how much of mygrad the learner writes
    autograd-lab term RUN --submissions DIR           late rules, manual items, reports (instructors)

Each module has ``add_parser(sub)``, which adds its subcommand's parser and sets ``func=run``,
and ``run(args) -> int``, which carries the command out and returns the exit code. To add a
command, write its module and append its ``add_parser`` to :data:`COMMANDS`.

The modules import what their command uses inside ``run``, so ``autograd-lab --help`` is quick
and the learner's commands do not need the instructor's nbgrader. The console script is
``autograd_lab.cli:main``, which hands over to :func:`main`.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from . import check, export, grade, nbgrader_source, ownership, release, start, term, train

AddParser = Callable[[argparse._SubParsersAction], None]

COMMANDS: list[AddParser] = [
    start.add_parser, check.add_parser, release.add_parser, grade.add_parser, train.add_parser,
    export.add_parser, nbgrader_source.add_parser, ownership.add_parser, term.add_parser,
]


def build_parser(commands: Sequence[AddParser] | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand of ``commands`` (default: :data:`COMMANDS`)."""
    parser = argparse.ArgumentParser(
        prog="autograd-lab", description="Build a PyTorch-style autograd library, one notebook "
        "at a time. Start with: autograd-lab start")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in COMMANDS if commands is None else commands:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None, commands: Sequence[AddParser] | None = None) -> int:
    """Parse ``argv`` (default: the process's arguments), run the subcommand, return its exit
    code; a :class:`CourseError` is one line on stderr and exit code 2."""
    # nbformat imports jsonschema, which imports rfc3987_syntax where it is installed (JupyterLab
    # brings it), and that builds a grammar for about 2 s (python-jsonschema/jsonschema#1428).
    # It only checks the "iri" formats, which nothing here asks for: without it, every command
    # starts 2 s sooner.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: import fails
    from ..authoring.notebooks import CourseError
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:  # e.g. `start ... -- --ServerApp.base_url=/x/`: the rest is not ours
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    parser = build_parser(commands)
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
