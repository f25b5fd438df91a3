"""Checkers for chapter 00, Welcome: the numpy refresher. One module per exercise, each an
``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`)."""
from __future__ import annotations

from .._exercise import checker
from . import center_rows, demo_double, pairwise_sq_dists

EXERCISES = (center_rows, pairwise_sq_dists)
"""The chapter's graded exercise modules, in the notebook's order (the demonstration
``demo_double`` gives no points)."""

__all__ = ["ch00_demo_double", "ch00_center_rows", "ch00_pairwise_sq_dists"]

ch00_demo_double = checker(demo_double)
ch00_center_rows = checker(center_rows)
ch00_pairwise_sq_dists = checker(pairwise_sq_dists)
