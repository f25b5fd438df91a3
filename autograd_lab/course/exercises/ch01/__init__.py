"""Checkers for chapter 01, Derivatives by hand and by numbers: one module per exercise,
each an ``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`)."""
from __future__ import annotations

from .._exercise import checker
from . import central_difference, gradcheck, numerical_gradient

EXERCISES = (central_difference, numerical_gradient, gradcheck)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch01_central_difference", "ch01_numerical_gradient", "ch01_gradcheck"]

ch01_central_difference = checker(central_difference)
ch01_numerical_gradient = checker(numerical_gradient)
ch01_gradcheck = checker(gradcheck)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts: each part earns its share of the points
(:mod:`autograd_lab.course.exercises._parts`)."""
