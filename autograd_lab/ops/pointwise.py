"""Elementwise operations with PyTorch's extra arguments: ``clamp`` with tensor bounds,
``add``/``sub`` with ``alpha=``, ``div`` with ``rounding_mode=``, ``lerp``, ``addcmul``,
``addcdiv``, ``atan2``, ``hypot`` and the bitwise operators.

Most are written with the differentiable ops, so their second derivatives work; ``clamp`` with
tensor bounds is a Function whose backward selects where each input won.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Function
from ..primitives import result_dtype, sum_to
from ..variable import Variable
from ._util import raw, variable_arg, wrap
from .elementwise import Clamp, add as _add, select, sqrt, sub as _sub, where
from .unary import atan

_Bound = Any  # None, a Python number or a Variable


class ClampTensor(Function):
    """clamp(x, min, max) with tensor bounds: min(max(x, min), max) elementwise. x gets the
    gradient where min <= x <= max; min where x < min < max; max where x > max or max < min
    (PyTorch's rule, so where min == max and x is outside, no one gets it)."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        arrays = [np.asarray(raw(v)) for v in (x, lo, hi) if isinstance(v, Variable)]
        dtype = result_dtype(*arrays)
        out = x.data
        with np.errstate(invalid="ignore"):
            if lo is not None:
                out = np.maximum(out, raw(lo))
            if hi is not None:
                out = np.minimum(out, raw(hi))
        ctx.save_for_backward(*(v if isinstance(v, Variable) else None for v in (x, lo, hi)))
        ctx.bounds = (raw(lo), raw(hi))
        return wrap(np.asarray(out, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_tensors[0]
        lo, hi = ctx.bounds
        xd = x.data
        keep = np.ones(np.broadcast_shapes(xd.shape, np.shape(lo), np.shape(hi)), dtype=bool)
        with np.errstate(invalid="ignore"):
            if lo is not None:
                keep &= xd >= lo
            if hi is not None:
                keep &= xd <= hi
            below = (xd < lo) if lo is not None else None
            if below is not None and hi is not None:
                below &= np.asarray(lo < hi)
            above = (xd > hi) if hi is not None else None
            if above is not None and lo is not None:
                above |= np.asarray(hi < lo)
        need = ctx.needs_input_grad
        gx = sum_to(select(keep, grad), xd.shape) if need[0] else None
        glo = sum_to(select(below, grad), np.shape(lo)) if need[1] else None
        ghi = sum_to(select(above, grad), np.shape(hi)) if need[2] else None
        return gx, glo, ghi


def clamp(x: Variable, min: _Bound = None, max: _Bound = None) -> Variable:  # noqa: A002
    """x limited to [min, max]; each bound a number or a Variable (broadcast against x)."""
    x = variable_arg(x, "clamp")
    if min is None and max is None:
        raise TypeError("clamp needs at least one of min= or max=")
    lo = Variable._make(min) if isinstance(min, np.ndarray) else min
    hi = Variable._make(max) if isinstance(max, np.ndarray) else max
    if isinstance(lo, Variable) or isinstance(hi, Variable):
        return ClampTensor.apply(x, lo, hi)
    return Clamp.apply(x, min, max)
