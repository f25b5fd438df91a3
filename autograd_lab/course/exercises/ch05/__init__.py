"""Checkers for chapter 05, Tensors and broadcasting: one module per exercise, each an
``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`); ``mygrad_ops`` is
the loader's check of ``mygrad/ops.py``."""
from __future__ import annotations

from .._exercise import checker
from . import (div_function, index_function, log_function, log_softmax, matmul_backward,
               matmul_vectors, mean_backward, pow_function, reshape_transpose, softmax,
               sub_function, sum_backward, unbroadcast, unbroadcast_function)
from ._shared import GradcheckFailed, mygrad_ops, numeric_gradcheck

EXERCISES = (reshape_transpose, sum_backward, mean_backward, unbroadcast, unbroadcast_function,
             sub_function, div_function, pow_function, log_function, matmul_backward, softmax,
             log_softmax, index_function, matmul_vectors)
"""The chapter's exercise modules written as observe and judge, in the notebook's order."""

__all__ = ["ch05_reshape_transpose", "ch05_index_function", "ch05_matmul_vectors",
           "ch05_unbroadcast", "ch05_unbroadcast_function", "ch05_sum_backward",
           "ch05_mean_backward", "ch05_sub_function", "ch05_div_function", "ch05_pow_function",
           "ch05_log_function", "ch05_matmul_backward", "ch05_softmax", "ch05_log_softmax",
           "mygrad_ops", "numeric_gradcheck", "GradcheckFailed"]

ch05_reshape_transpose = checker(reshape_transpose)
ch05_sum_backward = checker(sum_backward)
ch05_mean_backward = checker(mean_backward)
ch05_unbroadcast = checker(unbroadcast)
ch05_unbroadcast_function = checker(unbroadcast_function)
ch05_sub_function = checker(sub_function)
ch05_div_function = checker(div_function)
ch05_pow_function = checker(pow_function)
ch05_log_function = checker(log_function)
ch05_matmul_backward = checker(matmul_backward)
ch05_softmax = checker(softmax)
ch05_log_softmax = checker(log_softmax)
ch05_index_function = checker(index_function)
ch05_matmul_vectors = checker(matmul_vectors)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
