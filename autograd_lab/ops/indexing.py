"""Indexing along one dimension: gather, index_select, index_add, sort.

``TakeAlong`` and ``PutAlong`` are each other's backward (as ``GetItem`` and ``IndexAdd`` are),
so gradients of gradients work.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..variable import Variable
from ._util import raw, variable_arg, wrap


def _dim(dim: int, ndim: int, fn: str) -> int:
    n = builtin_max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{fn}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


builtin_max = max


def index_array(index: Any, fn: str) -> np.ndarray:
    idx = np.asarray(raw(index))
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{fn}: index must hold integers, got dtype {idx.dtype}")
    return idx.astype(np.int64, copy=False)


class TakeAlong(Function):
    """gather(x, dim, idx): out[..i..] = x[.. idx[..i..] ..] along dim;  grad scattered back (adding)"""

    @staticmethod
    def forward(ctx, x, dim, idx):
        ctx.dim, ctx.in_shape = dim, x.shape
        ctx.save_for_backward(wrap(idx))  # as PyTorch saves the indices: a second backward raises
        return wrap(np.take_along_axis(x.data, idx, axis=dim))

    @staticmethod
    def backward(ctx, grad):
        idx = ctx.saved_tensors[0].data
        return PutAlong.apply(grad, ctx.dim, idx, ctx.in_shape), None, None


class PutAlong(Function):
    """zeros(shape) with g added at idx along dim (the adjoint of gather)"""

    @staticmethod
    def forward(ctx, g, dim, idx, shape):
        ctx.dim, ctx.idx = dim, idx
        out = np.zeros(shape, dtype=g.dtype)
        grid = list(np.indices(idx.shape, sparse=True))
        grid[dim] = idx
        np.add.at(out, tuple(grid), g.data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return TakeAlong.apply(grad, ctx.dim, ctx.idx), None, None, None


def gather(x: Variable, dim: int, index: Any) -> Variable:
    """Values of ``x`` at ``index`` along ``dim`` (``torch.gather``); index has x's number of dims."""
    x = variable_arg(x, "gather")
    dim = _dim(dim, x.ndim, "gather")
    idx = index_array(index, "gather")
    if idx.ndim != x.ndim:
        raise ShapeError(f"gather: index must have as many dimensions as the input ({x.ndim}), got {idx.ndim}")
    if idx.size and (idx.min() < -x.shape[dim] or idx.max() >= x.shape[dim]):
        raise IndexError(f"gather: index out of range for dimension {dim} of size {x.shape[dim]}")
    if any(i != dim and n > m for i, (n, m) in enumerate(zip(idx.shape, x.shape))):
        raise ShapeError(f"gather: Size does not match at dimension {dim}: expected index {list(idx.shape)} "
                         f"to be no larger than self {list(x.shape)} apart from dimension {dim}.")
    if any(i != dim and n < m for i, (n, m) in enumerate(zip(idx.shape, x.shape))):
        # a smaller index reads the leading block of x (as PyTorch), it is not broadcast over x
        from .shape import GetItem

        x = GetItem.apply(x, tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(idx.shape)))
    return TakeAlong.apply(x, dim, idx % builtin_max(x.shape[dim], 1))


def index_select(x: Variable, dim: int, index: Any) -> Variable:
    """The slices of ``x`` at the (1-d) ``index`` along ``dim``."""
    x = variable_arg(x, "index_select")
    dim = _dim(dim, x.ndim, "index_select")
    idx = index_array(index, "index_select")
    if idx.ndim > 1:
        raise ShapeError(f"index_select: index must be 0-d or 1-d, got shape {idx.shape}")
    return x[(slice(None),) * dim + (idx.reshape(-1),)]


class IndexAddDim(Function):
    """index_add(x, dim, idx, src): a copy of x with src's slices added at idx along dim"""

    @staticmethod
    def forward(ctx, x, dim, idx, src, alpha):
        ctx.key = (slice(None),) * dim + (idx,)
        ctx.alpha = alpha
        out = x.data.copy()
        np.add.at(out, ctx.key, src.data * alpha if alpha != 1 else src.data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        gs = grad[ctx.key] if ctx.needs_input_grad[3] else None
        if gs is not None and ctx.alpha != 1:
            gs = gs * ctx.alpha
        return grad, None, None, gs, None


def index_add(x: Variable, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Variable:
    """``x`` with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices add up)."""
    x = variable_arg(x, "index_add")
    dim = _dim(dim, x.ndim, "index_add")
    idx = index_array(index, "index_add").reshape(-1)
    src = source if isinstance(source, Variable) else Variable(source)
    expected = x.shape[:dim] + (idx.size,) + x.shape[dim + 1:]
    if src.shape != expected:
        raise ShapeError(f"index_add: source must have shape {expected} (the input's, with {idx.size} "
                         f"entries along dim {dim}), got {src.shape}")
    if idx.size and (idx.min() < -x.shape[dim] or idx.max() >= x.shape[dim]):
        raise IndexError(f"index_add: index out of range for dimension {dim} of size {x.shape[dim]}")
    return IndexAddDim.apply(x, dim, idx, src, alpha)


class SortResult(NamedTuple):
    values: Variable
    indices: Variable


def sort(x: Variable, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """(values, indices) sorted along ``dim``; the gradient of the values flows back to their places.
    Equal values keep their order (a stable sort)."""
    x = variable_arg(x, "sort")
    if x.ndim == 0:
        return SortResult(x * 1, Variable(np.zeros((), dtype=np.int64)))
    dim = _dim(dim, x.ndim, "sort")
    idx = sort_order(x.data, dim, descending)
    return SortResult(TakeAlong.apply(x, dim, idx), Variable(idx))


def sort_order(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The indices that sort ``data`` along ``axis``, equal values kept in their order. NaN counts
    as the largest value, as in PyTorch: last in ascending order, first in descending order."""
    if not descending:
        return np.argsort(data, axis=axis, kind="stable").astype(np.int64)
    if data.dtype.kind == "b":
        data = data.astype(np.int8)
    key = -data.astype(np.int64) if data.dtype.kind == "u" else -data
    if data.dtype.kind != "f":
        return np.argsort(key, axis=axis, kind="stable").astype(np.int64)
    return np.lexsort((key, ~np.isnan(data)), axis=axis).astype(np.int64)  # NaN first, then by value
