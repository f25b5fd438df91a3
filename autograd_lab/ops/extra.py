"""More of PyTorch's everyday operations: cumulative and log-sum-exp reductions, remainders,
masking, flipping and repeating, splitting, triangles, einsum and the batched products.

Most are written with the differentiable ops (so second derivatives work); the few that need
their own Function say how their gradient is formed.
"""
from __future__ import annotations

import builtins
import math
from builtins import max as builtins_max
from typing import Any, Sequence

import numpy as np

from ..errors import ShapeError
from ..function import Function, once_differentiable
from ..grad_mode import is_grad_enabled
from ..variable import Variable
from ._util import raw, variable_arg, wrap
from .activation import FLOATS, K
from .elementwise import exp, log, select, where
from .linalg import matmul, same_dtype
from .reduce import Max, resolve_axes, sum
from .shape import GetItem, check_dim, broadcast_to, getitem, reshape, transpose


def _dim(dim: int, ndim: int) -> int:
    check_dim(dim, ndim)
    return dim % builtins_max(ndim, 1)


# ---------------------------------------------------------------- reductions along a dim
class Cumsum(Function):
    """cumsum(x, dim);  grad_x = the reversed cumulative sum of grad along dim"""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return wrap(np.cumsum(x.data, axis=dim))

    @staticmethod
    def backward(ctx, grad):
        flip = tuple(slice(None, None, -1) if i == ctx.dim else slice(None) for i in range(grad.ndim))
        return GetItem.apply(Cumsum.apply(GetItem.apply(grad, flip), ctx.dim), flip), None


def cumsum(x: Variable, dim: int) -> Variable:
    """Running sums along ``dim``."""
    x = variable_arg(x, "cumsum")
    if x.ndim == 0:
        check_dim(dim, 0)
        return x * 1
    return Cumsum.apply(x, _dim(dim, x.ndim))


class Cumprod(Function):
    """cumprod(x, dim);  grad_x_i = sum over j >= i of g_j * out_j / x_i where x has no zeros (a
    reversed cumulative sum: differentiable), else the products without x_i (exact)"""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        out = wrap(np.cumprod(x.data, axis=dim))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if not (x.data == 0).any():
            flip = tuple(slice(None, None, -1) if i == ctx.dim else slice(None) for i in range(grad.ndim))
            return GetItem.apply(Cumsum.apply(GetItem.apply(grad * out, flip), ctx.dim), flip) / x, None
        return Cumprod._backward_with_zeros(ctx, grad)

    @staticmethod
    def _backward_with_zeros(ctx, grad):
        """d out_j / d x_i = the product of x_k for k <= j, k != i (j >= i): for each i, the
        running product of x with x_i set to 1, read from i on; written with differentiable ops,
        so it has second derivatives too (PyTorch's is not once-differentiable either)."""
        x, _ = ctx.saved_tensors
        dim, n = ctx.dim, x.shape[ctx.dim]
        parts = []
        for i in range(n):
            keep = np.ones(x.shape[dim], dtype=x.dtype)
            keep[i] = 0
            shape = tuple(n if k == dim else 1 for k in range(x.ndim))
            keep = wrap(keep.reshape(shape))
            others = x * keep + (1 - keep)
            tail = tuple(slice(i, None) if k == dim else slice(None) for k in range(x.ndim))
            parts.append(sum(getitem(grad * Cumprod.apply(others, dim), tail), dim, True))
        from .shape import concatenate

        return concatenate(parts, dim), None


def cumprod(x: Variable, dim: int) -> Variable:
    """Running products along ``dim``."""
    x = variable_arg(x, "cumprod")
    if x.ndim == 0:
        check_dim(dim, 0)
        return x * 1
    return Cumprod.apply(x, _dim(dim, x.ndim))


