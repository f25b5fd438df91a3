"""Checkers for chapter 06, Grad modes and in-place operations: one module per exercise, each
an ``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`)."""
from __future__ import annotations

from .._exercise import checker
from . import (detach, grad_mode_switch, inplace_ops, inplace_rules, predict_raises, train_step,
               version_check)
from ._loader import mygrad_grad_mode
from .predict_raises import RULES, SNIPPETS, VISIBLE_SNIPPETS, snippet_raises

EXERCISES = (grad_mode_switch, train_step, detach, inplace_rules, inplace_ops, predict_raises,
             version_check)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["RULES", "SNIPPETS", "VISIBLE_SNIPPETS", "snippet_raises", "ch06_predict_raises",
           "ch06_train_step", "ch06_version_check", "ch06_grad_mode_switch", "ch06_detach",
           "ch06_inplace_rules", "ch06_inplace_ops", "mygrad_grad_mode"]

ch06_predict_raises = checker(predict_raises)
ch06_train_step = checker(train_step)
ch06_inplace_rules = checker(inplace_rules)
ch06_detach = checker(detach)
ch06_grad_mode_switch = checker(grad_mode_switch)
ch06_inplace_ops = checker(inplace_ops)
ch06_version_check = checker(version_check)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
