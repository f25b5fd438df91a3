"""More elementwise functions: trigonometric, hyperbolic, logarithms and powers, rounding.

Each backward is written with Variable operations, so it is itself differentiable
(``create_graph=True``). Rounding functions (floor, ceil, round, trunc, sign) have a zero
gradient almost everywhere, as in PyTorch.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..function import Function
from ..variable import Variable
from ._util import variable_arg, wrap


def _floats(x: Variable) -> np.ndarray:
    """Integer inputs give float64 results (the library's default float)."""
    d = x.data
    return d if d.dtype.kind == "f" else d.astype(np.float64)


def _elementwise(name: str, np_fn: Callable, grad_of: Callable, doc: str, *, saves: str = "input",
                 ignore: tuple[str, ...] = ()) -> type[Function]:
    """A Function applying ``np_fn`` elementwise. Forward saves its input (or, with
    ``saves="output"``, its result); backward returns ``grad_of(grad, saved)``, written with
    Variable operations so that it is differentiable too. ``ignore`` names the floating point
    warnings numpy should not raise for inputs outside the domain (nan or inf is the answer)."""
    errors: dict[str, Any] = dict.fromkeys(ignore, "ignore")

    def forward(ctx: Any, x: Variable) -> Variable:
        if errors:
            with np.errstate(**errors):
                out = wrap(np_fn(_floats(x)))
        else:
            out = wrap(np_fn(_floats(x)))
        ctx.save_for_backward(out if saves == "output" else x)
        return out

    def backward(ctx: Any, grad: Variable) -> Variable:
        (saved,) = ctx.saved_tensors
        return grad_of(grad, saved)

    return type(name, (Function,), {"__doc__": doc, "__module__": __name__,
                                    "forward": staticmethod(forward), "backward": staticmethod(backward)})


# sin, cos, sinh and cosh are made below; the backward formulas above them refer to them
sin: Callable[[Variable], Variable]
cos: Callable[[Variable], Variable]
sinh: Callable[[Variable], Variable]
cosh: Callable[[Variable], Variable]

_DOMAIN = ("invalid",)
_POLE = ("divide", "invalid")
Sin = _elementwise("Sin", np.sin, lambda g, x: g * cos(x), "sin(x);  d/dx = cos(x)")
Cos = _elementwise("Cos", np.cos, lambda g, x: -g * sin(x), "cos(x);  d/dx = -sin(x)")
Tan = _elementwise("Tan", np.tan, lambda g, out: g * (1 + out * out), "tan(x);  d/dx = 1 + tan(x)**2",
                   saves="output")
Sinh = _elementwise("Sinh", np.sinh, lambda g, x: g * cosh(x), "sinh(x);  d/dx = cosh(x)")
Cosh = _elementwise("Cosh", np.cosh, lambda g, x: g * sinh(x), "cosh(x);  d/dx = sinh(x)")
Asin = _elementwise("Asin", np.arcsin, lambda g, x: g / (1 - x * x) ** 0.5,
                    "asin(x);  d/dx = 1 / sqrt(1 - x**2)", ignore=_DOMAIN)
Acos = _elementwise("Acos", np.arccos, lambda g, x: -g / (1 - x * x) ** 0.5,
                    "acos(x);  d/dx = -1 / sqrt(1 - x**2)", ignore=_DOMAIN)
Atan = _elementwise("Atan", np.arctan, lambda g, x: g / (1 + x * x), "atan(x);  d/dx = 1 / (1 + x**2)")
Log1p = _elementwise("Log1p", np.log1p, lambda g, x: g / (x + 1),
                     "log(1 + x), accurate for small x;  d/dx = 1 / (1 + x)", ignore=_POLE)
Expm1 = _elementwise("Expm1", np.expm1, lambda g, out: g * (out + 1),
                     "exp(x) - 1, accurate for small x;  d/dx = exp(x)", saves="output")
Log2 = _elementwise("Log2", np.log2, lambda g, x: g / (x * np.log(2.0)), "log2(x);  d/dx = 1 / (x ln 2)",
                    ignore=_POLE)
Log10 = _elementwise("Log10", np.log10, lambda g, x: g / (x * np.log(10.0)),
                     "log10(x);  d/dx = 1 / (x ln 10)", ignore=_POLE)
Reciprocal = _elementwise("Reciprocal", np.reciprocal, lambda g, out: -g * out * out,
                          "1 / x;  d/dx = -1 / x**2", saves="output", ignore=("divide",))
Rsqrt = _elementwise("Rsqrt", lambda d: 1 / np.sqrt(d), lambda g, out: g * out * out * out * -0.5,
                     "1 / sqrt(x);  d/dx = -0.5 * x**(-1.5)", saves="output", ignore=_POLE)


class Piecewise(Function):
    """floor/ceil/round/trunc/sign(x): piecewise constant, so the gradient is zero"""

    @staticmethod
    def forward(ctx, x, fn):
        return wrap(np.asarray(fn(x.data)))

    @staticmethod
    def backward(ctx, grad):  # zeros, not grad * 0: an inf or NaN gradient stays out (PyTorch)
        return wrap(np.zeros(grad.shape, grad.dtype)), None


def _unary(cls: type[Function], name: str, doc: str) -> Callable[[Variable], Variable]:
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


def _sign(d: np.ndarray) -> np.ndarray:
    """numpy's sign, but 0 at NaN as torch.sign gives."""
    out = np.sign(d)
    if out.dtype.kind == "f":
        out[np.isnan(d)] = 0
    return out


sign = _piecewise(_sign, "sign")
