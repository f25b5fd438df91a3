"""Piecewise-linear activations with PyTorch's names (``hardtanh``, ``relu6``, ``hardsigmoid``)
and ``mish``. The piecewise ones pass the gradient strictly inside their linear part (0 at the
corners, as PyTorch's backward does); hardtanh's backward selects, so it is differentiable again,
while hardsigmoid's, like PyTorch's, is not."""
from __future__ import annotations

import numpy as np

from ..function import Function, once_differentiable
from ..variable import Variable
from ._util import variable_arg, wrap
from .activation import tanh
from .elementwise import exp, select, where
from .unary import log1p


class Hardtanh(Function):
    """x limited to [lo, hi];  gradient 1 where lo < x < hi, else 0"""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.inside = (x.data > lo) & (x.data < hi)
        return wrap(np.asarray(np.clip(x.data, lo, hi), dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad):
        return select(ctx.inside, grad), None, None


def hardtanh(x: Variable, min_val: float = -1.0, max_val: float = 1.0) -> Variable:
    """x limited to [min_val, max_val]."""
    x = variable_arg(x, "hardtanh")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return Hardtanh.apply(x, min_val, max_val)


def relu6(x: Variable) -> Variable:
    """min(max(x, 0), 6)."""
    return hardtanh(variable_arg(x, "relu6"), 0.0, 6.0)


class Hardsigmoid(Function):
    """x / 6 + 1/2 limited to [0, 1];  gradient 1/6 where -3 < x < 3, else 0"""

    @staticmethod
    def forward(ctx, x):
        ctx.inside = (x.data > -3) & (x.data < 3)
        return wrap(np.asarray(np.clip(x.data / 6 + 0.5, 0, 1), dtype=x.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):  # PyTorch has no derivative of hardsigmoid's backward either
        return wrap(np.where(ctx.inside, grad.data / 6, 0.0).astype(grad.dtype))


def hardsigmoid(x: Variable) -> Variable:
    """A piecewise-linear sigmoid: 0 below -3, 1 above 3, x / 6 + 1/2 between."""
    return Hardsigmoid.apply(variable_arg(x, "hardsigmoid"))


def mish(x: Variable) -> Variable:
    """x * tanh(softplus(x)), with softplus(x) = log(1 + exp(x)) computed without overflow."""
    x = variable_arg(x, "mish")
    big = x.data > 20  # log1p(exp(x)) = x there, to the last digit
    soft = where(big, x, log1p(exp(where(big, 0.0, x))))
    return x * tanh(soft)


