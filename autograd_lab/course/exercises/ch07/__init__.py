"""Checkers for chapter 07, Fast kernels with numba: one module per exercise, each an
``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`).

The learner's kernels are ``@njit`` functions over numpy arrays; the checks test values (never
speed) and, from the kernel's source, its structure (see :mod:`._shared`, :mod:`._structure`).
``mygrad_kernels`` is the loader's check of the learner's ``mygrad/kernels.py``.
"""
from __future__ import annotations

from .._exercise import checker
from . import (affine_relu_backward, affine_relu_forward, column_sums, column_sums_wrapper,
               cross_entropy_rows, relu_function, softmax_ce_function, softmax_rows)
from ._loader import mygrad_kernels

# reached through the package by the tests (one switches the JIT off by replacing
# ``_jit_enabled`` here: the checks read it through the package)
from ._shared import _jit_enabled as _jit_enabled
from ._structure import racy_writes as _racy_writes
from ._structure import source_tree as _source_tree
from .affine_relu_backward import backward_autograd as _backward_autograd
from .affine_relu_backward import backward_reference as _backward_reference

EXERCISES = (affine_relu_forward, affine_relu_backward, softmax_rows, cross_entropy_rows,
             column_sums, column_sums_wrapper, softmax_ce_function, relu_function)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch07_affine_relu_forward", "ch07_affine_relu_backward", "ch07_softmax_rows",
           "ch07_cross_entropy_rows", "ch07_column_sums", "ch07_column_sums_wrapper",
           "ch07_softmax_ce_function", "ch07_relu_function", "mygrad_kernels"]

ch07_affine_relu_forward = checker(affine_relu_forward)
ch07_affine_relu_backward = checker(affine_relu_backward)
ch07_softmax_rows = checker(softmax_rows)
ch07_cross_entropy_rows = checker(cross_entropy_rows)
ch07_column_sums = checker(column_sums)
ch07_column_sums_wrapper = checker(column_sums_wrapper)
ch07_softmax_ce_function = checker(softmax_ce_function)
ch07_relu_function = checker(relu_function)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""

