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
