"""``autograd-lab term RUN --submissions DIR``: the term around a grade run (late rules, manual
items, exports, similarity, reports; :mod:`..grading.term`), for instructors."""
from __future__ import annotations

import argparse
from pathlib import Path


def share(text: str) -> float:
    """argparse type: a share of 1, as 0.5 or 50%."""
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share such as 0.5 or 50%, got {text!r}") \
            from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from ..grading.term import STEPS, run_term
    steps = tuple(s for s in STEPS if s not in (args.skip or []))
    result = run_term(args.run, args.submissions, config=args.config, solutions=args.solutions,
                      released=args.course, manual_scores=args.manual_scores,
                      threshold=args.threshold, steps=steps,
                      assignment=args.nbgrader_assignment)
    print(f"term of {len({r['student'] for r in result.rows})} student(s) in {result.folder}:")
    for path in result.written:
        print(f"  {path}")
    for student, notebook, hours in result.late:
        print(f"late: {student}/{notebook} {hours} h")
    if result.ungraded:
        print(f"manual: {result.ungraded} answer(s) not scored yet: fill in score in "
              f"{args.manual_scores or result.folder / 'manual' / 'scores.csv'} and run again")
    for student, why in result.refused.items():
        print(f"canvas: {student}: {why}")
    for match in result.key_copies:
        print(f"identical to the key (review, not a penalty): {match.notebook}: "
              f"{match.student} {match.share:.0%}")
    for pair in result.flagged_pairs:
        print(f"similar (review, not a penalty): {pair.notebook}: {pair.first} and "
              f"{pair.second} {pair.similarity:.0%}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    from ..grading.term import STEPS
    p = sub.add_parser(
        "term", help="after `grade`: late penalties, manual items, Canvas export, feedback, "
        "similarity and class reports",
        description="For instructors, after `autograd-lab grade SUBMISSIONS --out RUN`: apply "
        "deadlines, extensions and late rules from the course config (raw, late_penalty and "
        "final per row), collect manually graded answers into pages and a CSV to fill in (a "
        "filled one is merged, never losing a score), export a Canvas gradebook CSV, per-student "
        "totals and HTML feedback, flag pairs with unusually similar solutions, and draw a "
        "class report per notebook. Everything goes to RUN/term/; RUN/grades.csv is not "
        "changed. See docs/term.md.")
    p.add_argument("run", type=Path, metavar="RUN", help="the --out folder of a grade run")
    p.add_argument("--submissions", type=Path, required=True,
                   help="the SUBMISSIONS folder that was graded (for times and answers)")
    p.add_argument("--config", type=Path, default=None,
                   help="the course config (TOML; default: SUBMISSIONS/course.toml if present)")
    p.add_argument("--solutions", type=Path, default=None,
                   help="folder of solution notebooks (default: solutions/ of the checkout)")
    p.add_argument("--course", type=Path, default=None,
                   help="folder of released notebooks, whose given code the similarity check "
                   "ignores (default: course/ of the checkout)")
    p.add_argument("--manual-scores", type=Path, default=None, metavar="CSV",
                   help="the manual scores file to merge and update (default: "
                   "RUN/term/manual/scores.csv)")
    p.add_argument("--threshold", type=share, default=0.5,
                   help="similarity at which a pair is flagged, 0-1 or a percentage "
                   "(default: 0.5)")
    p.add_argument("--nbgrader-assignment", default=None, metavar="ASSIGNMENT",
                   help="SUBMISSIONS is an nbgrader course root graded with the same option of "
                   "`grade`: notebooks and timestamp.txt in submitted/STUDENT/ASSIGNMENT/")
    p.add_argument("--skip", nargs="+", choices=STEPS, default=None, metavar="STEP",
                   help=f"leave out steps: {', '.join(STEPS)}")
    p.set_defaults(func=run)
