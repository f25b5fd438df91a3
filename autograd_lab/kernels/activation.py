"""Fused elementwise kernels for relu, sigmoid and tanh, and bias + activation for ``linear``.

Each public function takes and returns numpy arrays (float32 or float64), allocates its output
with numpy (or writes into ``out``) and runs a serial or a ``prange`` kernel depending on size.
Every kernel has a plain-numpy ``*_ref`` beside it; the tests check that they agree.

The plain ``tanh_fwd`` is numpy's own ``np.tanh``; ``bias_act_fwd`` computes tanh inside its one
pass (``fast_exp`` away from 0, a Taylor polynomial near 0, a few ulp in both dtypes).  Everything
else is numba.  Backward kernels take the forward *output* ``y``: relu'(x) = [y > 0],
sigmoid' = y(1 - y), tanh' = 1 - y**2, so nothing but ``y`` has to be saved.
"""
from __future__ import annotations

import numpy as np

from ._jit import PARALLEL_MIN_SIZE, THRESHOLDS, big_enough, fast_exp, jit_pair, num_threads, pick, prange

#: activation codes understood by ``bias_act_fwd`` / ``bias_act_bwd``
ACTIVATIONS = {"identity": 0, "relu": 1, "sigmoid": 2, "tanh": 3}


FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # `in` then matches by identity


def float_array(x: np.ndarray, name: str = "x") -> np.ndarray:
    """x as a C-contiguous float32 or float64 array of at least one dimension (x itself when it
    is one already; a 0-d array becomes shape (1,), as ``np.ascontiguousarray`` makes it)."""
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be a float32 or float64 array, got dtype {x.dtype}; "
                        f"convert it first, e.g. {name}.astype(np.float32)")
    return x if x.ndim and x.flags.c_contiguous else np.ascontiguousarray(x)


def _out_like(x: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    if out is None:
        return np.empty_like(x)
    if out.shape != x.shape or out.dtype != x.dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {x.dtype} array of shape {x.shape}, "
                         f"got {out.dtype} {out.shape}")
    return out


# ------------------------------------------------------------------ raw kernels (1-d, contiguous)
def _relu_fwd_k(x, out):
    for i in prange(x.size):
        v = x[i]
        out[i] = 0 if v < 0 else v  # keeps nan, like np.maximum


def _relu_bwd_k(y, g, out):
    for i in prange(y.size):
        out[i] = 0 if y[i] <= 0 else g[i]  # a NaN passes the gradient, as PyTorch's threshold_backward


def _sigmoid_fwd_k(x, out):
    for i in prange(x.size):
        out[i] = 1.0 / (1.0 + fast_exp(-x[i]))


def _sigmoid_bwd_k(y, g, out):
    for i in prange(y.size):
        v = y[i]
        out[i] = g[i] * v * (1 - v)


def _tanh_bwd_k(y, g, out):
    for i in prange(y.size):
        v = y[i]
        out[i] = g[i] * (1 - v * v)


# tanh's Taylor coefficients (x**3 ... x**13); used where (1 - e) / (1 + e) would cancel
_TANH_C = (-1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075)


def _bias_act_fwd_k(z, b, act, out):
    """out = act(z + b), one pass.  Constants take the array's dtype, so float32 stays float32
    and LLVM vectorises every branch, ``fast_exp`` included (numpy's exp and tanh were slower
    than that here, and cost a second pass over the output)."""
    rows, cols = z.shape
    t = out.dtype.type
    zero, one, two, cap = t(0), t(1), t(2), t(40)  # tanh(20) is 1 even in float64
    c3, c5, c7, c9, c11, c13 = (t(_TANH_C[0]), t(_TANH_C[1]), t(_TANH_C[2]), t(_TANH_C[3]),
                                t(_TANH_C[4]), t(_TANH_C[5]))
    # the polynomial's first dropped term, 0.0015 x**15, stays below one ulp for |x| < these
    near = t(0.4) if out.itemsize == 4 else t(0.1)
    near2 = near * near
    for i in prange(rows):
        zr, orow = z[i], out[i]  # row views: plain 0-based loops, which LLVM vectorises
        if act == 1:
            for j in range(cols):
                v = zr[j] + b[j]
                orow[j] = zero if v < zero else v  # keeps nan, like np.maximum
        elif act == 2:
            for j in range(cols):
                orow[j] = one / (one + fast_exp(-(zr[j] + b[j])))
        elif act == 3:
            for j in range(cols):
                v = zr[j] + b[j]
                w = -two * v
                e = fast_exp(cap if w > cap else w)  # nan stays nan
                s = v * v
                p = v + v * s * (c3 + s * (c5 + s * (c7 + s * (c9 + s * (c11 + s * c13)))))
                orow[j] = p if s < near2 else (one - e) / (one + e)
        else:
            for j in range(cols):
                orow[j] = zr[j] + b[j]