class Prod(Function):
    """prod(x, dim, keepdim);  grad_x[i] = grad * (product of the others), formed from the
    products before and after i (exact where x has zeros, unlike prod / x)"""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.dim, ctx.keepdim = dim, keepdim
        d = x.data if dim is not None else x.data.reshape(-1)
        out = wrap(np.asarray(np.prod(d, axis=0 if dim is None else dim, keepdims=keepdim and dim is not None)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if not (x.data == 0).any():  # grad * prod / x: differentiable (second derivatives work)
            kept = tuple(1 if ctx.dim is None or i == ctx.dim else s for i, s in enumerate(x.shape))
            return reshape(grad, kept) * reshape(out, kept) / x, None, None
        return Prod._backward_with_zeros(ctx, grad)

    @staticmethod
    @once_differentiable
    def _backward_with_zeros(ctx, grad):
        """Products before and after each element: exact where x has zeros; a second derivative
        through it is refused (PyTorch's would pass through cumprods)."""
        x, _ = ctx.saved_tensors
        d, dim = x.data, ctx.dim
        if dim is None:
            d, axis = d.reshape(-1), 0
        else:
            axis = dim
        ones = np.ones_like(np.take(d, [0], axis=axis)) if d.shape[axis] else np.ones_like(d)
        before = np.cumprod(np.concatenate([ones, d], axis=axis), axis=axis)
        before = np.take(before, range(d.shape[axis]), axis=axis)
        flipped = np.flip(d, axis=axis)
        after = np.flip(np.take(np.cumprod(np.concatenate([ones, flipped], axis=axis), axis=axis),
                                range(d.shape[axis]), axis=axis), axis=axis)
        g = np.asarray(grad.data if isinstance(grad, Variable) else grad)
        if dim is not None and not ctx.keepdim:
            g = np.expand_dims(g, dim)
        out = (before * after) * g
        return wrap(out.reshape(x.shape)), None, None


def prod(x: Variable, dim: int | None = None, keepdim: bool = False) -> Variable:
    """The product of all elements, or along ``dim``."""
    x = variable_arg(x, "prod")
    if dim is not None:
        dim = _dim(dim, x.ndim) if x.ndim else None
    return Prod.apply(x, dim, bool(keepdim))


def logsumexp(x: Variable, dim: Any, keepdim: bool = False) -> Variable:
    """log(sum(exp(x))) along ``dim``, shifted by the maximum so that it does not overflow."""
    x = variable_arg(x, "logsumexp")
    axes, keep = resolve_axes(x, None, dim, False, keepdim)
    m = Max.apply(x.detach(), axes, True).data
    m = np.where(np.isfinite(m), m, 0)  # a row of -inf gives -inf, not nan
    shift = wrap(m)
    out = log(sum(exp(x - shift), axes, True)) + shift
    if keep:
        return out
    return reshape(out, tuple(s for i, s in enumerate(out.shape) if axes is not None and i not in axes))


# ---------------------------------------------------------------- remainders
def _integer_divisor_checked(pa: Any, pb: Any, name: str) -> None:
    """An integer division by zero has no integer result: refused, as PyTorch refuses it."""
    if np.result_type(pa, pb).kind in "iu" and np.any(np.asarray(pb) == 0):
        from ..errors import IntegerDivisionByZero

        raise IntegerDivisionByZero(
            f"{name}: integer division by zero (a divisor holds 0, and the result is an integer, which "
            "has no inf or NaN). Divide floats instead (a.double() // b), or replace the zeros first."
        )


class Remainder(Function):
    """remainder(a, b) = a - floor(a / b) * b (the sign of b, as Python's %);  fmod with trunc"""

    @staticmethod
    def forward(ctx, a, b, truncated=False):
        ad, bd = raw(a), raw(b)
        ctx.truncated = truncated
        ctx.save_for_backward(*(v if isinstance(v, Variable) else None for v in (a, b)))
        ctx.consts = (ad, bd)
        ctx.shapes = (np.shape(ad), np.shape(bd))
        from ..primitives import promoted

        pa, pb = promoted(a, b)
        _integer_divisor_checked(pa, pb, "fmod" if truncated else "remainder (%)")
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.asarray(np.fmod(pa, pb) if truncated else np.remainder(pa, pb)))

    @staticmethod
    def backward(ctx, grad):
        from ..primitives import sum_to

        ad, bd = ctx.consts
        ga = sum_to(grad, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                q = np.trunc(ad / bd) if ctx.truncated else np.floor(ad / bd)
            gb = sum_to(grad * wrap(-q.astype(grad.dtype)), ctx.shapes[1])
        return ga, gb, None


def remainder(a: Any, b: Any) -> Variable:
    """a % b with the sign of b (Python's and PyTorch's ``%``)."""
    return Remainder.apply(a, b)


def fmod(a: Any, b: Any) -> Variable:
    """The C remainder: a - trunc(a / b) * b, with the sign of a."""
    if not isinstance(a, Variable):  # PyTorch's fmod takes (Tensor, Tensor or Number) only
        raise TypeError(f"fmod(): the first argument must be a Variable, not {type(a).__name__}. "
                        f"Wrap the number: al.fmod(al.tensor({a!r}), x).")
    return Remainder.apply(a, b, True)


def floor_divide(a: Any, b: Any) -> Variable:
    """floor(a / b) (``//``). Like PyTorch it has no gradient: refused when an input needs one."""
    from ..grad_mode import is_grad_enabled

    if is_grad_enabled() and any(isinstance(v, Variable) and v.requires_grad for v in (a, b)):
        raise NotImplementedError(
            "the derivative of floor_divide (//) is not implemented (it is zero almost everywhere, "
            "as PyTorch says it is not defined). Divide and round instead: (a / b).floor(), whose "
            "gradient is zero, or detach the inputs: a.detach() // b."
        )
    from ..primitives import promoted

    pa, pb = promoted(a, b)
    _integer_divisor_checked(pa, pb, "floor_divide (//)")
    with np.errstate(divide="ignore", invalid="ignore"):
        return wrap(np.asarray(np.floor_divide(pa, pb)))


# ---------------------------------------------------------------- masks and triangles
def masked_fill(x: Variable, mask: Any, value: Any) -> Variable:
    """``value`` where ``mask`` holds, x elsewhere (selected, so no gradient reaches x there)."""
    x = variable_arg(x, "masked_fill")
    m = np.asarray(raw(mask))
    if m.dtype != bool:
        raise TypeError(f"masked_fill only supports boolean masks, but got mask with dtype {m.dtype}; "
                        "compare first, e.g. x.masked_fill(x < 0, 0.0).")
    if isinstance(value, Variable) and value.ndim:
        raise ShapeError("masked_fill only supports a 0-dimensional value tensor (or a number), "
                         f"got one of shape {value.shape}; use al.where(mask, values, x) instead.")
    if not isinstance(value, Variable):
        value = Variable(np.asarray(value, dtype=x.dtype))
    return where(broadcast_to(wrap(m), x.shape) if m.shape != x.shape else m, value.to(x.dtype), x)


def _triangle(x: Variable, diagonal: int, lower: bool, name: str) -> Variable:
    x = variable_arg(x, name)
    if x.ndim < 2:
        raise ShapeError(f"{name}: input tensor must have at least 2 dimensions, got shape {x.shape}")
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool) if lower else ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    return select(np.broadcast_to(keep, x.shape), x)


def tril(x: Variable, diagonal: int = 0) -> Variable:
    """The lower triangle (on and below ``diagonal``) of the last two dims; zeros above."""
    return _triangle(x, diagonal, True, "tril")


def triu(x: Variable, diagonal: int = 0) -> Variable:
    """The upper triangle (on and above ``diagonal``) of the last two dims; zeros below."""
    return _triangle(x, diagonal, False, "triu")


# ---------------------------------------------------------------- reordering and repeating
def flip(x: Variable, dims: Any) -> Variable:
    """Reverse the order along ``dims`` (a copy, as in PyTorch)."""
    x = variable_arg(x, "flip")
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    axes = {_dim(d, x.ndim) for d in dims}
    idx = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    return GetItem.apply(x, idx) * 1  # * 1: its own memory, not a view


def roll(x: Variable, shifts: Any, dims: Any = None) -> Variable:
    """Shift elements along ``dims`` (all, flattened, when None), wrapping around."""
    x = variable_arg(x, "roll")
    if dims is None:
        return reshape(roll(reshape(x, -1), shifts, 0), x.shape)
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"roll: shifts and dims must have the same length, got {shifts} and {dims}")
    out = x
    for s, d in zip(shifts, dims):
        d = _dim(d, x.ndim)
        n = x.shape[d]
        idx = [slice(None)] * x.ndim
        idx[d] = (np.arange(n) - s) % builtins_max(n, 1)
        out = GetItem.apply(out, tuple(idx))
    return out


