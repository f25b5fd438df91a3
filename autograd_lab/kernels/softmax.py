"""Row-wise softmax, log-softmax and cross-entropy kernels, forward and backward, fused.

All work on a 2-d C-contiguous array ``x`` of shape (rows, classes) along its last axis (the ops
layer moves ``dim`` there).  Stability: every row is shifted by its maximum before ``exp``, so
logits of +-1e4 give finite results; log-probabilities are ``x - max - log(sum(exp(x - max)))``,
never ``log(softmax)``.
"""
from __future__ import annotations

import numpy as np

from ._jit import JIT_OPTIONS, REDUCE_OPTIONS, THRESHOLDS, big_enough, fast_exp, jit_pair, njit, num_threads, prange
from .activation import float_array


# ------------------------------------------------------------------ raw kernels
# Rows are split into ``nchunks`` blocks (1 for the serial kernel); each block allocates one small
# lane buffer for ``_row_max``, which keeps 16 running maxima so that LLVM vectorises the scan
# (a plain ``m = max(m, v)`` reduction stays scalar and costs 3.5x more).
_LANES = 16


def _row_max(row, acc):
    n = row.shape[0]
    for k in range(_LANES):
        acc[k] = -np.inf
    j = 0
    while j + _LANES <= n:
        for k in range(_LANES):
            v = row[j + k]
            acc[k] = v if v > acc[k] else acc[k]
        j += _LANES
    m = acc[0]
    for k in range(1, _LANES):
        m = max(m, acc[k])
    for k in range(j, n):
        m = max(m, row[k])
    return m


def _sum_exp_shifted(row, m):
    """sum(exp(row - m)) accumulated in the row's own precision (vectorises)."""
    s = m - m  # a zero of the row's dtype (row[0] - row[0] would be NaN for a leading -inf)
    for j in range(row.shape[0]):
        s += fast_exp(row[j] - m)
    return s


def _bounds(c, nchunks, rows):
    step = (rows + nchunks - 1) // nchunks
    return c * step, min(rows, (c + 1) * step)


def _softmax_fwd_k(x, out, nchunks):
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, x.shape[0])
        acc = np.empty(_LANES, dtype=x.dtype)
        for i in range(lo, hi):
            row = x[i]
            orow = out[i]
            m = _row_max_jit(row, acc)
            s = m - m  # zero in the row's dtype; NaN only where the whole row is -inf, as in PyTorch
            for j in range(row.shape[0]):
                e = fast_exp(row[j] - m)
                orow[j] = e
                s += e
            r = 1 / s
            for j in range(row.shape[0]):
                orow[j] *= r


def _softmax_bwd_k(y, g, out, nchunks):
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, y.shape[0])
        for i in range(lo, hi):
            yr, gr, orow = y[i], g[i], out[i]
            d = yr[0] - yr[0]
            for j in range(yr.shape[0]):
                d += gr[j] * yr[j]
            for j in range(yr.shape[0]):
                orow[j] = yr[j] * (gr[j] - d)


def _logsumexp_k(x, lse, nchunks):
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, x.shape[0])
        acc = np.empty(_LANES, dtype=x.dtype)
        for i in range(lo, hi):
            m = _row_max_jit(x[i], acc)
            lse[i] = m + np.log(_sum_exp_jit(x[i], m))


def _log_softmax_fwd_k(x, out, nchunks):
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, x.shape[0])
        acc = np.empty(_LANES, dtype=x.dtype)
        for i in range(lo, hi):
            row = x[i]
            orow = out[i]
            m = _row_max_jit(row, acc)
            ls = np.log(_sum_exp_jit(row, m))
            for j in range(row.shape[0]):
                orow[j] = (row[j] - m) - ls


def _log_softmax_bwd_k(out_fwd, g, out, nchunks):
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, g.shape[0])
        for i in range(lo, hi):
            yr, gr, orow = out_fwd[i], g[i], out[i]
            s = gr[0] - gr[0]
            for j in range(gr.shape[0]):
                s += gr[j]
            for j in range(gr.shape[0]):
                orow[j] = gr[j] - fast_exp(yr[j]) * s


def _cross_entropy_fwd_k(x, target, stats, loss, nchunks):
    """loss[i] = (max_i - x[i, t_i]) + log(sum(exp(x_i - max_i))); stats = (max, log-sum) rows.

    Adding the small log-sum last keeps float32 losses accurate for logits of 1e4
    (``logsumexp - x[t]`` would cancel to an error of 1e-3). A target outside [0, classes)
    reads nothing: its row's loss is NaN (the wrapper's caller reports it).
    """
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, x.shape[0])
        acc = np.empty(_LANES, dtype=x.dtype)
        for i in range(lo, hi):
            m = _row_max_jit(x[i], acc)
            ls = np.log(_sum_exp_jit(x[i], m))
            stats[0, i] = m
            stats[1, i] = ls
            t = target[i]
            loss[i] = (m - x[i, t]) + ls if 0 <= t < x.shape[1] else np.nan


