"""The ``autograd-lab`` console script; the commands live in :mod:`autograd_lab.course.commands`."""
from __future__ import annotations

from collections.abc import Sequence

from .course.commands import COMMANDS, main as run_commands


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``autograd-lab`` and ``python -m autograd_lab``; returns the exit code."""
    return run_commands(argv, COMMANDS)  # this module's list, so that it can be extended


if __name__ == "__main__":
    raise SystemExit(main())