def repeat(x: Variable, *sizes: Any) -> Variable:
    """Tile ``x``: each dim repeated ``sizes[i]`` times (leading sizes add new dims), as
    ``torch.Tensor.repeat``."""
    x = variable_arg(x, "repeat")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < x.ndim:
        raise ShapeError(f"Number of dimensions of repeat dims ({len(sizes)}) can not be smaller than "
                         f"number of dimensions of tensor ({x.ndim}).")
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    paired = tuple(v for s in shape for v in (1, s))
    wide = tuple(v for r, s in zip(sizes, shape) for v in (r, s))
    return reshape(broadcast_to(reshape(x, paired), wide), tuple(r * s for r, s in zip(sizes, shape)))


def tile(x: Variable, dims: Sequence[int]) -> Variable:
    """``repeat`` with too few sizes padded with ones on the left."""
    x = variable_arg(x, "tile")
    dims = tuple(dims)
    return repeat(x, (1,) * (x.ndim - len(dims)) + dims)


def movedim(x: Variable, source: Any, destination: Any) -> Variable:
    """Move dims ``source`` to positions ``destination``; the others keep their order."""
    x = variable_arg(x, "movedim")
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"movedim: Invalid source or destination dims: source ({src} dims) should "
                         f"contain the same number of dims as destination ({dst} dims)")
    rest = [d for d in range(x.ndim) if d not in {_dim(int(s), x.ndim) for s in src}]
    out: list[int | None] = [None] * x.ndim
    for s, d in zip(src, dst):
        out[_dim(int(d), x.ndim)] = _dim(int(s), x.ndim)
    it = iter(rest)
    perm = [o if o is not None else next(it) for o in out]
    return x.permute(*perm)


