"""Activations on numba kernels: relu, sigmoid, tanh, softmax, log_softmax.

Each backward has two paths.  When grad mode is on inside backward (only under
``create_graph=True``) it is written with Variable operations, so second derivatives work; when
it is off (an ordinary backward) it calls the fused kernel on the raw arrays.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Function
from ..grad_mode import is_grad_enabled
from ..variable import Variable
from ._util import normalize_axis, variable_arg, wrap

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # dtypes: `in` then matches by identity


class _LazyKernels:
    """``autograd_lab.kernels``, imported on first use: the core ops (``x.relu()``) load numba
    only when an activation actually runs, so ``import autograd_lab`` stays numpy-only."""

    def __getattr__(self, name: str) -> Any:  # only called for names not yet looked up
        from .. import kernels

        value = getattr(kernels, name)
        setattr(self, name, value)  # kept: the next K.name is a plain attribute read (the import
        return value                # statement above costs about 1.5 us on every call)


K = _LazyKernels()


def _is_float(a: np.ndarray) -> bool:
    return a.dtype in FLOATS


def float_data(x: Variable) -> np.ndarray:
    """x's data, as float64 unless it is float32 or float64 already."""
    return x.data if _is_float(x.data) else x.data.astype(np.float64)


def _result_dtype(d: np.ndarray) -> np.dtype:
    """sigmoid/tanh keep a floating dtype (float16 stays float16); integers give float64."""
    return d.dtype if d.dtype.kind == "f" else np.dtype(np.float64)


class ReLU(Function):
    """relu(x) = max(x, 0);  d/dx = [x > 0]"""

    @staticmethod
    def forward(ctx, x):
        d = x.data
        out = wrap(K.relu_fwd(d) if _is_float(d) else np.maximum(d, 0))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if is_grad_enabled() or not _is_float(out.data):
            from .elementwise import select

            with np.errstate(invalid="ignore"):
                return select(~(out.data <= 0), grad, out)  # NaN passes, as in PyTorch
        return wrap(K.relu_bwd(out.data, grad.data.astype(out.dtype, copy=False)))


class LeakyReLU(Function):
    """leaky_relu(x) = x for x > 0, slope * x otherwise;  d/dx = 1 or slope. The gradient depends on
    x with a zero derivative (PyTorch's leaky_relu_backward reads x), so under create_graph it
    requires grad and its own derivative is zero, not refused."""

    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        d = x.data
        return wrap(np.where(d > 0, d, d * d.dtype.type(slope)) if d.dtype.kind == "f" else np.where(d > 0, d, d * slope))

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import select

        (x,) = ctx.saved_tensors
        positive = x.data > 0
        return select(positive, grad, x) + select(~positive, grad * ctx.slope, x), None


class Sigmoid(Function):
    """sigmoid(x) = 1 / (1 + exp(-x));  d/dx = y (1 - y)"""

    @staticmethod
    def forward(ctx, x):
        out = K.sigmoid_fwd(float_data(x))
        out = wrap(out.astype(_result_dtype(x.data), copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if is_grad_enabled() or not _is_float(out.data):
            return grad * out * (1 - out)
        return wrap(K.sigmoid_bwd(out.data, grad.data.astype(out.dtype, copy=False)))


class Tanh(Function):
    """tanh(x);  d/dx = 1 - y**2"""

    @staticmethod
    def forward(ctx, x):
        out = K.tanh_fwd(float_data(x))
        out = wrap(out.astype(_result_dtype(x.data), copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if is_grad_enabled() or not _is_float(out.data):
            return grad * (1 - out * out)
        return wrap(K.tanh_bwd(out.data, grad.data.astype(out.dtype, copy=False)))


def relu(x: Variable) -> Variable:
    """max(x, 0), elementwise (numba kernels for float32/float64)."""
    x = variable_arg(x, "relu")
    return ReLU.apply(x)


def sigmoid(x: Variable) -> Variable:
    """1 / (1 + exp(-x)), elementwise, without overflow."""
    x = variable_arg(x, "sigmoid")
    return Sigmoid.apply(x)


def tanh(x: Variable) -> Variable:
    """tanh(x), elementwise."""
    x = variable_arg(x, "tanh")
    return Tanh.apply(x)


# ------------------------------------------------------------------ softmax along any axis
def softmax_axis(x: Variable, dim: Any, axis: Any, name: str) -> int:
    """The one axis ``dim=`` (or its alias ``axis=``) names, as a non-negative int."""
    if dim is None and axis is None:
        raise TypeError(f"{name}() needs dim=, the axis whose entries should sum to one "
                        f"(e.g. {name}(x, dim=-1) for the scores of each row)")
    axes = normalize_axis(axis, dim, x.ndim)
    if axes is None or len(axes) != 1:
        raise TypeError(f"{name}() takes a single dim, got {dim if dim is not None else axis!r}")
    return axes[0]


def _rowwise(kernel, dim: int, *arrays: np.ndarray) -> np.ndarray:
    """Apply a (rows, classes) kernel along axis ``dim`` of arrays of one shape."""
    shape = arrays[0].shape
    if arrays[0].size == 0:  # no rows or no classes: nothing to normalise (PyTorch gives an empty result)
        return np.empty(shape, dtype=arrays[0].dtype)
    if arrays[0].ndim == 0:
        return kernel(*(a.reshape(1, 1) for a in arrays)).reshape(())
    moved = [np.moveaxis(a, dim, -1) for a in arrays]
    mshape = moved[0].shape
    out = kernel(*(np.ascontiguousarray(m).reshape(-1, mshape[-1]) for m in moved))
    out = np.moveaxis(out.reshape(mshape), -1, dim)
    assert out.shape == shape
    return out


class Softmax(Function):
    """softmax(x)_i = exp(x_i) / sum_j exp(x_j) along dim;  grad_x = y * (g - sum(g * y))"""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        out = wrap(_rowwise(K.softmax_fwd, dim, float_data(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if is_grad_enabled():
            return out * (grad - (grad * out).sum(axis=ctx.dim, keepdims=True)), None
        g = grad.data.astype(out.dtype, copy=False)
        return _rowwise(K.softmax_bwd, ctx.dim, out.data, g), None


class LogSoftmax(Function):
    """log_softmax(x) = x - logsumexp(x) along dim;  grad_x = g - exp(y) * sum(g)"""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        out = wrap(_rowwise(K.log_softmax_fwd, dim, float_data(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        if is_grad_enabled():
            return grad - out.exp() * grad.sum(axis=ctx.dim, keepdims=True), None
        g = grad.data.astype(out.dtype, copy=False)
        return _rowwise(K.log_softmax_bwd, ctx.dim, out.data, g), None
