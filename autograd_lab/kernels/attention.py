"""The masked row softmax of attention, forward and backward, fused.

Forward, for each row ``i`` of a 2-d scores array ``x`` (rows, keys)::

    z[i, j] = x[i, j] * scale + add[i % len(add), j]          (add: an optional float mask)
    z[i, j] = -inf where keep[i % len(keep), j] is False       (keep: an optional bool mask)
                   or where causal and j > i % causal           (causal: the query length L)
    y[i] = exp(z[i] - max z[i]) / sum(exp(z[i] - max z[i]))

one pass over the row for the mask, the scale and the maximum, one for ``exp`` and the sum, one
to normalise: the scaled, masked scores are never a separate array. A row in which every entry
is masked (its maximum is -inf) gives zeros, not NaN, as PyTorch's ``scaled_dot_product_attention``
does. A mask's rows repeat: a mask of ``L`` rows serves every (batch, head) block of ``L`` query
rows, a mask of one row every row.

Backward: ``dx = scale * y * (g - sum(g * y))`` per row; masked entries (``y = 0``) get no gradient.
"""
from __future__ import annotations

import numpy as np

from ._jit import THRESHOLDS, big_enough, fast_exp, jit_pair, num_threads, prange
from .activation import float_array


def _masked_softmax_fwd_k(x, add, keep, causal, scale, out, nchunks):
    has_add = add.shape[1] > 0  # an absent mask is a (1, 0) array
    has_keep = keep.shape[1] > 0
    for c in prange(nchunks):
        step = (x.shape[0] + nchunks - 1) // nchunks
        lo, hi = c * step, min(x.shape[0], (c + 1) * step)
        for i in range(lo, hi):
            row, orow = x[i], out[i]
            arow, krow = add[i % add.shape[0]], keep[i % keep.shape[0]]
            n = row.shape[0]
            last = n if causal == 0 else min(n, i % causal + 1)  # keys after the query's position
            m = -np.inf
            for j in range(n):
                z = row[j] * scale
                if has_add:
                    z += arow[j]
                if j >= last or (has_keep and not krow[j]):
                    z = -np.inf
                orow[j] = z
                m = z if z > m else m
            if m == -np.inf:  # every key masked: a row of zeros
                for j in range(n):
                    orow[j] = 0.0
                continue
            s = m - m
            for j in range(n):
                e = fast_exp(orow[j] - m)
                orow[j] = e
                s += e
            r = 1 / s
            for j in range(n):
                orow[j] *= r


def _masked_softmax_bwd_k(y, g, scale, out, nchunks):
    for c in prange(nchunks):
        step = (y.shape[0] + nchunks - 1) // nchunks
        lo, hi = c * step, min(y.shape[0], (c + 1) * step)
        for i in range(lo, hi):
            yr, gr, orow = y[i], g[i], out[i]
            d = yr[0] - yr[0]
            for j in range(yr.shape[0]):
                d += gr[j] * yr[j]
            for j in range(yr.shape[0]):
                orow[j] = scale * (yr[j] * (gr[j] - d))


_FWD = jit_pair(_masked_softmax_fwd_k)
_BWD = jit_pair(_masked_softmax_bwd_k, reassoc=True)
_ROWS_MIN_SIZE = THRESHOLDS["rows"]  # the same rule as the other row kernels (softmax.py)


def _run(pair, shape: tuple[int, int], *args) -> None:
    rows, cols = shape
    if rows >= 2 and big_enough(rows * cols, _ROWS_MIN_SIZE) and (threads := num_threads()) > 1:
        pair[1](*args, min(rows, 4 * threads))
    else:
        pair[0](*args, 1)


def _mask_rows(mask: np.ndarray | None, dtype: np.dtype, cols: int, rows: int, name: str) -> np.ndarray:
    """The mask as a C-contiguous 2-d array of ``cols`` columns whose row count divides ``rows``
    (an empty (1, 0) array for no mask)."""
    if mask is None:
        return np.empty((1, 0), dtype=dtype)
    m = np.ascontiguousarray(mask, dtype=dtype)
    if m.ndim != 2 or m.shape[1] != cols or m.shape[0] == 0 or rows % m.shape[0]:
        raise ValueError(f"{name} must be 2-d with {cols} columns and a number of rows that divides "
                         f"{rows} (its rows repeat), got shape {m.shape}; broadcast it to the "
                         f"scores' shape and reshape it to (-1, {cols})")
    return m


# ------------------------------------------------------------------ public wrappers
def masked_softmax_fwd(x: np.ndarray, add: np.ndarray | None = None, keep: np.ndarray | None = None,
                       causal: int = 0, scale: float = 1.0) -> np.ndarray:
    """softmax(x * scale + add) along the last axis of 2-d ``x``, masked entries (``keep`` False,
    or a key after the query's position when ``causal`` is the query length) given weight 0; a
    row with no key left is zeros. See the module's docstring."""
    x = float_array(x, "x")
    if x.ndim != 2:
        raise ValueError(f"x must be 2-d (rows, keys), got shape {x.shape}; reshape it, "
                         f"e.g. x.reshape(-1, x.shape[-1])")
    rows, cols = x.shape
    a = _mask_rows(add, x.dtype, cols, rows, "add")
    k = _mask_rows(keep, np.dtype(np.bool_), cols, rows, "keep")
    if causal < 0 or (causal and rows % causal):
        raise ValueError(f"causal must be 0 or the query length (a divisor of the {rows} rows), got {causal}")
    out = np.empty_like(x)
    if x.size:
        _run(_FWD, x.shape, x, a, k, int(causal), x.dtype.type(scale), out)
    return out


def masked_softmax_bwd(y: np.ndarray, grad: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """scale * y * (grad - sum(grad * y)) per row, with y = masked_softmax_fwd(x, ..., scale)."""
    y = float_array(y, "y")
    g = np.ascontiguousarray(grad)
    if y.ndim != 2 or g.shape != y.shape or g.dtype != y.dtype:
        raise ValueError(f"grad must match a 2-d y: expected {y.dtype} {y.shape}, got {g.dtype} {g.shape}")
    out = np.empty_like(y)
    if y.size:
        _run(_BWD, y.shape, y, g, y.dtype.type(scale), out)
    return out


# ------------------------------------------------------------------ numpy references
def masked_softmax_fwd_ref(x: np.ndarray, add: np.ndarray | None = None, keep: np.ndarray | None = None,
                           causal: int = 0, scale: float = 1.0) -> np.ndarray:
    """Reference for masked_softmax_fwd."""
    rows, cols = x.shape
    z = x * scale
    if add is not None:
        z = z + np.tile(add, (rows // add.shape[0], 1))
    allowed = np.ones((rows, cols), dtype=bool)
    if keep is not None:
        allowed &= np.tile(keep, (rows // keep.shape[0], 1))
    if causal:
        allowed &= np.arange(cols)[None, :] <= (np.arange(rows) % causal)[:, None]
    z = np.where(allowed, z, -np.inf)
    m = z.max(axis=-1, keepdims=True)
    empty = m == -np.inf
    e = np.exp(z - np.where(empty, 0, m))
    s = e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0, e / np.where(empty, 1, s))


def masked_softmax_bwd_ref(y: np.ndarray, grad: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Reference for masked_softmax_bwd."""
    return scale * (y * (grad - (grad * y).sum(axis=-1, keepdims=True)))
