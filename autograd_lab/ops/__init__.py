"""Built-in operations, and the one place where they become Variable methods and operators.

Attaching them here (rather than in ``variable.py``) keeps the import order one-way:
``variable`` knows nothing of the ops that use it.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from .. import engine
from ..errors import BackwardError, ShapeError
from ..function import _SavedOutput, record
from ..grad_mode import STATE, no_grad
from ..variable import Variable
from . import elementwise as E
from . import indexing as I
from . import linalg as L
from . import reduce as R
from . import shape as S
from . import unary as U
from ..primitives import promoted
from ._util import broadcasting, raw, wrap
from . import extra as X
from .activation import LogSoftmax, Softmax, relu, sigmoid, softmax_axis, tanh  # noqa: F401
from .extra import (bmm, chunk, cumprod, cumsum, dot, einsum, erf, flip, floor_divide, fmod, logsumexp,  # noqa: F401
                    masked_fill, movedim, nan_to_num, nonzero, outer, prod, remainder, repeat, roll,
                    scatter, scatter_add, split, swapaxes, tile, topk, tril, triu)
from .elementwise import (abs, add, clamp, clone, div, exp, log, maximum, minimum, mul, neg, pow,  # noqa: F401
                          sqrt, sub, where)
from .indexing import gather, index_add, index_select, sort  # noqa: F401
from .linalg import matmul, mm, t  # noqa: F401
from .reduce import amax, amin, argmax, argmin, max, mean, min, norm, std, sum, var  # noqa: F401
from .unary import (acos, asin, atan, ceil, cos, cosh, expm1, floor, log1p, log2, log10,  # noqa: F401
                    reciprocal, round, rsqrt, sign, sin, sinh, square, tan, trunc)
from .shape import (concatenate, flatten, permute, reshape, squeeze, stack,  # noqa: F401
                    sum_to, transpose, unsqueeze)
from .shape import expand as broadcast_to  # as PyTorch's: a view, not a copy

cat = concatenate


def isnan(x: Any) -> Variable:
    """Where x is NaN (a bool Variable)."""
    return wrap(np.isnan(raw(x)))


def isinf(x: Any) -> Variable:
    """Where x is +inf or -inf (a bool Variable)."""
    return wrap(np.isinf(raw(x)))


def isfinite(x: Any) -> Variable:
    """Where x is neither inf nor NaN (a bool Variable)."""
    return wrap(np.isfinite(raw(x)))


def _compare(op: Callable) -> Callable:
    def method(self: Variable, other: Any) -> Variable:
        return wrap(np.asarray(broadcasting(op, self, other, op.__name__)))
    return method


def _inplace(self: Variable, compute: Callable[..., Variable], *args: Any, cast: bool = False) -> Variable:
    """Run ``compute(old_self, *args)`` out of place, then write the result into ``self``.

    The version counter goes up, so backward raises if an earlier op saved ``self``. When the
    op is recorded, ``self`` takes the new node as its ``grad_fn`` (its history is rebased).
    Arithmetic (``cast=False``) refuses a result that ``self``'s dtype cannot hold, as PyTorch
    does; a copy (``copy_``, ``fill_``, ``x[i] = v``) converts. Nothing is recorded into a
    Variable whose dtype cannot require grad. Through a view, the base's history is rewritten.
    """
    self._check_inplace()
    recording = STATE.enabled and self._data.dtype.kind == "f" and (self._requires_grad or any(
        isinstance(a, Variable) and a._requires_grad for a in args))
    if recording and self._base is not None:
        return _inplace_view(self, compute, args, cast)
    if recording:
        old = _snapshot(self)
        result = compute(old, *args)
    else:
        with no_grad():
            result = compute(self.detach(), *args)
    _check_result(self, result, cast)
    self._data[...] = result._data
    self._bump_version()
    if recording:
        _rebase(self, result)
        if self._views:
            _regenerate_views(self)
    return self


def _snapshot(self: Variable) -> Variable:
    """A copy of ``self`` standing for its value and history before an in-place change."""
    old = Variable._make(self._data.copy())
    old.grad_fn, old._output_nr, old._requires_grad = self.grad_fn, self._output_nr, self._requires_grad
    return old


def _check_result(self: Variable, result: Variable, cast: bool) -> None:
    if not cast and result.dtype != self.dtype and not np.can_cast(result.dtype, self.dtype, "same_kind"):
        raise TypeError(
            f"result type {result.dtype} can't be cast to the desired output type {self.dtype}: an "
            "in-place operation keeps the dtype of the Variable it changes. Use the out-of-place "
            f"form (y = x * 1.5), or convert first (x = x.to({result.dtype}))."
        )
    if result.shape != self.shape:
        raise ShapeError(
            f"an in-place operation cannot change the shape: the result has shape {result.shape} "
            f"but the Variable being changed has shape {self.shape}. Use the out-of-place form "
            "(y = x + other) instead."
        )


def _rebase(self: Variable, result: Variable) -> None:
    """``self`` (just overwritten with ``result``'s values) takes over ``result``'s history."""
    node = result.grad_fn
    if self._retains_grad:  # retain_grad follows the Variable to its new version, as in PyTorch
        if self.grad_fn is not None and self.grad_fn._retained:
            self.grad_fn._retained.pop(self._output_nr, None)
        if node is not None:
            node._retained = dict(node._retained or {})
            node._retained[result._output_nr] = weakref.ref(self)
    self.grad_fn, self._output_nr, self._requires_grad = node, result._output_nr, True
    saved = node._saved if node is not None and node._saves_outputs else ()
    for j, s in enumerate(saved):  # the node saved its own output, which is now self
        if type(s) is _SavedOutput and s._output_nr == result._output_nr:
            s._data, s._vc = self._data, self._version_counter
            if node._saved_versions is None:
                node._saved_versions = [0] * len(saved)
            node._saved_versions[j] = self._version


def _positions(base: Variable) -> np.ndarray:
    """Each element's flat position in ``base``: a view's ``_view_fn`` of it says which it shows."""
    return np.arange(base._data.size).reshape(base.shape)


def _inplace_view(self: Variable, compute: Callable[..., Variable], args: tuple, cast: bool) -> Variable:
    """An in-place change through a view, recorded as PyTorch does: the base's history becomes
    "the old base with the view's elements replaced by compute(old view, *args)", so gradients
    flow through the change to the base, to whatever it came from and to ``args``."""
    base = self._base
    assert base is not None and self._view_fn is not None
    if base.grad_fn is None and base._requires_grad:
        raise BackwardError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation. "
            "Changing part of a parameter in place would make its gradient meaningless. Wrap the "
            "change in `with al.no_grad():` (as for a parameter update), or work on a copy: "
            "y = x.clone(); y[0:2].mul_(2)."
        )
    flat_at = self._view_fn(_positions(base)).reshape(-1)  # the view's elements, as flat positions
    flat_old = S.Reshape.apply(_snapshot(base), (-1,))
    result = compute(S.Reshape.apply(S.GetItem.apply(flat_old, flat_at), self.shape), *args)
    _check_result(self, result, cast)
    new_base = S.Reshape.apply(S.SetItem.apply(flat_old, flat_at, S.Reshape.apply(result, (-1,))), base.shape)
    base._data[...] = new_base._data
    base._bump_version()  # the counter is shared with every view of base, self included
    _rebase(base, new_base)
    _regenerate_views(base)
    return self


def _regenerate_views(base: Variable) -> None:
    """After base's history changed in place, its live views read from the new history (in
    PyTorch a view's grad_fn is remade from its base's when the base's version moved on)."""
    positions = None
    for view in list(base._views or ()):
        if view._view_fn is None or view._data.dtype.kind != "f":
            continue
        if positions is None:
            positions = _positions(base)
        flat_at = view._view_fn(positions).reshape(-1)
        fresh = S.Reshape.apply(S.GetItem.apply(S.Reshape.apply(base, (-1,)), flat_at), view.shape)
        _rebase(view, fresh)


def _setitem(self: Variable, idx: Any, value: Any) -> None:
    idx = S._raw_index(idx)
    if STATE.enabled and self._data.dtype.kind == "f" and (
            self._requires_grad or (isinstance(value, Variable) and value._requires_grad)):
        _inplace(self, lambda old, v: S.SetItem.apply(old, idx, v), value, cast=True)
        return
    self._check_inplace()
    self._data[idx] = raw(value)
    self._bump_version()


def _backward(self: Variable, gradient: Any = None, retain_graph: bool | None = None,
              create_graph: bool = False) -> None:
    """Compute d(self)/d(leaf) for every leaf that requires grad and add it to ``leaf.grad``.

    ``gradient`` is needed unless self has one element; ``retain_graph=True`` keeps the saved
    values so backward can run again; ``create_graph=True`` records the backward pass itself."""
    engine.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


def _to(self: Variable, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Variable:
    """``x.to(dtype)``, ``x.to('cpu')``, ``x.to(device, dtype)``, ``x.to(other_variable)``."""
    from ..dtypes import check_device

    for a in args:
        if isinstance(a, Variable):
            dtype = a.dtype
        elif isinstance(a, str) or type(a).__name__ == "device":
            check_device(a)
        else:
            dtype = a
    check_device(device)
    if dtype is None:
        return self
    dtype = np.dtype(dtype)
    return self if dtype == self.dtype else E.Cast.apply(self, dtype)


def _expand_as(self: Variable, other: Variable) -> Variable:
    return S.expand(self, other.shape)


def _index_add_(self: Variable, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Variable:
    return _inplace(self, lambda x, src: I.index_add(x, dim, index, src, alpha=alpha), source)


def _binary(function: type, np_op: Callable, name: str, reflected: bool = False) -> Callable:
    """The operator for ``function``. When nothing will be recorded (grad mode off, as inside
    backward, or no operand requires grad) it calls numpy straight away: same result, no node."""
    def method(self: Variable, other: Any) -> Variable:
        other_var = isinstance(other, Variable)
        if STATE.enabled and (self._requires_grad or (other_var and other._requires_grad)):
            return record(function, other, self) if reflected else record(function, self, other)
        try:
            if reflected:
                return wrap(np_op(*promoted(other, self)))
            return wrap(np_op(*promoted(self, other)))
        except ValueError:  # numpy could not broadcast: the same call again, for the clear error
            return wrap(broadcasting(np_op, other, self, name) if reflected else broadcasting(np_op, self, other, name))
    return method


def _softmax(self: Variable, dim: Any = None, *, axis: Any = None) -> Variable:
    return Softmax.apply(self, softmax_axis(self, dim, axis, "softmax"))


def _log_softmax(self: Variable, dim: Any = None, *, axis: Any = None) -> Variable:
    return LogSoftmax.apply(self, softmax_axis(self, dim, axis, "log_softmax"))


def _masked_fill_(self: Variable, mask: Any, value: Any) -> Variable:
    return _inplace(self, lambda x, v: masked_fill(x, mask, v), value, cast=True)


_METHODS: dict[str, Any] = {
    # arithmetic
    "__add__": _binary(E.Add, np.add, "add"),
    "__radd__": _binary(E.Add, np.add, "add", reflected=True),
    "__sub__": _binary(E.Sub, np.subtract, "sub"),
    "__rsub__": _binary(E.Sub, np.subtract, "sub", reflected=True),
    "__mul__": _binary(E.Mul, np.multiply, "mul"),
    "__rmul__": _binary(E.Mul, np.multiply, "mul", reflected=True),
    "__truediv__": _binary(E.Div, np.true_divide, "div"),
    "__rtruediv__": _binary(E.Div, np.true_divide, "div", reflected=True),
    "__pow__": lambda s, o: E.Pow.apply(s, o),
    "__rpow__": lambda s, o: E.Pow.apply(o, s),
    "__neg__": lambda s: E.Neg.apply(s),
    "__pos__": lambda s: s,
    "__abs__": lambda s: E.Abs.apply(s),
    "__matmul__": lambda s, o: matmul(s, o),
    "__rmatmul__": lambda s, o: matmul(o, s),
    "__getitem__": lambda s, idx: S.getitem(s, idx),
    "__setitem__": _setitem,
    "__mod__": lambda s, o: remainder(s, o), "__rmod__": lambda s, o: remainder(o, s),
    "__floordiv__": lambda s, o: floor_divide(s, o), "__rfloordiv__": lambda s, o: floor_divide(o, s),
    # comparisons: no gradient
    "__lt__": _compare(np.less), "__le__": _compare(np.less_equal),
    "__gt__": _compare(np.greater), "__ge__": _compare(np.greater_equal),
    "__eq__": _compare(np.equal), "__ne__": _compare(np.not_equal),
    # in place: bump the version counter
    "add_": lambda s, o: _inplace(s, E.add, o),
    "sub_": lambda s, o: _inplace(s, E.sub, o),
    "mul_": lambda s, o: _inplace(s, E.mul, o),
    "div_": lambda s, o: _inplace(s, E.div, o),
    "clamp_": lambda s, min=None, max=None: _inplace(s, lambda x: clamp(x, min, max)),
    "relu_": lambda s: _inplace(s, relu),
    "copy_": lambda s, o: _inplace(s, lambda x, v: S.SetItem.apply(x, (Ellipsis,), v), o, cast=True),
    "fill_": lambda s, v: _inplace(s, lambda x, v: S.SetItem.apply(x, (Ellipsis,), v), v, cast=True),
    "exp_": lambda s: _inplace(s, exp), "log_": lambda s: _inplace(s, log),
    "sqrt_": lambda s: _inplace(s, sqrt), "abs_": lambda s: _inplace(s, abs),
    "neg_": lambda s: _inplace(s, neg), "sigmoid_": lambda s: _inplace(s, sigmoid),
    "tanh_": lambda s: _inplace(s, tanh), "masked_fill_": _masked_fill_,
    "__iadd__": lambda s, o: _inplace(s, E.add, o),
    "__isub__": lambda s, o: _inplace(s, E.sub, o),
    "__imul__": lambda s, o: _inplace(s, E.mul, o),
    "__itruediv__": lambda s, o: _inplace(s, E.div, o),
    # math
    "add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "neg": neg, "matmul": matmul,
    "exp": exp, "log": log, "sqrt": sqrt, "abs": abs, "relu": relu, "sigmoid": sigmoid,
    "tanh": tanh, "clamp": clamp, "clip": clamp, "clone": clone, "maximum": maximum, "minimum": minimum,
    "sin": U.sin, "cos": U.cos, "tan": U.tan, "sinh": U.sinh, "cosh": U.cosh, "asin": U.asin,
    "acos": U.acos, "atan": U.atan, "log1p": U.log1p, "expm1": U.expm1, "log2": U.log2,
    "log10": U.log10, "square": U.square, "reciprocal": U.reciprocal, "rsqrt": U.rsqrt,
    "floor": U.floor, "ceil": U.ceil, "round": U.round, "trunc": U.trunc, "sign": U.sign,
    "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax, "argmin": argmin,
    "amax": amax, "amin": amin,
    "norm": norm, "std": std, "var": var, "mm": mm, "t": t,
    "sort": sort, "gather": gather, "index_select": index_select, "index_add": index_add,
    "index_add_": _index_add_,
    "prod": prod, "cumsum": cumsum, "cumprod": cumprod, "logsumexp": logsumexp, "remainder": remainder, "fmod": fmod,
    "floor_divide": floor_divide, "masked_fill": masked_fill, "tril": tril, "triu": triu,
    "flip": flip, "roll": roll, "repeat": repeat, "tile": tile, "movedim": movedim,
    "swapaxes": swapaxes, "split": split, "chunk": chunk, "bmm": bmm, "dot": dot, "outer": outer,
    "erf": erf, "nan_to_num": nan_to_num, "softmax": _softmax, "log_softmax": _log_softmax,
    "contiguous": lambda s: s, "topk": topk, "scatter": scatter, "scatter_add": scatter_add,
    "nonzero": nonzero,
    "eq": _compare(np.equal), "ne": _compare(np.not_equal), "lt": _compare(np.less),
    "le": _compare(np.less_equal), "gt": _compare(np.greater), "ge": _compare(np.greater_equal),
    # shape
    "reshape": reshape, "view": reshape, "transpose": transpose, "permute": permute,
    "flatten": flatten, "squeeze": squeeze, "unsqueeze": unsqueeze,
    "expand_as": _expand_as, "view_as": lambda s, o: reshape(s, o.shape),
    "reshape_as": lambda s, o: reshape(s, o.shape),
    "broadcast_to": S.expand, "expand": S.expand,
    "T": property(lambda s: S.transposed(s, None)),
    "mT": property(lambda s: transpose(s, -1, -2)),
    # dtype
    "to": _to, "astype": _to, "float": lambda s: _to(s, np.float32), "double": lambda s: _to(s, np.float64),
    "half": lambda s: _to(s, np.float16), "long": lambda s: _to(s, np.int64), "int": lambda s: _to(s, np.int32),
    "bool": lambda s: _to(s, np.bool_), "type_as": lambda s, o: _to(s, o.dtype), "cpu": lambda s: s,
    "all": lambda s, *a, **k: R.all(s, *a, **k), "any": lambda s, *a, **k: R.any(s, *a, **k),
    "isnan": isnan, "isinf": isinf, "isfinite": isfinite,
    # autograd
    "backward": _backward,
}

for _name, _method in _METHODS.items():
    setattr(Variable, _name, _method)
