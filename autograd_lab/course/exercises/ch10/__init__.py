"""Checkers for chapter 10, Convolution and pooling: one module per exercise, each an
``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`)."""
from __future__ import annotations

from typing import Any

from .._exercise import checker, judge_record
from .._observe import Observer, observe_only, show_record
from . import conv2d_backward, conv2d_forward, max_pool, output_size
from .loader import mygrad_conv

EXERCISES = (output_size, conv2d_forward, conv2d_backward, max_pool)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch10_output_size", "ch10_conv2d_forward", "ch10_conv2d_backward", "ch10_max_pool",
           "mygrad_conv"]

ch10_output_size = checker(output_size)
ch10_conv2d_forward = checker(conv2d_forward)
ch10_conv2d_backward = checker(conv2d_backward)


def ch10_max_pool(MaxPool: Any, *, seed: int = 0, hidden: bool = False,
                  Variable: Any = None) -> None:
    """Check the Function ``MaxPool.apply(x, k)`` (see :mod:`.max_pool`); ``Variable`` is the
    Variable class of the library MaxPool is written for, by default autograd_lab's."""
    ob = Observer(max_pool.ID, seed, hidden)
    max_pool.observe(ob, MaxPool, seed=seed, hidden=hidden, Variable=Variable)
    record = ob.record()
    if observe_only():
        show_record(record)
        return
    judge_record(max_pool, record)


ch10_max_pool.exercise = max_pool  # type: ignore[attr-defined]

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts: each part earns its share of the points
(:mod:`autograd_lab.course.exercises._parts`)."""
