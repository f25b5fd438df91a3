"""``autograd-lab ownership [NOTEBOOKS...]``: how many lines of mygrad the learner writes."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..authoring.notebooks import default_dir
    from ..learner.ownership import format_table, key_table, learner_table
    if args.notebooks:
        course = args.course or default_dir("course")
        print(f"code lines of mygrad you wrote (not in the released notebooks of {course}):")
        print(format_table(learner_table(args.notebooks, course)))
    else:
        print("code lines of the key's %%mygrad cells that lie in solution regions "
              "(the learner writes them):")
        print(format_table(key_table([args.solutions or default_dir("solutions")])))
    return 0
