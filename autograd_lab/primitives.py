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


def broadcasting(op: Callable[[Any, Any], Any], a: Any, b: Any, name: str) -> Any:
    """Apply a numpy binary op; turn numpy's broadcast failure into a ShapeError naming both shapes."""
    try:
        return op(a._data if isinstance(a, Variable) else a, b._data if isinstance(b, Variable) else b)
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
        return wrap(_summed_to(x.data, tuple(shape)))

    @staticmethod
    def backward(ctx, grad):
        return broadcast_to(grad, ctx.in_shape), None


def _summed_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
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
    if x._data.shape == shape:  # the common case: nothing was broadcast
        return x
    shape = tuple(shape)
    if x._data.shape == shape:
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

    @staticmethod
    def _lower(a, b):
        """For al.capture: the class that replays this call on numpy arrays, or None."""
        return AddOnArrays if lowers_exactly(a, b) else None


class AddOnArrays:
    """Add's forward and backward on numpy arrays, as a replay (al.capture) calls them."""

    @staticmethod
    def forward(ctx, a, b):
        return np.add(a, b)

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (_summed_to(grad, sa) if need_a else None), (_summed_to(grad, sb) if need_b else None)


def lowers_exactly(a: Any, b: Any) -> bool:
    """Whether a binary elementwise op on ``a`` and ``b`` gives, on plain arrays, exactly the
    numbers and gradients of its Function: the result is a float array (not a numpy scalar), and
    each operand that needs a gradient has the result's dtype, so that no gradient is cast."""
    data = [x._data if isinstance(x, Variable) else x for x in (a, b)]
    if not all(type(d) in (int, float, np.ndarray) for d in data) or max(np.ndim(d) for d in data) == 0:
        return False
    dtype = np.result_type(*data)
    return dtype.kind == "f" and all(
        x._data.dtype == dtype for x in (a, b) if isinstance(x, Variable) and x._requires_grad)


class Cast(Function):
    """to(x, dtype): the same values in another dtype; the gradient is cast back"""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.in_dtype = x.dtype
        return wrap(x.data.astype(dtype))

    @staticmethod
    def backward(ctx, grad):
        return Cast.apply(grad, ctx.in_dtype), None
