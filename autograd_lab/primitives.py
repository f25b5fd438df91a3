"""The few differentiable operations the engine itself needs: add, sum_to/broadcast_to, cast.

The engine adds gradients that meet at a node, sums a broadcast gradient back to its input's
shape and casts it to its input's dtype; under ``create_graph=True`` these steps must be recorded
like any other op.  They live here, below the engine, so that the import order stays one-way
(``function`` ← ``primitives`` ← ``engine``; ``ops`` re-exports them beside the other ops).

>>> import autograd_lab as al
>>> sum_to(al.ones(2, 3), (1, 3))
Variable([[2., 2., 2.]])
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .errors import ShapeError
from .function import Function
from .variable import Variable


def raw(x: Any) -> Any:
    """The numpy data of a Variable; anything else unchanged (Python scalars keep numpy's
    weak-scalar rules, so float32 * 2.0 stays float32)."""
    return x._data if isinstance(x, Variable) else x


wrap = Variable._make  # ndarray (or numpy scalar) -> Variable, no copy


def shape_of(x: Any) -> tuple[int, ...]:
    """Shape of a Variable, an array or a plain number (``()``)."""
    if isinstance(x, Variable):
        return x._data.shape
    return np.shape(x)


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _promote_pair(x: np.dtype, y: np.dtype) -> np.dtype:
    """PyTorch's promote_types: an integer or bool meeting a floating type gives that floating type
    (numpy would widen float32 with int64 to float64); otherwise numpy's rule, which agrees."""
    cx, cy = _CATEGORY[x.kind], _CATEGORY[y.kind]
    if cx != cy and min(cx, cy) < 2 <= max(cx, cy):
        return x if cx > cy else y
    return np.promote_types(x, y)


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """A dtype of a higher priority (dimensioned over 0-d) wins unless ``lower`` is of a higher
    category (bool < integer < floating < complex): PyTorch's combine_categories."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    ch, cl = _CATEGORY[higher.kind], _CATEGORY[lower.kind]
    if ch >= 2 and cl <= ch:
        return higher
    if ch == 0 or cl > ch:
        return _promote_pair(higher, lower)
    return higher


def result_dtype(*arrays: np.ndarray) -> np.dtype:
    """The dtype PyTorch gives an elementwise op on these arrays: tensors with dimensions decide,
    0-d ones only where they bring a higher category (float32 + a 0-d float64 stays float32).
    Python numbers are left to numpy, whose weak-scalar rule is PyTorch's."""
    dims = [a.dtype for a in arrays if a.ndim]
    zeros = [a.dtype for a in arrays if not a.ndim]
    dim = zero = None
    for d in dims:
        dim = d if dim is None else _promote_pair(dim, d)
    for d in zeros:
        zero = d if zero is None else _promote_pair(zero, d)
    out = _combine(dim, zero)
    assert out is not None
    return out


def promoted(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` (Variables, arrays or numbers) as operands of one dtype by PyTorch's rules,
    when both are arrays of different dtypes; otherwise unchanged."""
    da = a._data if isinstance(a, Variable) else a
    db = b._data if isinstance(b, Variable) else b
    if type(da) is np.ndarray and type(db) is np.ndarray and da.dtype != db.dtype \
            and da.dtype.kind in "biufc" and db.dtype.kind in "biufc":
        dt = result_dtype(da, db)
        return da.astype(dt, copy=False), db.astype(dt, copy=False)
    return da, db


def broadcasting(op: Callable[[Any, Any], Any], a: Any, b: Any, name: str) -> Any:
    """Apply a numpy binary op on operands promoted by PyTorch's rules; turn numpy's broadcast
    failure into a ShapeError naming both shapes."""
    try:
        return op(*promoted(a, b))
    except ValueError as exc:
        if "broadcast" not in str(exc):
            raise
        raise ShapeError(
            f"{name}: cannot broadcast shapes {shape_of(a)} and {shape_of(b)}. Broadcasting lines "
            "shapes up from the right; each pair of dimensions must be equal or one of them 1. "
            "Fix: reshape an operand (x.reshape(...)) or add an axis (x[:, None])."
        ) from None


def _unbroadcast_axes(shape: tuple[int, ...], target: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    lead = len(shape) - len(target)
    if lead < 0:
        raise ShapeError(f"sum_to: cannot reduce shape {shape} to the larger shape {target}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, t in enumerate(target) if t == 1 and shape[lead + i] != 1
    )
    for i, t in enumerate(target):
        if t != 1 and shape[lead + i] != t:
            raise ShapeError(
                f"sum_to: shape {shape} was not broadcast from {target}; "
                "they differ in a dimension that is not 1."
            )
    return axes, lead


class SumTo(Function):
    """sum_to(x, shape): sum out the axes that broadcasting to x.shape added (the inverse of broadcast_to)."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return wrap(sum_to_array(x.data, tuple(shape)))

    @staticmethod
    def backward(ctx, grad):
        return broadcast_to(grad, ctx.in_shape), None


def sum_to_array(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """sum_to on an array: ``x`` summed over the axes that broadcasting to its shape added."""
    if x.shape == shape:
        return x
    axes, lead = _unbroadcast_axes(x.shape, shape)
    y = x.sum(axis=axes, keepdims=True) if axes else x
    return y.reshape(shape) if lead else y


class BroadcastTo(Function):
    """broadcast_to(x, shape): repeat x along new or size-1 axes."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        try:
            return wrap(np.broadcast_to(x.data, tuple(shape)).copy())
        except ValueError:
            raise ShapeError(
                f"broadcast_to: cannot broadcast shape {x.shape} to {tuple(shape)}; each dimension "
                "must match or be 1 (new dimensions are added on the left)."
            ) from None

    @staticmethod
    def backward(ctx, grad):
        return sum_to(grad, ctx.in_shape), None


def sum_to(x: Variable, shape: Sequence[int]) -> Variable:
    """Sum ``x`` down to ``shape``: the gradient of a broadcast. No-op when shapes match."""
    shape = tuple(shape)
    if x._data.shape == shape:  # the common case: nothing was broadcast
        return x
    return SumTo.apply(x, shape)


def broadcast_to(x: Variable, shape: Sequence[int]) -> Variable:
    """Repeat ``x`` to ``shape`` (numpy's broadcasting rules). No-op when shapes match."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    return BroadcastTo.apply(x, shape)


class Add(Function):
    """a + b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (shape_of(a), shape_of(b))
        return wrap(broadcasting(np.add, a, b, "add"))

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        ga = sum_to(grad, sa) if ctx.needs_input_grad[0] else None
        gb = sum_to(grad, sb) if ctx.needs_input_grad[1] else None
        return ga, gb


class Cast(Function):
    """to(x, dtype): the same values in another dtype; the gradient is cast back"""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.in_dtype = x.dtype
        return wrap(x.data.astype(dtype))

    @staticmethod
    def backward(ctx, grad):
        return Cast.apply(grad, ctx.in_dtype), None