def _cross_entropy_bwd_k(x, target, stats, grad_loss, out, nchunks):
    """out[i, j] = grad_loss[i] * (softmax(x)[i, j] - [j == target[i]]); a grad_loss of one
    element is every row's. A target outside [0, classes) writes nothing: its row is NaN."""
    step = 1 if grad_loss.shape[0] > 1 else 0
    for c in prange(nchunks):
        lo, hi = _bounds(c, nchunks, x.shape[0])
        for i in range(lo, hi):
            row, orow = x[i], out[i]
            m = stats[0, i]
            ls = stats[1, i]
            gi = grad_loss[i * step]
            t = target[i]
            if 0 <= t < row.shape[0]:
                for j in range(row.shape[0]):
                    orow[j] = gi * fast_exp((row[j] - m) - ls)
                orow[t] -= gi
            else:
                orow[:] = np.nan


_row_max_jit = njit(**JIT_OPTIONS)(_row_max)
_sum_exp_jit = njit(**REDUCE_OPTIONS)(_sum_exp_shifted)
_bounds = njit(**JIT_OPTIONS)(_bounds)
_SOFTMAX_FWD = jit_pair(_softmax_fwd_k, reassoc=True)
_SOFTMAX_BWD = jit_pair(_softmax_bwd_k, reassoc=True)
_LOGSUMEXP = jit_pair(_logsumexp_k)
_LOG_SOFTMAX_FWD = jit_pair(_log_softmax_fwd_k)
_LOG_SOFTMAX_BWD = jit_pair(_log_softmax_bwd_k, reassoc=True)
_CE_FWD = jit_pair(_cross_entropy_fwd_k)
_CE_BWD = jit_pair(_cross_entropy_bwd_k)

# rows are independent; from this size on they are split across threads (_jit.THRESHOLDS)
_ROWS_MIN_SIZE = THRESHOLDS["rows"]


def _run(pair, shape: tuple[int, int], *args) -> None:
    rows, cols = shape
    # size first: asking numba for its thread count costs about 1 us, more than a small row
    # kernel's own arithmetic (a batch of 64 by 10 classes takes 3-4 us)
    if rows >= 2 and big_enough(rows * cols, _ROWS_MIN_SIZE) and (threads := num_threads()) > 1:
        pair[1](*args, min(rows, 4 * threads))
    else:
        pair[0](*args, 1)


def _rows(x: np.ndarray, name: str = "x") -> np.ndarray:
    x = float_array(x, name)
    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-d (rows, classes), got shape {x.shape}; "
                         f"reshape it, e.g. {name}.reshape(-1, {name}.shape[-1])")
    return x


def _pair(y: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = _rows(y, "y")
    g = _rows(g, "grad")
    if g.shape != y.shape or g.dtype != y.dtype:
        raise ValueError(f"grad must match y: expected {y.dtype} {y.shape}, got {g.dtype} {g.shape}")
    return y, g


def _targets(target: np.ndarray, rows: int, classes: int) -> np.ndarray:
    t = np.ascontiguousarray(target)
    if t.shape != (rows,) or t.dtype.kind not in "iu":
        raise ValueError(f"target must be an integer array of shape ({rows},), got {t.dtype} {t.shape}")
    if rows and (t.min() < 0 or t.max() >= classes):
        raise ValueError(f"target values must lie in [0, {classes}), got min {t.min()} and max {t.max()}")
    return t.astype(np.int64, copy=False)


# ------------------------------------------------------------------ public wrappers
def softmax_fwd(x: np.ndarray) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) along the last axis of a 2-d array."""
    x = _rows(x)
    out = np.empty_like(x)
    _run(_SOFTMAX_FWD, x.shape, x, out)
    return out


def softmax_bwd(y: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """y * (grad - sum(grad * y)) per row, with y = softmax(x)."""
    y, g = _pair(y, grad)
    out = np.empty_like(y)
    _run(_SOFTMAX_BWD, y.shape, y, g, out)
    return out


def logsumexp(x: np.ndarray) -> np.ndarray:
    """log(sum(exp(x))) of each row, computed stably; shape (rows,)."""
    x = _rows(x)
    out = np.empty(x.shape[0], dtype=x.dtype)
    _run(_LOGSUMEXP, x.shape, x, out)
    return out


def log_softmax_fwd(x: np.ndarray) -> np.ndarray:
    """x - logsumexp(x) along the last axis of a 2-d array."""
    x = _rows(x)
    out = np.empty_like(x)
    _run(_LOG_SOFTMAX_FWD, x.shape, x, out)
    return out


def log_softmax_bwd(out_fwd: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """grad - exp(out_fwd) * sum(grad) per row, with out_fwd = log_softmax(x)."""
    y, g = _pair(out_fwd, grad)
    out = np.empty_like(y)
    _run(_LOG_SOFTMAX_BWD, y.shape, y, g, out)
    return out


def cross_entropy_fwd(x: np.ndarray, target: np.ndarray, check: bool = True
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(loss, stats): per-row loss logsumexp(x_i) - x_i[target_i], and the (2, rows) array of
    row maxima and log-sums of exp(x - max) that ``cross_entropy_bwd`` needs.

    ``check=False`` skips the checks of ``target`` (for callers that made it an int64 array of
    one index per row already); a target out of range then gives a NaN loss in its row."""
    x = _rows(x)
    t = _targets(target, *x.shape) if check else np.ascontiguousarray(target, dtype=np.int64)
    stats = np.empty((2, x.shape[0]), dtype=x.dtype)
    loss = np.empty(x.shape[0], dtype=x.dtype)
    _run(_CE_FWD, x.shape, x, t, stats, loss)
    return loss, stats


