"""Order statistics and counts with PyTorch's names: ``median``, ``kthvalue``, ``mode``,
``cummax``/``cummin``, ``count_nonzero``, ``var_mean`` and ``std_mean``.

The ones along a dim return PyTorch's named tuple ``(values, indices)``; the values are read at
the indices (``TakeAlong``), so the gradient goes to the returned index only, as in PyTorch.
``median()`` over all elements shares its gradient among the elements equal to it. Among tied
elements ``median(dim)`` and ``kthvalue`` return the first (PyTorch leaves that choice to its
selection algorithm, so its index, and the gradient with it, may be another of the ties).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Function
from ..variable import Variable
from ._util import variable_arg, wrap
from .elementwise import select
from .indexing import TakeAlong
from .reduce import mean, resolve_axes, std, values_indices_type, var
from .shape import check_dim, expand, reshape

MedianResult = values_indices_type("median")
KthvalueResult = values_indices_type("kthvalue")
ModeResult = values_indices_type("mode")
CummaxResult = values_indices_type("cummax")
CumminResult = values_indices_type("cummin")


def _along(x: Variable, dim: int, idx: np.ndarray, keepdim: bool, result: type) -> Any:
    """(values, indices) read at ``idx`` (kept dim of length 1) along ``dim``."""
    idx = idx.astype(np.int64)
    values = TakeAlong.apply(x, dim, idx)
    if not keepdim:
        values = reshape(values, values.shape[:dim] + values.shape[dim + 1:])
        idx = idx.reshape(idx.shape[:dim] + idx.shape[dim + 1:])
    return result(values, Variable(idx))


def _dim_of(x: Variable, dim: int, name: str) -> int:
    check_dim(dim, x.ndim)
    d = dim % max(x.ndim, 1)
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size (shape {x.shape}).")
    return d


def _kth_index(data: np.ndarray, k: int, dim: int) -> np.ndarray:
    """The index of the k-th smallest (0-based) along ``dim``; NaN counts as the largest."""
    order = np.argsort(data, axis=dim, kind="stable")
    return np.take(order, [k], axis=dim)


class MedianAll(Function):
    """median of all elements (the lower of the two middle ones); grad shared evenly among the
    elements equal to it (among the NaNs if it is NaN), as PyTorch's evenly_distribute_backward"""

    @staticmethod
    def forward(ctx, x):
        flat = x.data.reshape(-1)
        if np.isnan(flat).any():
            value = np.asarray(np.nan, dtype=x.dtype)
        else:
            value = np.sort(flat)[(flat.size - 1) // 2]
        ctx.mask = np.isnan(x.data) if np.isnan(value) else x.data == value
        return wrap(np.asarray(value, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad):
        n = int(ctx.mask.sum())
        return select(ctx.mask, expand(grad / n, ctx.mask.shape))


def median(x: Variable, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median of all elements, or ``(values, indices)`` along ``dim``."""
    x = variable_arg(x, "median")
    if dim is None:
        if x.data.size == 0:
            return wrap(np.asarray(np.nan, dtype=x.dtype))
        return MedianAll.apply(x)
    if x.ndim == 0:
        check_dim(dim, 0)
        return MedianResult(reshape(x, ()), Variable(np.asarray(0, dtype=np.int64)))
    d = _dim_of(x, dim, "median")
    return _along(x, d, _kth_index(x.data, (x.shape[d] - 1) // 2, d), keepdim, MedianResult)


def kthvalue(x: Variable, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """``(values, indices)`` of the k-th smallest element (k counts from 1) along ``dim``."""
    x = variable_arg(x, "kthvalue")
    if x.ndim == 0:
        check_dim(dim, 0)
        if k != 1:
            raise IndexError(f"kthvalue(): selected number k out of range for dimension 0: k is {k}, size 1")
        return KthvalueResult(reshape(x, ()), Variable(np.asarray(0, dtype=np.int64)))
    d = _dim_of(x, dim, "kthvalue")
    if not 1 <= k <= x.shape[d]:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {d}: k is {k}, "
                         f"size {x.shape[d]}; pick 1 <= k <= {x.shape[d]}.")
    return _along(x, d, _kth_index(x.data, k - 1, d), keepdim, KthvalueResult)


def _mode_1d(row: np.ndarray) -> int:
    """The index of the most frequent value of ``row`` (the smallest value among equally frequent
    ones; its last occurrence), as PyTorch's CPU mode."""
    values, counts = np.unique(row, return_counts=True)  # sorted: the first maximum is the smallest
    value = values[np.argmax(counts)]
    same = np.isnan(row) if np.isnan(value) else row == value
    return int(np.flatnonzero(same)[-1])


def mode(x: Variable, dim: int = -1, keepdim: bool = False) -> Any:
    """``(values, indices)`` of the most frequent value along ``dim``."""
    x = variable_arg(x, "mode")
    if x.ndim == 0:
        check_dim(dim, 0)
        return ModeResult(reshape(x, ()), Variable(np.asarray(0, dtype=np.int64)))
    d = _dim_of(x, dim, "mode")
    moved = np.moveaxis(x.data, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    idx = np.array([_mode_1d(r) for r in rows], dtype=np.int64).reshape(moved.shape[:-1] + (1,))
    return _along(x, d, np.moveaxis(idx, -1, d), keepdim, ModeResult)


def _cumulative(x: Variable, dim: int, larger: bool) -> Any:
    result = CummaxResult if larger else CumminResult
    x = variable_arg(x, "cummax" if larger else "cummin")
    check_dim(dim, x.ndim)
    if x.ndim == 0:
        return result(x * 1, Variable(np.asarray(0, dtype=np.int64)))
    d = dim % x.ndim
    data = np.moveaxis(x.data, d, -1)
    idx = np.zeros(data.shape, dtype=np.int64)
    best = data[..., :1].copy()
    for i in range(1, data.shape[-1]):  # ties and NaN move the index on, as in PyTorch
        v = data[..., i:i + 1]
        with np.errstate(invalid="ignore"):
            take = (v >= best if larger else v <= best) | np.isnan(v)
        best = np.where(take, v, best)
        idx[..., i:i + 1] = np.where(take, i, idx[..., i - 1:i])
    idx = np.moveaxis(idx, -1, d)
    return result(TakeAlong.apply(x, d, idx), Variable(idx))


def cummax(x: Variable, dim: int) -> Any:
    """``(values, indices)`` of the running maximum along ``dim``."""
    return _cumulative(x, dim, True)


def cummin(x: Variable, dim: int) -> Any:
    """``(values, indices)`` of the running minimum along ``dim``."""
    return _cumulative(x, dim, False)


def count_nonzero(x: Variable, dim: Any = None) -> Variable:
    """How many elements (along ``dim``, an int or a tuple) are not zero: an int64 Variable."""
    x = variable_arg(x, "count_nonzero")
    axes, _ = resolve_axes(x, None, dim, False, None)
    return wrap(np.asarray(np.count_nonzero(x.data, axis=axes), dtype=np.int64))


def var_mean(x: Variable, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Variable, Variable]:
    """``(var(x, ...), mean(x, ...))`` over the same dims."""
    x = variable_arg(x, "var_mean")
    return (var(x, dim, unbiased, keepdim, correction=correction),
            mean(x, dim=dim, keepdim=keepdim))


def std_mean(x: Variable, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Variable, Variable]:
    """``(std(x, ...), mean(x, ...))`` over the same dims."""
    x = variable_arg(x, "std_mean")
    return (std(x, dim, unbiased, keepdim, correction=correction),
            mean(x, dim=dim, keepdim=keepdim))
