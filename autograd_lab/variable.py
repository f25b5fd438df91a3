"""Variable: a numpy array that remembers how it was made.

A Variable holds ``data`` (a numpy array), ``grad`` (a Variable or None), whether it
``requires_grad``, and ``grad_fn``: the graph node of the Function that produced it
(None for a leaf). Operations and ``backward`` are attached by ``autograd_lab.ops``,
so this module stays at the bottom of the import order.
"""
from __future__ import annotations

import builtins
import warnings
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .errors import BackwardError, ShapeError
from .grad_mode import STATE


class VersionCounter:
    """Counts in-place changes; shared by a Variable and the aliases of its data."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class _Size(int):
    """The element count (an int, numpy's ``x.size``) that PyTorch code may call: ``x.size()``
    gives the shape, ``x.size(dim)`` the length of one dim."""

    _shape: tuple = ()

    def __new__(cls, count: int, shape: tuple) -> "_Size":
        self = super().__new__(cls, count)
        self._shape = shape
        return self

    def __call__(self, dim: "int | None" = None) -> Any:
        if dim is None:
            return tuple(self._shape)
        n = max(len(self._shape), 1)
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        return self._shape[dim] if self._shape else 1


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` takes the hook off again."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _as_array(data: Any, dtype: Any = None) -> np.ndarray:
    if isinstance(data, Variable):
        data = data.data
    try:
        arr = np.asarray(data, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"Variable data must be numbers; could not make an array from {type(data).__name__} "
            f"({exc}). Pass a number, a (nested) list of numbers of equal lengths, or a numeric "
            "numpy array."
        ) from None
    if arr.dtype.kind not in "biufc":
        raise TypeError(
            f"Variable data must be numbers; got an array of dtype {arr.dtype} built from "
            f"{type(data).__name__}. Pass a number, a (nested) list of numbers of equal lengths, "
            "or a numeric numpy array."
        )
    return arr


class Variable:
    """A node of the computational graph holding a numpy array.

    >>> import autograd_lab as al
    >>> x = al.Variable([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    Variable([2., 4.])
    """

    __array_ufunc__ = None  # numpy defers to our reflected operators: ndarray * Variable works

    # class-level defaults: a new Variable only stores what differs (cheap to create)
    _grad: "Variable | None" = None
    grad_fn: Any = None
    _output_nr = 0
    _hooks: list | None = None
    _accumulator: Any = None
    _retains_grad = False
    _requires_grad = False
    _vc: VersionCounter | None = None
    # a view (basic indexing, reshape, transpose) knows the Variable whose memory it shows and how
    # (``_view_fn`` applied to an array of the base's shape gives the view's part of it); a base
    # keeps weak references to its views made in grad mode (``ops._inplace`` rewrites their history)
    _base: "Variable | None" = None
    _view_fn: Callable[[np.ndarray], np.ndarray] | None = None
    _views: Any = None

    def __init__(self, data: Any, requires_grad: builtins.bool = False, *, dtype: Any = None) -> None:
        self._data = _as_array(data, dtype)
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _make(cls, data: np.ndarray) -> "Variable":
        """Fast constructor for internal use: ``data`` is already an ndarray."""
        v = object.__new__(cls)
        v._data = data if type(data) is np.ndarray else np.asarray(data)
        return v

    @property
    def _version_counter(self) -> VersionCounter:
        """Created on first use; shared with aliases of the same memory (detach, views)."""
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        return vc

    @_version_counter.setter
    def _version_counter(self, vc: VersionCounter) -> None:
        self._vc = vc

    # ---- data and metadata -------------------------------------------------------------
    @property
    def data(self) -> np.ndarray:
        """The numpy array. Assigning to ``x.data`` swaps the array without autograd seeing it."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        self._data = _as_array(value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> builtins.int:
        return self._data.ndim

    @property
    def size(self) -> "_Size":
        """Number of elements (numpy's meaning; PyTorch calls this ``numel()``). Called, it is
        PyTorch's method: ``x.size()`` is the shape and ``x.size(dim)`` one dim's length."""
        return _Size(self._data.size, self._data.shape)

    def numel(self) -> builtins.int:
        return self._data.size

    def dim(self) -> builtins.int:
        return self._data.ndim

    @property
    def is_leaf(self) -> builtins.bool:
        """True for Variables made by the user (no grad_fn); only leaves accumulate ``.grad``."""
        return self.grad_fn is None

    @property
    def _version(self) -> builtins.int:
        return self._version_counter.value

    def _bump_version(self) -> None:
        self._version_counter.value += 1

    @property
    def requires_grad(self) -> builtins.bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None:
        value = bool(value)
        if not self.is_leaf:
            raise BackwardError(
                "you can only change requires_grad flags of leaf variables. "
                f"This Variable was made by {type(self.grad_fn).__name__}. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and self._data.dtype.kind == "c":
            raise TypeError(
                f"complex Variables cannot require gradients in autograd_lab; this one is "
                f"{self._data.dtype}. (PyTorch differentiates complex functions with conjugate "
                "Wirtinger derivatives; this library does not.) Keep the real and imaginary parts "
                "as two real Variables instead."
            )
        if value and self._data.dtype.kind != "f":
            raise TypeError(
                f"only Variables of floating point dtype can require gradients; this one is {self._data.dtype}. "
                "Convert it first, e.g. al.tensor(x, dtype=np.float64, requires_grad=True)."
            )
        self._requires_grad = value

    def requires_grad_(self, requires_grad: builtins.bool = True) -> "Variable":
        """Set ``requires_grad`` in place and return self (for leaves)."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> "Variable | None":
        """Accumulated gradient of a leaf (or of a non-leaf that called ``retain_grad()``)."""
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Variable that is not a leaf is being accessed. It is not "
                "filled in by backward(): only leaves (Variables you made with requires_grad=True) "
                "keep their gradient. Call .retain_grad() on this Variable before backward() if "
                "you want its gradient, or read .grad of the leaf it was computed from.",
                UserWarning, stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: "Variable | np.ndarray | None") -> None:
        if value is not None:
            if not isinstance(value, Variable):
                value = Variable(value)
            if value.shape != self.shape:
                raise ShapeError(
                    f"assigned grad has shape {value.shape} but the Variable has shape {self.shape}; "
                    "a gradient must have the shape of the Variable it belongs to."
                )
            if value.dtype != self.dtype:
                raise TypeError(
                    f"assigned grad has dtype {value.dtype} but the Variable has dtype {self.dtype}; "
                    "a gradient must have the dtype of the Variable it belongs to (later backward "
                    f"passes add into it). Convert it first: .to({self.dtype}) or .astype(...)."
                )
        self._grad = value

    # ---- conversion ----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The data as a numpy array (shared, not copied). Raises if the Variable requires grad,
        like PyTorch, so that a later in-place change cannot silently corrupt the graph. Where
        nothing is recorded (inside ``al.no_grad()`` or a Function's ``forward``) it is allowed."""
        if self._requires_grad and STATE.enabled:
            raise BackwardError(
                "Can't call numpy() on a Variable that requires grad. Use var.detach().numpy() instead."
            )
        return self._data

    def item(self) -> Any:
        """The single value of a one-element Variable as a Python number."""
        if self._data.size != 1:
            raise ShapeError(
                f"item() needs a Variable with exactly one element; this one has shape {self.shape} "
                f"({self._data.size} elements). Reduce it first, e.g. x.sum().item(), or index it."
            )
        return self._data.item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def __float__(self) -> builtins.float:
        return float(self.item())

    def __int__(self) -> builtins.int:
        return int(self.item())

    def __index__(self) -> builtins.int:
        if self._data.dtype.kind not in "iu":
            raise TypeError(f"only integer Variables can be used as an index; this one is {self.dtype}")
        return int(self.item())

    def __bool__(self) -> builtins.bool:
        if self._data.size != 1:
            raise ValueError(
                f"the truth value of a Variable with {self._data.size} elements is ambiguous; "
                "use (x == y).all() or .any(), or compare single elements."
            )
        return bool(self._data.item())

    def __len__(self) -> builtins.int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d Variable")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d Variable")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__  # == is elementwise, so hash by identity

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """numpy's conversion protocol: ``np.asarray(v)`` shares the data, ``np.array(v)`` (or
        ``copy=True``) copies it, and ``copy=False`` refuses a conversion that would copy."""
        data = self._data
        if dtype is not None and np.dtype(dtype) != data.dtype:
            if copy is False:
                raise ValueError(
                    f"cannot convert a Variable of dtype {data.dtype} to {np.dtype(dtype)} without "
                    "a copy, but copy=False was asked for. Pass copy=None (or leave it out)."
                )
            return data.astype(dtype)
        return data.copy() if copy else data

    # ---- graph ---------------------------------------------------------------------------
    def detach(self) -> "Variable":
        """A new leaf sharing the same data (and version counter) but cut from the graph."""
        out = Variable._make(self._data)
        out._version_counter = self._version_counter
        return out

    def detach_(self) -> "Variable":
        """Cut this Variable from the graph in place: it becomes a leaf that does not require grad."""
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Ask a non-leaf to keep its ``.grad`` after backward (leaves always keep theirs)."""
        if not self._requires_grad:
            raise BackwardError("can't retain_grad on a Variable that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self.grad_fn._retain_grad_for(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> builtins.bool:
        return self._retains_grad

    def register_hook(self, hook: Callable[["Variable"], "Variable | None"]) -> RemovableHandle:
        """Call ``hook(grad)`` when this Variable's gradient is computed; a returned value replaces it."""
        if not self._requires_grad:
            raise BackwardError(
                "cannot register a hook on a Variable that doesn't require gradient; "
                "set requires_grad=True on the leaf it comes from."
            )
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            hooks = self.grad_fn._pre_hooks_for(self._output_nr)
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def _check_inplace(self) -> None:
        """In-place writes to a leaf that requires grad would make its gradient meaningless."""
        if self._requires_grad and self.grad_fn is None and STATE.enabled:
            raise BackwardError(
                "a leaf Variable that requires grad is being used in an in-place operation. "
                "Wrap parameter updates in `with al.no_grad():`, or work on a copy (x.clone())."
            )
        data = self._data
        if any(step == 0 and n > 1 for step, n in zip(data.strides, data.shape)):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to Variable refers to a "
                "single memory location (it comes from expand() or broadcast_to()). Write into a copy: "
                "y = x.expand(...).clone()."
            )

    def zero_(self) -> "Variable":
        """Fill with zeros in place (bumps the version counter). On a non-leaf that requires grad
        the change is recorded like any in-place op (its gradient is then zero)."""
        if self.grad_fn is not None and self._requires_grad and STATE.enabled:
            return self.fill_(0)  # attached by autograd_lab.ops
        self._check_inplace()
        self._data[...] = 0
        self._bump_version()
        return self

    # ---- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        prefix = "Variable("
        body = np.array2string(self._data, separator=", ", prefix=prefix)
        extras = []
        if self._data.dtype not in (np.float64, np.int64, np.bool_):
            extras.append(f"dtype={self._data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return prefix + body + "".join(", " + e for e in extras) + ")"

    def __str__(self) -> str:
        return self.__repr__()

    # ---- operators and methods, as type checkers and IDEs see them ------------------------
    # At run time they are attached by ``autograd_lab.ops`` (the one place where operations
    # live, and which sits above this module); these declarations only make them visible to
    # static tools. tests/test_fidelity_structure.py keeps both lists equal.
    if TYPE_CHECKING:
        def __add__(self, other: Any) -> Variable: ...
        def __radd__(self, other: Any) -> Variable: ...
        def __sub__(self, other: Any) -> Variable: ...
        def __rsub__(self, other: Any) -> Variable: ...
        def __mul__(self, other: Any) -> Variable: ...
        def __rmul__(self, other: Any) -> Variable: ...
        def __truediv__(self, other: Any) -> Variable: ...
        def __rtruediv__(self, other: Any) -> Variable: ...
        def __pow__(self, other: Any) -> Variable: ...
        def __rpow__(self, other: Any) -> Variable: ...
        def __neg__(self) -> Variable: ...
        def __pos__(self) -> Variable: ...
        def __abs__(self) -> Variable: ...
        def __matmul__(self, other: Any) -> Variable: ...
        def __rmatmul__(self, other: Any) -> Variable: ...
        def __getitem__(self, idx: Any) -> Variable: ...
        def __setitem__(self, idx: Any, value: Any) -> None: ...
        def __mod__(self, other: Any) -> Variable: ...
        def __rmod__(self, other: Any) -> Variable: ...
        def __floordiv__(self, other: Any) -> Variable: ...
        def __rfloordiv__(self, other: Any) -> Variable: ...
        def __lt__(self, other: Any) -> Variable: ...
        def __le__(self, other: Any) -> Variable: ...
        def __gt__(self, other: Any) -> Variable: ...
        def __ge__(self, other: Any) -> Variable: ...
        def __eq__(self, other: Any) -> Variable: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Variable: ...  # type: ignore[override]
        def add_(self, other: Any) -> Variable: ...
        def sub_(self, other: Any) -> Variable: ...
        def mul_(self, other: Any) -> Variable: ...
        def div_(self, other: Any) -> Variable: ...
        def clamp_(self, min: Any = None, max: Any = None) -> Variable: ...
        def relu_(self) -> Variable: ...
        def copy_(self, other: Any) -> Variable: ...
        def fill_(self, v: Any) -> Variable: ...
        def exp_(self) -> Variable: ...
        def log_(self) -> Variable: ...
        def sqrt_(self) -> Variable: ...
        def abs_(self) -> Variable: ...
        def neg_(self) -> Variable: ...
        def sigmoid_(self) -> Variable: ...
        def tanh_(self) -> Variable: ...
        def masked_fill_(self, mask: Any, value: Any) -> Variable: ...
        def __iadd__(self, other: Any) -> Variable: ...
        def __isub__(self, other: Any) -> Variable: ...
        def __imul__(self, other: Any) -> Variable: ...
        def __itruediv__(self, other: Any) -> Variable: ...
        def add(self, b: Any) -> Variable: ...
        def sub(self, b: Any) -> Variable: ...
        def mul(self, b: Any) -> Variable: ...
        def div(self, b: Any) -> Variable: ...
        def pow(self, b: Any) -> Variable: ...
        def neg(self) -> Variable: ...
        def matmul(self, b: Any) -> Variable: ...
        def exp(self) -> Variable: ...
        def log(self) -> Variable: ...
        def sqrt(self) -> Variable: ...
        def abs(self) -> Variable: ...
        def relu(self) -> Variable: ...
        def sigmoid(self) -> Variable: ...
        def tanh(self) -> Variable: ...
        def clamp(self, min: Any = None, max: Any = None) -> Variable: ...
        def clip(self, min: Any = None, max: Any = None) -> Variable: ...
        def clone(self) -> Variable: ...
        def maximum(self, b: Any) -> Variable: ...
        def minimum(self, b: Any) -> Variable: ...
        def sin(self) -> Variable: ...
        def cos(self) -> Variable: ...
        def tan(self) -> Variable: ...
        def sinh(self) -> Variable: ...
        def cosh(self) -> Variable: ...
        def asin(self) -> Variable: ...
        def acos(self) -> Variable: ...
        def atan(self) -> Variable: ...
        def log1p(self) -> Variable: ...
        def expm1(self) -> Variable: ...
        def log2(self) -> Variable: ...
        def log10(self) -> Variable: ...
        def square(self) -> Variable: ...
        def reciprocal(self) -> Variable: ...
        def rsqrt(self) -> Variable: ...
        def floor(self) -> Variable: ...
        def ceil(self) -> Variable: ...
        def round(self) -> Variable: ...
        def trunc(self) -> Variable: ...
        def sign(self) -> Variable: ...
        def sum(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable: ...
        def mean(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable: ...
        def max(self, *args: Any, axis: Any = None, keepdims: Any = False, dim: Any = None, keepdim: Any = None) -> Any: ...
        def min(self, *args: Any, axis: Any = None, keepdims: Any = False, dim: Any = None, keepdim: Any = None) -> Any: ...
        def amax(self, dim: Any = (), keepdim: Any = False) -> Variable: ...
        def amin(self, dim: Any = (), keepdim: Any = False) -> Variable: ...
        def argmax(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable: ...
        def argmin(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable: ...
        def norm(self, p: Any = 'fro', dim: Any = None, keepdim: Any = False, *, axis: Any = None, keepdims: Any = False) -> Variable: ...
        def std(self, dim: Any = None, unbiased: Any = None, keepdim: Any = False, *, correction: Any = None, axis: Any = None, keepdims: Any = False) -> Variable: ...
        def var(self, dim: Any = None, unbiased: Any = None, keepdim: Any = False, *, correction: Any = None, axis: Any = None, keepdims: Any = False) -> Variable: ...
        def mm(self, b: Any) -> Variable: ...
        def t(self) -> Variable: ...
        def sort(self, dim: Any = -1, descending: Any = False, stable: Any = False) -> Any: ...
        def gather(self, dim: Any, index: Any) -> Variable: ...
        def index_select(self, dim: Any, index: Any) -> Variable: ...
        def index_add(self, dim: Any, index: Any, source: Any, *, alpha: Any = 1) -> Variable: ...
        def index_add_(self, dim: Any, index: Any, source: Any, *, alpha: Any = 1) -> Variable: ...
        def prod(self, dim: Any = None, keepdim: Any = False) -> Variable: ...
        def cumsum(self, dim: Any) -> Variable: ...
        def cumprod(self, dim: Any) -> Variable: ...
        def logsumexp(self, dim: Any, keepdim: Any = False) -> Variable: ...
        def remainder(self, other: Any) -> Variable: ...
        def fmod(self, other: Any) -> Variable: ...
        def floor_divide(self, other: Any) -> Variable: ...
        def masked_fill(self, mask: Any, value: Any) -> Variable: ...
        def tril(self, diagonal: Any = 0) -> Variable: ...
        def triu(self, diagonal: Any = 0) -> Variable: ...
        def flip(self, dims: Any) -> Variable: ...
        def roll(self, shifts: Any, dims: Any = None) -> Variable: ...
        def repeat(self, *sizes: Any) -> Variable: ...
        def tile(self, dims: Any) -> Variable: ...
        def movedim(self, source: Any, destination: Any) -> Variable: ...
        def swapaxes(self, axis0: Any, axis1: Any) -> Variable: ...
        def split(self, split_size_or_sections: Any, dim: Any = 0) -> tuple[Variable, ...]: ...
        def chunk(self, chunks: Any, dim: Any = 0) -> tuple[Variable, ...]: ...
        def bmm(self, other: Any) -> Variable: ...
        def dot(self, other: Any) -> Variable: ...
        def outer(self, other: Any) -> Variable: ...
        def erf(self) -> Variable: ...
        def nan_to_num(self, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Variable: ...
        def softmax(self, dim: Any = None, *, axis: Any = None) -> Variable: ...
        def log_softmax(self, dim: Any = None, *, axis: Any = None) -> Variable: ...
        def contiguous(self) -> Variable: ...
        def topk(self, k: Any, dim: Any = -1, largest: Any = True, sorted: Any = True) -> Any: ...
        def scatter(self, dim: Any, index: Any, src: Any = None, *, value: Any = None) -> Variable: ...
        def scatter_add(self, dim: Any, index: Any, src: Any) -> Variable: ...
        def nonzero(self, *, as_tuple: Any = False) -> Any: ...
        def eq(self, other: Any) -> Variable: ...
        def ne(self, other: Any) -> Variable: ...
        def lt(self, other: Any) -> Variable: ...
        def le(self, other: Any) -> Variable: ...
        def gt(self, other: Any) -> Variable: ...
        def ge(self, other: Any) -> Variable: ...
        def reshape(self, *shape: Any) -> Variable: ...
        def view(self, *shape: Any) -> Variable: ...
        def transpose(self, *axes: Any) -> Variable: ...
        def permute(self, *dims: Any) -> Variable: ...
        def flatten(self, start_dim: Any = 0, end_dim: Any = -1) -> Variable: ...
        def squeeze(self, dim: Any = None) -> Variable: ...
        def unsqueeze(self, dim: Any) -> Variable: ...
        def expand_as(self, other: Any) -> Variable: ...
        def view_as(self, other: Any) -> Variable: ...
        def reshape_as(self, other: Any) -> Variable: ...
        def broadcast_to(self, shape: Any) -> Variable: ...
        def expand(self, *shape: Any) -> Variable: ...
        @property
        def T(self) -> Variable: ...
        @property
        def mT(self) -> Variable: ...
        def to(self, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Variable: ...
        def astype(self, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Variable: ...
        def float(self) -> Variable: ...
        def double(self) -> Variable: ...
        def half(self) -> Variable: ...
        def long(self) -> Variable: ...
        def int(self) -> Variable: ...
        def bool(self) -> Variable: ...
        def type_as(self, other: Any) -> Variable: ...
        def cpu(self) -> Variable: ...
        def all(self, dim: Any = None, keepdim: Any = False) -> Variable: ...
        def any(self, dim: Any = None, keepdim: Any = False) -> Variable: ...
        def isnan(self) -> Variable: ...
        def isinf(self) -> Variable: ...
        def isfinite(self) -> Variable: ...
        def backward(self, gradient: Any = None, retain_graph: Any = None, create_graph: Any = False) -> None: ...
