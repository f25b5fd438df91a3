"""Checkers for chapter 08, Modules and optimizers.

The exercises written as ``observe`` and ``judge`` (:mod:`autograd_lab.course.exercises._exercise`)
are one module each, listed in ``EXERCISES``; the others, and the loader's checks of the learner's
``mygrad/nn.py`` and ``mygrad/optim.py``, are still single checkers in ``_checks``.
"""
from __future__ import annotations

from .._exercise import checker
from . import adam, dropout, module, sequential, sgd_momentum, training_loop
from ._checks import ch08_linear, mygrad_nn, mygrad_optim

EXERCISES = (module, sequential, dropout, sgd_momentum, adam, training_loop)
"""The chapter's exercise modules written as ``observe`` and ``judge``, in the notebook's order."""

__all__ = ["ch08_module", "ch08_sequential", "ch08_dropout", "ch08_linear", "ch08_sgd_momentum",
           "ch08_adam", "ch08_training_loop", "mygrad_nn", "mygrad_optim"]

ch08_module = checker(module)
ch08_sequential = checker(sequential)
ch08_dropout = checker(dropout)
ch08_sgd_momentum = checker(sgd_momentum)
ch08_adam = checker(adam)
ch08_training_loop = checker(training_loop)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
