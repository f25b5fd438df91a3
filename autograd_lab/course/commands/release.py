"""``autograd-lab release [--solutions DIR] [--out DIR]``: the student notebooks (course/) from
the key (solutions/), for instructors."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..authoring.notebooks import checkout_root, default_dir
    from ..authoring.release import release
    solutions = args.solutions or default_dir("solutions")
    out = args.out or checkout_root() / "course"
    for path in release(solutions, out):
        print(f"wrote {path}")
    return 0
