"""numba kernels, each beside its numpy reference, and the fast operations built on them."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .grad_mode import *  # noqa: F401,F403
__all__ = ['PARALLEL_MIN_SIZE', 'ReLU', 'SoftmaxCrossEntropy', 'SoftmaxRows', 'affine_relu_backward', 'affine_relu_backward_ref', 'affine_relu_forward', 'affine_relu_forward_ref', 'column_sums', 'column_sums_blocked', 'column_sums_ref', 'cross_entropy_rows', 'cross_entropy_rows_ref', 'softmax_cross_entropy', 'softmax_rows', 'softmax_rows_ref']


# --- section: numba ---
import math
import numba
from numba import njit, prange


# --- section: affine_relu_forward ---
@njit(cache=True)
def affine_relu_forward(x, a, b, out):
    """out[i] = max(a * x[i] + b, 0) for every i; returns out."""
    for i in range(x.size):
        v = a * x[i] + b
        out[i] = v if v > 0.0 else 0.0
    return out


# --- section: affine_relu_forward_ref ---
def affine_relu_forward_ref(x, a, b):
    """numpy reference of affine_relu_forward: max(a * x + b, 0), as a new array."""
    return np.maximum(a * x + b, 0.0)


# --- section: affine_relu_backward ---
@njit(cache=True)
def affine_relu_backward(x, a, b, grad_out, grad_x):
    """Backward of y = relu(a * x + b): fills grad_x, returns (grad_a, grad_b)."""
    grad_a = 0.0
    grad_b = 0.0
    for i in range(x.size):
        g = grad_out[i] * (a * x[i] + b > 0.0)     # 0 where z <= 0, without a branch
        grad_x[i] = a * g
        grad_a += g * x[i]
        grad_b += g
    return grad_a, grad_b


# --- section: affine_relu_backward_ref ---
def affine_relu_backward_ref(x, a, b, grad_out):
    """numpy reference of affine_relu_backward: (grad_x, grad_a, grad_b)."""
    gz = grad_out * (a * x + b > 0)
    return a * gz, float((gz * x).sum()), float(gz.sum())


# --- section: softmax_rows ---
@njit(cache=True)
def softmax_rows(x, out):
    """Stable softmax of every row of the 2-d array x, written into out; returns out."""
    rows, cols = x.shape
    for i in range(rows):
        m = x[i, 0]
        for j in range(1, cols):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(cols):
            e = np.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        for j in range(cols):
            out[i, j] /= s
    return out


# --- section: softmax_rows_ref ---
def softmax_rows_ref(x):
    """numpy reference of softmax_rows: the stable softmax of each row."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# --- section: cross_entropy_rows ---
@njit(cache=True)
def cross_entropy_rows(x, targets, grad):
    """Fused softmax + cross-entropy of each row of x (targets: one class index per row).

    Returns the summed loss and writes grad[i] = softmax(x[i]) - onehot(targets[i]).
    """
    rows, cols = x.shape
    total = 0.0
    for i in range(rows):
        m = x[i, 0]
        for j in range(1, cols):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(cols):
            e = math.exp(x[i, j] - m)
            grad[i, j] = e
            s += e
        t = targets[i]
        total += math.log(s) + m - x[i, t]
        for j in range(cols):
            grad[i, j] /= s
        grad[i, t] -= 1.0
    return total


# --- section: cross_entropy_rows_ref ---
def cross_entropy_rows_ref(x, targets):
    """numpy reference of cross_entropy_rows: (summed loss, softmax - onehot)."""
    z = x - x.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(x))
    grad = e / s
    grad[rows, targets] -= 1.0
    return float((np.log(s[:, 0]) - z[rows, targets]).sum()), grad


# --- section: column_sums_blocked ---
@njit(parallel=True, cache=True)
def column_sums_blocked(x, partial):
    """partial[c] = sum of the rows of block c of x (blocks of ceil(rows / nblocks) rows)."""
    rows, cols = x.shape
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in prange(nblocks):
        for j in range(cols):
            partial[c, j] = 0.0
        for i in range(c * step, min(rows, (c + 1) * step)):
            for j in range(cols):
                partial[c, j] += x[i, j]
    return partial


# --- section: column_sums ---
def column_sums_ref(x):
    """numpy reference of the column sums: x.sum(axis=0)."""
    return x.sum(axis=0)


PARALLEL_MIN_SIZE = 60_000
"""Arrays of at least this many elements are summed with one block per thread."""
_column_sums_serial = njit(getattr(column_sums_blocked, "py_func", column_sums_blocked))


