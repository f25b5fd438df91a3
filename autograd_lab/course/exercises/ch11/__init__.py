"""Checkers for chapter 11, Higher-order gradients: one module per exercise, each an
``observe`` and a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`), the test functions
with their exact Hessians (:mod:`.problems`), and the loader's check of ``mygrad/higher.py``
(``_loader_checks``)."""
from __future__ import annotations

from .._exercise import checker
from . import grad, hessian, hvp, newton_step, tanh_function
from ._loader_checks import mygrad_higher
from .problems import (Problem, exp_minus_linear, linear_plus_lse, lse_quartic, quadratic,
                       rosenbrock, tanh_net)

EXERCISES = (grad, hvp, hessian, newton_step, tanh_function)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["Problem", "quadratic", "linear_plus_lse", "lse_quartic", "tanh_net", "rosenbrock",
           "exp_minus_linear", "ch11_grad", "ch11_hvp", "ch11_hessian", "ch11_newton_step",
           "ch11_tanh_function", "mygrad_higher"]

ch11_grad = checker(grad)
ch11_hvp = checker(hvp)
ch11_hessian = checker(hessian)
ch11_newton_step = checker(newton_step)
ch11_tanh_function = checker(tanh_function)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
