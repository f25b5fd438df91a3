"""Array forms: how ``al.capture`` replays a few Functions on numpy arrays.

A replay may call a Function's own forward and backward on Variables, or, for the Functions
listed in ``FORMS`` and inputs on which plain arrays give exactly the same numbers, an *array
form*: the same arithmetic (the op module's own array helpers) without a Variable around each
value. That is where a captured step saves its time (benchmarks/PROFILE.md, "capture").

The ops know nothing of this: the table lives here, on the capture's side. Each entry maps a
Function to a rule, ``rule(*args)`` → the array form for these arguments, or None. An array
form is a class with ``forward(ctx, *arrays)`` and ``backward(ctx, grad)``; its forward keeps
what its backward reads in ``ctx._saved`` as arrays (a replay also gives it the ``ctx`` that the
capture's own call filled: shapes, constants, ``needs_input_grad``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import kernels as K
from .function import Function
from .ops.conv import Conv2d, MaxPool2d, conv2d_arrays, conv2d_grads_arrays
from .ops.activation import ReLU
from .ops.elementwise import Mul
from .ops.loss import CrossEntropy, cross_entropy_arrays, cross_entropy_grad_arrays
from .ops.nn import Linear, linear_arrays, linear_grads_arrays
from .ops.shape import Reshape
from .primitives import Add, sum_to_array
from .variable import Variable

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # dtypes: `in` then matches by identity


def lowers_exactly(a: Any, b: Any) -> bool:
    """Whether a binary elementwise op on ``a`` and ``b`` gives, on plain arrays, exactly the
    numbers and gradients of its Function: the result is a float array (not a numpy scalar), and
    each operand that needs a gradient has the result's dtype, so that no gradient is cast."""
    data = [x._data if isinstance(x, Variable) else x for x in (a, b)]
    if not all(type(d) in (int, float, np.ndarray) for d in data) or max(np.ndim(d) for d in data) == 0:
        return False
    dtype = np.result_type(*data)
    return dtype.kind == "f" and all(
        x._data.dtype == dtype for x in (a, b) if isinstance(x, Variable) and x._requires_grad)


def _one_float_dtype(x: Variable, weight: Variable, bias: Variable | None) -> bool:
    """Input, weight and bias share one float dtype, so that no gradient is cast."""
    dtype = weight.data.dtype
    return dtype in FLOATS and x.data.dtype == dtype and (bias is None or bias.data.dtype == dtype)


class AddOnArrays:
    @staticmethod
    def forward(ctx, a, b):
        return np.add(a, b)

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (sum_to_array(grad, sa) if need_a else None), (sum_to_array(grad, sb) if need_b else None)


class MulOnArrays:
    """Keeps the operands as Mul does (``ctx._saved``, and ``ctx.consts`` for numbers)."""

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        ctx._saved = (a if need_b else None, b if need_a else None)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx._saved
        consts = ctx.consts  # a number the capture's own call kept there
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        ga = sum_to_array(grad * (consts[1] if b is None else b), sa) if need_a else None
        gb = sum_to_array(grad * (consts[0] if a is None else a), sb) if need_b else None
        return ga, gb


class ReshapeOnArrays:
    """The shapes are the capture's, which the replay's inputs and parameters keep."""

    @staticmethod
    def forward(ctx, x, shape):
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return (grad.reshape(ctx.in_shape),)


class ReLUOnArrays:
    @staticmethod
    def forward(ctx, x):
        out = K.relu_fwd(x)
        ctx._saved = (out,)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx._saved
        return (K.relu_bwd(out, grad.astype(out.dtype, copy=False)),)


class LinearOnArrays:
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx._saved = (x, weight)
        return linear_arrays(x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx._saved
        need_x, need_w, need_b = ctx.needs_input_grad
        return linear_grads_arrays(grad, x, weight, need_x, need_w, need_b and ctx.has_bias)


class Conv2dOnArrays:
    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding):
        ctx._saved = (x, weight)
        return conv2d_arrays(ctx, x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx._saved
        dx, dw, db = conv2d_grads_arrays(ctx, grad, x, weight)
        return dx, dw, (db if ctx.needs_input_grad[2] else None)


class MaxPool2dOnArrays:
    @staticmethod
    def forward(ctx, x, kernel_size, stride):
        out, ctx.indices = K.max_pool2d_fwd(x, kernel_size, stride)
        ctx.x_shape = x.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        return (K.max_pool2d_bwd(grad, ctx.indices, ctx.x_shape, check=False),)


class CrossEntropyOnArrays:
    @staticmethod
    def forward(ctx, x, target, reduction):
        ctx._saved = (x,)
        return cross_entropy_arrays(ctx, x, target, reduction)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx._saved
        return cross_entropy_grad_arrays(ctx, grad, x), None, None


FORMS: dict[type[Function], Callable[..., type | None]] = {
    Add: lambda a, b: AddOnArrays if lowers_exactly(a, b) else None,
    Mul: lambda a, b: MulOnArrays if lowers_exactly(a, b) else None,
    Reshape: lambda x, shape: ReshapeOnArrays if x.data.dtype.kind == "f" else None,
    ReLU: lambda x: ReLUOnArrays if x.data.dtype in FLOATS else None,
    Linear: lambda x, weight, bias: (LinearOnArrays if x.data.ndim == 2 and _one_float_dtype(x, weight, bias)
                                     else None),
    Conv2d: lambda x, weight, bias, stride, padding: (Conv2dOnArrays if _one_float_dtype(x, weight, bias)
                                                      else None),
    MaxPool2d: lambda x, kernel_size, stride: MaxPool2dOnArrays if x.data.dtype in FLOATS else None,
    CrossEntropy: lambda x, target, reduction: CrossEntropyOnArrays if x.data.dtype in FLOATS else None,
}
"""Function → rule(*args) → its array form for these arguments, or None. Exact classes only: a
subclass (with a backward of its own) replays through its own forward and backward."""


def array_form(cls: type, args: tuple) -> type | None:
    """The array form that replays ``cls.apply(*args)`` exactly, or None."""
    rule = FORMS.get(cls)
    return None if rule is None else rule(*args)
