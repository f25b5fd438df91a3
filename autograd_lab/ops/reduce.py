"""Reductions: sum, mean, max. ``axis=`` (numpy) and ``dim=`` (PyTorch) mean the same, as do
``keepdims=`` and ``keepdim=``."""
from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

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
    if x.data.size == 0 and (axes is None or builtins.any(x.shape[a] == 0 for a in axes)):
        raise ValueError(f"{name}() of an empty Variable: there is no {name}imum to take (a reduced dim "
                         f"of shape {x.shape} has size 0)")
    d = x.data
    out = np.asarray(reduce(d, axis=axes, keepdims=True))
    mask = d == out
    if ctx.evenly and d.dtype.kind in "fc":  # x.max(): a NaN is the result and gets the gradient
        mask |= np.isnan(d) & np.isnan(out)
    with np.errstate(invalid="ignore"):  # amax/amin of a NaN: no element equals it, 0 / 0 is NaN (PyTorch)
        ctx.weights = mask / mask.sum(axis=axes, keepdims=True)
    ctx.in_shape, ctx.axes = x.shape, axes
    result = wrap(out if keepdims else
                  out.reshape(() if axes is None else tuple(s for i, s in enumerate(x.shape) if i not in axes)))
    # saved (though backward only needs the weights) as PyTorch saves them: a second backward without
    # retain_graph, or an in-place change of x or of the result before backward, then raises
    ctx.save_for_backward(x, result)
    return result


def _extreme_backward(ctx: Any, grad: Variable) -> Variable:
    from .elementwise import select

    _ = ctx.saved_tensors  # raises if freed by an earlier backward or if x changed in place since
    g = reshape(grad, _kept_shape(ctx.in_shape, ctx.axes))
    w = wrap(ctx.weights.astype(grad.dtype))
    if ctx.evenly:  # x.max(): selected, an inf or NaN gradient stays out of the other entries
        return select(ctx.weights != 0, g * w)
    return g * w  # amax/amin (and numpy's axis=): multiplied, as PyTorch's scale_grad_by_count


class Max(Function):
    """max(x, axis, keepdims); tied maxima share the gradient evenly, a NaN takes it all"""

    @staticmethod
    def forward(ctx, x, axes, keepdims, evenly=False):
        ctx.evenly = evenly
        return _extreme_forward(ctx, x, axes, keepdims, np.max, "max")

    @staticmethod
    def backward(ctx, grad):
        return _extreme_backward(ctx, grad), None, None, None


class Min(Function):
    """min(x, axis, keepdims); tied minima share the gradient evenly, a NaN takes it all"""

    @staticmethod
    def forward(ctx, x, axes, keepdims, evenly=False):
        ctx.evenly = evenly
        return _extreme_forward(ctx, x, axes, keepdims, np.min, "min")

    @staticmethod
    def backward(ctx, grad):
        return _extreme_backward(ctx, grad), None, None, None


def resolve_axes(x: Variable, axis: Any, dim: Any, keepdims: bool, keepdim: bool | None) -> tuple:
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None  # PyTorch's dim=() reduces over every dim (numpy's axis=() over none)
    axes = normalize_axis(axis, dim, x.ndim)
    if axes is not None and x.ndim == 0:
        axes = ()  # a 0-d Variable's dim 0 (or -1) has one entry: reducing it changes nothing (PyTorch)
    return axes, bool(keepdims or keepdim)


