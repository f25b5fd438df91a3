"""Elementwise operations. Backward formulas use Variable operations, so they are differentiable
(create_graph=True gives second derivatives). Broadcast inputs get their gradient summed back
to their own shape with ``sum_to``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Function
from ..primitives import Add, Cast, sum_to  # noqa: F401  (the engine needs these, so they sit below it)
from ..primitives import promoted
from ..variable import Variable
from ._util import broadcasting, floats, raw, shape_of, variable_arg, wrap


def _save_operands(ctx: Any, a: Any, b: Any, keep_a: Any, keep_b: Any) -> None:
    """Keep for backward only the operands its gradients read, as PyTorch does: an operand that no
    gradient reads may then change in place before backward. Variables are saved (their versions
    are checked), plain numbers go to ``ctx.consts``, and the shapes of the operands that need a
    gradient to ``ctx.shapes`` (for sum_to)."""
    need = ctx.needs_input_grad
    if not need:  # nothing is recorded
        return
    ctx.shapes = (a._data.shape if need[0] else None, b._data.shape if need[1] else None)
    a_var, b_var = isinstance(a, Variable), isinstance(b, Variable)
    ctx.save_for_backward(a if keep_a and a_var else None, b if keep_b and b_var else None)
    ctx.consts = (a if keep_a and not a_var else None, b if keep_b and not b_var else None)


def _operands(ctx: Any) -> tuple[Any, Any]:
    """The operands ``_save_operands`` kept (None for one it did not)."""
    a, b = ctx.saved_tensors
    consts = ctx.consts
    return (consts[0] if a is None else a), (consts[1] if b is None else b)


class Sub(Function):
    """a - b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (shape_of(a), shape_of(b))
        return wrap(broadcasting(np.subtract, a, b, "sub"))

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        ga = sum_to(grad, sa) if ctx.needs_input_grad[0] else None
        gb = sum_to(-grad, sb) if ctx.needs_input_grad[1] else None
        return ga, gb


class Mul(Function):
    """a * b"""

    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad  # (empty when nothing is recorded)
        _save_operands(ctx, a, b, keep_a=need and need[1], keep_b=need and need[0])
        return wrap(broadcasting(np.multiply, a, b, "mul"))

    @staticmethod
    def backward(ctx, grad):
        a, b = _operands(ctx)  # b if a needs a gradient, a if b does
        sa, sb = ctx.shapes
        ga = sum_to(grad * b, sa) if ctx.needs_input_grad[0] else None
        gb = sum_to(grad * a, sb) if ctx.needs_input_grad[1] else None
        return ga, gb


class Div(Function):
    """a / b"""

    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        _save_operands(ctx, a, b, keep_a=need and need[1], keep_b=need and (need[0] or need[1]))
        return wrap(broadcasting(np.true_divide, a, b, "div"))

    @staticmethod
    def backward(ctx, grad):
        a, b = _operands(ctx)  # b always, a if b needs a gradient
        sa, sb = ctx.shapes
        ga = sum_to(grad / b, sa) if ctx.needs_input_grad[0] else None
        # (a / b) / b, not a / (b * b): at b = inf its own gradient is 0, not inf / inf (PyTorch's form)
        gb = sum_to(-grad * ((a / b) / b), sb) if ctx.needs_input_grad[1] else None
        return ga, gb


