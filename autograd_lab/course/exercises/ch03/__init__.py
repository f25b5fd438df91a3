"""Checkers for chapter 03, Function: the learner's ``mygrad/function.py``.

The exercises are parts of the learner's own library, so the checkers run them on the
learner's classes: ``Variable`` and ``GradMode`` are read from the globals the learner's code
runs in (the notebook, or the module ``mygrad.function``). There is no engine before chapter
04, so backward formulas are called by hand, ``node.function.backward(node, grad)``, and
compared with central differences of the learner's own forward.

Each exercise is one module, written as ``observe`` and ``judge`` (:mod:`.._exercise`), with
its hints in :mod:`.messages` and its typical mistakes declared as data.
"""
from __future__ import annotations

import types

from .._exercise import checker
from ._note import note_apply
from . import clone_function, context, exp_function, find_the_bug, mul_function, \
    neg_function, own_apply, reductions, relu_function, sum_to

EXERCISES = (context, own_apply, sum_to, mul_function, neg_function, exp_function,
             relu_function, reductions, clone_function, find_the_bug)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch03_context", "ch03_own_apply", "ch03_sum_to", "ch03_mul_function",
           "ch03_neg_function", "ch03_exp_function", "ch03_relu_function", "ch03_reductions",
           "ch03_find_the_bug", "ch03_clone_function", "mygrad_function", "note_apply"]

ch03_context = checker(context)
ch03_own_apply = checker(own_apply)
ch03_sum_to = checker(sum_to)
ch03_mul_function = checker(mul_function)
ch03_neg_function = checker(neg_function)
ch03_exp_function = checker(exp_function)
ch03_relu_function = checker(relu_function)
ch03_reductions = checker(reductions)
ch03_clone_function = checker(clone_function)
ch03_find_the_bug = checker(find_the_bug)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""


def mygrad_function(pkg: types.ModuleType) -> None:
    """The loader's check of the learner's ``mygrad/function.py``: apply, Mul, ReLU (the
    exercises' cases) and the operators and other first operations."""
    from .._library import function
    ch03_own_apply(pkg.Function)
    ch03_mul_function(pkg.Mul)
    ch03_relu_function(pkg.ReLU)
    function(pkg)