def _bias_act_bwd_k(y, g, act, gz, partial):
    """gz = g * act'(y); partial[c] = column sums of gz over the c-th block of rows.

    Rows go in small groups: gz for the group first, then its column sums, read back while the
    group is still in L1/L2, four rows at a time.  (Adding each value into the sums as it is
    stored doubles the stores per element: 10-30% slower.)"""
    rows, cols = y.shape
    one, zero = gz.dtype.type(1), gz.dtype.type(0)
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    group = max(1, min(16, 32768 // max(cols * gz.itemsize, 1)))  # about 32 KiB of gz per group
    for c in prange(nblocks):
        acc = partial[c]
        for j in range(cols):
            acc[j] = zero
        stop = min(rows, (c + 1) * step)
        for i0 in range(min(rows, c * step), stop, group):
            i1 = min(stop, i0 + group)
            for i in range(i0, i1):
                yr, gr, zr = y[i], g[i], gz[i]
                if act == 1:
                    for j in range(cols):
                        zr[j] = zero if yr[j] <= zero else gr[j]  # NaN passes, as in PyTorch
                elif act == 2:
                    for j in range(cols):
                        zr[j] = gr[j] * yr[j] * (one - yr[j])
                elif act == 3:
                    for j in range(cols):
                        zr[j] = gr[j] * (one - yr[j] * yr[j])
                else:
                    for j in range(cols):
                        zr[j] = gr[j]
            i = i0
            while i + 4 <= i1:  # four rows per pass over acc: a quarter of its loads and stores
                z0, z1, z2, z3 = gz[i], gz[i + 1], gz[i + 2], gz[i + 3]
                for j in range(cols):
                    acc[j] += (z0[j] + z1[j]) + (z2[j] + z3[j])
                i += 4
            for k in range(i, i1):
                zr = gz[k]
                for j in range(cols):
                    acc[j] += zr[j]


_RELU_FWD = jit_pair(_relu_fwd_k)
_RELU_BWD = jit_pair(_relu_bwd_k)
_SIGMOID_FWD = jit_pair(_sigmoid_fwd_k)
_SIGMOID_BWD = jit_pair(_sigmoid_bwd_k)
_TANH_BWD = jit_pair(_tanh_bwd_k)
_BIAS_ACT_FWD = jit_pair(_bias_act_fwd_k)
_BIAS_ACT_BWD = jit_pair(_bias_act_bwd_k)


# ------------------------------------------------------------------ public wrappers
def _unary(pair, x, out, min_size=THRESHOLDS["elementwise"]):
    shape = np.shape(x)
    x = float_array(x)
    out = _out_like(x, out)
    pick(pair, x.size, min_size)(x.reshape(-1), out.reshape(-1))
    return out if out.shape == shape else out.reshape(shape)  # a 0-d input gives a 0-d result


def _binary(pair, y, g, out, min_size=THRESHOLDS["elementwise"]):
    shape = np.shape(y)
    y = float_array(y, "y")
    g = float_array(g, "grad")
    if g.shape != y.shape or g.dtype != y.dtype:
        raise ValueError(f"grad must match y: expected {y.dtype} {y.shape}, got {g.dtype} {g.shape}")
    out = _out_like(y, out)
    pick(pair, y.size, min_size)(y.reshape(-1), g.reshape(-1), out.reshape(-1))
    return out if out.shape == shape else out.reshape(shape)


# exp-based kernels do ~10x more work per element than relu, so threads pay off sooner; the
# fused backward's blocks (the derivative, a store, the column sums) likewise. Sizes and their
# measurements: _jit.THRESHOLDS.
_EXP_MIN_SIZE = THRESHOLDS["exp"]
_BWD_MIN_SIZE = THRESHOLDS["bias_act_bwd"]


def relu_fwd(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(x, 0)."""
    return _unary(_RELU_FWD, x, out)


def relu_bwd(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad where y > 0 or y is NaN, else 0, with y = relu(x)."""
    return _binary(_RELU_BWD, y, grad, out)


def sigmoid_fwd(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """1 / (1 + exp(-x))."""
    return _unary(_SIGMOID_FWD, x, out, _EXP_MIN_SIZE)


def sigmoid_bwd(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * y * (1 - y), with y = sigmoid(x)."""
    return _binary(_SIGMOID_BWD, y, grad, out)


def tanh_fwd(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """tanh(x).  This one is numpy's: its SIMD tanh was measured 4x (float64) to 17x (float32)
    faster than a numba loop, which has no vector math library to call."""
    shape = np.shape(x)
    x = float_array(x)
    out = np.tanh(x, out=_out_like(x, out))
    return out if out.shape == shape else out.reshape(shape)


def tanh_bwd(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * (1 - y**2), with y = tanh(x)."""
    return _binary(_TANH_BWD, y, grad, out)


def _act_code(activation: str) -> int:
    try:
        return ACTIVATIONS[activation]
    except KeyError:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}") from None


def bias_act_fwd(z: np.ndarray, bias: np.ndarray, activation: str = "relu",
                 out: np.ndarray | None = None) -> np.ndarray:
    """act(z + bias) for z of shape (rows, cols) and bias of shape (cols,), in one pass."""
    z = float_array(z, "z")
    bias = float_array(bias, "bias").astype(z.dtype, copy=False)
    if z.ndim != 2 or bias.shape != (z.shape[1],):
        raise ValueError(f"expected z of shape (rows, cols) and bias of shape (cols,), "
                         f"got z {z.shape} and bias {bias.shape}")
    out = _out_like(z, out)
    code = _act_code(activation)
    min_size = _EXP_MIN_SIZE if code in (2, 3) else THRESHOLDS["elementwise"]
    pick(_BIAS_ACT_FWD, z.size, min_size)(z, bias, code, out)
    return out


def bias_act_bwd(y: np.ndarray, grad: np.ndarray, activation: str = "relu"
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(grad_z, grad_bias) for y = act(z + bias): grad_z = grad * act'(y), grad_bias = grad_z.sum(0)."""
    y = float_array(y, "y")
    g = float_array(grad, "grad")
    if y.ndim != 2 or g.shape != y.shape or g.dtype != y.dtype:
        raise ValueError(f"expected y and grad of one shape (rows, cols) and dtype, "
                         f"got {y.dtype} {y.shape} and {g.dtype} {g.shape}")
    code = _act_code(activation)
    gz = np.empty_like(y)
    nblocks = num_threads() if y.size >= PARALLEL_MIN_SIZE and y.shape[0] >= 4 else 1
    partial = np.empty((nblocks, y.shape[1]), dtype=y.dtype)
    # as in sum_rows: the blocks fix the numbers; threads run them only where they pay
    _BIAS_ACT_BWD[1 if nblocks > 1 and big_enough(y.size, _BWD_MIN_SIZE) else 0](y, g, code, gz, partial)
    return gz, partial.sum(axis=0) if nblocks > 1 else partial[0]


# ------------------------------------------------------------------ numpy references
def relu_fwd_ref(x: np.ndarray) -> np.ndarray:
    """Reference for relu_fwd."""
    return np.maximum(x, 0)


def relu_bwd_ref(y: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Reference for relu_bwd (selects: an inf gradient stays out where y <= 0; NaN passes)."""
    return np.where(y <= 0, np.zeros((), grad.dtype), grad)


def sigmoid_fwd_ref(x: np.ndarray) -> np.ndarray:
    """Reference for sigmoid_fwd."""
    return 1 / (1 + np.exp(-x))


def sigmoid_bwd_ref(y: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Reference for sigmoid_bwd."""
    return grad * y * (1 - y)


def tanh_fwd_ref(x: np.ndarray) -> np.ndarray:
    """Reference for tanh_fwd."""
    return np.tanh(x)


def tanh_bwd_ref(y: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Reference for tanh_bwd."""
    return grad * (1 - y * y)


def bias_act_fwd_ref(z: np.ndarray, bias: np.ndarray, activation: str = "relu") -> np.ndarray:
    """Reference for bias_act_fwd."""
    v = z + bias
    return {"identity": lambda: v, "relu": lambda: relu_fwd_ref(v),
            "sigmoid": lambda: sigmoid_fwd_ref(v), "tanh": lambda: tanh_fwd_ref(v)}[activation]()


def bias_act_bwd_ref(y: np.ndarray, grad: np.ndarray, activation: str = "relu"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Reference for bias_act_bwd."""
    gz = {"identity": lambda: grad.copy(), "relu": lambda: relu_bwd_ref(y, grad),
          "sigmoid": lambda: sigmoid_bwd_ref(y, grad), "tanh": lambda: tanh_bwd_ref(y, grad)}[activation]()
    return gz, gz.sum(axis=0)
