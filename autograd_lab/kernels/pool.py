"""2-d max pooling (NCHW), forward and backward.

The forward pass records, for every output element, the flat index (row * W + col) of the
winning input inside its (image, channel) plane; the backward pass adds each output gradient at
that index.  Each plane is one ``prange`` iteration, so no two iterations write the same element,
even when windows overlap (stride < kernel).  Ties go to the first maximum in row-major order, as
in PyTorch.  A nan in a window wins (propagates), as in PyTorch (which keeps the last nan).
The common 2x2 window has its own unrolled forward kernel.
"""
from __future__ import annotations

import numpy as np

from ._jit import JIT_OPTIONS, THRESHOLDS, jit_pair, njit, pick, prange
from .activation import float_array
from .conv import pair2, out_size


def _plane_nan(x3, bc, kh, kw, sh, sw, out3, idx3):
    """Plane ``bc`` again under the nan rule: a nan in a window wins (the last one), else the
    first maximum.  The kernels below scan with plain ``>`` and call this for a plane that held
    a nan: a nan test inside every comparison made LLVM branch on the data, and the mispredicted
    branches cost more than the comparisons (3.8 ms against 1.0 ms on a (64, 16, 28, 28) input)."""
    w = x3.shape[2]
    for oi in range(out3.shape[1]):
        i0 = oi * sh
        for oj in range(out3.shape[2]):
            j0 = oj * sw
            m = x3[bc, i0, j0]
            at = i0 * w + j0
            for di in range(kh):
                for dj in range(kw):
                    v = x3[bc, i0 + di, j0 + dj]
                    take = (v > m) | (v != v)
                    m = v if take else m
                    at = (i0 + di) * w + j0 + dj if take else at
            out3[bc, oi, oj] = m
            idx3[bc, oi, oj] = at


_PLANE_NAN = njit(**JIT_OPTIONS)(_plane_nan)


def _maxpool_fwd_k(x, kh, kw, sh, sw, out, idx):
    n, c, h, w = x.shape
    ho, wo = out.shape[2], out.shape[3]
    x3 = x.reshape(n * c, h, w)  # planes without a division per plane
    out3 = out.reshape(n * c, ho, wo)
    idx3 = idx.reshape(n * c, ho, wo)
    for bc in prange(n * c):
        nan = False
        for oi in range(ho):
            i0 = oi * sh
            for oj in range(wo):
                j0 = oj * sw
                m = x3[bc, i0, j0]
                at = i0 * w + j0
                for di in range(kh):
                    for dj in range(kw):
                        v = x3[bc, i0 + di, j0 + dj]
                        nan |= v != v
                        take = v > m  # ties keep the first maximum
                        m = v if take else m
                        at = (i0 + di) * w + j0 + dj if take else at
                out3[bc, oi, oj] = m
                idx3[bc, oi, oj] = at
        if nan:
            _PLANE_NAN(x3, bc, kh, kw, sh, sw, out3, idx3)


def _maxpool2x2_fwd_k(x, sh, sw, out, idx):
    """The 2x2 window unrolled (2.8x faster than the general loop nest); a plane with a nan is
    scanned again by ``_plane_nan``."""
    n, c, h, w = x.shape
    ho, wo = out.shape[2], out.shape[3]
    x3 = x.reshape(n * c, h, w)  # planes without a division per plane
    out3 = out.reshape(n * c, ho, wo)
    idx3 = idx.reshape(n * c, ho, wo)
    for bc in prange(n * c):
        nan = False
        for oi in range(ho):
            i0 = oi * sh
            for oj in range(wo):
                j0 = oj * sw
                m = x3[bc, i0, j0]
                v1 = x3[bc, i0, j0 + 1]
                v2 = x3[bc, i0 + 1, j0]
                v3 = x3[bc, i0 + 1, j0 + 1]
                nan |= (m != m) | (v1 != v1) | (v2 != v2) | (v3 != v3)
                at = i0 * w + j0
                take = v1 > m  # ties keep the first maximum
                m = v1 if take else m
                at = at + 1 if take else at
                take = v2 > m
                m = v2 if take else m
                at = (i0 + 1) * w + j0 if take else at
                take = v3 > m
                m = v3 if take else m
                at = (i0 + 1) * w + j0 + 1 if take else at
                out3[bc, oi, oj] = m
                idx3[bc, oi, oj] = at
        if nan:
            _PLANE_NAN(x3, bc, 2, 2, sh, sw, out3, idx3)


def _maxpool_bwd_k(g, idx, dx):
    """Over flat views (all C-contiguous): a view per plane inside the loop cost more than the
    work on the digits CNN's 8x8 and 4x4 planes (43 -> 19 us and 33 -> 9 us per call)."""
    n, c, h, w = dx.shape
    plane = h * w
    q = g.shape[2] * g.shape[3]
    df = dx.reshape(-1)
    gf = g.reshape(-1)
    jf = idx.reshape(-1)
    for bc in prange(n * c):
        base = bc * plane
        for k in range(plane):
            df[base + k] = 0
        for t in range(bc * q, bc * q + q):
            df[base + jf[t]] += gf[t]


