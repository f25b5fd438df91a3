"""Checkers for chapter 02, Variable and the computational graph: one module per exercise,
each an ``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`)."""
from __future__ import annotations

import types

from .._exercise import checker
from . import find_leaves, hand_gradients, propagation_rule, variable_class

EXERCISES = (variable_class, propagation_rule, hand_gradients, find_leaves)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch02_variable_class", "ch02_propagation_rule", "ch02_hand_gradients",
           "ch02_find_leaves", "mygrad_variable"]

ch02_variable_class = checker(variable_class)
ch02_propagation_rule = checker(propagation_rule)
ch02_hand_gradients = checker(hand_gradients)
ch02_find_leaves = checker(find_leaves)

_example = hand_gradients.example
"""The reference gradients of the chapter's graph (the tests compare them with PyTorch's)."""


def mygrad_variable(pkg: types.ModuleType) -> None:
    """The loader's check of the learner's ``mygrad/variable.py``: the exercise's cases."""
    ch02_variable_class(pkg.Variable)

