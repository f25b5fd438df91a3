"""Shape operations: broadcasting and its inverse, reshape, transpose, indexing, joining."""
from __future__ import annotations

import math
import weakref
from builtins import max as builtins_max
from typing import Any, Sequence

import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..grad_mode import STATE
from ..primitives import BroadcastTo, SumTo, broadcast_to, sum_to  # noqa: F401  (defined below the engine)
from ..variable import Variable
from ._util import raw, variable_arg, wrap


def as_view(out: Variable, x: Variable, fn: Any) -> Variable:
    """Mark ``out`` as a view of ``x``'s base when its data shares x's memory (numpy returned a
    view, not a copy): it then shares the base's version counter, and an in-place change through
    it updates the base's history (``ops.inplace``). ``fn`` maps an array shaped like ``x`` to
    the view's part, as the op did on ``x.data``."""
    data = out._data
    if data.base is None or not (np.may_share_memory(data, x._data) or _same_owner(data, x._data)):
        return out
    base = x._base if x._base is not None else x
    parent = x._view_fn
    out._base = base
    out._view_fn = fn if parent is None else (lambda a: fn(parent(a)))
    out._vc = base._version_counter
    if not STATE.enabled and x._requires_grad:  # PyTorch: such a view requires grad, as a leaf of its own
        out._requires_grad = out._no_grad_view = True
    if x._multi_view is not None:  # a view of a piece of split() is refused in-place changes too
        out._multi_view = x._multi_view
    if STATE.enabled and data.dtype.kind == "f":
        if base._views is None:
            base._views = weakref.WeakSet()
        base._views.add(out)
    return out


def _same_owner(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are views of one memory block: what ``may_share_memory`` cannot say
    of a view without elements (``x[0:0]``), which is still a view to write through."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    while isinstance(b.base, np.ndarray):
        b = b.base
    return a is b


class Reshape(Function):
    """reshape(x, shape): same elements, new shape."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        try:
            return wrap(x.data.reshape(shape))
        except ValueError:
            raise ShapeError(
                f"cannot reshape a Variable of shape {x.shape} ({x.data.size} elements) into "
                f"shape {tuple(shape)}; the number of elements must stay the same (use -1 for one "
                "dimension to have it inferred)."
            ) from None

    @staticmethod
    def backward(ctx, grad):
        return reshape(grad, ctx.in_shape), None


def reshape(x: Variable, *shape: Any) -> Variable:
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    x = variable_arg(x, "reshape")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    return as_view(Reshape.apply(x, shape), x, lambda a: a.reshape(shape))


def view(x: Variable, *shape: Any) -> Variable:
    """``x.view(2, 3)``: ``reshape`` that never copies. A shape that the data's layout cannot show
    without a copy (after a transpose or an expand) raises a ViewError, as in PyTorch."""
    from ..errors import ViewError

    out = reshape(variable_arg(x, "view"), *shape)
    if out._base is None and out._data.size and not np.may_share_memory(out._data, x._data):
        raise ViewError(
            f"view size is not compatible with the input's layout: a Variable of shape {x.shape} made "
            f"by a transpose, an expand or a non-contiguous slice cannot be viewed as shape {out.shape} "
            "without copying its data. Use .reshape(...) (which copies when it must), or "
            ".contiguous().view(...)."
        )
    return out


class Transpose(Function):
    """transpose(x, axes): permute the axes."""

    @staticmethod
    def forward(ctx, x, axes):
        ctx.axes = axes
        return wrap(np.transpose(x.data, axes))

    @staticmethod
    def backward(ctx, grad):
        inverse = None if ctx.axes is None else tuple(np.argsort(ctx.axes))
        return Transpose.apply(grad, inverse), None


def transpose(x: Variable, *axes: Any) -> Variable:
    """Two axes ``x.transpose(0, 1)``: swap them (PyTorch). No axes: reverse all (numpy, like ``x.T``).
    A full permutation ``x.transpose(2, 0, 1)``: reorder the axes (as ``permute``)."""
    x = variable_arg(x, "transpose")
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    if len(axes) == 0:
        return Transpose.apply(x, None)
    if len(axes) == 2:
        for a in axes:
            check_dim(a, x.ndim)
        if x.ndim == 0:  # PyTorch allows dims 0 and -1 on a 0-d Variable: nothing to swap
            return Transpose.apply(x, ())
        perm = list(range(x.ndim))
        i, j = (a % x.ndim for a in axes)
        perm[i], perm[j] = perm[j], perm[i]
        return transposed(x, tuple(perm))
    return permute(x, *axes)


def transposed(x: Variable, axes: tuple | None) -> Variable:
    """Transpose.apply, its result marked as the view it is."""
    return as_view(Transpose.apply(x, axes), x, lambda a: np.transpose(a, axes))


def check_dim(dim: int, ndim: int) -> None:
    """PyTorch's rule: a dim lies in [-ndim, ndim - 1], where a 0-d Variable counts as 1-d."""
    n = builtins_max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                         f"{dim}) for a Variable with {ndim} dimension(s).")


