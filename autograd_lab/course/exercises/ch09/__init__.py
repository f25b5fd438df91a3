"""Checkers for chapter 09, Training on real digits: one module per exercise, written as
``observe`` and ``judge`` (:mod:`autograd_lab.course.exercises._exercise`); the loader's checks
of ``mygrad/functional.py`` and ``mygrad/data.py`` are in :mod:`._loader_checks`."""
from __future__ import annotations

from .._exercise import checker
from . import batches, class_indices, cross_entropy, dataloader, fit, log_softmax, \
    shift_pixels, train_step
from ._loader_checks import mygrad_data, mygrad_functional

EXERCISES = (batches, dataloader, log_softmax, class_indices, cross_entropy, train_step, fit,
             shift_pixels)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch09_log_softmax", "ch09_class_indices", "ch09_cross_entropy", "ch09_batches",
           "ch09_dataloader", "ch09_train_step", "ch09_fit", "ch09_shift_pixels",
           "mygrad_functional", "mygrad_data"]

ch09_batches = checker(batches)
ch09_dataloader = checker(dataloader, keywords=("Variable",))
ch09_log_softmax = checker(log_softmax)
ch09_train_step = checker(train_step)
ch09_class_indices = checker(class_indices, keywords=("Variable",))
ch09_cross_entropy = checker(cross_entropy, keywords=("Variable",))
ch09_fit = checker(fit, keywords=("Variable",))
ch09_shift_pixels = checker(shift_pixels)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
