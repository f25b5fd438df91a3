"""Changing a Variable in place (``x.add_(y)``, ``x += y``, ``x[i] = v``, ``x.copy_(y)``).

The new values are computed out of place, then written into the Variable's own memory. The version
counter goes up, so a backward that saved the old values refuses to run. When the change is
recorded, the Variable takes the new node as its ``grad_fn``: its history is rebased, and through
a view the base's history is rewritten, as PyTorch does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import BackwardError, ShapeError
from ..grad_mode import STATE, no_grad
from ..variable import Variable
from . import shape as S
from ._util import raw

def inplace(self: Variable, compute: Callable[..., Variable], *args: Any, cast: bool = False) -> Variable:
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
    if recording and self._multi_view is not None:
        raise BackwardError(
            f"this Variable is {self._multi_view} (or a view of one): split() and chunk() return "
            "several views of one Variable, and such a view cannot be changed in place while autograd "
            "records the change. Use the out-of-place form (p = p * 2), or change a copy "
            "(p = p.clone(); p.mul_(2))."
        )
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
    if self._retains_grad and self.grad_fn is not None:
        self.grad_fn.drop_retained(self._output_nr)
    if node is not None:
        node.adopt_output(self, result._output_nr)
    self.grad_fn, self._output_nr, self._requires_grad = node, result._output_nr, True


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
    if result.grad_fn is not None:  # a saved copy of the result (sigmoid_, exp_) is the view's memory now:
        result.grad_fn.adopt_output(self, result._output_nr, history=False)  # a later change is noticed
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


def setitem(self: Variable, idx: Any, value: Any) -> None:
    idx = S._raw_index(idx)
    if STATE.enabled and self._data.dtype.kind == "f" and (
            self._requires_grad or (isinstance(value, Variable) and value._requires_grad)):
        inplace(self, lambda old, v: S.SetItem.apply(old, idx, v), value, cast=True)
        return
    self._check_inplace()
    self._data[idx] = raw(value)
    self._bump_version()


def replaced_by(x: Variable, value: Any) -> Variable:
    """``x`` with every element replaced by ``value`` (broadcast): ``copy_`` and ``fill_``."""
    return S.SetItem.apply(x, (Ellipsis,), value)
