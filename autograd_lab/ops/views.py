"""More ways to look at part of a tensor, with PyTorch's names: ``narrow``, ``select``, ``unbind``
(basic indexing) and ``diagonal`` are real views, as in PyTorch; ``as_strided`` and ``unfold``
pick elements by a map of flat positions (``Take``): copies here (PyTorch's are views), whose
gradient adds each output's gradient back at the position it came from (so overlapping windows
sum, as in PyTorch).
"""
from __future__ import annotations

from builtins import max as builtins_max
from typing import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided as np_as_strided
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import ShapeError
from ..function import Function
from ..variable import Variable
from ._util import variable_arg, wrap
from .shape import check_dim, getitem


def _dim(dim: int, ndim: int) -> int:
    check_dim(dim, ndim)
    return dim % builtins_max(ndim, 1)


def narrow(x: Variable, dim: int, start: int, length: int) -> Variable:
    """The ``length`` entries of ``dim`` from ``start`` (a view)."""
    x = variable_arg(x, "narrow")
    d = _dim(dim, x.ndim)
    n = x.shape[d]
    start = int(start)
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({n}); "
                         f"pick 0 <= start and start + length <= {n}.")
    idx = (slice(None),) * d + (slice(start, start + int(length)),)
    return getitem(x, idx)


def select(x: Variable, dim: int, index: int) -> Variable:
    """Entry ``index`` of ``dim``, that dim removed (a view): ``x.select(1, 0)`` is ``x[:, 0]``."""
    x = variable_arg(x, "select")
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim Variable; it has no dim to pick from.")
    d = _dim(dim, x.ndim)
    n = x.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for Variable of size {x.shape} at dimension {d}")
    return getitem(x, (slice(None),) * d + (int(index) % n,))


def unbind(x: Variable, dim: int = 0) -> tuple[Variable, ...]:
    """Every entry of ``dim`` as its own Variable (views), that dim removed."""
    x = variable_arg(x, "unbind")
    if x.ndim == 0:
        raise IndexError("unbind() cannot be applied to a 0-dim Variable.")
    d = _dim(dim, x.ndim)
    return tuple(select(x, d, i) for i in range(x.shape[d]))


class Take(Function):
    """x.ravel()[positions] for an integer array of flat positions;  grad_x adds each gradient
    back at its position (``Put``), whose own gradient is a ``Take`` again"""

    @staticmethod
    def forward(ctx, x, positions):
        ctx.shape, ctx.positions = x.shape, positions
        return wrap(np.ascontiguousarray(x.data).reshape(-1)[positions])

    @staticmethod
    def backward(ctx, grad):
        return Put.apply(grad, ctx.positions, ctx.shape), None


class Put(Function):
    """zeros(shape) with grad added at the flat ``positions``;  its gradient is Take"""

    @staticmethod
    def forward(ctx, g, positions, shape):
        ctx.positions = positions
        out = np.zeros(int(np.prod(shape)), dtype=g.dtype)
        np.add.at(out, positions, g.data)
        return wrap(out.reshape(shape))

    @staticmethod
    def backward(ctx, grad):
        return Take.apply(grad, ctx.positions), None, None


def _positions(x: Variable) -> np.ndarray:
    return np.arange(x.data.size, dtype=np.int64).reshape(x.shape)


def _diagonal_of(a: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """np.diagonal's result as a view that stays writable when ``a`` is (numpy's is read-only)."""
    start = [slice(None)] * a.ndim
    start[d1], start[d2] = slice(max(-offset, 0), None), slice(max(offset, 0), None)
    corner = a[tuple(start)]
    n = max(0, min(corner.shape[d1], corner.shape[d2]))
    rest = [k for k in range(a.ndim) if k not in (d1, d2)]
    shape = tuple(a.shape[k] for k in rest) + (n,)
    strides = tuple(a.strides[k] for k in rest) + (a.strides[d1] + a.strides[d2],)
    return np.lib.stride_tricks.as_strided(corner, shape, strides, writeable=a.flags.writeable)


class Diagonal(Function):
    """diagonal(x, offset, dim1, dim2): a view of the diagonal;  grad_x = the grad put back on it"""

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.shape = x.shape
        ctx.positions = np.diagonal(_positions(x), offset, d1, d2).copy()
        return wrap(_diagonal_of(x.data, offset, d1, d2))

    @staticmethod
    def backward(ctx, grad):
        return Put.apply(grad, ctx.positions, ctx.shape), None, None, None


def diagonal(x: Variable, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Variable:
    """The diagonal of the planes (dim1, dim2), as the last dim; ``offset`` > 0 above it. A view,
    as in PyTorch: ``x.diagonal().fill_(0)`` changes x."""
    from .shape import as_view

    x = variable_arg(x, "diagonal")
    if x.ndim < 2:
        raise ShapeError(f"diagonal() needs a Variable with at least 2 dims; this one has shape {x.shape}.")
    d1, d2 = _dim(dim1, x.ndim), _dim(dim2, x.ndim)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}; pick two different dims.")
    offset = int(offset)
    return as_view(Diagonal.apply(x, offset, d1, d2), x, lambda a: _diagonal_of(a, offset, d1, d2))


def as_strided(x: Variable, size: Sequence[int], stride: Sequence[int], storage_offset: int = 0) -> Variable:
    """The elements of x's values in row-major order (the storage of ``x.contiguous()``) at
    ``storage_offset`` + sum(i_k * stride_k), laid out in ``size``; strides count elements, as in
    PyTorch. (PyTorch reads a view's own storage, its base's; here it is always x's values.)"""
    x = variable_arg(x, "as_strided")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise ShapeError(f"mismatch in length of strides and shape: size {size} has {len(size)} dims, "
                         f"stride {stride} has {len(stride)}; give one stride per dim.")
    if any(s < 0 for s in size + stride) or storage_offset < 0:
        raise ShapeError(f"as_strided: sizes, strides and storage_offset must be >= 0; got size {size}, "
                         f"stride {stride}, storage_offset {storage_offset}.")
    if not all(size):
        return Take.apply(x, np.zeros(size, np.int64))
    last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= x.data.size:
        raise ShapeError(f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset "
                         f"{storage_offset} reach element {last}, but the Variable has {x.data.size} elements.")
    flat = np.arange(x.data.size, dtype=np.int64)
    pos = np_as_strided(flat[storage_offset:], size, tuple(s * flat.itemsize for s in stride))
    return Take.apply(x, np.array(pos))


def unfold(x: Variable, dimension: int, size: int, step: int) -> Variable:
    """Every window of ``size`` along ``dimension``, taken each ``step``; the windows replace that
    dim and their entries make a new last dim (PyTorch's ``Tensor.unfold``)."""
    x = variable_arg(x, "unfold")
    d = _dim(dimension, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if step <= 0:
        raise ValueError(f"unfold: step is {step} but must be > 0")
    if size < 0 or size > n:
        raise ShapeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    pos = _positions(x).reshape(x.shape or (1,))
    windows = sliding_window_view(pos, size, axis=d)
    windows = windows[(slice(None),) * d + (slice(None, None, step),)]
    if x.ndim == 0:
        windows = windows.reshape(-1)[: size]
    return Take.apply(x, np.ascontiguousarray(windows))
