"""``autograd-lab export NOTEBOOKS... --to DIR``: rebuild mygrad/ from saved notebooks."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..learner.export import export
    for path in export(args.notebooks, args.to, modules=args.modules):
        print(f"wrote {path}")
    return 0