def swapaxes(x: Variable, axis0: int, axis1: int) -> Variable:
    """Swap two dims (PyTorch's alias of ``transpose(dim0, dim1)``)."""
    return transpose(variable_arg(x, "swapaxes"), axis0, axis1)


# ---------------------------------------------------------------- splitting
def split(x: Variable, split_size_or_sections: Any, dim: int = 0) -> tuple[Variable, ...]:
    """Pieces of ``x`` along ``dim``: of ``split_size`` each (the last may be smaller), or of the
    listed sizes. Each piece is a view."""
    x = variable_arg(x, "split")
    dim = _dim(dim, x.ndim)
    n = x.shape[dim]
    if isinstance(split_size_or_sections, (int, np.integer)):
        step = int(split_size_or_sections)
        if step <= 0:
            raise ValueError(f"split expects split_size be non-negative, but got split_size={step}")
        sizes = [builtins_max(0, min(step, n - lo)) for lo in range(0, builtins_max(n, 1), step)]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise ValueError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                             f"size at dimension {dim}), but got split_sizes={sizes}")
    pieces, lo = [], 0
    for i, s in enumerate(sizes):
        idx = tuple(slice(lo, lo + s) if d == dim else slice(None) for d in range(x.ndim))
        piece = getitem(x, idx)
        if piece._base is not None:  # as in PyTorch, a recorded in-place change of a piece is refused
            piece._multi_view = f"output {i} of split()"
        pieces.append(piece)
        lo += s
    return tuple(pieces)


