"""``autograd-lab train``: the library's training command (``autograd_lab.train_command``, which
uses the library only), registered among the course's commands."""
from __future__ import annotations

import argparse

from ...train_command import add_train_parser, run_train


def add_parser(sub: argparse._SubParsersAction) -> None:
    add_train_parser(sub)  # its parser calls run_train, the same as run below


def run(args: argparse.Namespace) -> int:
    return run_train(args)