def cross_entropy_bwd(x: np.ndarray, target: np.ndarray, stats: np.ndarray,
                      grad_loss: np.ndarray | float, check: bool = True) -> np.ndarray:
    """d(sum_i grad_loss_i * loss_i)/dx = grad_loss_i * (softmax(x_i) - onehot(target_i)).

    ``check=False`` is for the arrays ``cross_entropy_fwd(check=False)`` took and returned, as they
    were: it converts and checks nothing but ``grad_loss`` (a number, or one per row). A target
    out of range gives a NaN row, as in the forward."""
    if not check:
        gl = np.asarray(grad_loss, dtype=x.dtype).reshape(-1)  # one element stands for every row
        out = np.empty_like(x)
        _run(_CE_BWD, x.shape, x, target, stats, gl, out)
        return out
    x = _rows(x)
    t = _targets(target, *x.shape)
    gl = np.asarray(grad_loss, dtype=x.dtype)
    if gl.shape != (x.shape[0],) and gl.ndim != 0:
        raise ValueError(f"grad_loss must be a number or have shape ({x.shape[0]},), got {gl.shape}")
    gl = gl.reshape(-1)
    stats = np.ascontiguousarray(stats, dtype=x.dtype)
    if stats.shape != (2, x.shape[0]):
        raise ValueError(f"stats must be the (2, {x.shape[0]}) array cross_entropy_fwd returned, "
                         f"got shape {stats.shape}")
    out = np.empty_like(x)
    _run(_CE_BWD, x.shape, x, t, stats, np.ascontiguousarray(gl), out)
    return out


# ------------------------------------------------------------------ numpy references
def softmax_fwd_ref(x: np.ndarray) -> np.ndarray:
    """Reference for softmax_fwd."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_bwd_ref(y: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Reference for softmax_bwd."""
    return y * (grad - (grad * y).sum(axis=-1, keepdims=True))


def logsumexp_ref(x: np.ndarray) -> np.ndarray:
    """Reference for logsumexp."""
    m = x.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[:, 0]


def log_softmax_fwd_ref(x: np.ndarray) -> np.ndarray:
    """Reference for log_softmax_fwd."""
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def log_softmax_bwd_ref(out_fwd: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Reference for log_softmax_bwd."""
    return grad - np.exp(out_fwd) * grad.sum(axis=-1, keepdims=True)


def cross_entropy_fwd_ref(x: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference for cross_entropy_fwd."""
    m = x.max(axis=-1)
    ls = np.log(np.exp(x - m[:, None]).sum(axis=-1))
    return (m - x[np.arange(x.shape[0]), target]) + ls, np.stack([m, ls])


def cross_entropy_bwd_ref(x: np.ndarray, target: np.ndarray, stats: np.ndarray,
                          grad_loss: np.ndarray | float) -> np.ndarray:
    """Reference for cross_entropy_bwd."""
    p = np.exp((x - stats[0][:, None]) - stats[1][:, None])
    p[np.arange(x.shape[0]), target] -= 1
    return p * np.broadcast_to(np.asarray(grad_loss, dtype=x.dtype), (x.shape[0],))[:, None]