_FWD = jit_pair(_maxpool_fwd_k)
_FWD_2X2 = jit_pair(_maxpool2x2_fwd_k)
_BWD = jit_pair(_maxpool_bwd_k)
# Parallel from this many input elements on (the measurements: _jit.THRESHOLDS)
_POOL_MIN_SIZE = THRESHOLDS["pool"]


def max_pool2d_fwd(x: np.ndarray, kernel_size, stride=None) -> tuple[np.ndarray, np.ndarray]:
    """(out, indices): max over kh x kw windows moved by stride (default: kernel_size), no padding."""
    x = float_array(x, "input")
    kh, kw = pair2(kernel_size, "kernel_size")
    sh, sw = (kh, kw) if stride is None else pair2(stride, "stride")
    if x.ndim != 4:
        raise ValueError(f"input must be 4-d (N, C, H, W), got shape {x.shape}")
    if kh < 1 or kw < 1 or sh < 1 or sw < 1:
        raise ValueError(f"kernel_size and stride must be >= 1, got {kernel_size} and {stride}")
    if kh > x.shape[2] or kw > x.shape[3]:
        raise ValueError(f"kernel_size {kh}x{kw} is larger than the input's {x.shape[2]}x{x.shape[3]}")
    ho, wo = out_size(x.shape[2], kh, sh, 0), out_size(x.shape[3], kw, sw, 0)
    out = np.empty(x.shape[:2] + (ho, wo), dtype=x.dtype)
    idx = np.empty(out.shape, dtype=np.int32 if x.shape[2] * x.shape[3] < 2**31 else np.int64)
    if kh == 2 and kw == 2:
        pick(_FWD_2X2, x.size, _POOL_MIN_SIZE)(x, sh, sw, out, idx)
    else:
        pick(_FWD, x.size, _POOL_MIN_SIZE)(x, kh, kw, sh, sw, out, idx)
    return out, idx


def max_pool2d_bwd(grad: np.ndarray, indices: np.ndarray, x_shape: tuple[int, ...],
                   check: bool = True) -> np.ndarray:
    """Gradient w.r.t. the input: each output gradient added at its recorded argmax.

    ``check=False`` skips the range test of ``indices`` (two passes over them): only for indices
    that ``max_pool2d_fwd`` returned for an input of ``x_shape``, as the MaxPool2d op passes."""
    g = float_array(grad, "grad")
    indices = np.asarray(indices)
    x_shape = tuple(int(s) for s in x_shape)
    if indices.shape != g.shape or g.ndim != 4 or len(x_shape) != 4 or min(x_shape) < 0:
        raise ValueError(f"grad {g.shape} and indices {indices.shape} must have one 4-d shape, "
                         f"and x_shape {x_shape} must be 4 sizes >= 0")
    if g.shape[:2] != x_shape[:2]:
        raise ValueError(f"grad {g.shape} and x_shape {x_shape} must agree in (N, C)")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be the integer array max_pool2d_fwd returned, got dtype {indices.dtype}")
    plane = x_shape[2] * x_shape[3]
    if check and indices.size and (indices.min() < 0 or indices.max() >= plane):
        # the kernel writes at these positions: out of range would corrupt memory
        raise ValueError(f"indices must lie in [0, {plane}) (positions in an H*W plane of x_shape "
                         f"{x_shape}), got min {indices.min()} and max {indices.max()}")
    dx = np.empty(x_shape, dtype=g.dtype)
    pick(_BWD, dx.size, _POOL_MIN_SIZE)(np.ascontiguousarray(g), np.ascontiguousarray(indices), dx)
    return dx


def max_pool2d_fwd_ref(x: np.ndarray, kernel_size, stride=None) -> tuple[np.ndarray, np.ndarray]:
    """Reference for max_pool2d_fwd (sliding windows and argmax), with the kernels' nan rule."""
    kh, kw = pair2(kernel_size, "kernel_size")
    sh, sw = (kh, kw) if stride is None else pair2(stride, "stride")
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    n, c, ho, wo = win.shape[:4]
    flat = win.reshape(n, c, ho, wo, kh * kw)
    isnan = np.isnan(flat)  # a nan wins, the last one (as in the kernels and PyTorch)
    last_nan = kh * kw - 1 - np.argmax(isnan[..., ::-1], axis=-1)
    arg = np.where(isnan.any(axis=-1), last_nan, np.argmax(flat, axis=-1))  # else the first maximum
    di, dj = np.divmod(arg, kw)
    rows = np.arange(ho)[:, None] * sh + di
    cols = np.arange(wo)[None, :] * sw + dj
    return np.take_along_axis(flat, arg[..., None], -1)[..., 0], rows * x.shape[3] + cols


def max_pool2d_bwd_ref(grad: np.ndarray, indices: np.ndarray, x_shape) -> np.ndarray:
    """Reference for max_pool2d_bwd (np.add.at)."""
    n, c, h, w = x_shape
    dx = np.zeros((n, c, h * w), dtype=grad.dtype)
    nn_, cc = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
    np.add.at(dx, (nn_[..., None], cc[..., None], indices.reshape(n, c, -1)), grad.reshape(n, c, -1))
    return dx.reshape(x_shape)
