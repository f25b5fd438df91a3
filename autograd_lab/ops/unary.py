"""More elementwise functions: trigonometric, hyperbolic, logarithms and powers, rounding.

Each is written as Exp and Log are in ``elementwise.py``: a Function whose forward saves its
input (or its output, where the derivative reads it) and whose backward is written with Variable
operations, so that it is itself differentiable (``create_graph=True``). The rounding functions
(floor, ceil, round, trunc, sign) share one Function, ``Piecewise``: their gradient is zero almost
everywhere, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from ..function import Function
from ..variable import Variable
from ._util import floats as _floats
from ._util import variable_arg, wrap


def _rsqrt(d: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(d)


class Sin(Function):
    """sin(x);  d/dx = cos(x)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.sin(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * cos(x)


def sin(x: Variable) -> Variable:
    """Sine, elementwise (radians)."""
    return Sin.apply(variable_arg(x, "sin"))


class Cos(Function):
    """cos(x);  d/dx = -sin(x)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.cos(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * sin(x)


def cos(x: Variable) -> Variable:
    """Cosine, elementwise (radians)."""
    return Cos.apply(variable_arg(x, "cos"))


class Tan(Function):
    """tan(x);  d/dx = 1 + tan(x)**2"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.tan(_floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 + out * out)


def tan(x: Variable) -> Variable:
    """Tangent, elementwise."""
    return Tan.apply(variable_arg(x, "tan"))


class Sinh(Function):
    """sinh(x);  d/dx = cosh(x)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.sinh(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * cosh(x)


def sinh(x: Variable) -> Variable:
    """Hyperbolic sine, elementwise."""
    return Sinh.apply(variable_arg(x, "sinh"))


class Cosh(Function):
    """cosh(x);  d/dx = sinh(x)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.cosh(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sinh(x)


def cosh(x: Variable) -> Variable:
    """Hyperbolic cosine, elementwise."""
    return Cosh.apply(variable_arg(x, "cosh"))


class Asin(Function):
    """asin(x);  d/dx = 1 / sqrt(1 - x**2)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(np.arcsin(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 - x * x) ** 0.5


def asin(x: Variable) -> Variable:
    """Inverse sine, elementwise (nan outside [-1, 1])."""
    return Asin.apply(variable_arg(x, "asin"))


class Acos(Function):
    """acos(x);  d/dx = -1 / sqrt(1 - x**2)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(np.arccos(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad / (1 - x * x) ** 0.5


def acos(x: Variable) -> Variable:
    """Inverse cosine, elementwise (nan outside [-1, 1])."""
    return Acos.apply(variable_arg(x, "acos"))


class Atan(Function):
    """atan(x);  d/dx = 1 / (1 + x**2)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.arctan(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + x * x)


def atan(x: Variable) -> Variable:
    """Inverse tangent, elementwise."""
    return Atan.apply(variable_arg(x, "atan"))


class Log1p(Function):
    """log(1 + x), accurate for small x;  d/dx = 1 / (1 + x)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(np.log1p(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)


def log1p(x: Variable) -> Variable:
    """log(1 + x), accurate near 0."""
    return Log1p.apply(variable_arg(x, "log1p"))


class Expm1(Function):
    """exp(x) - 1, accurate for small x;  d/dx = exp(x)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.expm1(_floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out + 1)


def expm1(x: Variable) -> Variable:
    """exp(x) - 1, accurate near 0."""
    return Expm1.apply(variable_arg(x, "expm1"))


class Log2(Function):
    """log2(x);  d/dx = 1 / (x ln 2)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(np.log2(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * np.log(2.0))


def log2(x: Variable) -> Variable:
    """Base-2 logarithm, elementwise."""
    return Log2.apply(variable_arg(x, "log2"))


class Log10(Function):
    """log10(x);  d/dx = 1 / (x ln 10)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(np.log10(_floats(x)))
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * np.log(10.0))


def log10(x: Variable) -> Variable:
    """Base-10 logarithm, elementwise."""
    return Log10.apply(variable_arg(x, "log10"))


class Reciprocal(Function):
    """1 / x;  d/dx = -1 / x**2"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(np.reciprocal(_floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * out * out


def reciprocal(x: Variable) -> Variable:
    """1 / x, elementwise."""
    return Reciprocal.apply(variable_arg(x, "reciprocal"))


class Rsqrt(Function):
    """1 / sqrt(x);  d/dx = -0.5 * x**(-1.5)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):  # outside the domain the answer is nan or inf
            out = wrap(_rsqrt(_floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * out * out * -0.5


def rsqrt(x: Variable) -> Variable:
    """1 / sqrt(x), elementwise."""
    return Rsqrt.apply(variable_arg(x, "rsqrt"))


class Piecewise(Function):
    """floor/ceil/round/trunc/sign(x): piecewise constant, so the gradient is zero"""

    @staticmethod
    def forward(ctx, x, fn):
        return wrap(np.asarray(fn(x.data)))

    @staticmethod
    def backward(ctx, grad):  # zeros, not grad * 0: an inf or NaN gradient stays out (PyTorch)
        return wrap(np.zeros(grad.shape, grad.dtype)), None


def square(x: Variable) -> Variable:
    """x * x, elementwise."""
    x = variable_arg(x, "square")
    if x.dtype.kind == "b":  # PyTorch squares bool as pow(x, 2): an int64 result
        x = x.to(np.int64)
    return x * x


def sign_array(d: np.ndarray) -> np.ndarray:
    """numpy's sign, but 0 at NaN as torch.sign gives."""
    out = np.asarray(np.sign(d))  # (an array also for a 0-d input, where np.sign gives a scalar)
    if out.dtype.kind == "f":
        out[np.isnan(d)] = 0
    return out


def floor(x: Variable) -> Variable:
    """floor(x), elementwise; its gradient is zero (almost everywhere)."""
    return Piecewise.apply(variable_arg(x, "floor"), np.floor)


def ceil(x: Variable) -> Variable:
    """ceil(x), elementwise; its gradient is zero (almost everywhere)."""
    return Piecewise.apply(variable_arg(x, "ceil"), np.ceil)


def round(x: Variable) -> Variable:  # noqa: A001  (PyTorch's name)
    """round(x), elementwise, halves to even as torch.round; its gradient is zero (almost everywhere)."""
    return Piecewise.apply(variable_arg(x, "round"), np.round)


def trunc(x: Variable) -> Variable:
    """trunc(x), elementwise; its gradient is zero (almost everywhere)."""
    return Piecewise.apply(variable_arg(x, "trunc"), np.trunc)


def sign(x: Variable) -> Variable:
    """sign(x), elementwise (0 at 0 and at NaN); its gradient is zero (almost everywhere)."""
    return Piecewise.apply(variable_arg(x, "sign"), sign_array)
