"""Checkers for chapter 08, Modules and optimizers: one module per exercise, each an
``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`), and the loader's
checks of the learner's ``mygrad/nn.py`` and ``mygrad/optim.py`` (``_loader_checks``)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._exercise import checker
from . import adam, dropout, linear, module, sequential, sgd_momentum, training_loop
from ._loader_checks import mygrad_nn, mygrad_optim

EXERCISES = (module, linear, sequential, dropout, sgd_momentum, adam, training_loop)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch08_module", "ch08_sequential", "ch08_dropout", "ch08_linear", "ch08_sgd_momentum",
           "ch08_adam", "ch08_training_loop", "mygrad_nn", "mygrad_optim"]

ch08_module = checker(module)
_ch08_linear = checker(linear)


def ch08_linear(MyLinear: Any, *, seed: int = 0, hidden: bool = False, Module: Any = None,
                manual_seed: Callable[[int], None] | None = None) -> None:
    """The check of ch08-linear (:mod:`.linear`); ``Module`` and ``manual_seed`` are the
    learner's ``mygrad`` ones, given for a layer written with it."""
    _ch08_linear(MyLinear, Module, manual_seed, seed=seed, hidden=hidden)


ch08_linear.exercise = linear  # type: ignore[attr-defined]
ch08_sequential = checker(sequential)
ch08_dropout = checker(dropout)
ch08_sgd_momentum = checker(sgd_momentum)
ch08_adam = checker(adam)
ch08_training_loop = checker(training_loop)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
