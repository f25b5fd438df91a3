"""conv2d and max_pool2d (NCHW) on numba kernels.  Their backward passes are kernels, not
Variable operations, so they are ``once_differentiable``: a second derivative through them raises
a clear error instead of returning a wrong answer."""
from __future__ import annotations

import numpy as np

from .. import kernels as K
from ..function import Function, once_differentiable
from ._util import wrap


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
        return wrap(conv2d_arrays(ctx, xd, wd, bd))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        dtype = ctx.conf[2]
        dx, dw, db = conv2d_grads_arrays(ctx, grad.data.astype(dtype, copy=False), x.data.astype(dtype, copy=False),
                                   weight.data.astype(dtype, copy=False))
        return (None if dx is None else dx.astype(x.dtype, copy=False),
                dw.astype(weight.dtype, copy=False),
                db if ctx.needs_input_grad[2] else None, None, None)


def conv2d_arrays(ctx, x, weight, bias):
    """The convolution on arrays of one dtype. The im2col columns are kept on ``ctx`` for the
    weight's gradient when it will be computed (PyTorch keeps x itself)."""
    stride, padding, _ = ctx.conf
    keep = len(ctx.needs_input_grad) > 1 and bool(ctx.needs_input_grad[1])
    out = K.conv2d_fwd(x, weight, bias, stride, padding, keep_cols=keep)
    y, ctx.cols = out if keep else (out, None)
    return y


def conv2d_grads_arrays(ctx, grad, x, weight):
    """(dx or None, dW, db) on arrays of one dtype."""
    stride, padding, _ = ctx.conf
    return K.conv2d_bwd(grad, x, weight, stride, padding, need_input_grad=ctx.needs_input_grad[0], cols=ctx.cols)


class MaxPool2d(Function):
    """y[n,c,i,j] = max of x[n,c] over the (i, j)-th window;  the gradient goes to the argmax"""

    @staticmethod
    def forward(ctx, x, kernel_size, stride):
        out, ctx.indices = K.max_pool2d_fwd(x.data, kernel_size, stride)
        ctx.x_shape = x.shape
        return wrap(out)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        return K.max_pool2d_bwd(grad.data, ctx.indices, ctx.x_shape, check=False), None, None