def permute(x: Variable, *dims: Any) -> Variable:
    """Reorder all axes: ``x.permute(2, 0, 1)``."""
    x = variable_arg(x, "permute")
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if sorted(d % max(x.ndim, 1) for d in dims) != list(range(x.ndim)):
        raise ShapeError(f"permute: {dims} is not a permutation of the {x.ndim} axes of shape {x.shape}.")
    return transposed(x, tuple(d % x.ndim for d in dims))


def _raw_index(idx: Any) -> Any:
    """An index as numpy takes it; a slice with a negative step is refused, as PyTorch refuses it."""
    for part in idx if isinstance(idx, tuple) else (idx,):
        if isinstance(part, slice) and part.step is not None and part.step < 0:
            from ..errors import ArgumentError

            raise ArgumentError(
                f"step must be greater than zero: a Variable cannot be sliced with step {part.step} "
                "(a view with a negative stride). To reverse it, use x.flip(dim)."
            )
    if isinstance(idx, tuple):
        return tuple(raw(i) for i in idx)
    return raw(idx)


class GetItem(Function):
    """x[idx] for ints, slices, None, Ellipsis, integer arrays and boolean masks."""

    @staticmethod
    def forward(ctx, x, idx, save_index=False):
        ctx.in_shape, ctx.idx = x.shape, idx
        try:
            out = x.data[idx]
        except IndexError as exc:
            raise IndexError(f"{exc} (indexing a Variable of shape {x.shape})") from None
        if not isinstance(out, np.ndarray):  # one element: a 0-d view of it, not a copy (PyTorch)
            whole = idx if isinstance(idx, tuple) else (idx,)
            out = x.data[whole + (Ellipsis,)] if _is_basic(whole) and Ellipsis not in whole else np.array(out)
        elif out.base is None or not np.may_share_memory(out, x.data):
            # a copy (advanced indexing) is laid out row-major, as PyTorch's: numpy may put the
            # indexed dim first in memory, and contiguous() or view() of it would then differ
            out = np.ascontiguousarray(out)
        if save_index:  # x[index] saves the index arrays, as PyTorch does: a second backward raises
            ctx.save_for_backward(*(wrap(np.asarray(i)) for i in (idx if isinstance(idx, tuple) else (idx,))
                                    if isinstance(i, np.ndarray)))
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors
        return IndexAdd.apply(grad, ctx.in_shape, ctx.idx), None, None


class IndexAdd(Function):
    """index_add(g, shape, idx): zeros(shape) with g added at idx (repeated indices add up)."""

    @staticmethod
    def forward(ctx, g, shape, idx):
        ctx.idx = idx
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, idx, g.data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return GetItem.apply(grad, ctx.idx), None, None


