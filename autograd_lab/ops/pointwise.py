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
from ..primitives import broadcasting, result_dtype, shape_of, sum_to
from ..variable import Variable
from ._util import raw, variable_arg, wrap
from .elementwise import Clamp, Div, select

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


# ---------------------------------------------------------------- add, sub with alpha
def _alpha_times(b: Any, alpha: Any, a: Any) -> Any:
    if alpha == 1:
        return b
    kinds = {np.asarray(raw(v)).dtype.kind for v in (a, b)}
    if kinds <= set("biu") and isinstance(alpha, float):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number; "
            f"got alpha={alpha}. Convert an input to a floating dtype first (x.double()).")
    return b * alpha


def add(a: Any, b: Any, *, alpha: Any = 1) -> Variable:
    """a + alpha * b."""
    from .elementwise import add as plain_add

    return plain_add(a, _alpha_times(b, alpha, a))


def sub(a: Any, b: Any, *, alpha: Any = 1) -> Variable:
    """a - alpha * b."""
    from .elementwise import sub as plain_sub

    return plain_sub(a, _alpha_times(b, alpha, a))


# ---------------------------------------------------------------- division with rounding
class RoundedDiv(Function):
    """a / b rounded toward zero ("trunc") or down ("floor"); its gradient is zero, as PyTorch's"""

    @staticmethod
    def forward(ctx, a, b, mode):
        ctx.shapes = (shape_of(a), shape_of(b))
        pa, pb = np.asarray(raw(a)), np.asarray(raw(b))
        if isinstance(a, Variable) and isinstance(b, Variable):
            dtype = result_dtype(pa, pb)
        else:
            dtype = np.result_type(raw(a), raw(b))
        if dtype.kind in "biu" and (np.asarray(pb) == 0).any():
            raise ZeroDivisionError("integer division by zero (div with rounding_mode on integer "
                                    "Variables); divide floating Variables to get inf or nan instead.")
        with np.errstate(divide="ignore", invalid="ignore"):
            if mode == "floor":
                out = broadcasting(np.floor_divide, a, b, "div")
            elif dtype.kind in "biu":
                q = broadcasting(np.floor_divide, a, b, "div")
                r = broadcasting(np.remainder, a, b, "div")
                out = q + ((r != 0) & ((np.asarray(pa) < 0) != (np.asarray(pb) < 0)))
            else:
                out = np.trunc(broadcasting(np.true_divide, a, b, "div"))
        return wrap(np.asarray(out).astype(dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        zero = grad * 0
        sa, sb = ctx.shapes
        need = ctx.needs_input_grad
        return (sum_to(zero, sa) if need[0] else None), (sum_to(zero, sb) if need[1] else None), None


def div(a: Any, b: Any, *, rounding_mode: str | None = None) -> Variable:
    """a / b; with ``rounding_mode="trunc"`` or ``"floor"`` the quotient rounded (integer inputs
    stay integers)."""
    if rounding_mode is None:
        return Div.apply(a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"{rounding_mode!r}")
    return RoundedDiv.apply(a, b, rounding_mode)


# ---------------------------------------------------------------- blends and products
def lerp(start: Any, end: Any, weight: Any) -> Variable:
    """start + weight * (end - start)."""
    start = variable_arg(start, "lerp")
    return start + weight * (end - start)


def addcmul(x: Any, t1: Any, t2: Any, *, value: Any = 1) -> Variable:
    """x + value * t1 * t2."""
    x = variable_arg(x, "addcmul")
    return x + (t1 * t2 if value == 1 else value * t1 * t2)


def addcdiv(x: Any, t1: Any, t2: Any, *, value: Any = 1) -> Variable:
    """x + value * t1 / t2."""
    x = variable_arg(x, "addcdiv")
    return x + (t1 / t2 if value == 1 else value * (t1 / t2))


class Atan2(Function):
    """atan2(y, x): the angle of (x, y);  grad_y = x / (x² + y²), grad_x = -y / (x² + y²)"""

    @staticmethod
    def forward(ctx, y, x):
        ctx.save_for_backward(y, x)
        return wrap(np.asarray(broadcasting(np.arctan2, y, x, "atan2")))

    @staticmethod
    def backward(ctx, grad):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        gy = sum_to(grad * x / r2, y.shape) if ctx.needs_input_grad[0] else None
        gx = sum_to(-grad * y / r2, x.shape) if ctx.needs_input_grad[1] else None
        return gy, gx


def atan2(y: Any, x: Any) -> Variable:
    """The angle of the point (x, y), in (-pi, pi]."""
    y, x = variable_arg(y, "atan2"), variable_arg(x, "atan2")
    return Atan2.apply(y, x)


class Hypot(Function):
    """hypot(a, b) = sqrt(a² + b²) without overflow;  grad_a = a / out, grad_b = b / out"""

    @staticmethod
    def forward(ctx, a, b):
        out = wrap(np.asarray(broadcasting(np.hypot, a, b, "hypot")))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        ga = sum_to(grad * a / out, a.shape) if ctx.needs_input_grad[0] else None
        gb = sum_to(grad * b / out, b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb


def hypot(a: Any, b: Any) -> Variable:
    """sqrt(a² + b²), elementwise."""
    a, b = variable_arg(a, "hypot"), variable_arg(b, "hypot")
    return Hypot.apply(a, b)


# ---------------------------------------------------------------- bitwise (bool and integers)
def _bitwise(op: Any, name: str, a: Any, b: Any) -> Variable:
    for v in (a, b):
        kind = np.asarray(raw(v)).dtype.kind if not isinstance(v, (bool, int)) else "i"
        if kind not in "biu":
            raise TypeError(f"{name} is only defined for bool and integer Variables; got dtype "
                            f"{np.asarray(raw(v)).dtype}. Compare first (x > 0) or convert (x.long()).")
    return wrap(np.asarray(broadcasting(op, a, b, name)))


def bitwise_and(a: Any, b: Any) -> Variable:
    return _bitwise(np.bitwise_and, "bitwise_and", a, b)


def bitwise_or(a: Any, b: Any) -> Variable:
    return _bitwise(np.bitwise_or, "bitwise_or", a, b)


def bitwise_xor(a: Any, b: Any) -> Variable:
    return _bitwise(np.bitwise_xor, "bitwise_xor", a, b)


def bitwise_not(a: Any) -> Variable:
    """~a: logical not of bools, two's-complement not of integers."""
    kind = np.asarray(raw(a)).dtype.kind
    if kind not in "biu":
        raise TypeError(f"bitwise_not is only defined for bool and integer Variables; got dtype "
                        f"{np.asarray(raw(a)).dtype}. Use al.logical_not or (x == 0) for other dtypes.")
    return wrap(np.asarray(np.invert(raw(a))))


def logical_not(a: Any) -> Variable:
    return wrap(np.asarray(np.logical_not(raw(a))))