def column_sums(x):
    """x.sum(axis=0) of a 2-d array, by column_sums_blocked."""
    x = np.ascontiguousarray(x)
    if x.size >= PARALLEL_MIN_SIZE:
        partial = np.empty((numba.get_num_threads(), x.shape[1]), dtype=x.dtype)
        return column_sums_blocked(x, partial).sum(axis=0)
    return _column_sums_serial(x, np.empty((1, x.shape[1]), dtype=x.dtype))[0]


# --- section: fast ops ---
class SoftmaxRows(Function):
    """softmax of each row of a 2-d x by the kernel softmax_rows; dx = y * (g - sum(g * y))"""

    @staticmethod
    def forward(ctx, x):
        data = np.ascontiguousarray(x.data)
        if data.ndim != 2:
            raise ValueError(f"SoftmaxRows expects a 2-d input (rows of logits), not shape "
                             f"{data.shape}: use chapter 05's Softmax for other shapes.")
        ctx.save_for_backward(x)
        ctx.y = softmax_rows(data, np.empty_like(data))
        return Variable(ctx.y)

    @staticmethod
    def backward(ctx, grad_output):
        if GradMode.enabled:                      # create_graph=True: a recorded formula
            x, = ctx.saved_tensors
            y = x.softmax(axis=1)
            return y * (grad_output - (grad_output * y).sum(axis=1, keepdims=True))
        g, y = grad_output.data, ctx.y
        return Variable(y * (g - (g * y).sum(axis=1, keepdims=True)))


def softmax_cross_entropy(logits, targets):
    """Mean cross-entropy of (batch, classes) logits against class indices (array or Variable)."""
    logits = as_variable(logits)
    t = np.asarray(targets.data if isinstance(targets, Variable) else targets)
    if logits.ndim != 2:
        raise ValueError(f"softmax_cross_entropy expects logits of shape (batch, classes), not "
                         f"{logits.shape}: reshape them to 2-D.")
    if t.shape != (logits.shape[0],):
        raise ValueError(f"targets must hold one class index per row of logits, shape "
                         f"({logits.shape[0]},); got shape {t.shape}.")
    if t.dtype.kind not in "iuf" or (t.dtype.kind == "f" and not np.array_equal(t, np.round(t))):
        raise TypeError(f"targets must be class indices (whole numbers), not {t.dtype} values "
                        "such as probabilities: pass e.g. np.array([3, 0, 1]).")
    t = np.ascontiguousarray(t, dtype=np.int64)
    outside = (t < 0) | (t >= logits.shape[1])
    if outside.any():
        raise IndexError(f"target {t[outside][0]} is out of bounds: the logits have "
                         f"{logits.shape[1]} classes, so targets must lie in "
                         f"0..{logits.shape[1] - 1}.")
    return SoftmaxCrossEntropy.apply(logits, t)


Variable.relu = lambda self: ReLU.apply(self)


# --- section: SoftmaxCrossEntropy ---
class SoftmaxCrossEntropy(Function):
    """loss = mean over the rows of -log softmax(logits)[target], by the fused kernel"""

    @staticmethod
    def forward(ctx, logits, targets):
        x = np.ascontiguousarray(logits.data)
        grad = np.empty_like(x)
        n = x.shape[0]
        total = cross_entropy_rows(x, targets, grad)
        ctx.save_for_backward(logits)
        ctx.targets, ctx.grad = targets, grad / max(n, 1)
        return Variable(np.array(total / n if n else np.nan, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        logits, = ctx.saved_tensors
        if GradMode.enabled:                      # create_graph=True: a recorded formula
            onehot = np.zeros(logits.shape, dtype=logits.dtype)
            onehot[np.arange(len(ctx.targets)), ctx.targets] = 1.0
            n = max(logits.shape[0], 1)
            return (logits.softmax(axis=1) - Variable(onehot)) * (grad_output / n), None
        return Variable(ctx.grad * grad_output.item()), None


# --- section: ReLU ---
class ReLU(Function):
    """relu(x) = max(x, 0) by the fused kernel (a = 1, b = 0); its derivative is 0 at x = 0"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        flat = np.ascontiguousarray(x.data).reshape(-1)
        return Variable(affine_relu_forward(flat, 1.0, 0.0, np.empty_like(flat)).reshape(x.shape))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if GradMode.enabled:                      # create_graph=True: a recorded formula
            return grad_output * Variable(x.data > 0)
        flat = np.ascontiguousarray(x.data).reshape(-1)
        g = np.ascontiguousarray(grad_output.data, dtype=flat.dtype).reshape(-1)
        grad_x = np.empty_like(g)
        affine_relu_backward(flat, 1.0, 0.0, g, grad_x)
        return Variable(grad_x.reshape(x.shape))
