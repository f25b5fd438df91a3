"""Reductions where numpy is slow: the column sums of a tall 2-d array (``x.sum(axis=0)``).

numpy's ``sum(axis=0)`` walks rows with a pairwise loop whose per-row overhead dominates when the
rows are short (e.g. a (4096, 10) gradient of a bias).  The kernel adds rows into one accumulator
row per block of rows, in parallel blocks for large arrays, then adds the few partial rows.
"""
from __future__ import annotations

import numpy as np

from ._jit import JIT_OPTIONS, PARALLEL_MIN_SIZE, jit_pair, njit, num_threads, prange
from .activation import _float_array


def _sum_rows_k(x, partial):
    rows, cols = x.shape
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in prange(nblocks):
        acc = partial[c]
        for j in range(cols):
            acc[j] = 0
        for i in range(c * step, min(rows, (c + 1) * step)):
            row = x[i]  # a 1-d slice vectorises; x[i, j] did not
            for j in range(cols):
                acc[j] += row[j]


def _sum_rows_1_k(x, out):
    """One block: the float64 sums of every row, rounded once into ``out`` (x's dtype)."""
    rows, cols = x.shape
    acc = np.zeros(cols, dtype=np.float64)
    for i in range(rows):
        row = x[i]
        for j in range(cols):
            acc[j] += row[j]
    for j in range(cols):
        out[j] = acc[j]


_SUM_ROWS = jit_pair(_sum_rows_k)
_SUM_ROWS_1 = njit(**JIT_OPTIONS)(_sum_rows_1_k)


def sum_rows(x: np.ndarray, parallel: bool = True) -> np.ndarray:
    """x.sum(axis=0) for a 2-d array (float64 accumulators, result in x's dtype).

    ``parallel=False`` keeps it serial, e.g. between multi-threaded BLAS calls."""
    x = _float_array(x)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-d, got shape {x.shape}")
    if not (parallel and x.size >= PARALLEL_MIN_SIZE and x.shape[0] >= 8 and num_threads() > 1):
        out = np.empty(x.shape[1], dtype=x.dtype)  # one block: no partial rows to add up
        _SUM_ROWS_1(x, out)
        return out
    partial = np.empty((num_threads(), x.shape[1]), dtype=np.float64)  # float64 accumulators
    _SUM_ROWS[1](x, partial)
    return partial.sum(axis=0).astype(x.dtype)


def sum_rows_ref(x: np.ndarray) -> np.ndarray:
    """Reference for sum_rows."""
    return x.sum(axis=0)
