"""conv2d (NCHW) forward and backward by im2col / col2im around one BLAS matmul each.

Layout: the columns matrix has shape (C_in*kh*kw, N*H_out*W_out), so that

    forward   y2   = W2 @ cols             (C_out, N*P)   then y = y2 as NCHW + bias
    backward  dW2  = g2 @ cols.T           (C_out, K)
              dcol = W2.T @ g2             (K, N*P)       then dx = col2im(dcol)

with W2 = W.reshape(C_out, K) and g2 the output gradient as (C_out, N*P).  Every GEMM is BLAS
(numpy ``@``); numba does the gathers and scatters.  Direct convolution loops were measured
slower than this at both benchmark sizes (see benchmarks/RESULTS.md), so there is no direct path.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from ._jit import jit_pair, num_threads, pick, prange
from .activation import _float_array


def out_size(size: int, k: int, stride: int, pad: int) -> int:
    """Output length of a convolution or pooling window along one axis."""
    return (size + 2 * pad - k) // stride + 1


# ------------------------------------------------------------------ raw kernels
def _im2col_k(x, kh, kw, sh, sw, ph, pw, ho, wo, cols):
    n, c, h, w = x.shape
    p = ho * wo
    for r in prange(c * kh * kw):
        ci = r // (kh * kw)
        di = (r // kw) % kh
        dj = r % kw
        for b in range(n):
            base = b * p
            for oi in range(ho):
                ii = oi * sh + di - ph
                o = base + oi * wo
                if ii < 0 or ii >= h:
                    for oj in range(wo):
                        cols[r, o + oj] = 0
                    continue
                for oj in range(wo):
                    jj = oj * sw + dj - pw
                    cols[r, o + oj] = x[b, ci, ii, jj] if 0 <= jj < w else 0


def _col2im_k(dcols, kh, kw, sh, sw, ph, pw, ho, wo, dx):
    n, c, h, w = dx.shape
    p = ho * wo
    for bc in prange(n * c):  # each (image, channel) plane belongs to one iteration
        b = bc // c
        ci = bc % c
        plane = dx[b, ci]
        for i in range(h):
            for j in range(w):
                plane[i, j] = 0
        for di in range(kh):
            for dj in range(kw):
                r = (ci * kh + di) * kw + dj
                for oi in range(ho):
                    ii = oi * sh + di - ph
                    if ii < 0 or ii >= h:
                        continue
                    o = b * p + oi * wo
                    for oj in range(wo):
                        jj = oj * sw + dj - pw
                        if 0 <= jj < w:
                            plane[ii, jj] += dcols[r, o + oj]


def _to_nchw_bias_k(y2, bias, out):
    """out[b, co, q] = y2[co, b*P + q] + bias[co]  (out is the NCHW output viewed as (N, C, P))."""
    n, co, p = out.shape
    for bc in prange(n * co):
        b = bc // co
        o = bc % co
        bo = bias[o]
        base = b * p
        for q in range(p):
            out[b, o, q] = y2[o, base + q] + bo


def _from_nchw_sum_k(g, g2, db):
    """g2[co, b*P + q] = g[b, co, q] and db[co] = g[:, co].sum(), one channel per iteration."""
    n, co, p = g.shape
    for o in prange(co):
        s = g2[0, 0] - g2[0, 0]
        for b in range(n):
            base = b * p
            for q in range(p):
                v = g[b, o, q]
                g2[o, base + q] = v
                s += v
        db[o] = s


_IM2COL = jit_pair(_im2col_k)
_COL2IM = jit_pair(_col2im_k)
_TO_NCHW = jit_pair(_to_nchw_bias_k)
_FROM_NCHW = jit_pair(_from_nchw_sum_k, reassoc=True)

# Standalone im2col/col2im calls go parallel from this size on.  Inside conv2d_fwd/bwd the
# kernels run serially in worker threads instead (see "threads" below): prange gathers that
# alternate with multi-threaded BLAS calls were measured up to 80x slower on 2 busy cores.
_CONV_MIN_SIZE = 32_000


def _pick(pair, size: int):
    return pick(pair, size, _CONV_MIN_SIZE)


def _pair2(v, name: str) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    t = tuple(int(a) for a in v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return t


def _check_conv(x: np.ndarray, weight: np.ndarray, stride, padding):
    x = _float_array(x, "input")
    weight = _float_array(weight, "weight").astype(x.dtype, copy=False)
    if x.ndim != 4 or weight.ndim != 4 or weight.shape[1] != x.shape[1]:
        raise ValueError(f"expected input (N, C_in, H, W) and weight (C_out, C_in, kh, kw) with the "
                         f"same C_in, got input {x.shape} and weight {weight.shape}")
    sh, sw = _pair2(stride, "stride")
    ph, pw = _pair2(padding, "padding")
    if sh < 1 or sw < 1 or ph < 0 or pw < 0:
        raise ValueError(f"stride must be >= 1 and padding >= 0, got stride {stride} and padding {padding}")
    kh, kw = weight.shape[2:]
    ho, wo = out_size(x.shape[2], kh, sh, ph), out_size(x.shape[3], kw, sw, pw)
    if ho < 1 or wo < 1:
        raise ValueError(f"kernel {kh}x{kw} with padding {padding} does not fit input of size "
                         f"{x.shape[2]}x{x.shape[3]}; pad more or use a smaller kernel")
    return x, weight, (sh, sw), (ph, pw), (ho, wo)


# ------------------------------------------------------------------ workspaces
# The batch is processed in chunks of images whose columns fit in ~1 MiB: one GEMM over the whole
# batch's columns (30 MB at 64x16x28x28) ran 4x slower than the same FLOPs in cache-sized
# pieces, and fresh memory costs page faults.  Chunk buffers are reused per thread.
_CHUNK_BYTES = 1 << 20
_local = threading.local()


def _buffer(name: str, size: int, dtype) -> np.ndarray:
    """A reusable flat scratch array (per thread, per name and dtype) of at least ``size``."""
    store = _local.__dict__.setdefault("buffers", {})
    key = (name, np.dtype(dtype).str)
    buf = store.get(key)
    if buf is None or buf.size < size:
        buf = np.empty(max(size, 1), dtype=dtype)
        store[key] = buf
    return buf[:size]


def _chunks(n: int, per_image: int, itemsize: int) -> list[tuple[int, int]]:
    """(first image, count) of each chunk of the batch."""
    step = max(1, min(n, _CHUNK_BYTES // max(1, per_image * itemsize)))
    return [(s, min(n, s + step) - s) for s in range(0, n, step)]


# ------------------------------------------------------------------ threads
# Large convolutions split their chunks between worker threads, each running serial (nogil)
# kernels and single-threaded BLAS.  Measured on 2 cores this beats both alternatives: prange
# gathers between multi-threaded BLAS calls (OpenMP and OpenBLAS workers spin against each other)
# and serial gathers with multi-threaded BLAS (the gathers then use one core).
_THREADED_MIN_FLOPS = 20_000_000
_executor: ThreadPoolExecutor | None = None
_controller = None


def _workers(n_chunks: int, flops: int) -> int:
    if n_chunks < 2 or flops < _THREADED_MIN_FLOPS:
        return 1
    return max(1, min(num_threads(), n_chunks))


def _run_split(task, chunks: list[tuple[int, int]], workers: int) -> list:
    """Run ``task(list_of_chunks)`` on ``workers`` threads (chunks dealt round-robin); return the results."""
    global _executor
    if workers <= 1:
        return [task(chunks)]
    shares = [chunks[i::workers] for i in range(workers)]
    if _executor is None or _executor._max_workers < workers:
        _executor = ThreadPoolExecutor(workers, thread_name_prefix="autograd-lab-conv")
    with _single_threaded_blas():
        futures = [_executor.submit(task, share) for share in shares[1:]]
        results = [task(shares[0])]
        results += [f.result() for f in futures]
    return results


@contextmanager
def _single_threaded_blas():
    """Limit BLAS to one thread while our own threads run (if threadpoolctl is installed)."""
    global _controller
    try:
        if _controller is None:
            from threadpoolctl import ThreadpoolController
            _controller = ThreadpoolController()
        limiter = _controller.limit(limits=1, user_api="blas")
    except Exception:  # threadpoolctl missing or unable: run with BLAS's own threads
        yield
        return
    with limiter:
        yield


# ------------------------------------------------------------------ public functions
def im2col(x: np.ndarray, kernel: tuple[int, int], stride=1, padding=0) -> np.ndarray:
    """Columns (C*kh*kw, N*H_out*W_out) of the patches of x (N, C, H, W)."""
    x = _float_array(x, "input")
    kh, kw = _pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = _pair2(stride, "stride"), _pair2(padding, "padding")
    if x.ndim != 4:
        raise ValueError(f"input must be 4-d (N, C, H, W), got shape {x.shape}")
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or ph < 0 or pw < 0:
        raise ValueError(f"kernel and stride must be >= 1 and padding >= 0, got kernel {kernel}, "
                         f"stride {stride}, padding {padding}")
    ho, wo = out_size(x.shape[2], kh, sh, ph), out_size(x.shape[3], kw, sw, pw)
    if ho < 1 or wo < 1:
        raise ValueError(f"kernel {kh}x{kw} with padding {padding} does not fit input of size "
                         f"{x.shape[2]}x{x.shape[3]}")
    cols = np.empty((x.shape[1] * kh * kw, x.shape[0] * ho * wo), dtype=x.dtype)
    _pick(_IM2COL, cols.size)(x, kh, kw, sh, sw, ph, pw, ho, wo, cols)
    return cols


def col2im(dcols: np.ndarray, x_shape: tuple[int, int, int, int], kernel: tuple[int, int],
           stride=1, padding=0) -> np.ndarray:
    """Adjoint of im2col: sum the column entries back into an array of x_shape."""
    dcols = _float_array(dcols, "dcols")
    kh, kw = _pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = _pair2(stride, "stride"), _pair2(padding, "padding")
    x_shape = tuple(int(s) for s in x_shape)
    if len(x_shape) != 4 or min(x_shape) < 0:
        raise ValueError(f"x_shape must be 4 sizes (N, C, H, W) >= 0, got {x_shape}")
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or ph < 0 or pw < 0:
        raise ValueError(f"kernel and stride must be >= 1 and padding >= 0, got kernel {kernel}, "
                         f"stride {stride}, padding {padding}")
    n, c, h, w = x_shape
    ho, wo = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    expected = (c * kh * kw, n * max(ho, 0) * max(wo, 0))
    if ho < 1 or wo < 1 or dcols.shape != expected:
        # the kernel reads every (row, column) these sizes imply: a mismatch reads out of bounds
        raise ValueError(f"dcols must have the shape im2col gives for x_shape {x_shape}, kernel "
                         f"{(kh, kw)}, stride {(sh, sw)}, padding {(ph, pw)}: {expected}, got {dcols.shape}")
    dx = np.empty(x_shape, dtype=dcols.dtype)
    _pick(_COL2IM, dcols.size)(np.ascontiguousarray(dcols), kh, kw, sh, sw, ph, pw, ho, wo, dx)
    return dx


def conv2d_fwd(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
               stride=1, padding=0) -> np.ndarray:
    """conv2d(x, weight) + bias, NCHW, as PyTorch defines it (cross-correlation)."""
    x, weight, (sh, sw), (ph, pw), (ho, wo) = _check_conv(x, weight, stride, padding)
    n = x.shape[0]
    co, _, kh, kw = weight.shape
    b = np.zeros(co, dtype=x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    if b.shape != (co,):
        raise ValueError(f"bias must have shape ({co},), got {b.shape}")
    w2 = weight.reshape(co, -1)
    k, p = w2.shape[1], ho * wo
    y = np.empty((n, co, ho, wo), dtype=x.dtype)
    chunks = _chunks(n, k * p, x.itemsize)

    def task(share):
        for s, m in share:
            cols = _buffer("cols", k * m * p, x.dtype).reshape(k, m * p)
            _IM2COL[0](x[s:s + m], kh, kw, sh, sw, ph, pw, ho, wo, cols)
            y2 = _buffer("y2", co * m * p, x.dtype).reshape(co, m * p)
            np.matmul(w2, cols, out=y2)
            _TO_NCHW[0](y2, b, y[s:s + m].reshape(m, co, p))

    _run_split(task, chunks, _workers(len(chunks), 2 * n * co * k * p))
    return y


def conv2d_bwd(grad: np.ndarray, x: np.ndarray, weight: np.ndarray, stride=1, padding=0,
               need_input_grad: bool = True) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(dx, dW, db) of conv2d given the output gradient, the input and the weight.

    The columns are rebuilt chunk by chunk from x rather than kept from the forward pass: that
    costs one more gather but keeps memory at one chunk per thread.
    """
    x, weight, (sh, sw), (ph, pw), (ho, wo) = _check_conv(x, weight, stride, padding)
    g = _float_array(grad, "grad").astype(x.dtype, copy=False)
    n = x.shape[0]
    co, _, kh, kw = weight.shape
    if g.shape != (n, co, ho, wo):
        raise ValueError(f"grad must have the output's shape {(n, co, ho, wo)}, got {g.shape}")
    w2 = weight.reshape(co, -1)
    w2t = w2.T
    k, p = w2.shape[1], ho * wo
    dx = np.empty(x.shape, dtype=x.dtype) if need_input_grad else None
    chunks = _chunks(n, k * p, x.itemsize)

    def task(share):
        dw = np.zeros((co, k), dtype=x.dtype)
        db = np.zeros(co, dtype=x.dtype)
        dwc = np.empty((co, k), dtype=x.dtype)
        dbc = np.empty(co, dtype=x.dtype)
        for s, m in share:
            g2 = _buffer("g2", co * m * p, x.dtype).reshape(co, m * p)
            _FROM_NCHW[0](g[s:s + m].reshape(m, co, p), g2, dbc)
            db += dbc
            cols = _buffer("cols", k * m * p, x.dtype).reshape(k, m * p)
            _IM2COL[0](x[s:s + m], kh, kw, sh, sw, ph, pw, ho, wo, cols)
            np.matmul(g2, cols.T, out=dwc)
            dw += dwc
            if dx is not None:
                np.matmul(w2t, g2, out=cols)  # cols is free again: reuse it for d(cols)
                _COL2IM[0](cols, kh, kw, sh, sw, ph, pw, ho, wo, dx[s:s + m])
        return dw, db

    parts = _run_split(task, chunks, _workers(len(chunks), 6 * n * co * k * p))
    dw = parts[0][0]
    db = parts[0][1]
    for dwi, dbi in parts[1:]:
        dw += dwi
        db += dbi
    return dx, dw.reshape(weight.shape), db


