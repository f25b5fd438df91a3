"""Checkers for chapter 12, the capstone: the bakery loss as a Function. One module per exercise,
each an ``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`).

The loss (from chapter 00): with the residual r = y − t (forecast minus demand),

    L = reduce( w · log cosh(r) ),   w = alpha where r < 0 (too few baked), 1 elsewhere,

reduced by 'mean' (default), 'sum' or 'none'. The judges compare with a numpy reference
(stable for every r) and with the engine's gradient of the same formula composed from Variable
operations.
"""
from __future__ import annotations

from typing import Any

from .._exercise import checker
from . import bakery_function, log_cosh, loss_forward, pinball, train_step
from ._shared import LOG2, bakery_loss_composite, bakery_loss_gradient, bakery_loss_reference, \
    log_cosh_reference, pinball_reference

EXERCISES = (log_cosh, loss_forward, bakery_function, train_step, pinball)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["log_cosh_reference", "bakery_loss_reference", "bakery_loss_gradient",
           "bakery_loss_composite", "pinball_reference", "LOG2", "ch12_log_cosh",
           "ch12_loss_forward", "ch12_bakery_function", "ch12_train_step", "ch12_pinball",
           "mygrad_capstone"]

ch12_log_cosh = checker(log_cosh)
ch12_loss_forward = checker(loss_forward)
ch12_bakery_function = checker(bakery_function, keywords=("pkg",))
ch12_train_step = checker(train_step, keywords=("pkg",))
ch12_pinball = checker(pinball, keywords=("pkg",))

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""The pinball loss is scored in two parts, as the chapter's rubric says: its values and its
gradients (:mod:`autograd_lab.course.exercises._parts`)."""


def mygrad_capstone(pkg: Any) -> None:
    """``mygrad.capstone``: log_cosh, bakery_loss_np and BakeryLoss (on mygrad's Function)."""
    cap = pkg.capstone
    ch12_log_cosh(cap.log_cosh)
    ch12_loss_forward(cap.bakery_loss_np)
    ch12_bakery_function(cap.BakeryLoss, pkg=pkg)