def _is_int(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_array_index(i: Any) -> bool:
    return isinstance(i, (list, np.ndarray)) and np.ndim(i) > 0


def _ints_first(idx: Any) -> tuple[tuple, tuple] | None:
    """PyTorch applies int indices before index arrays; numpy counts an int as an index array, so
    an int and an array separated by a slice would put the array's axis first (numpy's rule, not
    PyTorch's). Such an index is split in two steps: the ints (and None), then the rest."""
    if not isinstance(idx, tuple) or not any(_is_array_index(i) for i in idx):
        return None
    if not any(_is_int(i) for i in idx) or any(
            isinstance(i, np.ndarray) and i.dtype == bool and i.ndim != 1 for i in idx):
        return None
    first = tuple(i if _is_int(i) or i is None or i is Ellipsis else slice(None) for i in idx)
    rest = tuple(slice(None) if i is None else i for i in idx if not _is_int(i))
    return first, rest


def _is_basic(idx: tuple) -> bool:
    """Ints, slices, None and Ellipsis only: numpy (and PyTorch) then return a view."""
    return all(i is None or i is Ellipsis or isinstance(i, slice) or _is_int(i) for i in idx)


def getitem(x: Variable, idx: Any) -> Variable:
    idx = _raw_index(idx)
    split = _ints_first(idx)
    if split is not None:
        return GetItem.apply(GetItem.apply(x, split[0]), split[1])
    whole = idx if isinstance(idx, tuple) else (idx,)
    if _is_basic(whole):
        view_idx = whole if Ellipsis in whole else whole + (Ellipsis,)
        return as_view(GetItem.apply(x, idx), x, lambda a: a[view_idx])
    return GetItem.apply(x, idx, True)


class SetItem(Function):
    """setitem(x, idx, v): a copy of x with x[idx] = v (the out-of-place core of ``x[idx] = v``)."""

    @staticmethod
    def forward(ctx, x, idx, value):
        ctx.idx = idx
        ctx.value_shape = np.shape(raw(value))
        out = x.data.copy()
        out[idx] = raw(value)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        gx = SetItem.apply(grad, ctx.idx, 0) if ctx.needs_input_grad[0] else None
        if not ctx.needs_input_grad[2]:
            return gx, None, None
        return gx, None, sum_to(GetItem.apply(grad, ctx.idx), ctx.value_shape)


class Concatenate(Function):
    """concatenate(xs, axis): join along an existing axis."""

    @staticmethod
    def forward(ctx, axis, *xs):
        ctx.axis = axis
        ctx.sizes = [x.shape[axis] for x in xs]
        try:
            return wrap(np.concatenate([x.data for x in xs], axis=axis))
        except ValueError:
            raise ShapeError(
                f"concatenate along axis {axis}: shapes {[x.shape for x in xs]} must agree in every "
                "other dimension."
            ) from None

    @staticmethod
    def backward(ctx, grad):
        bounds = np.cumsum([0] + ctx.sizes)
        index = [slice(None)] * grad.ndim
        out = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            index[ctx.axis] = slice(int(lo), int(hi))
            out.append(GetItem.apply(grad, tuple(index)))
        return (None, *out)


class Stack(Function):
    """stack(xs, axis): join along a new axis."""

    @staticmethod
    def forward(ctx, axis, *xs):
        ctx.axis = axis
        try:
            return wrap(np.stack([x.data for x in xs], axis=axis))
        except ValueError:
            raise ShapeError(f"stack: all shapes must be equal; got {[x.shape for x in xs]}.") from None

    @staticmethod
    def backward(ctx, grad):
        n = grad.shape[ctx.axis]
        index = [slice(None)] * grad.ndim
        out = []
        for i in range(n):
            index[ctx.axis] = i
            out.append(GetItem.apply(grad, tuple(index)))
        return (None, *out)


def _as_vars(xs: Sequence[Any]) -> list[Variable]:
    return [x if isinstance(x, Variable) else Variable(x) for x in xs]


def _nonempty(xs: Sequence[Any], fn: str) -> list[Variable]:
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or len(xs) == 0:
        got = "an empty sequence" if isinstance(xs, (list, tuple)) else f"a {type(xs).__name__}"
        raise ValueError(f"al.{fn}() expected a non-empty list or tuple of Variables, got {got}; "
                         f"pass them as a list: al.{fn}([a, b], dim=0).")
    return _as_vars(xs)


def concatenate(xs: Sequence[Any], axis: int = 0, *, dim: int | None = None) -> Variable:
    """Join Variables along an existing axis (``al.cat`` is the same)."""
    xs = _nonempty(xs, "cat")
    axis = dim if dim is not None else axis
    return Concatenate.apply(axis % xs[0].ndim, *xs)


def stack(xs: Sequence[Any], axis: int = 0, *, dim: int | None = None) -> Variable:
    """Join Variables of equal shape along a new axis."""
    xs = _nonempty(xs, "stack")
    axis = dim if dim is not None else axis
    return Stack.apply(axis % (xs[0].ndim + 1), *xs)


def flatten(x: Variable, start_dim: int = 0, end_dim: int = -1) -> Variable:
    x = variable_arg(x, "flatten")
    shape = x.shape
    check_dim(start_dim, x.ndim)
    check_dim(end_dim, x.ndim)
    s, e = start_dim % max(x.ndim, 1), end_dim % max(x.ndim, 1)
    if s > e:
        raise ShapeError(f"flatten() has invalid args: start_dim ({start_dim}) cannot come after "
                         f"end_dim ({end_dim}).")
    new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]  # np.prod: 2 µs more
    return reshape(x, new)