class Neg(Function):
    """-x"""

    @staticmethod
    def forward(ctx, x):
        return wrap(np.negative(x.data))

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Pow(Function):
    """a ** b (b a number or a Variable)"""

    @staticmethod
    def forward(ctx, a, b):
        out = wrap(broadcasting(np.power, a, b, "pow"))
        # the output is saved only with a Variable exponent (its gradient reads it), as PyTorch's
        # pow saves it: x ** 2 may then change in place before backward
        keep_out = out if isinstance(b, Variable) else None
        ctx.save_for_backward(*(v if isinstance(v, Variable) else None for v in (a, b)), keep_out)
        ctx.consts = tuple(None if isinstance(v, Variable) else v for v in (a, b))
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        a = ctx.consts[0] if a is None else a
        b = ctx.consts[1] if b is None else b
        ga = gb = None
        if ctx.needs_input_grad[0] and not isinstance(b, Variable) and np.all(np.asarray(b) == 0):
            ga = wrap(np.zeros(shape_of(a), grad.dtype))  # x ** 0 is constant (PyTorch: zeros, no graph)
        elif ctx.needs_input_grad[0]:  # b * a**(b-1), taken as 0 where b == 0 (PyTorch: not 0 * inf)
            ga = grad * b * a ** (b - 1)
            zero_b = np.asarray(raw(b)) == 0
            if zero_b.any():
                ga = select(~np.broadcast_to(zero_b, ga.shape), ga)
            ga = sum_to(ga, shape_of(a))
        if ctx.needs_input_grad[1]:  # out * log(a), taken as 0 where a == 0 and b >= 0 (PyTorch)
            base = a if isinstance(a, Variable) else Variable(np.asarray(a, dtype=out.dtype))
            gb = grad * out * log(base)
            zero_a = (np.asarray(raw(a)) == 0) & (np.asarray(raw(b)) >= 0)
            if zero_a.any():
                gb = select(~np.broadcast_to(zero_a, gb.shape), gb)
            gb = sum_to(gb, shape_of(b))
        return ga, gb


