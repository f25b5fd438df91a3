"""``autograd-lab nbgrader-source --to COURSE/source [--assignment NAME=NB,NB ...]``: the key
as an nbgrader course's source/ folder."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nbgrader-source", help="copy the solution key into an nbgrader course's "
                       "source/ folder, one assignment per chapter or grouped as you say")
    p.add_argument("--to", type=Path, required=True,
                   help="the course's source/ folder (COURSE_ROOT/source)")
    p.add_argument("--solutions", type=Path, default=None,
                   help="folder of solution notebooks (default: solutions/ of the checkout)")
    p.add_argument("--assignment", action="append", default=None, metavar="NAME=NB[,NB...]",
                   help="one assignment made of these notebooks, e.g. "
                   "week1=00_welcome,01_derivatives; repeat for more (default: one assignment "
                   "per notebook, named like it)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..grading.nbgrader_root import make_source
    for path in make_source(args.to, solutions=args.solutions, groups=args.assignment):
        print(f"wrote {path}")
    return 0