def unsqueeze(x: Variable, dim: int) -> Variable:
    x = variable_arg(x, "unsqueeze")
    check_dim(dim, x.ndim + 1)  # a new axis may go anywhere in [-ndim - 1, ndim]
    dim = dim % (x.ndim + 1)
    return reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


def squeeze(x: Variable, dim: int | None = None) -> Variable:
    x = variable_arg(x, "squeeze")
    if dim is None:
        return reshape(x, tuple(s for s in x.shape if s != 1))
    check_dim(dim, x.ndim)
    if x.ndim == 0:
        return x
    dim = dim % x.ndim
    if x.shape[dim] != 1:
        return x
    return reshape(x, x.shape[:dim] + x.shape[dim + 1:])


def expanded(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` broadcast to ``shape`` without copying. numpy makes every broadcast read-only; when
    no element repeats (only dims of size 1 are added, as by ``expand(1, ...)``) the view stays
    writable, as PyTorch lets one write into it."""
    out = np.broadcast_to(a, shape)
    if a.flags.writeable and not any(st == 0 and n > 1 for st, n in zip(out.strides, out.shape)):
        out = np.lib.stride_tricks.as_strided(a, out.shape, out.strides)
    return out


class Expand(Function):
    """expand(x, shape): x repeated along new or size-1 axes without copying (a view whose
    repeated elements share memory, as PyTorch's); the gradient sums over the repeats."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return wrap(expanded(x.data, shape))

    @staticmethod
    def backward(ctx, grad):
        return sum_to(grad, ctx.in_shape), None


def expand(x: Variable, *shape: Any) -> Variable:
    """``x.expand(3, 2)``: a view of x repeated to ``shape``; -1 keeps a dimension's size. It
    shares x's memory, so it sees later in-place changes of x, and writing into it in place is
    refused (several of its elements are one element of x) — clone() it first."""
    x = variable_arg(x, "expand")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: the number of sizes given ({len(shape)}) must be at least the number "
                         f"of dimensions of the Variable ({x.ndim}); got {shape} for shape {x.shape}")
    if any(s == -1 for s in shape[:lead]):
        raise ShapeError(f"expand: -1 is not allowed for a new leading dimension; got {shape} for shape {x.shape}")
    full = shape[:lead] + tuple(x.shape[i] if s == -1 else s for i, s in enumerate(shape[lead:]))
    try:
        fits = np.broadcast_shapes(x.shape, full) == full
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"expand: cannot expand shape {x.shape} to {full}; each dimension must match "
                         "or be 1 (new dimensions are added on the left).")
    return as_view(Expand.apply(x, full), x, lambda a: expanded(a, full))