def chunk(x: Variable, chunks: int, dim: int = 0) -> tuple[Variable, ...]:
    """``chunks`` pieces along ``dim`` (fewer when they do not divide evenly), as PyTorch."""
    x = variable_arg(x, "chunk")
    if chunks <= 0:
        raise ValueError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x.shape[_dim(dim, x.ndim)]
    return split(x, builtins_max(1, math.ceil(n / chunks)), dim)


# ---------------------------------------------------------------- products
class Einsum(Function):
    """einsum(spec, *xs);  the gradient of operand i is einsum of grad with the other operands,
    broadcast over the letters only operand i has"""

    @staticmethod
    def forward(ctx, spec, *xs):
        ins, out = spec
        ctx.spec = spec
        ctx.save_for_backward(*xs)
        return wrap(np.asarray(np.einsum(",".join(ins) + "->" + out, *(x.data for x in xs))))

    @staticmethod
    def backward(ctx, grad):
        ins, out = ctx.spec
        xs = ctx.saved_tensors
        grads: list[Any] = [None]
        for i, x in enumerate(xs):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [s for j, s in enumerate(ins) if j != i]
            present = set(out).union(*others) if others else set(out)
            target = "".join(c for c in ins[i] if c in present)
            g = Einsum.apply(((out, *others), target), grad, *(xs[j] for j in range(len(xs)) if j != i))
            if target != ins[i]:  # letters only this operand has were summed out: broadcast back
                shape = [x.shape[k] if c in present else 1 for k, c in enumerate(ins[i])]
                g = broadcast_to(reshape(g, tuple(shape)), x.shape)
            grads.append(g)
        return tuple(grads)


