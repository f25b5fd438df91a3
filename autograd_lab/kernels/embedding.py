"""The embedding's backward: the rows of ``grad`` added into a table at their indices.

``out[idx[i]] += grad[i]`` for each row ``i``, repeated indices adding up, and nothing for the
row ``skip`` (an embedding's ``padding_idx``; -1 for none). numpy's ``np.add.at`` (the reference)
does the same one element at a time through a generic path, about ten times slower for 256 rows
of 32. Serial only: two rows with one index write the same output row.
"""
from __future__ import annotations

import numpy as np

from ._jit import JIT_OPTIONS, njit
from .activation import float_array


@njit(**JIT_OPTIONS)
def _scatter_rows_k(idx, grad, skip, out):
    for i in range(idx.shape[0]):
        r = idx[i]
        if r == skip:
            continue
        orow, grow = out[r], grad[i]
        for j in range(grow.shape[0]):
            orow[j] += grow[j]


def embedding_bwd(idx: np.ndarray, grad: np.ndarray, num: int, skip: int = -1) -> np.ndarray:
    """The (num, dim) table's gradient: the rows of ``grad`` ((n, dim)) summed at ``idx`` ((n,),
    each in [0, num)); the row ``skip`` stays zero."""
    g = float_array(grad, "grad")
    i = np.ascontiguousarray(idx, dtype=np.int64)
    if g.ndim != 2 or i.shape != (g.shape[0],):
        raise ValueError(f"embedding_bwd: grad must be (n, dim) and idx (n,), got {g.shape} and {i.shape}")
    if i.size and (i.min() < 0 or i.max() >= num):
        raise ValueError(f"embedding_bwd: indices must lie in [0, {num}), got min {i.min()} and max {i.max()}")
    out = np.zeros((num, g.shape[1]), dtype=g.dtype)
    _scatter_rows_k(i, g, int(skip), out)
    return out


def embedding_bwd_ref(idx: np.ndarray, grad: np.ndarray, num: int, skip: int = -1) -> np.ndarray:
    """Reference for embedding_bwd."""
    out = np.zeros((num, grad.shape[1]), dtype=grad.dtype)
    np.add.at(out, idx, grad)
    if skip >= 0:
        out[skip] = 0
    return out