def sum(x: Variable, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Variable:
    """Sum over ``axis`` (int, tuple or None for all)."""
    x = variable_arg(x, "sum")
    axes, keep = resolve_axes(x, axis, dim, keepdims, keepdim)
    return Sum.apply(x, axes, keep)


def mean(x: Variable, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Variable:
    """Mean over ``axis``: the sum divided by the number of elements summed."""
    x = variable_arg(x, "mean")
    _floating(x, "mean")
    axes, keep = resolve_axes(x, axis, dim, keepdims, keepdim)
    with np.errstate(invalid="ignore"):  # the mean of nothing is nan, as in PyTorch
        return Mean.apply(x, axes, keep)


class _ValuesIndices(NamedTuple):
    values: Variable
    indices: Variable


def values_indices_type(name: str) -> type:
    """PyTorch's ``torch.return_types.max``/``min``: a named tuple of (values, indices)."""
    return type(name, (_ValuesIndices,), {"__module__": "autograd_lab.return_types", "__slots__": ()})


MaxResult, MinResult = values_indices_type("max"), values_indices_type("min")


def _extreme(x: Variable, args: tuple, axis: Any, keepdims: bool, dim: Any, keepdim: bool | None,
             name: str) -> Any:
    """The overloads of PyTorch's max/min (and numpy's ``axis=``):

    - ``x.max()``: the largest value (tied maxima share the gradient, as in PyTorch);
    - ``x.max(dim)``, ``x.max(dim, keepdim)``, ``x.max(dim=1)``: the named tuple ``(values,
      indices)``; the gradient goes to the returned index only, as in PyTorch;
    - ``x.max(other)``: the elementwise ``maximum`` (``minimum`` for min);
    - ``x.max(axis=1)`` (numpy's spelling, also a tuple of axes): the values only, as ``amax``.
    """
    x = variable_arg(x, name)
    if args and isinstance(args[0], (Variable, np.ndarray)):
        if len(args) > 1 or axis is not None or dim is not None:
            raise TypeError(f"{name}(input, other) takes no dim: got {len(args) + 1} positional arguments")
        from .elementwise import maximum, minimum

        return (maximum if name == "max" else minimum)(x, args[0])
    if len(args) > 2:
        raise TypeError(f"{name}() takes at most 2 positional arguments (dim, keepdim), got {len(args)}")
    if args:
        if dim is not None or axis is not None:
            raise TypeError(f"{name}() got the dim both by position and by keyword")
        dim = args[0]
        if len(args) == 2:
            keepdim = args[1]
    if dim is not None:
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"{name}(dim=...) takes one int dim; for several dims use a{name}(x, dim=(...))")
        return _extreme_along(x, int(dim), bool(keepdim or keepdims), name)
    axes, keep = resolve_axes(x, axis, None, keepdims, keepdim)
    # x.max() with no dim selects (PyTorch's evenly_distribute_backward); numpy's axis= is amax
    return (Max if name == "max" else Min).apply(x, axes, keep, axis is None)


def _extreme_along(x: Variable, dim: int, keepdim: bool, name: str) -> Any:
    from .indexing import TakeAlong
    from .shape import check_dim

    check_dim(dim, x.ndim)
    result = MaxResult if name == "max" else MinResult
    if x.ndim == 0:
        return result(reshape(x, ()), Variable(np.asarray(0, dtype=np.int64)))
    dim %= x.ndim
    if x.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size (shape {x.shape}).")
    find = np.argmax if name == "max" else np.argmin  # the first extreme, or the first NaN, as PyTorch
    idx = find(x.data, axis=dim, keepdims=True).astype(np.int64)
    values = TakeAlong.apply(x, dim, idx)
    if not keepdim:
        values = reshape(values, values.shape[:dim] + values.shape[dim + 1:])
        idx = idx.reshape(idx.shape[:dim] + idx.shape[dim + 1:])
    return result(values, Variable(idx))


def max(x: Variable, *args: Any, axis: Any = None, keepdims: bool = False, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Any:
    """Largest value: of all (``x.max()``), along ``dim`` with indices (``x.max(1)`` gives
    ``(values, indices)``), elementwise against ``other`` (``x.max(y)``), or over numpy's ``axis=``."""
    return _extreme(x, args, axis, keepdims, dim, keepdim, "max")


def min(x: Variable, *args: Any, axis: Any = None, keepdims: bool = False, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Any:
    """Smallest value; the same overloads as ``max``."""
    return _extreme(x, args, axis, keepdims, dim, keepdim, "min")


def amax(x: Variable, dim: Any = (), keepdim: bool = False) -> Variable:
    """Largest values over ``dim`` (an int, a tuple, or () for all); ties share the gradient."""
    x = variable_arg(x, "amax")
    axes, keep = resolve_axes(x, None, dim if dim != () else None, False, keepdim)
    return Max.apply(x, axes, keep)


def amin(x: Variable, dim: Any = (), keepdim: bool = False) -> Variable:
    """Smallest values over ``dim``; ties share the gradient."""
    x = variable_arg(x, "amin")
    axes, keep = resolve_axes(x, None, dim if dim != () else None, False, keepdim)
    return Min.apply(x, axes, keep)


def argmax(x: Variable, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
           keepdim: bool | None = None) -> Variable:
    """Index of the largest value (no gradient)."""
    x = variable_arg(x, "argmax")
    a = dim if dim is not None else axis
    return Variable(np.argmax(x.data, axis=a, keepdims=bool(keepdims or keepdim)))


def argmin(x: Variable, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
           keepdim: bool | None = None) -> Variable:
    """Index of the smallest value (no gradient)."""
    x = variable_arg(x, "argmin")
    a = dim if dim is not None else axis
    return Variable(np.argmin(x.data, axis=a, keepdims=bool(keepdims or keepdim)))


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
    if x.dtype.kind not in "fc":
        from ..errors import DtypeError

        raise DtypeError(f"norm: expected a floating point Variable, got {x.dtype} (as PyTorch's "
                         "vector_norm). Convert it first: x.double().norm() (or x.float()).")
    axes, keep = resolve_axes(x, axis, dim, keepdims, keepdim)
    if p in ("fro", 2, 2.0):
        return Norm2.apply(x, axes, keep)
    if p in (np.inf, float("inf")):
        return Max.apply(abs_(x), axes, keep)
    if p in (-np.inf, float("-inf")):
        return Min.apply(abs_(x), axes, keep)
    if isinstance(p, str):
        raise ValueError(f"norm: p must be 'fro', a number, inf or -inf; got {p!r}")
    if p == 0:
        return _CountNonzero.apply(x, axes, keep)
    return sum(abs_(x) ** p, axes, keep) ** (1.0 / p)


class _CountNonzero(Function):
    """norm(x, p=0): how many entries are not zero; like PyTorch, it has no gradient (backward
    leaves the input's .grad as it was)"""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        return wrap(np.asarray((x.data != 0).sum(axis=axes, keepdims=keepdims), dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


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
    axes, keep = resolve_axes(x, axis, dim, keepdims, keepdim)
    _floating(x, "var")
    # PyTorch divides by max(0, N - correction): no degrees of freedom left gives nan (or inf), not -0.0
    return Var.apply(x, axes, keep, float(builtins.max(0, _count(x, axes) - c)))


class Var(Function):
    """var(x) = sum((x - mean)**2) / d over axes;  grad_x = g * 2 (x - mean) / d (PyTorch's formula:
    the term through the mean, zero in exact arithmetic, is left out, so one -inf input gives
    inf, not NaN, to the others)"""

    @staticmethod
    def forward(ctx, x, axes, keepdims, d):
        ctx.save_for_backward(x)
        ctx.axes, ctx.keepdims, ctx.d = axes, keepdims, d
        with np.errstate(divide="ignore", invalid="ignore"):
            centred = x.data - x.data.mean(axis=axes, keepdims=True)
            out = (centred * centred).sum(axis=axes, keepdims=keepdims) / x.data.dtype.type(d)
        return wrap(np.asarray(out, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        g = grad if ctx.keepdims else reshape(grad, _kept_shape(x.shape, ctx.axes))
        with np.errstate(divide="ignore", invalid="ignore"):
            return g * (x - mean(x, ctx.axes, True)) * (2.0 / ctx.d if ctx.d else np.inf), None, None, None


class _SqrtOfVar(Function):
    """sqrt(v) for std; the gradient is 0 where the result is 0 (constant values), as in PyTorch,
    not 0 * inf = nan."""

    @staticmethod
    def forward(ctx, v):
        out = wrap(np.sqrt(v.data))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import select

        (out,) = ctx.saved_tensors
        return select(out.data != 0, grad / (out * 2))


def std(x: Variable, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """Standard deviation over ``dim``: sqrt of ``var`` (same arguments)."""
    x = variable_arg(x, "std")
    _floating(x, "std")
    with np.errstate(invalid="ignore"):
        return _SqrtOfVar.apply(var(x, dim, unbiased, keepdim, correction=correction, axis=axis,
                                    keepdims=keepdims))


def _floating(x: Variable, name: str) -> None:
    """PyTorch's mean/var/std refuse integer inputs (the result type would be ambiguous)."""
    if x.dtype.kind not in "fc":
        raise TypeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {x.dtype}. Convert it first: x.float() or x.double()."
        )


def abs_(x: Variable) -> Variable:
    from .elementwise import Abs

    return Abs.apply(x)


def all(x: Variable, dim: Any = None, keepdim: bool = False) -> Variable:  # noqa: A001
    """Whether every element (along ``dim``) is nonzero: a bool Variable, as in PyTorch."""
    x = variable_arg(x, "all")
    return wrap(np.asarray(np.all(x.data, axis=dim, keepdims=keepdim)))


def any(x: Variable, dim: Any = None, keepdim: bool = False) -> Variable:  # noqa: A001
    """Whether any element (along ``dim``) is nonzero: a bool Variable, as in PyTorch."""
    x = variable_arg(x, "any")
    return wrap(np.asarray(np.any(x.data, axis=dim, keepdims=keepdim)))
