"""Reductions: sum, mean, max. ``axis=`` (numpy) and ``dim=`` (PyTorch) mean the same, as do
``keepdims=`` and ``keepdim=``."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..function import Function
from ..variable import Variable
from ._util import normalize_axis, variable_arg, wrap
from .shape import broadcast_to, reshape


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


class Sum(Function):
    """sum(x, axis, keepdims)"""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        ctx.in_shape, ctx.axes = x.shape, axes
        return wrap(np.asarray(x.data.sum(axis=axes, keepdims=keepdims)))

    @staticmethod
    def backward(ctx, grad):
        g = reshape(grad, _kept_shape(ctx.in_shape, ctx.axes))
        return broadcast_to(g, ctx.in_shape), None, None


class Mean(Function):
    """mean(x, axis, keepdims) = sum / count"""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        ctx.in_shape, ctx.axes = x.shape, axes
        ctx.count = _count(x, axes)
        return wrap(np.asarray(x.data.mean(axis=axes, keepdims=keepdims)))

    @staticmethod
    def backward(ctx, grad):
        g = reshape(grad / ctx.count, _kept_shape(ctx.in_shape, ctx.axes))
        return broadcast_to(g, ctx.in_shape), None, None


def _extreme_forward(ctx: Any, x: Variable, axes: Any, keepdims: bool, reduce: Any, name: str) -> Variable:
    if x.data.size == 0:
        raise ValueError(f"{name}() of an empty Variable: there is no {name}imum to take")
    d = x.data
    out = np.asarray(reduce(d, axis=axes, keepdims=True))
    mask = d == out
    if d.dtype.kind in "fc":  # a NaN is the result where there is one (as in PyTorch): it gets the gradient
        mask |= np.isnan(d) & np.isnan(out)
    ctx.weights = mask / mask.sum(axis=axes, keepdims=True)
    ctx.in_shape, ctx.axes = x.shape, axes
    if keepdims:
        return wrap(out)
    return wrap(out.reshape(() if axes is None else tuple(s for i, s in enumerate(x.shape) if i not in axes)))


def _extreme_backward(ctx: Any, grad: Variable) -> Variable:
    g = reshape(grad, _kept_shape(ctx.in_shape, ctx.axes))
    return g * wrap(ctx.weights.astype(grad.dtype))


class Max(Function):
    """max(x, axis, keepdims); tied maxima share the gradient evenly, a NaN takes it all"""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        return _extreme_forward(ctx, x, axes, keepdims, np.max, "max")

    @staticmethod
    def backward(ctx, grad):
        return _extreme_backward(ctx, grad), None, None


class Min(Function):
    """min(x, axis, keepdims); tied minima share the gradient evenly, a NaN takes it all"""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        return _extreme_forward(ctx, x, axes, keepdims, np.min, "min")

    @staticmethod
    def backward(ctx, grad):
        return _extreme_backward(ctx, grad), None, None


def _resolve(x: Variable, axis: Any, dim: Any, keepdims: bool, keepdim: bool | None) -> tuple:
    axes = normalize_axis(axis, dim, x.ndim)
    return axes, bool(keepdims or keepdim)


def sum(x: Variable, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Variable:
    """Sum over ``axis`` (int, tuple or None for all)."""
    x = variable_arg(x, "sum")
    axes, keep = _resolve(x, axis, dim, keepdims, keepdim)
    return Sum.apply(x, axes, keep)


def mean(x: Variable, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Variable:
    """Mean over ``axis``: the sum divided by the number of elements summed."""
    x = variable_arg(x, "mean")
    axes, keep = _resolve(x, axis, dim, keepdims, keepdim)
    return Mean.apply(x, axes, keep)


def max(x: Variable, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Variable:
    """Largest value over ``axis`` (values only; use ``argmax`` for indices)."""
    x = variable_arg(x, "max")
    axes, keep = _resolve(x, axis, dim, keepdims, keepdim)
    return Max.apply(x, axes, keep)


def min(x: Variable, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Variable:
    """Smallest value over ``axis``."""
    x = variable_arg(x, "min")
    axes, keep = _resolve(x, axis, dim, keepdims, keepdim)
    return Min.apply(x, axes, keep)


def argmax(x: Variable, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
           keepdim: bool | None = None) -> Variable:
    """Index of the largest value (no gradient)."""
    x = variable_arg(x, "argmax")
    a = dim if dim is not None else axis
    return Variable(np.argmax(x.data, axis=a, keepdims=bool(keepdims or keepdim)))


class Norm2(Function):
    """||x||_2 over axis = sqrt(sum(x**2));  grad_x = g * x / norm (0 where the norm is 0, as PyTorch)"""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        d = x.data
        kept = np.sqrt((d * d).sum(axis=axes, keepdims=True))
        shape = kept.shape if keepdims else (() if axes is None else
                                             tuple(s for i, s in enumerate(d.shape) if i not in axes))
        out = wrap(kept.reshape(shape))
        ctx.save_for_backward(x, out)
        ctx.axes, ctx.in_shape = axes, x.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        kept = _kept_shape(ctx.in_shape, ctx.axes)
        norm = reshape(out, kept)
        zero = wrap((norm.data == 0).astype(x.dtype))  # x / (0 + 1) = 0 where the norm is 0
        return reshape(grad, kept) * x / (norm + zero), None, None


def norm(x: Variable, p: Any = "fro", dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool = False) -> Variable:
    """The p-norm over ``dim`` (all elements by default): 2 ('fro'), any p > 0, inf or -inf."""
    x = variable_arg(x, "norm")
    axes, keep = _resolve(x, axis, dim, keepdims, keepdim)
    if p in ("fro", 2, 2.0):
        return Norm2.apply(x, axes, keep)
    if p in (np.inf, float("inf")):
        return max(abs_(x), axes, keep)
    if p in (-np.inf, float("-inf")):
        return min(abs_(x), axes, keep)
    if isinstance(p, str) or p <= 0:
        raise ValueError(f"norm: p must be 'fro', a number > 0, inf or -inf; got {p!r}")
    return sum(abs_(x) ** p, axes, keep) ** (1.0 / p)


def _count(x: Variable, axes: Any) -> int:
    return x.data.size if axes is None else math.prod([x.shape[a] for a in axes])  # np.prod: 2 µs more


def var(x: Variable, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """Variance over ``dim``: sum((x - mean)**2) / (N - correction); correction 1 (Bessel) by default,
    ``unbiased=False`` or ``correction=0`` for the population variance."""
    x = variable_arg(x, "var")
    if unbiased is not None and correction is not None:
        raise TypeError("var: pass either unbiased= or correction=, not both")
    c = correction if correction is not None else (0 if unbiased is False else 1)
    axes, keep = _resolve(x, axis, dim, keepdims, keepdim)
    centred = x - mean(x, axes, True)
    return sum(centred * centred, axes, keep) / float(_count(x, axes) - c)


def std(x: Variable, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """Standard deviation over ``dim``: sqrt of ``var`` (same arguments)."""
    return var(x, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims) ** 0.5


def abs_(x: Variable) -> Variable:
    from .elementwise import Abs

    return Abs.apply(x)
