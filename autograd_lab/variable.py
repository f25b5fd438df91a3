"""Variable: a numpy array that remembers how it was made.

A Variable holds ``data`` (a numpy array), ``grad`` (a Variable or None), whether it
``requires_grad``, and ``grad_fn``: the graph node of the Function that produced it
(None for a leaf). Its operators and methods (``x + y``, ``x.sum()``, ``x.backward()``) are
defined in the class below; each hands the work to an operation of ``autograd_lab.ops``, which
sits above this module in the import order and hands itself over when it loads.
"""
from __future__ import annotations

import builtins
import warnings
from typing import Any, Callable, Protocol

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

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def as_array(data: Any, dtype: Any = None) -> np.ndarray:
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
    _post_accumulate_hooks: list | None = None
    _accumulator: Any = None
    _retains_grad = False
    _requires_grad = False
    _vc: VersionCounter | None = None
    # a view (basic indexing, reshape, transpose) knows the Variable whose memory it shows and how
    # (``_view_fn`` applied to an array of the base's shape gives the view's part of it); a base
    # keeps weak references to its views made in grad mode (``ops.inplace`` rewrites their history)
    _base: "Variable | None" = None
    _view_fn: Callable[[np.ndarray], np.ndarray] | None = None
    _views: Any = None
    _no_grad_view = False  # a view made under no_grad of a Variable that requires grad
    _multi_view: str | None = None  # "output i of split": one of several views made by one call

    def __init__(self, data: Any, requires_grad: builtins.bool = False, *, dtype: Any = None) -> None:
        self._data = as_array(data, dtype)
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
        self._data = as_array(value)

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
        """Set ``requires_grad`` in place and return self (for leaves; on a non-leaf, which
        already requires grad, asking for True again is allowed and changes nothing)."""
        if requires_grad and self.grad_fn is not None and self._requires_grad:
            return self
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> "Variable | None":
        """Accumulated gradient of a leaf (or of a non-leaf that called ``retain_grad()``)."""
        # (as in PyTorch, not once backward(inputs=[this]) has filled it)
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
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

    def register_post_accumulate_grad_hook(self, hook: Callable[["Variable"], None]) -> RemovableHandle:
        """Call ``hook(self)`` each time backward has added into this leaf's ``.grad``."""
        if not self._requires_grad:
            raise BackwardError(
                "cannot register a hook on a Variable that doesn't require gradient; "
                "set requires_grad=True on it first."
            )
        if self.grad_fn is not None:
            raise BackwardError(
                "post accumulate grad hooks cannot be registered on non-leaf Variables (only leaves "
                "accumulate .grad); register it on the leaf, or use register_hook for this one."
            )
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        self._post_accumulate_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_hooks, hook)

    def _check_inplace(self) -> None:
        """In-place writes to a leaf that requires grad would make its gradient meaningless."""
        if self._no_grad_view and self.grad_fn is None and STATE.enabled:
            raise BackwardError(
                "a view was created in no_grad mode and is being modified in place with grad mode "
                "enabled; whether the change should be recorded is ambiguous, so it is refused. Make "
                "both the view and the in-place change inside the `with al.no_grad():` block (not "
                "recorded), or both outside it (recorded)."
            )
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

    # ---- operators and methods ---------------------------------------------------------------
    # Each hands its work to an operation of ``autograd_lab.ops`` (a Function and the function
    # that applies it, e.g. ``x.exp()`` is ``ops.exp(x)``, which is ``Exp.apply(x)``). The ops build
    # Variables, so they sit above this module and hand themselves over when they load (see
    # ``provide_operations`` at the end of this module): this module never imports them.

    __hash__ = object.__hash__  # by identity; defining __eq__ (elementwise) would otherwise drop it

    # arithmetic. ``ops.operator`` records the Function when grad mode is on and an operand
    # requires grad; otherwise numpy computes the result at once (the same numbers, no node)
    def __add__(self, other: Any) -> Variable:
        return ops.operator(ops.Add, self, other)

    def __radd__(self, other: Any) -> Variable:
        return ops.operator(ops.Add, other, self)

    def __sub__(self, other: Any) -> Variable:
        return ops.operator(ops.Sub, self, other)

    def __rsub__(self, other: Any) -> Variable:
        return ops.operator(ops.Sub, other, self)

    def __mul__(self, other: Any) -> Variable:
        return ops.operator(ops.Mul, self, other)

    def __rmul__(self, other: Any) -> Variable:
        return ops.operator(ops.Mul, other, self)

    def __truediv__(self, other: Any) -> Variable:
        return ops.operator(ops.Div, self, other)

    def __rtruediv__(self, other: Any) -> Variable:
        return ops.operator(ops.Div, other, self)

    def __pow__(self, other: Any) -> Variable:
        return ops.pow(self, other)

    def __rpow__(self, other: Any) -> Variable:
        return ops.pow(other, self)

    def __neg__(self) -> Variable:
        return ops.neg(self)

    def __pos__(self) -> Variable:
        return self

    def __abs__(self) -> Variable:
        return ops.abs(self)

    def __matmul__(self, other: Any) -> Variable:
        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Variable:
        return ops.matmul(other, self)

    def __mod__(self, other: Any) -> Variable:
        return ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Variable:
        return ops.remainder(other, self)

    def __floordiv__(self, other: Any) -> Variable:
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Variable:
        return ops.floor_divide(other, self)

    # indexing: reading is a Function like any other; writing is an in-place change
    def __getitem__(self, idx: Any) -> Variable:
        return ops.getitem(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        ops.setitem(self, idx, value)

    # comparisons: elementwise bool Variables, no gradient
    def __lt__(self, other: Any) -> Variable:
        return ops.compare(np.less, self, other)

    def __le__(self, other: Any) -> Variable:
        return ops.compare(np.less_equal, self, other)

    def __gt__(self, other: Any) -> Variable:
        return ops.compare(np.greater, self, other)

    def __ge__(self, other: Any) -> Variable:
        return ops.compare(np.greater_equal, self, other)

    def __eq__(self, other: Any) -> Variable:  # type: ignore[override]  # elementwise, as in PyTorch
        return ops.compare(np.equal, self, other)

    def __ne__(self, other: Any) -> Variable:  # type: ignore[override]
        return ops.compare(np.not_equal, self, other)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__  # PyTorch's names

    # in place: ``ops.inplace`` computes out of place, writes the result into self, counts a
    # version and, when recorded, gives self the new node as its history
    def add_(self, other: Any, *, alpha: Any = 1) -> Variable:
        return ops.inplace(self, ops.add if alpha == 1 else lambda x, o: ops.add(x, o, alpha=alpha), other)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Variable:
        return ops.inplace(self, ops.sub if alpha == 1 else lambda x, o: ops.sub(x, o, alpha=alpha), other)

    def mul_(self, other: Any) -> Variable:
        return ops.inplace(self, ops.mul, other)

    def div_(self, other: Any, *, rounding_mode: Any = None) -> Variable:
        return ops.inplace(self, lambda x, o: ops.div(x, o, rounding_mode=rounding_mode), other)

    def floor_divide_(self, other: Any) -> Variable:
        return ops.inplace(self, ops.floor_divide, other)

    __iadd__, __isub__, __imul__, __itruediv__ = add_, sub_, mul_, div_  # x += y is x.add_(y)
    __ifloordiv__ = floor_divide_  # keeps x's dtype; refuses a result it cannot hold (float into int)

    def clamp_(self, min: Any = None, max: Any = None) -> Variable:
        return ops.inplace(self, lambda x: ops.clamp(x, min, max))

    def relu_(self) -> Variable:
        return ops.inplace(self, ops.relu)

    def exp_(self) -> Variable:
        return ops.inplace(self, ops.exp)

    def log_(self) -> Variable:
        return ops.inplace(self, ops.log)

    def sqrt_(self) -> Variable:
        return ops.inplace(self, ops.sqrt)

    def abs_(self) -> Variable:
        return ops.inplace(self, ops.abs)

    def neg_(self) -> Variable:
        return ops.inplace(self, ops.neg)

    def sigmoid_(self) -> Variable:
        return ops.inplace(self, ops.sigmoid)

    def tanh_(self) -> Variable:
        return ops.inplace(self, ops.tanh)

    def copy_(self, other: Any) -> Variable:
        """Write ``other``'s values (broadcast, converted to self's dtype) into self."""
        return ops.inplace(self, ops.replaced_by, other, cast=True)

    def fill_(self, v: Any) -> Variable:
        return ops.inplace(self, ops.replaced_by, v, cast=True)

    def masked_fill_(self, mask: Any, value: Any) -> Variable:
        return ops.inplace(self, lambda x, v: ops.masked_fill(x, mask, v), value, cast=True)

    def index_add_(self, dim: Any, index: Any, source: Any, *, alpha: Any = 1) -> Variable:
        return ops.inplace(self, lambda x, src: ops.index_add(x, dim, index, src, alpha=alpha), source)

    # math, reductions and shapes: the functions of ``autograd_lab`` (``al.sum(x)``) as methods
    def add(self, b: Any, *, alpha: Any = 1) -> Variable:
        return ops.add(self, b, alpha=alpha)

    def sub(self, b: Any, *, alpha: Any = 1) -> Variable:
        return ops.sub(self, b, alpha=alpha)

    def mul(self, b: Any) -> Variable:
        return ops.mul(self, b)

    def div(self, b: Any, *, rounding_mode: Any = None) -> Variable:
        return ops.div(self, b, rounding_mode=rounding_mode)

    def pow(self, b: Any) -> Variable:
        return ops.pow(self, b)

    def neg(self) -> Variable:
        return ops.neg(self)

    def matmul(self, b: Any) -> Variable:
        return ops.matmul(self, b)

    def exp(self) -> Variable:
        return ops.exp(self)

    def log(self) -> Variable:
        return ops.log(self)

    def sqrt(self) -> Variable:
        return ops.sqrt(self)

    def abs(self) -> Variable:
        return ops.abs(self)

    def relu(self) -> Variable:
        return ops.relu(self)

    def sigmoid(self) -> Variable:
        return ops.sigmoid(self)

    def tanh(self) -> Variable:
        return ops.tanh(self)

    def clamp(self, min: Any = None, max: Any = None) -> Variable:
        return ops.clamp(self, min, max)

    clip = clamp

    def clone(self) -> Variable:
        return ops.clone(self)

    def maximum(self, b: Any) -> Variable:
        return ops.maximum(self, b)

    def minimum(self, b: Any) -> Variable:
        return ops.minimum(self, b)

    def sin(self) -> Variable:
        return ops.sin(self)

    def cos(self) -> Variable:
        return ops.cos(self)

    def tan(self) -> Variable:
        return ops.tan(self)

    def sinh(self) -> Variable:
        return ops.sinh(self)

    def cosh(self) -> Variable:
        return ops.cosh(self)

    def asin(self) -> Variable:
        return ops.asin(self)

    def acos(self) -> Variable:
        return ops.acos(self)

    def atan(self) -> Variable:
        return ops.atan(self)

    def log1p(self) -> Variable:
        return ops.log1p(self)

    def expm1(self) -> Variable:
        return ops.expm1(self)

    def log2(self) -> Variable:
        return ops.log2(self)

    def log10(self) -> Variable:
        return ops.log10(self)

    def square(self) -> Variable:
        return ops.square(self)

    def reciprocal(self) -> Variable:
        return ops.reciprocal(self)

    def rsqrt(self) -> Variable:
        return ops.rsqrt(self)

    def floor(self) -> Variable:
        return ops.floor(self)

    def ceil(self) -> Variable:
        return ops.ceil(self)

    def round(self) -> Variable:
        return ops.round(self)

    def trunc(self) -> Variable:
        return ops.trunc(self)

    def sign(self) -> Variable:
        return ops.sign(self)

    def sum(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable:
        return ops.sum(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def mean(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable:
        return ops.mean(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def max(self, *args: Any, axis: Any = None, keepdims: Any = False, dim: Any = None,
            keepdim: Any = None) -> Any:
        return ops.max(self, *args, axis=axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def min(self, *args: Any, axis: Any = None, keepdims: Any = False, dim: Any = None,
            keepdim: Any = None) -> Any:
        return ops.min(self, *args, axis=axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def argmax(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable:
        return ops.argmax(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def argmin(self, axis: Any = None, keepdims: Any = False, *, dim: Any = None, keepdim: Any = None) -> Variable:
        return ops.argmin(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def amax(self, dim: Any = (), keepdim: Any = False) -> Variable:
        return ops.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: Any = False) -> Variable:
        return ops.amin(self, dim, keepdim)

    def norm(self, p: Any = 'fro', dim: Any = None, keepdim: Any = False, *, axis: Any = None,
             keepdims: Any = False) -> Variable:
        return ops.norm(self, p, dim, keepdim, axis=axis, keepdims=keepdims)

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: Any = False, *,
            correction: Any = None, axis: Any = None, keepdims: Any = False) -> Variable:
        return ops.std(self, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: Any = False, *,
            correction: Any = None, axis: Any = None, keepdims: Any = False) -> Variable:
        return ops.var(self, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)

    def mm(self, b: Any) -> Variable:
        return ops.mm(self, b)

    def t(self) -> Variable:
        return ops.t(self)

    def sort(self, dim: Any = -1, descending: Any = False, stable: Any = False) -> Any:
        return ops.sort(self, dim, descending, stable)

    def gather(self, dim: Any, index: Any) -> Variable:
        return ops.gather(self, dim, index)

    def index_select(self, dim: Any, index: Any) -> Variable:
        return ops.index_select(self, dim, index)

    def index_add(self, dim: Any, index: Any, source: Any, *, alpha: Any = 1) -> Variable:
        return ops.index_add(self, dim, index, source, alpha=alpha)

    def prod(self, dim: Any = None, keepdim: Any = False) -> Variable:
        return ops.prod(self, dim, keepdim)

    def cumsum(self, dim: Any) -> Variable:
        return ops.cumsum(self, dim)

    def cumprod(self, dim: Any) -> Variable:
        return ops.cumprod(self, dim)

    def logsumexp(self, dim: Any, keepdim: Any = False) -> Variable:
        return ops.logsumexp(self, dim, keepdim)

    def remainder(self, b: Any) -> Variable:
        return ops.remainder(self, b)

    def fmod(self, b: Any) -> Variable:
        return ops.fmod(self, b)

    def floor_divide(self, b: Any) -> Variable:
        return ops.floor_divide(self, b)

    def masked_fill(self, mask: Any, value: Any) -> Variable:
        return ops.masked_fill(self, mask, value)

    def tril(self, diagonal: Any = 0) -> Variable:
        return ops.tril(self, diagonal)

    def triu(self, diagonal: Any = 0) -> Variable:
        return ops.triu(self, diagonal)

    def flip(self, dims: Any) -> Variable:
        return ops.flip(self, dims)

    def roll(self, shifts: Any, dims: Any = None) -> Variable:
        return ops.roll(self, shifts, dims)

    def repeat(self, *sizes: Any) -> Variable:
        return ops.repeat(self, *sizes)

    def tile(self, dims: Any) -> Variable:
        return ops.tile(self, dims)

    def movedim(self, source: Any, destination: Any) -> Variable:
        return ops.movedim(self, source, destination)

    def swapaxes(self, axis0: Any, axis1: Any) -> Variable:
        return ops.swapaxes(self, axis0, axis1)

    def split(self, split_size_or_sections: Any, dim: Any = 0) -> tuple[Variable, ...]:
        return ops.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: Any, dim: Any = 0) -> tuple[Variable, ...]:
        return ops.chunk(self, chunks, dim)

    def bmm(self, b: Any) -> Variable:
        return ops.bmm(self, b)

    def dot(self, b: Any) -> Variable:
        return ops.dot(self, b)

    def outer(self, b: Any) -> Variable:
        return ops.outer(self, b)

    def erf(self) -> Variable:
        return ops.erf(self)

    def nan_to_num(self, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Variable:
        return ops.nan_to_num(self, nan, posinf, neginf)

    def topk(self, k: Any, dim: Any = -1, largest: Any = True, sorted: Any = True) -> Any:
        return ops.topk(self, k, dim, largest, sorted)

    def scatter(self, dim: Any, index: Any, src: Any = None, *, value: Any = None) -> Variable:
        return ops.scatter(self, dim, index, src, value=value)

    def scatter_add(self, dim: Any, index: Any, src: Any) -> Variable:
        return ops.scatter_add(self, dim, index, src)

    def nonzero(self, *, as_tuple: Any = False) -> Any:
        return ops.nonzero(self, as_tuple=as_tuple)

    def reshape(self, *shape: Any) -> Variable:
        return ops.reshape(self, *shape)

    def view(self, *shape: Any) -> Variable:
        """``reshape`` that never copies: a ViewError where the layout needs a copy (PyTorch's rule)."""
        return ops.view(self, *shape)

    def transpose(self, *axes: Any) -> Variable:
        return ops.transpose(self, *axes)

    def permute(self, *dims: Any) -> Variable:
        return ops.permute(self, *dims)

    def flatten(self, start_dim: Any = 0, end_dim: Any = -1) -> Variable:
        return ops.flatten(self, start_dim, end_dim)

    def squeeze(self, dim: Any = None) -> Variable:
        return ops.squeeze(self, dim)

    def unsqueeze(self, dim: Any) -> Variable:
        return ops.unsqueeze(self, dim)

    def expand(self, *shape: Any) -> Variable:
        return ops.expand(self, *shape)

    broadcast_to = expand

    def softmax(self, dim: Any = None, *, axis: Any = None) -> Variable:
        return ops.Softmax.apply(self, ops.softmax_axis(self, dim, axis, "softmax"))

    def log_softmax(self, dim: Any = None, *, axis: Any = None) -> Variable:
        return ops.LogSoftmax.apply(self, ops.softmax_axis(self, dim, axis, "log_softmax"))

    def expand_as(self, other: Variable) -> Variable:
        return ops.expand(self, other.shape)

    def view_as(self, other: Variable) -> Variable:
        return ops.view(self, other.shape)

    def reshape_as(self, other: Variable) -> Variable:
        return ops.reshape(self, other.shape)

    def contiguous(self) -> Variable:
        """Self when its data is laid out in row-major order already; otherwise a copy that is
        (recorded like ``clone()``), so a change to the result never reaches ``self``: PyTorch's rule."""
        if self._data.flags.c_contiguous:
            return self
        return ops.clone(self)

    def is_contiguous(self) -> builtins.bool:
        """Whether the data is laid out in row-major order (a transpose or an expand is not)."""
        return builtins.bool(self._data.flags.c_contiguous)

    @property
    def T(self) -> Variable:
        return ops.transposed(self, None)

    @property
    def mT(self) -> Variable:
        return ops.transpose(self, -1, -2)

    def all(self, dim: Any = None, keepdim: Any = False) -> Variable:
        return ops.reduce.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: Any = False) -> Variable:
        return ops.reduce.any(self, dim, keepdim)

    def isnan(self) -> Variable:
        return ops.isnan(self)

    def isinf(self) -> Variable:
        return ops.isinf(self)

    def isfinite(self) -> Variable:
        return ops.isfinite(self)

    # dtype and device
    def to(self, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Variable:
        """``x.to(dtype)``, ``x.to('cpu')``, ``x.to(device, dtype)``, ``x.to(other_variable)``."""
        return ops.to(self, *args, dtype=dtype, device=device, **kwargs)

    astype = to

    def float(self) -> Variable:
        return self.to(np.float32)

    def double(self) -> Variable:
        return self.to(np.float64)

    def half(self) -> Variable:
        return self.to(np.float16)

    def long(self) -> Variable:
        return self.to(np.int64)

    def int(self) -> Variable:
        return self.to(np.int32)

    def bool(self) -> Variable:
        return self.to(np.bool_)

    def type_as(self, other: Variable) -> Variable:
        return self.to(other.dtype)

    def cpu(self) -> Variable:
        return self  # the only device

    # views, blends, bitwise operators and order statistics (ops.views, ops.pointwise, ops.stats)
    def narrow(self, dim: Any, start: Any, length: Any) -> Variable:
        return ops.narrow(self, dim, start, length)

    def select(self, dim: Any, index: Any) -> Variable:
        return ops.select(self, dim, index)

    def unbind(self, dim: Any = 0) -> tuple[Variable, ...]:
        return ops.unbind(self, dim)

    def diagonal(self, offset: Any = 0, dim1: Any = 0, dim2: Any = 1) -> Variable:
        return ops.diagonal(self, offset, dim1, dim2)

    def as_strided(self, size: Any, stride: Any, storage_offset: Any = 0) -> Variable:
        return ops.as_strided(self, size, stride, storage_offset)

    def unfold(self, dimension: Any, size: Any, step: Any) -> Variable:
        return ops.unfold(self, dimension, size, step)

    def lerp(self, end: Any, weight: Any) -> Variable:
        return ops.lerp(self, end, weight)

    def lerp_(self, end: Any, weight: Any) -> Variable:
        return ops.inplace(self, lambda x, e: ops.lerp(x, e, weight), end)

    def addcmul(self, t1: Any, t2: Any, *, value: Any = 1) -> Variable:
        return ops.addcmul(self, t1, t2, value=value)

    def addcmul_(self, t1: Any, t2: Any, *, value: Any = 1) -> Variable:
        return ops.inplace(self, lambda x, a: ops.addcmul(x, a, t2, value=value), t1)

    def addcdiv(self, t1: Any, t2: Any, *, value: Any = 1) -> Variable:
        return ops.addcdiv(self, t1, t2, value=value)

    def addcdiv_(self, t1: Any, t2: Any, *, value: Any = 1) -> Variable:
        return ops.inplace(self, lambda x, a: ops.addcdiv(x, a, t2, value=value), t1)

    def atan2(self, other: Any) -> Variable:
        return ops.atan2(self, other)

    def hypot(self, other: Any) -> Variable:
        return ops.hypot(self, other)

    def bitwise_and(self, other: Any) -> Variable:
        return ops.bitwise_and(self, other)

    def bitwise_or(self, other: Any) -> Variable:
        return ops.bitwise_or(self, other)

    def bitwise_xor(self, other: Any) -> Variable:
        return ops.bitwise_xor(self, other)

    def bitwise_not(self) -> Variable:
        return ops.bitwise_not(self)

    def logical_not(self) -> Variable:
        return ops.logical_not(self)

    def __and__(self, other: Any) -> Variable:
        return ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Variable:
        return ops.bitwise_and(other, self)

    def __or__(self, other: Any) -> Variable:
        return ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Variable:
        return ops.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Variable:
        return ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Variable:
        return ops.bitwise_xor(other, self)

    def __invert__(self) -> Variable:
        return ops.bitwise_not(self)

    def median(self, dim: Any = None, keepdim: Any = False) -> Any:
        return ops.median(self, dim, keepdim)

    def kthvalue(self, k: Any, dim: Any = -1, keepdim: Any = False) -> Any:
        return ops.kthvalue(self, k, dim, keepdim)

    def mode(self, dim: Any = -1, keepdim: Any = False) -> Any:
        return ops.mode(self, dim, keepdim)

    def cummax(self, dim: Any) -> Any:
        return ops.cummax(self, dim)

    def cummin(self, dim: Any) -> Any:
        return ops.cummin(self, dim)

    def count_nonzero(self, dim: Any = None) -> Variable:
        return ops.count_nonzero(self, dim)

    # autograd
    def backward(self, gradient: Any = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False, inputs: Any = None) -> None:
        """Compute d(self)/d(leaf) for every leaf that requires grad and add it to ``leaf.grad``.

        ``gradient`` is needed unless self has one element; ``retain_graph=True`` keeps the saved
        values so backward can run again; ``create_graph=True`` records the backward pass itself;
        ``inputs`` limits the accumulation to those Variables. The work is
        :func:`autograd_lab.engine.backward`'s (see :func:`connect_engine`)."""
        if _engine_backward is None:
            raise RuntimeError("the engine is not loaded: import autograd_lab, not only "
                               "autograd_lab.variable, before calling backward().")
        _engine_backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph,
                         inputs=inputs)


class EngineBackward(Protocol):
    """The engine's entry point that ``Variable.backward`` calls: ``engine.backward``."""

    def __call__(self, tensors: Any, grad_tensors: Any = None,
                 retain_graph: builtins.bool | None = None, create_graph: builtins.bool = False,
                 inputs: Any = None) -> None: ...


_engine_backward: EngineBackward | None = None


def connect_engine(backward: EngineBackward) -> None:
    """Called once by ``autograd_lab.engine`` as it loads: ``Variable.backward`` calls
    ``backward``. The engine imports this module, so this module cannot import the engine."""
    global _engine_backward
    _engine_backward = backward


# The operations Variable's methods call. ``autograd_lab.ops`` imports this module (its Functions
# take and make Variables), so this module cannot import it; the ops hand themselves over instead,
# once, at the end of their own import (``import autograd_lab`` always loads them).
ops: Any = None


def provide_operations(module: Any) -> None:
    """Called by ``autograd_lab.ops`` when it has loaded: the methods above use ``module``."""
    global ops
    ops = module
