"""Checkers for chapter 09, Training on real digits. The exercises written as ``observe`` and
``judge`` (:mod:`autograd_lab.course.exercises._exercise`) are one module each; the others are
still in :mod:`.legacy`, with the loader's checks of ``mygrad/functional.py`` and
``mygrad/data.py``."""
from __future__ import annotations

from .._exercise import checker
from . import batches, class_indices, cross_entropy, dataloader, log_softmax, shift_pixels, \
    train_step
from ._shared import keyword_checker
from .legacy import ch09_fit, mygrad_data, mygrad_functional

EXERCISES = (batches, dataloader, log_softmax, class_indices, cross_entropy, train_step,
             shift_pixels)
"""The chapter's exercise modules written as observe and judge, in the notebook's order."""

__all__ = ["ch09_log_softmax", "ch09_class_indices", "ch09_cross_entropy", "ch09_batches",
           "ch09_dataloader", "ch09_train_step", "ch09_fit", "ch09_shift_pixels",
           "mygrad_functional", "mygrad_data"]

ch09_batches = checker(batches)
ch09_dataloader = keyword_checker(dataloader, "Variable")
ch09_log_softmax = checker(log_softmax)
ch09_train_step = checker(train_step)
ch09_class_indices = keyword_checker(class_indices, "Variable")
ch09_cross_entropy = keyword_checker(cross_entropy, "Variable")
ch09_shift_pixels = checker(shift_pixels)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
