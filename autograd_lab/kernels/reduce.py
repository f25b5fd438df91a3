"""Reductions where numpy is slow: the column sums of a tall 2-d array (``x.sum(axis=0)``).

numpy's ``sum(axis=0)`` walks rows with a pairwise loop whose per-row overhead dominates when the
rows are short (e.g. a (4096, 10) gradient of a bias).  The kernel adds rows into one accumulator
row per block of rows (one block per thread for large arrays, run in parallel where threads pay),
then adds the few partial rows.
"""
from __future__ import annotations

import numpy as np

from ._jit import PARALLEL_MIN_SIZE, THRESHOLDS, big_enough, jit_pair, num_threads, prange
from .activation import float_array


def _sum_rows_k(x, nblocks, out):
    rows, cols = x.shape
    step = (rows + nblocks - 1) // nblocks
    partial = np.zeros((nblocks, cols), dtype=np.float64)  # float64 accumulators, a row per block
    for c in prange(nblocks):
        acc = partial[c]
        for i in range(c * step, min(rows, (c + 1) * step)):
            row = x[i]  # a 1-d slice vectorises; x[i, j] did not
            for j in range(cols):
                acc[j] += row[j]
    for j in range(cols):  # the blocks' sums added in order, rounded once into out (x's dtype)
        total = partial[0, j]
        for c in range(1, nblocks):
            total += partial[c, j]
        out[j] = total


_SUM_ROWS = jit_pair(_sum_rows_k)


def sum_rows(x: np.ndarray, parallel: bool = True) -> np.ndarray:
    """x.sum(axis=0) for a 2-d array (float64 accumulators, result in x's dtype).

    ``parallel=False`` keeps it serial, e.g. between multi-threaded BLAS calls."""
    x = float_array(x)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-d, got shape {x.shape}")
    blocks = num_threads() if parallel and x.size >= PARALLEL_MIN_SIZE and x.shape[0] >= 8 else 1
    out = np.empty(x.shape[1], dtype=x.dtype)
    # The blocks set the order of the additions, hence the numbers. Whether they run on threads
    # is asked apart (THRESHOLDS["sum_rows"], set_parallel) and changes only the time.
    _SUM_ROWS[1 if blocks > 1 and big_enough(x.size, THRESHOLDS["sum_rows"]) else 0](x, blocks, out)
    return out


def sum_rows_ref(x: np.ndarray) -> np.ndarray:
    """Reference for sum_rows."""
    return x.sum(axis=0)
