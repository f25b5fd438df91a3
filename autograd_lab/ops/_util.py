"""Small helpers shared by the op modules."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..primitives import broadcasting, raw, shape_of, wrap  # noqa: F401  (shared by the op modules)
from ..variable import Variable


def variable_arg(x: Any, fn: str) -> Variable:
    """The Variable argument of ``al.<fn>(x)``: a numpy array is wrapped, anything else is refused
    with the fix (PyTorch refuses ``torch.exp(2.0)`` too)."""
    if isinstance(x, Variable):
        return x
    if isinstance(x, np.ndarray) and x.dtype.kind in "biuf":
        return Variable._make(x)
    raise TypeError(
        f"{fn}(): argument 'input' must be a Variable, not {type(x).__name__}. Make one first, "
        f"e.g. al.{fn}(al.tensor({x!r:.40}))." if not isinstance(x, np.ndarray) else
        f"{fn}(): argument 'input' must be a Variable or a numeric array, not an array of dtype {x.dtype}."
    )


def floats(x: Variable) -> np.ndarray:
    """``x``'s data for a floating function (exp, log, sqrt, sin, ...): bool and integer data give
    the library's default float, float64 (numpy would give float16 for bool and 8-bit integers,
    float32 for 16-bit ones), as PyTorch gives its default float."""
    d = x.data
    return d if d.dtype.kind in "fc" else d.astype(np.float64)


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
