"""conv2d (NCHW) forward and backward by im2col / col2im around one BLAS matmul each.

Layout: the columns matrix has shape (C_in*kh*kw, N*H_out*W_out), so that

    forward   y2   = W2 @ cols             (C_out, N*P)   then y = y2 as NCHW + bias
    backward  dW2  = g2 @ cols.T           (C_out, K)
              dcol = W2.T @ g2             (K, N*P)       then dx = col2im(dcol)

with W2 = W.reshape(C_out, K) and g2 the output gradient as (C_out, N*P).  Every GEMM is BLAS
(numpy ``@``); numba does the gathers and scatters.  Direct convolution loops were measured
slower than this at both benchmark sizes (see benchmarks/RESULTS.md), so there is no direct path.

Within a chunk of the batch, im2col and col2im are gathers through per-shape index tables (long
loops instead of a few elements per row on small maps); the forward's columns can be kept for the
backward (``keep_cols``); small GEMMs run with one BLAS thread (``blas.serial_blas``).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._jit import THRESHOLDS, jit_pair, num_threads, pick, prange
from .activation import float_array
from .blas import single_threaded_blas, serial_blas


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
    """out[b, co, q] = y2[co, b*P + q] + bias[co]  (out is the NCHW output viewed as (N, C, P)).

    The inner loop runs over two 1-d row slices: LLVM vectorises it, which it did not do with
    the 2-d index arithmetic (on the digits CNN's maps: 34 -> 7 us and 29 -> 8 us per call)."""
    n, co, p = out.shape
    for b in prange(n):
        for o in range(co):
            src = y2[o, b * p:(b + 1) * p]
            dst = out[b, o]
            bo = bias[o]
            for q in range(p):
                dst[q] = src[q] + bo


def _from_nchw_sum_k(g, g2, db):
    """g2[co, b*P + q] = g[b, co, q] and db[co] = g[:, co].sum(), one channel per iteration.

    The sum runs in float64 whatever the dtype: without the JIT it is one running sum over
    N*P terms, and a float32 one drifts past 1e-4 on a (64, 1, 8, 8) gradient."""
    n, co, p = g.shape
    for o in prange(co):
        s = np.float64(0.0)
        for b in range(n):
            base = b * p
            for q in range(p):
                v = g[b, o, q]
                g2[o, base + q] = v
                s += v
        db[o] = s


# ---- im2col and col2im as gathers through index tables (see "tables" below)
# The table entries are read as unsigned: numba then skips the test for a negative index on every
# read, which made these gathers a third slower (the digits CNN's col2im: 64 -> 43 us per call).
# The tables are built by _tables and hold indices in [0, len(src)) only.
def _gather_k(src, idx, out):
    """out[i] = src[idx[i]] (flat arrays)."""
    for i in prange(idx.size):
        out[i] = src[np.uint32(idx[i])]


def _gather_sum_k(src, idx, out):
    """out[j] = sum over t of src[idx[j, t]], the taps added in table order."""
    n, taps = idx.shape
    for j in prange(n):
        s = src[np.uint32(idx[j, 0])]
        for t in range(1, taps):
            s += src[np.uint32(idx[j, t])]
        out[j] = s


def _gather_sum9_k(src, idx, out):
    """_gather_sum_k unrolled for 9 taps (a 3x3 kernel with stride 1): 2x faster."""
    for j in prange(idx.shape[0]):
        r = idx[j]
        out[j] = (src[np.uint32(r[0])] + src[np.uint32(r[1])] + src[np.uint32(r[2])]
                  + src[np.uint32(r[3])] + src[np.uint32(r[4])] + src[np.uint32(r[5])]
                  + src[np.uint32(r[6])] + src[np.uint32(r[7])] + src[np.uint32(r[8])])


_IM2COL = jit_pair(_im2col_k)
_COL2IM = jit_pair(_col2im_k)
_TO_NCHW = jit_pair(_to_nchw_bias_k)
_FROM_NCHW = jit_pair(_from_nchw_sum_k, reassoc=True)
_GATHER = jit_pair(_gather_k)
_GATHER_SUM = jit_pair(_gather_sum_k)
_GATHER_SUM9 = jit_pair(_gather_sum9_k)

# Standalone im2col/col2im calls go parallel from this size on.  Inside conv2d_fwd/bwd the
# kernels run serially in worker threads instead (see "threads" below): prange gathers that
# alternate with multi-threaded BLAS calls were measured up to 80x slower on 2 busy cores.
_CONV_MIN_SIZE = THRESHOLDS["conv"]  # its source: _jit.THRESHOLDS


def _pick(pair, size: int):
    return pick(pair, size, _CONV_MIN_SIZE)


def pair2(v, name: str) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    t = tuple(int(a) for a in v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return t


def _check_conv(x: np.ndarray, weight: np.ndarray, stride, padding):
    x = float_array(x, "input")
    weight = float_array(weight, "weight").astype(x.dtype, copy=False)
    if x.ndim != 4 or weight.ndim != 4 or weight.shape[1] != x.shape[1]:
        raise ValueError(f"expected input (N, C_in, H, W) and weight (C_out, C_in, kh, kw) with the "
                         f"same C_in, got input {x.shape} and weight {weight.shape}")
    sh, sw = pair2(stride, "stride")
    ph, pw = pair2(padding, "padding")
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


# ------------------------------------------------------------------ tables
# On small images the loops of _im2col_k/_col2im_k run a few elements at a time (4 on the digits
# CNN's 4x4 maps) and cost ~15 ns per output row.  For a chunk of the batch, one index table per
# shape says where each column entry comes from: im2col is then one long gather from x (with a
# zero slot at the end for the padding) and col2im a gather-sum of the kh*kw taps of each input
# element from d(cols) (with a zero slot for the missing taps).  Measured on the CNN's second
# conv (32x16x4x4, 3x3, pad 1): im2col 271 -> 71 us, col2im 266 -> 62 us; on its first (32x1x8x8)
# im2col 48 -> 19 us.  The sums keep the loop kernels' order, so the results are identical.
# Tables are built once per shape with numpy and kept (a few, small: at most _TABLE_MAX entries).
_TABLE_MAX = 1 << 20
_TABLE_CACHE_SIZE = 16
_tables_cache: dict = {}


def _tables(m: int, c: int, h: int, w: int, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int):
    """(im2col table (K*m*P,) into x.ravel() + [0], col2im table (m*c*h*w, taps) into
    dcols.ravel() + [0]), or None when the table would be larger than _TABLE_MAX entries."""
    key = (m, c, h, w, kh, kw, sh, sw, ph, pw)
    found = _tables_cache.get(key)
    if found is not None or key in _tables_cache:
        return found
    ho, wo = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    nx, size = m * c * h * w, c * kh * kw * m * ho * wo
    result = None
    if size <= _TABLE_MAX:
        index = np.arange(nx, dtype=np.int64).reshape(m, c, h, w)
        padded = np.pad(index, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=nx)
        fwd = im2col_ref(padded, (kh, kw), (sh, sw), 0).reshape(-1)
        order = np.argsort(fwd, kind="stable")  # column positions grouped by input element, in order
        counts = np.bincount(fwd, minlength=nx + 1)[:nx]
        taps = max(1, int(counts.max()) if nx else 1)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        valid = order[:int(counts.sum())]  # the entries of the zero slot sort last
        element = fwd[valid]
        bwd = np.full((nx, taps), size, dtype=np.int32)
        bwd[element, np.arange(valid.size) - starts[element]] = valid
        result = (fwd.astype(np.int32), bwd)
    if len(_tables_cache) >= _TABLE_CACHE_SIZE:
        _tables_cache.pop(next(iter(_tables_cache)))
    _tables_cache[key] = result
    return result


def _im2col_chunk(x: np.ndarray, shape: tuple, cols: np.ndarray, tables) -> None:
    """cols = im2col of the chunk x (C-contiguous), through the tables when there are some."""
    if tables is None:
        _IM2COL[0](x, *shape, cols)
        return
    src = _buffer("xz", x.size + 1, x.dtype)
    src[:-1] = x.reshape(-1)
    src[-1] = 0
    _GATHER[0](src, tables[0], cols.reshape(-1))


def _col2im_chunk(dz: np.ndarray, shape: tuple, dx: np.ndarray, tables) -> None:
    """dx = col2im of d(cols), given as the flat dz whose last element is a zero slot."""
    kh, kw, sh, sw, ph, pw, ho, wo = shape
    if tables is None:
        _COL2IM[0](dz[:-1].reshape(-1, dx.shape[0] * ho * wo), *shape, dx)
        return
    bwd = tables[1]
    (_GATHER_SUM9 if bwd.shape[1] == 9 else _GATHER_SUM)[0](dz, bwd, dx.reshape(-1))


# ------------------------------------------------------------------ threads
# Large convolutions split their chunks between worker threads, each running serial (nogil)
# kernels and single-threaded BLAS.  Measured on 2 cores this beats both alternatives: prange
# gathers between multi-threaded BLAS calls (OpenMP and OpenBLAS workers spin against each other)
# and serial gathers with multi-threaded BLAS (the gathers then use one core).
_THREADED_MIN_FLOPS = 20_000_000
_executor: ThreadPoolExecutor | None = None


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
    with single_threaded_blas():
        futures = [_executor.submit(task, share) for share in shares[1:]]
        results = [task(shares[0])]
        results += [f.result() for f in futures]
    return results


# ------------------------------------------------------------------ public functions
def im2col(x: np.ndarray, kernel: tuple[int, int], stride=1, padding=0) -> np.ndarray:
    """Columns (C*kh*kw, N*H_out*W_out) of the patches of x (N, C, H, W)."""
    x = float_array(x, "input")
    kh, kw = pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = pair2(stride, "stride"), pair2(padding, "padding")
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
    dcols = float_array(dcols, "dcols")
    kh, kw = pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = pair2(stride, "stride"), pair2(padding, "padding")
    x_shape = tuple(int(s) for s in x_shape)  # type: ignore[assignment]  # checked next
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


def _run(task, chunks: list[tuple[int, int]], flops: int, gemm_flops: int) -> list:
    """``_run_split`` over the workers ``flops`` is worth; alone, BLAS runs serially for small GEMMs."""
    workers = _workers(len(chunks), flops)
    if workers > 1:
        return _run_split(task, chunks, workers)
    with serial_blas(gemm_flops):
        return [task(chunks)]


def conv2d_fwd(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
               stride=1, padding=0, keep_cols: bool = False):
    """conv2d(x, weight) + bias, NCHW, as PyTorch defines it (cross-correlation).

    ``keep_cols=True`` returns ``(y, cols)``: the im2col columns, when the batch was one chunk
    (else None), for ``conv2d_bwd(..., cols=cols)`` to reuse instead of gathering them again."""
    x, weight, (sh, sw), (ph, pw), (ho, wo) = _check_conv(x, weight, stride, padding)
    x = np.ascontiguousarray(x)
    n, c, h, w = x.shape
    co, _, kh, kw = weight.shape
    b = np.zeros(co, dtype=x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    if b.shape != (co,):
        raise ValueError(f"bias must have shape ({co},), got {b.shape}")
    w2 = weight.reshape(co, -1)
    k, p = w2.shape[1], ho * wo
    shape = (kh, kw, sh, sw, ph, pw, ho, wo)
    y = np.empty((n, co, ho, wo), dtype=x.dtype)
    chunks = _chunks(n, k * p, x.itemsize)
    kept = np.empty((k, n * p), dtype=x.dtype) if keep_cols and len(chunks) == 1 else None

    def task(share):
        for s, m in share:
            cols = kept if kept is not None else _buffer("cols", k * m * p, x.dtype).reshape(k, m * p)
            _im2col_chunk(x[s:s + m], shape, cols, _tables(m, c, h, w, kh, kw, sh, sw, ph, pw))
            y2 = _buffer("y2", co * m * p, x.dtype).reshape(co, m * p)
            np.matmul(w2, cols, out=y2)
            _TO_NCHW[0](y2, b, y[s:s + m].reshape(m, co, p))

    _run(task, chunks, 2 * n * co * k * p, 2 * co * k * chunks[0][1] * p if chunks else 0)
    return (y, kept) if keep_cols else y


def conv2d_bwd(grad: np.ndarray, x: np.ndarray, weight: np.ndarray, stride=1, padding=0,
               need_input_grad: bool = True, cols: np.ndarray | None = None
               ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(dx, dW, db) of conv2d given the output gradient, the input and the weight.

    ``cols``: the columns ``conv2d_fwd(..., keep_cols=True)`` kept (read, never written).
    Without them the columns are rebuilt chunk by chunk from x: one more gather, but memory
    stays at one chunk per thread.
    """
    x, weight, (sh, sw), (ph, pw), (ho, wo) = _check_conv(x, weight, stride, padding)
    x = np.ascontiguousarray(x)
    g = float_array(grad, "grad").astype(x.dtype, copy=False)
    n, c, h, w = x.shape
    co, _, kh, kw = weight.shape
    if g.shape != (n, co, ho, wo):
        raise ValueError(f"grad must have the output's shape {(n, co, ho, wo)}, got {g.shape}")
    w2 = weight.reshape(co, -1)
    w2t = w2.T
    k, p = w2.shape[1], ho * wo
    shape = (kh, kw, sh, sw, ph, pw, ho, wo)
    dx = np.empty(x.shape, dtype=x.dtype) if need_input_grad else None
    chunks = _chunks(n, k * p, x.itemsize)
    if cols is not None and (len(chunks) != 1 or cols.shape != (k, n * p) or cols.dtype != x.dtype):
        cols = None  # not the columns of this call: rebuild them

    def task(share):
        dw = np.zeros((co, k), dtype=x.dtype)
        db = np.zeros(co, dtype=x.dtype)
        dwc = np.empty((co, k), dtype=x.dtype)
        dbc = np.empty(co, dtype=x.dtype)
        for s, m in share:
            tables = _tables(m, c, h, w, kh, kw, sh, sw, ph, pw)
            g2 = _buffer("g2", co * m * p, x.dtype).reshape(co, m * p)
            _FROM_NCHW[0](np.ascontiguousarray(g[s:s + m]).reshape(m, co, p), g2, dbc)
            db += dbc
            cm = cols
            if cm is None:
                cm = _buffer("cols", k * m * p, x.dtype).reshape(k, m * p)
                _im2col_chunk(x[s:s + m], shape, cm, tables)
            np.matmul(g2, cm.T, out=dwc)
            dw += dwc
            if dx is not None:
                dz = _buffer("dcols", k * m * p + 1, x.dtype)
                np.matmul(w2t, g2, out=dz[:-1].reshape(k, m * p))
                dz[-1] = 0
                _col2im_chunk(dz, shape, dx[s:s + m], tables)
        return dw, db

    parts = _run(task, chunks, 6 * n * co * k * p, 2 * co * k * chunks[0][1] * p if chunks else 0)
    dw = parts[0][0]
    db = parts[0][1]
    for dwi, dbi in parts[1:]:
        dw += dwi
        db += dbi
    return dx, dw.reshape(weight.shape), db


# ------------------------------------------------------------------ numpy references
def im2col_ref(x: np.ndarray, kernel: tuple[int, int], stride=1, padding=0) -> np.ndarray:
    """Reference for im2col (sliding_window_view on the padded input)."""
    kh, kw = pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = pair2(stride, "stride"), pair2(padding, "padding")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    n, c, ho, wo = win.shape[:4]
    return win.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * ho * wo)


def col2im_ref(dcols: np.ndarray, x_shape, kernel, stride=1, padding=0) -> np.ndarray:
    """Reference for col2im (np.add.at into the padded input)."""
    kh, kw = pair2(kernel, "kernel")
    (sh, sw), (ph, pw) = pair2(stride, "stride"), pair2(padding, "padding")
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
    (sh, sw), (ph, pw) = pair2(stride, "stride"), pair2(padding, "padding")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    y = np.einsum("ncijkl,ockl->noij", win, weight)
    return y if bias is None else y + bias[None, :, None, None]


def conv2d_bwd_ref(grad, x, weight, stride=1, padding=0):
    """Reference for conv2d_bwd: (dx, dW, db) by einsum and a scatter."""
    kh, kw = weight.shape[2:]
    (sh, sw), (ph, pw) = pair2(stride, "stride"), pair2(padding, "padding")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    dw = np.einsum("ncijkl,noij->ockl", win, grad)
    db = grad.sum(axis=(0, 2, 3))
    dwin = np.einsum("noij,ockl->ncijkl", grad, weight)
    n, c, ho, wo = dwin.shape[:4]
    dcols = dwin.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * ho * wo)
    return col2im_ref(dcols, x.shape, (kh, kw), stride, padding), dw, db