class Exp(Function):
    """exp(x)"""

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.exp(floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class Log(Function):
    """log(x), the natural logarithm"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log(floats(x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


class Sqrt(Function):
    """sqrt(x)"""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            out = wrap(np.sqrt(floats(x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (out * 2)


class Abs(Function):
    """|x| (gradient sign(x), 0 at 0 as in PyTorch)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.abs(x.data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        from .unary import Piecewise, sign_array

        # sign(x) as a recorded op of zero derivative: under create_graph the gradient depends on
        # x, as PyTorch's grad * x.sgn() does (its second derivative is zero, not refused)
        return grad * Piecewise.apply(x, sign_array).to(grad.dtype)


class Clamp(Function):
    """clamp(x, min, max): x limited to [min, max]; gradient 1 inside (ends included), 0 outside"""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        out = np.asarray(np.clip(x.data, lo, hi))
        if out.dtype.kind == "f":  # a value equal to a bound stays itself: -0.0 at min=0 keeps its sign (PyTorch)
            np.copyto(out, x.data, where=out == x.data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        keep = np.ones(x.shape, dtype=bool)
        if ctx.lo is not None:
            keep &= x.data >= ctx.lo
        if ctx.hi is not None:
            keep &= x.data <= ctx.hi
        return select(keep, grad), None, None


class Clone(Function):
    """clone(x): a copy with its own memory; gradient passes through"""

    @staticmethod
    def forward(ctx, x):
        return wrap(x.data.copy())

    @staticmethod
    def backward(ctx, grad):
        return grad


class Where(Function):
    """where(cond, a, b): a where cond holds, else b"""

    @staticmethod
    def forward(ctx, cond, a, b):
        c = np.asarray(raw(cond), dtype=bool)
        ctx.save_for_backward(wrap(c))  # saved as PyTorch saves it: a second backward then raises
        ctx.shapes = (shape_of(a), shape_of(b))
        return wrap(np.where(c, *promoted(a, b)))

    @staticmethod
    def backward(ctx, grad):
        c = ctx.saved_tensors[0].data
        sa, sb = ctx.shapes
        ga = sum_to(select(c, grad), sa) if ctx.needs_input_grad[1] else None
        gb = sum_to(select(~c, grad), sb) if ctx.needs_input_grad[2] else None
        return None, ga, gb


class Select(Function):
    """select(mask, g): g where mask holds, else 0 -- a gradient kept or dropped, never multiplied,
    so that an inf or NaN in g stays out of the entries the mask drops (as ``torch.where``)."""

    @staticmethod
    def forward(ctx, mask, g, anchor=None):
        ctx.mask = mask
        ctx.anchor_meta = None if anchor is None else (anchor.shape, anchor.dtype)
        return wrap(np.where(mask, g.data, np.zeros((), g.dtype)))

    @staticmethod
    def backward(ctx, grad):
        anchor = None
        if ctx.anchor_meta is not None and ctx.needs_input_grad[2]:
            anchor = wrap(np.zeros(*ctx.anchor_meta))
        return None, Select.apply(ctx.mask, grad), anchor


def select(mask: np.ndarray, g: Variable, anchor: Variable | None = None) -> Variable:
    """``g`` where ``mask`` (a boolean array broadcastable to g) holds, zero elsewhere. With an
    ``anchor`` (the Variable the mask was computed from) the result also depends on it, with a
    zero derivative, as PyTorch's threshold_backward depends on its input: under create_graph a
    second derivative is then zero instead of refused."""
    return Select.apply(np.broadcast_to(mask, g.shape), g, anchor)


class Maximum(Function):
    """maximum(a, b) elementwise (minimum with ``smaller=True``); ties split the gradient evenly,
    and where either side is NaN (the result is NaN) both get it, as in PyTorch"""

    @staticmethod
    def forward(ctx, a, b, smaller=False):
        ad, bd = promoted(a, b)  # compared in the result's dtype: a float32 tie with a 0-d float64 splits
        ctx.shapes = (np.shape(ad), np.shape(bd))
        # saved as PyTorch saves them (backward reads the weights): a second backward, or an
        # in-place change of an input before backward, then raises
        ctx.save_for_backward(*(v if isinstance(v, Variable) else None for v in (a, b)))
        with np.errstate(invalid="ignore"):
            wins = (ad < bd) if smaller else (ad > bd)
            loses = (ad > bd) if smaller else (ad < bd)
        nan = np.isnan(ad) | np.isnan(bd) if np.result_type(ad, bd).kind == "f" else False
        ctx.wa = np.where(wins | nan, 1.0, np.where(loses, 0.0, 0.5))
        ctx.wb = np.where(loses | nan, 1.0, np.where(wins, 0.0, 0.5))
        return wrap(broadcasting(np.minimum if smaller else np.maximum, a, b,
                                 "minimum" if smaller else "maximum"))

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(select(ctx.wa != 0, grad * wrap(ctx.wa.astype(grad.dtype))), sa)
        if ctx.needs_input_grad[1]:
            gb = sum_to(select(ctx.wb != 0, grad * wrap(ctx.wb.astype(grad.dtype))), sb)
        return ga, gb, None


# ---- lowercase wrappers -----------------------------------------------------------------
def add(a: Any, b: Any) -> Variable:
    return Add.apply(a, b)


def sub(a: Any, b: Any) -> Variable:
    return Sub.apply(a, b)


def mul(a: Any, b: Any) -> Variable:
    return Mul.apply(a, b)


def div(a: Any, b: Any) -> Variable:
    return Div.apply(a, b)


def neg(x: Variable) -> Variable:
    x = variable_arg(x, "neg")
    return Neg.apply(x)


def pow(a: Any, b: Any) -> Variable:  # noqa: A001 (PyTorch's name)
    return Pow.apply(a, b)


def exp(x: Variable) -> Variable:
    x = variable_arg(x, "exp")
    return Exp.apply(x)


def log(x: Variable) -> Variable:
    x = variable_arg(x, "log")
    return Log.apply(x)


def sqrt(x: Variable) -> Variable:
    x = variable_arg(x, "sqrt")
    return Sqrt.apply(x)


def abs(x: Variable) -> Variable:  # noqa: A001
    x = variable_arg(x, "abs")
    return Abs.apply(x)


def clamp(x: Variable, min: float | None = None, max: float | None = None) -> Variable:  # noqa: A002
    x = variable_arg(x, "clamp")
    if min is None and max is None:
        raise TypeError("clamp needs at least one of min= or max=")
    return Clamp.apply(x, min, max)


def clone(x: Variable) -> Variable:
    x = variable_arg(x, "clone")
    return Clone.apply(x)


def where(cond: Any, a: Any, b: Any) -> Variable:
    return Where.apply(cond, a, b)


def _both_variables(name: str, a: Any, b: Any) -> None:
    """PyTorch's maximum and minimum take two tensors; a number is refused, not broadcast."""
    for position, (arg, value) in enumerate((("input", a), ("other", b)), start=1):
        if not isinstance(value, Variable):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Variable, not "
                f"{type(value).__name__}. Wrap the number: al.{name}(x, al.tensor({value!r})), "
                f"or use x.clamp(min=...) / x.clamp(max=...) for a bound.")


def maximum(a: Any, b: Any) -> Variable:
    _both_variables("maximum", a, b)
    return Maximum.apply(a, b)


def minimum(a: Any, b: Any) -> Variable:
    _both_variables("minimum", a, b)
    return Maximum.apply(a, b, True)
