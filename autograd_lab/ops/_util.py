"""Small helpers shared by the op modules."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import ShapeError
from ..variable import Variable


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


def normalize_axis(axis: Any, dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Accept ``axis=`` (numpy) or ``dim=`` (PyTorch); return a sorted tuple of positive axes or None."""
    if dim is not None:
        if axis is not None:
            raise TypeError("pass either axis= or dim= (they mean the same), not both")
        axis = dim
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1):
            raise ShapeError(
                f"axis {a} is out of range for a Variable with {ndim} dimension(s); "
                f"use an axis in [{-max(ndim, 1)}, {max(ndim, 1) - 1}]."
            )
        out.append(int(a) % max(ndim, 1))
    return tuple(sorted(set(out)))
