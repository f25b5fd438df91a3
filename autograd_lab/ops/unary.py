"""More elementwise functions: trigonometric, hyperbolic, logarithms and powers, rounding.

Each backward is written with Variable operations, so it is itself differentiable
(``create_graph=True``). Rounding functions (floor, ceil, round, trunc, sign) have a zero
gradient almost everywhere, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from ..function import Function
from ..variable import Variable
from ._util import variable_arg, wrap


def _floats(x: Variable) -> np.ndarray:
    """Integer inputs give float64 results (the library's default float)."""
    d = x.data
    return d if d.dtype.kind == "f" else d.astype(np.float64)


class Sin(Function):
    """sin(x);  d/dx = cos(x)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.sin(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * cos(x)


class Cos(Function):
    """cos(x);  d/dx = -sin(x)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.cos(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * sin(x)


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


class Sinh(Function):
    """sinh(x);  d/dx = cosh(x)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.sinh(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * cosh(x)


class Cosh(Function):
    """cosh(x);  d/dx = sinh(x)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.cosh(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sinh(x)


class Asin(Function):
    """asin(x);  d/dx = 1 / sqrt(1 - x**2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):
            return wrap(np.arcsin(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 - x * x) ** 0.5


class Acos(Function):
    """acos(x);  d/dx = -1 / sqrt(1 - x**2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):
            return wrap(np.arccos(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad / (1 - x * x) ** 0.5


class Atan(Function):
    """atan(x);  d/dx = 1 / (1 + x**2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.arctan(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + x * x)


class Log1p(Function):
    """log(1 + x), accurate for small x;  d/dx = 1 / (1 + x)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log1p(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)


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


class Log2(Function):
    """log2(x);  d/dx = 1 / (x ln 2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log2(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * np.log(2.0))


class Log10(Function):
    """log10(x);  d/dx = 1 / (x ln 10)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log10(_floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * np.log(10.0))


class Reciprocal(Function):
    """1 / x;  d/dx = -1 / x**2"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore"):
            out = wrap(np.reciprocal(_floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * out * out


class Rsqrt(Function):
    """1 / sqrt(x);  d/dx = -0.5 * x**(-1.5)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = wrap(1 / np.sqrt(_floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * out * out * -0.5


class Piecewise(Function):
    """floor/ceil/round/trunc/sign(x): piecewise constant, so the gradient is zero"""

    @staticmethod
    def forward(ctx, x, fn):
        return wrap(np.asarray(fn(x.data)))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


def _unary(cls: type[Function], name: str, doc: str):
    def fn(x: Variable) -> Variable:
        return cls.apply(variable_arg(x, name))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


sin = _unary(Sin, "sin", "Sine, elementwise (radians).")
cos = _unary(Cos, "cos", "Cosine, elementwise (radians).")
tan = _unary(Tan, "tan", "Tangent, elementwise.")
sinh = _unary(Sinh, "sinh", "Hyperbolic sine, elementwise.")
cosh = _unary(Cosh, "cosh", "Hyperbolic cosine, elementwise.")
asin = _unary(Asin, "asin", "Inverse sine, elementwise (nan outside [-1, 1]).")
acos = _unary(Acos, "acos", "Inverse cosine, elementwise (nan outside [-1, 1]).")
atan = _unary(Atan, "atan", "Inverse tangent, elementwise.")
log1p = _unary(Log1p, "log1p", "log(1 + x), accurate near 0.")
expm1 = _unary(Expm1, "expm1", "exp(x) - 1, accurate near 0.")
log2 = _unary(Log2, "log2", "Base-2 logarithm, elementwise.")
log10 = _unary(Log10, "log10", "Base-10 logarithm, elementwise.")
reciprocal = _unary(Reciprocal, "reciprocal", "1 / x, elementwise.")
rsqrt = _unary(Rsqrt, "rsqrt", "1 / sqrt(x), elementwise.")


def square(x: Variable) -> Variable:
    """x * x, elementwise."""
    x = variable_arg(x, "square")
    return x * x


def _piecewise(fn, name: str):
    def f(x: Variable) -> Variable:
        x = variable_arg(x, name)
        return Piecewise.apply(x, fn)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{name}(x), elementwise; its gradient is zero (almost everywhere)."
    return f


floor = _piecewise(np.floor, "floor")
ceil = _piecewise(np.ceil, "ceil")
round = _piecewise(np.round, "round")  # noqa: A001  (PyTorch's name; halves to even, as torch.round)
trunc = _piecewise(np.trunc, "trunc")
sign = _piecewise(np.sign, "sign")