def einsum(equation: str, *operands: Any) -> Variable:
    """Einstein summation, e.g. ``al.einsum('bij,bjk->bik', a, b)``. Explicit ``->`` output or
    the implicit one (sorted letters that appear once); no ``...`` and no repeated letter within
    one operand (a diagonal)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = [variable_arg(x, "einsum") for x in operands]
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise NotImplementedError("einsum with '...' is not supported by autograd_lab; name every "
                                  "dim with a letter (e.g. 'bij,bjk->bik').")
    lhs, _, out = eq.partition("->")
    ins = lhs.split(",")
    if "->" not in eq:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(ins) != len(xs):
        raise ValueError(f"einsum(): {len(ins)} operands in the equation but {len(xs)} given")
    for s, x in zip(ins, xs):
        if len(s) != x.ndim:
            raise ShapeError(f"einsum(): the subscript {s!r} names {len(s)} dims for an operand of shape {x.shape}")
        if len(set(s)) != len(s):
            raise NotImplementedError(f"einsum(): a repeated letter within one operand ({s!r}, a diagonal) "
                                      "is not supported by autograd_lab.")
    return Einsum.apply((tuple(ins), out), *xs)


def bmm(a: Variable, b: Variable) -> Variable:
    """Batched matrix product of (b, n, m) and (b, m, p) Variables (no broadcasting)."""
    a, b = variable_arg(a, "bmm"), variable_arg(b, "bmm")
    if a.ndim != 3 or b.ndim != 3:
        raise ShapeError(f"bmm: batch1 and batch2 must be 3-d, got shapes {a.shape} and {b.shape}")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ShapeError(f"bmm: shapes {a.shape} and {b.shape} cannot be multiplied "
                         "(batch sizes must match and a's last dim must equal b's middle dim)")
    return matmul(a, b)


def dot(a: Variable, b: Variable) -> Variable:
    """The inner product of two 1-d Variables of the same length."""
    a, b = variable_arg(a, "dot"), variable_arg(b, "dot")
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ShapeError(f"dot: 1D tensors of the same length expected, got shapes {a.shape} and {b.shape}")
    same_dtype(a, b, "dot")
    return sum(a * b)


def outer(a: Variable, b: Variable) -> Variable:
    """a[i] * b[j] for 1-d a and b."""
    a, b = variable_arg(a, "outer"), variable_arg(b, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer: 1-d inputs expected, got shapes {a.shape} and {b.shape}")
    return reshape(a, (-1, 1)) * reshape(b, (1, -1))


# ---------------------------------------------------------------- erf
class Erf(Function):
    """erf(x);  d/dx = 2 / sqrt(pi) * exp(-x**2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        d = x.data if x.dtype.kind == "f" else x.data.astype(np.float64)
        return wrap(_erf(d))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (exp(-(x * x)) * (2 / math.sqrt(math.pi)))


_erf_each = np.frompyfunc(math.erf, 1, 1)


def _erf(d: np.ndarray) -> np.ndarray:
    if d.dtype in FLOATS:  # one compiled loop (kernels/special.py), the same numbers
        return K.erf(d) if d.size else d.copy()
    return np.asarray(_erf_each(d), dtype=d.dtype) if d.size else d.copy()


def erf(x: Variable) -> Variable:
    """The error function, elementwise."""
    return Erf.apply(variable_arg(x, "erf"))


class Gelu(Function):
    """gelu(x) = x * Phi(x);  grad_x = grad * (Phi(x) + x * phi(x)), one factor as PyTorch forms it
    (so an infinite grad stays infinite at x = 0 instead of becoming inf * 0)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        d = x.data
        if d.dtype in FLOATS:
            return wrap(K.gelu_fwd(d))
        return wrap(d * 0.5 * (_erf(d * (1 / math.sqrt(2))) + 1))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if not is_grad_enabled() and x.dtype in FLOATS:  # an ordinary backward: the fused kernel
            return wrap(K.gelu_bwd(x.data, grad.data))
        cdf = (erf(x * (1 / math.sqrt(2))) + 1) * 0.5
        pdf = exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))
        return grad * (cdf + x * pdf)


def gelu(x: Variable) -> Variable:
    """x * Phi(x), Phi the standard normal CDF."""
    return Gelu.apply(variable_arg(x, "gelu"))


def nan_to_num(x: Variable, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Variable:
    """NaN, +inf and -inf replaced by finite numbers (the dtype's largest by default); the
    gradient passes where x was finite and is 0 elsewhere."""
    x = variable_arg(x, "nan_to_num")
    d = x.data
    if d.dtype.kind != "f":
        return x * 1
    fixed = np.nan_to_num(d, nan=nan, posinf=posinf, neginf=neginf)
    return where(np.isfinite(d), x, wrap(fixed))


# ---------------------------------------------------------------- top-k, scatter, nonzero
def topk(x: Variable, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices, as the named tuple
    ``(values, indices)``; the gradient goes to the chosen positions."""
    from .indexing import TakeAlong, sort_order

    x = variable_arg(x, "topk")
    d = _dim(dim, x.ndim) if x.ndim else 0
    data = x.data if x.ndim else x.data.reshape(1)
    if not 0 <= k <= data.shape[d]:
        raise IndexError(f"topk: k ({k}) must lie in [0, {data.shape[d]}] (the size of dim {dim})")
    idx = np.take(sort_order(data, d, largest), range(k), axis=d)
    values = TakeAlong.apply(x if x.ndim else reshape(x, (1,)), d, idx)
    return _TOPK(values, Variable(idx))


def _topk_type() -> type:
    from .reduce import values_indices_type

    return values_indices_type("topk")


_TOPK = _topk_type()


class Scatter(Function):
    """scatter(x, dim, index, src, add): x with src written (or added) at index along dim;
    grad_x = grad (zeroed where written), grad_src = grad gathered at index"""

    @staticmethod
    def forward(ctx, x, dim, idx, src, add):
        ctx.dim, ctx.idx, ctx.add = dim, idx, add
        ctx.src_shape = np.shape(raw(src))
        out = x.data.copy()
        grid = list(np.indices(idx.shape, sparse=True))
        grid[dim] = idx
        values = np.broadcast_to(raw(src), idx.shape) if np.ndim(raw(src)) == 0 else \
            np.asarray(raw(src))[tuple(slice(0, n) for n in idx.shape)]
        if add:
            np.add.at(out, tuple(grid), values)
        else:
            out[tuple(grid)] = values
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        from .indexing import TakeAlong

        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = grad if ctx.add else Scatter.apply(grad, ctx.dim, ctx.idx, 0.0, False)
        if ctx.needs_input_grad[3]:
            picked = TakeAlong.apply(grad, ctx.dim, ctx.idx)
            pad = tuple((0, s - n) for s, n in zip(ctx.src_shape, ctx.idx.shape))
            gsrc = picked if not any(p[1] for p in pad) else _PadZeros.apply(picked, pad)
        return gx, None, None, gsrc, None


class _PadZeros(Function):
    """pad_zeros(g, widths): g with zeros after it (the gradient of a src larger than its index)"""

    @staticmethod
    def forward(ctx, g, widths):
        ctx.inner = tuple(slice(0, n) for n in g.shape)
        return wrap(np.pad(g.data, widths))

    @staticmethod
    def backward(ctx, grad):
        return GetItem.apply(grad, ctx.inner), None


def _scatter(x: Variable, dim: int, index: Any, src: Any, add: bool, name: str) -> Variable:
    from .indexing import index_array

    x = variable_arg(x, name)
    d = _dim(dim, x.ndim)
    idx = index_array(index, name)
    if idx.ndim != x.ndim:
        raise ShapeError(f"{name}: index must have as many dimensions as self ({x.ndim}), got {idx.ndim}")
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[d]):
        raise IndexError(f"{name}: index out of range for dimension {d} of size {x.shape[d]}")
    if any(i != d and n > s for i, (n, s) in enumerate(zip(idx.shape, x.shape))) or (
            np.ndim(raw(src)) and any(n > s for n, s in zip(idx.shape, np.shape(raw(src))))):
        raise ShapeError(f"{name}: index {list(idx.shape)} must be no larger than self {list(x.shape)} apart from "
                         f"dimension {d}, and no larger than src {list(np.shape(raw(src)))}")
    if not add and not isinstance(src, Variable) and np.ndim(src) == 0:
        src = float(src) if x.dtype.kind == "f" else src
    return Scatter.apply(x, d, idx, src, add)


def scatter(x: Variable, dim: int, index: Any, src: Any = None, *, value: Any = None) -> Variable:
    """A copy of x with ``src`` (or the number ``value``) written at ``index`` along ``dim``:
    out[i][index[i][j]] = src[i][j] for dim 1."""
    return _scatter(x, dim, index, value if src is None else src, False, "scatter")


def scatter_add(x: Variable, dim: int, index: Any, src: Any) -> Variable:
    """A copy of x with ``src`` added at ``index`` along ``dim`` (repeated indices add up)."""
    return _scatter(x, dim, index, src, True, "scatter_add")


def nonzero(x: Variable, *, as_tuple: bool = False) -> Any:
    """Indices of the nonzero elements: an int64 (n, ndim) Variable, or one per dim with as_tuple."""
    x = variable_arg(x, "nonzero")
    found = np.nonzero(x.data if x.ndim else x.data.reshape(1))
    if as_tuple:
        return tuple(Variable(i.astype(np.int64)) for i in found)
    return Variable(np.stack(found, axis=1).astype(np.int64) if found else np.zeros((0, 0), np.int64))


class Pad(Function):
    """pad(x, widths, value): constant padding;  grad_x = the grad without the padding"""

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.inner = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))
        return Variable._make(np.pad(x.data, widths, constant_values=value))

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.inner], None, None