# ------------------------------------------------------------------ numpy references
def im2col_ref(x: np.ndarray, kernel: tuple[int, int], stride=1, padding=0) -> np.ndarray:
    """Reference for im2col (sliding_window_view on the padded input)."""
    kh, kw = _pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = _pair2(stride, "stride"), _pair2(padding, "padding")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    n, c, ho, wo = win.shape[:4]
    return win.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * ho * wo)


def col2im_ref(dcols: np.ndarray, x_shape, kernel, stride=1, padding=0) -> np.ndarray:
    """Reference for col2im (np.add.at into the padded input)."""
    kh, kw = _pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = _pair2(stride, "stride"), _pair2(padding, "padding")
    n, c, h, w = x_shape
    ho, wo = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    dxp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=dcols.dtype)
    d = dcols.reshape(c, kh, kw, n, ho, wo)
    for di in range(kh):
        for dj in range(kw):
            dxp[:, :, di:di + sh * ho:sh, dj:dj + sw * wo:sw] += d[:, di, dj].transpose(1, 0, 2, 3)
    return dxp[:, :, ph:ph + h, pw:pw + w]


def conv2d_fwd_ref(x, weight, bias=None, stride=1, padding=0) -> np.ndarray:
    """Reference for conv2d_fwd (einsum over the sliding windows)."""
    kh, kw = weight.shape[2:]
    (sh, sw), (ph, pw) = _pair2(stride, "stride"), _pair2(padding, "padding")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    y = np.einsum("ncijkl,ockl->noij", win, weight)
    return y if bias is None else y + bias[None, :, None, None]


def conv2d_bwd_ref(grad, x, weight, stride=1, padding=0):
    """Reference for conv2d_bwd: (dx, dW, db) by einsum and a scatter."""
    kh, kw = weight.shape[2:]
    (sh, sw), (ph, pw) = _pair2(stride, "stride"), _pair2(padding, "padding")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    dw = np.einsum("ncijkl,noij->ockl", win, grad)
    db = grad.sum(axis=(0, 2, 3))
    dwin = np.einsum("noij,ockl->ncijkl", grad, weight)
    n, c, ho, wo = dwin.shape[:4]
    dcols = dwin.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * ho * wo)
    return col2im_ref(dcols, x.shape, (kh, kw), stride, padding), dw, db
