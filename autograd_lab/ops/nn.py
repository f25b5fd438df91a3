"""Neural-network operations: ``Linear`` and ``Dropout`` here, and the one import point for the
kernel-backed activations, losses, convolution and pooling defined beside this module."""
from __future__ import annotations

import numpy as np

from .. import kernels as K
from ..function import Function
from ..grad_mode import is_grad_enabled
from ..kernels.blas import serial_blas
from ._util import wrap
from .activation import FLOATS, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh  # noqa: F401
from .conv import Conv2d, MaxPool2d  # noqa: F401
from .loss import CrossEntropy, MSELoss  # noqa: F401


class Linear(Function):
    """y = x @ W.T + b;  grad_x = g @ W,  grad_W = g.T @ x,  grad_b = g summed over rows"""

    @staticmethod
    def forward(ctx, x, weight, bias):
        need = ctx.needs_input_grad  # (empty when nothing is recorded)
        if need:  # keep what the gradients read, as PyTorch does: W for x's, x for W's
            ctx.save_for_backward(x if need[1] else None, weight if need[0] else None)
        ctx.has_bias = bias is not None
        y = linear_arrays(x.data.reshape(-1, x.shape[-1]), weight.data, None if bias is None else bias.data)
        if x.data.ndim != 2:  # (a 2-D input keeps y as it is: a new array, not a view)
            y = y.reshape(x.shape[:-1] + (weight.shape[0],))
        return wrap(y)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors  # x if W needs a gradient, W if x does
        need_x, need_w, need_b = ctx.needs_input_grad
        if is_grad_enabled():  # differentiable path (create_graph=True)
            g2 = grad.reshape((-1, grad.shape[-1]))
            gx = (grad @ weight) if need_x else None
            gw = (g2.T @ x.reshape((-1, x.shape[-1]))) if need_w else None
            gb = g2.sum(axis=0) if need_b and ctx.has_bias else None
            return gx, gw, gb
        return linear_grads_arrays(grad.data, None if x is None else x.data, None if weight is None else weight.data,
                             need_x, need_w, need_b and ctx.has_bias)


def linear_arrays(x2, w, b):
    """x2 @ w.T (+ b) on arrays, x2 of shape (rows, in)."""
    with serial_blas(2 * x2.size * w.shape[0]):  # small products: one BLAS thread
        y = x2 @ w.T
    if b is not None:
        np.add(y, b, out=y, casting="unsafe")
    return y


def linear_grads_arrays(g, x, w, need_x, need_w, need_b):
    """Linear's gradients on arrays (x is read only for W's gradient, w only for x's)."""
    g2 = g.reshape(-1, g.shape[-1])
    gx = gw = gb = None
    if need_x or need_w:
        with serial_blas(2 * g2.size * (w if need_x else x).shape[-1]):
            gx = (g @ w) if need_x else None
            gw = (g2.T @ x.reshape(-1, x.shape[-1])) if need_w else None
    if need_b:
        gb = K.sum_rows(g2, parallel=False) if g2.dtype in FLOATS else g2.sum(axis=0)
    return gx, gw, gb


class Dropout(Function):
    """y = x * mask / (1 - p), mask_i ~ Bernoulli(1 - p);  grad_x = g * mask / (1 - p)"""

    @staticmethod
    def forward(ctx, x, p, rng):
        keep = rng.random(x.shape) >= p
        scale = np.asarray(1.0 / (1.0 - p) if p < 1 else 0.0, dtype=x.dtype)
        mask = keep * scale
        ctx.mask = wrap(mask.astype(x.dtype, copy=False))
        return wrap(x.data * ctx.mask.data)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.mask, None, None
