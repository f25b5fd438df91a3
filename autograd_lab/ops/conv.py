"""conv2d and max_pool2d (NCHW) on numba kernels.  Their backward passes are kernels, not
Variable operations, so they are ``once_differentiable``: a second derivative through them raises
a clear error instead of returning a wrong answer."""
from __future__ import annotations

import numpy as np

from .. import kernels as K
from ..function import Function, once_differentiable
from ._util import wrap
from .activation import _FLOATS


class Conv2d(Function):
    """y[n,o] = b[o] + sum_c W[o,c] (cross-correlated with) x[n,c];  backward by im2col + BLAS"""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding):
        dtype = np.result_type(x.dtype, weight.dtype)
        xd = x.data.astype(dtype, copy=False)
        wd = weight.data.astype(dtype, copy=False)
        bd = None if bias is None else bias.data.astype(dtype, copy=False)
        ctx.save_for_backward(x, weight)
        ctx.conf = (stride, padding, dtype)
        return wrap(_conv2d(ctx, xd, wd, bd))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        dtype = ctx.conf[2]
        dx, dw, db = _conv2d_grads(ctx, grad.data.astype(dtype, copy=False), x.data.astype(dtype, copy=False),
                                   weight.data.astype(dtype, copy=False))
        return (None if dx is None else dx.astype(x.dtype, copy=False),
                dw.astype(weight.dtype, copy=False),
                db if ctx.needs_input_grad[2] else None, None, None)

    @staticmethod
    def _lower(x, weight, bias, stride, padding):
        """For al.capture: the class that replays this call on numpy arrays (one float dtype
        throughout, so that nothing is cast), or None."""
        dtype = weight.data.dtype
        one_dtype = x.data.dtype == dtype and (bias is None or bias.data.dtype == dtype)
        return Conv2dOnArrays if dtype in _FLOATS and one_dtype else None


def _conv2d(ctx, x, weight, bias):
    """The convolution on arrays of one dtype. The im2col columns are kept on ``ctx`` for the
    weight's gradient when it will be computed (PyTorch keeps x itself)."""
    stride, padding, _ = ctx.conf
    keep = len(ctx.needs_input_grad) > 1 and bool(ctx.needs_input_grad[1])
    out = K.conv2d_fwd(x, weight, bias, stride, padding, keep_cols=keep)
    y, ctx.cols = out if keep else (out, None)
    return y


def _conv2d_grads(ctx, grad, x, weight):
    """(dx or None, dW, db) on arrays of one dtype."""
    stride, padding, _ = ctx.conf
    return K.conv2d_bwd(grad, x, weight, stride, padding, need_input_grad=ctx.needs_input_grad[0], cols=ctx.cols)


class Conv2dOnArrays:
    """Conv2d's forward and backward on numpy arrays, as a replay (al.capture) calls them."""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding):
        ctx._saved = (x, weight)
        return _conv2d(ctx, x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx._saved
        dx, dw, db = _conv2d_grads(ctx, grad, x, weight)
        return dx, dw, (db if ctx.needs_input_grad[2] else None)


class MaxPool2d(Function):
    """y[n,c,i,j] = max of x[n,c] over the (i, j)-th window;  the gradient goes to the argmax"""

    @staticmethod
    def forward(ctx, x, kernel_size, stride):
        return wrap(MaxPool2dOnArrays.forward(ctx, x.data, kernel_size, stride))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        return MaxPool2dOnArrays.backward(ctx, grad.data) + (None, None)

    @staticmethod
    def _lower(x, kernel_size, stride):
        """For al.capture: the class that replays this call on numpy arrays, or None."""
        return MaxPool2dOnArrays if x.data.dtype in _FLOATS else None


class MaxPool2dOnArrays:
    """MaxPool2d's forward and backward on numpy arrays: MaxPool2d itself calls them too."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride):
        out, ctx.indices = K.max_pool2d_fwd(x, kernel_size, stride)
        ctx.x_shape = x.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        return (K.max_pool2d_bwd(grad, ctx.indices, ctx.x_shape, check=False),)
