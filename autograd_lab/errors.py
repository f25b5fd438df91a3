"""Typed errors. Each message says what was expected, what came, and how to fix it."""
from __future__ import annotations


class AutogradLabError(Exception):
    """Base class of every error autograd_lab raises on purpose."""


class ShapeError(AutogradLabError, ValueError):
    """Two shapes do not fit together (broadcasting, matmul, a gradient of the wrong shape)."""


class GradcheckError(AutogradLabError, RuntimeError):
    """Analytical and numerical derivatives disagree."""


class BackwardError(AutogradLabError, RuntimeError):
    """The backward pass cannot run as asked (freed buffers, in-place change, nothing to differentiate)."""


class LegacyFunctionError(AutogradLabError, RuntimeError):
    """A Function was used in the old instance style (the only one before PyTorch 0.2)."""


class DtypeError(AutogradLabError, TypeError, RuntimeError):
    """An operation that needs operands of one dtype (matmul) or of a kind (floating) got others."""


class ViewError(ShapeError, RuntimeError):
    """``view()`` was asked for a shape that the data's layout cannot show without a copy."""


class ArgumentError(AutogradLabError, ValueError, RuntimeError):
    """An argument has a value the operation cannot take (a negative slice step, probabilities
    outside [0, 1], a loss weight that requires grad, missing running statistics)."""


class IntegerDivisionByZero(AutogradLabError, ZeroDivisionError, RuntimeError):
    """An integer division (//, %) by zero, which has no integer result."""
