"""The graph's node, which is also the ``ctx`` of the Function call that made it.

``Function.apply`` makes one ``Node`` per recorded call (an instance of, e.g., ``MulBackward``,
the class ``function.py`` derives from ``Mul``) and hands it to ``forward`` as ``ctx``: forward
keeps what backward needs on it (``save_for_backward``, attributes), and afterwards it is the
output's ``grad_fn``. Its edges (``next_functions``) lead to the nodes of the inputs' producers;
a leaf's node is an ``AccumulateGrad``, which adds the gradient into ``leaf.grad``. ``PlainCtx``
is the ``ctx`` of a call that records nothing.
"""
from __future__ import annotations

import weakref
from typing import Any

from .errors import BackwardError
from .variable import Variable

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "variables after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or al.grad(). Specify retain_graph=True if you need "
          "to backward through the graph a second time or if you need to access saved variables "
          "after calling backward.")


class SavedOutput:
    """What save_for_backward keeps of an output of its own node: the data and the version
    counter, not the Variable (which refers to the node: a cycle). Rebuilt on demand."""

    __slots__ = ("_data", "_vc", "_output_nr")

    def __init__(self, out: Variable, output_nr: int) -> None:
        self._data = out._data
        self._vc = out._version_counter
        self._output_nr = output_nr


class Node:
    """A node of the backward graph; also the ``ctx`` of the Function call that made it.

    Attributes the engine reads:
    ``next_functions`` — one ``(node or None, output_nr)`` per forward argument;
    ``needs_input_grad`` — one bool per forward argument.
    """

    _forward_cls: Any = None
    # class-level defaults keep node creation cheap; instances override what they use
    _saved: tuple | list | None = None  # Variables (or SavedOutput, or None)
    _saved_versions: list | None = None  # their versions when saved (None: all 0)
    _saves_outputs = False
    _released = False
    _dirty: tuple = ()
    _non_differentiable: tuple = ()
    _hooks_by_output: dict | None = None
    _retained: dict | None = None
    materialize_grads = True
    _single = True  # one output (the engine's gradient buffer is then a one-element list)
    next_functions: tuple = ()
    needs_input_grad: tuple = ()
    _output_meta: list | tuple = ()
    _input_meta: list | tuple = ()

    # ---- ctx API (as in PyTorch) -------------------------------------------------------
    def save_for_backward(self, *tensors: Variable | None) -> None:
        """Keep Variables for backward. Their version is recorded: an in-place change before
        backward makes backward raise instead of silently using the changed values."""
        changed = False  # a Variable without a counter is at version 0 (counters are made on first use)
        for t in tensors:
            if isinstance(t, Variable):
                if t._vc is not None and t._vc.value:
                    changed = True
            elif t is not None:
                i = next(i for i, x in enumerate(tensors) if x is t)
                raise TypeError(
                    f"save_for_backward can only save Variables (or None), but argument {i} is a "
                    f"{type(t).__name__}. Store other values as attributes instead: ctx.my_value = value."
                )
        self._saved = tensors
        self._saved_versions = [0 if t is None or t._vc is None else t._vc.value
                                for t in tensors] if changed else None

    @property
    def saved_tensors(self) -> tuple:
        """The Variables given to ``save_for_backward``, checked against in-place changes."""
        saved = self._saved
        if saved is None:
            if self._released:
                raise BackwardError(_FREED)
            return ()
        versions = self._saved_versions
        if versions is None:  # all saved at version 0: only a counter made since can differ
            for t in saved:
                if t is not None and t._vc is not None and t._vc.value:
                    self._modified(t, 0)
        else:
            for t, version in zip(saved, versions):
                if t is not None:
                    vc = t._vc
                    if (0 if vc is None else vc.value) != version:
                        self._modified(t, version)
        if self._saves_outputs:
            return tuple(self._rebuild(t) if type(t) is SavedOutput else t for t in saved)
        return tuple(saved)

    def _rebuild(self, s: SavedOutput) -> Variable:
        """A saved output of this node, as a Variable again (the node keeps no cycle)."""
        v = Variable._make(s._data)
        v._vc = s._vc
        v.grad_fn = self
        v._output_nr = s._output_nr
        v._requires_grad = True
        return v

    def _modified(self, t: Any, version: int) -> None:
        name = type(self).__name__
        which = (f"which is output {t._output_nr} of {name}" if type(t) is SavedOutput
                 else f"which was saved by {name}")
        raise BackwardError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [Variable of dtype {t._data.dtype} and shape {list(t._data.shape)}], "
            f"{which}, is at version {t._vc.value}; expected version {version} instead. "
            "Hint: find the in-place operation (add_, mul_, x[...] = ..., +=, zero_) that "
            "changed it after it was saved, and make it out of place (x = x + 1) or apply it "
            "to a clone()."
        )

    saved_variables = saved_tensors  # the pre-0.4 name

    def mark_dirty(self, *tensors: Variable) -> None:
        """Declare inputs that forward modified in place (they must be returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Variable) -> None:
        """Declare outputs that have no gradient (e.g. indices); they will not require grad."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """If False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    # ---- hooks used by Variable.register_hook / retain_grad ----------------------------
    def _pre_hooks_for(self, output_nr: int) -> list:
        if self._hooks_by_output is None:
            self._hooks_by_output = {}
        return self._hooks_by_output.setdefault(output_nr, [])

    def _retain_grad_for(self, var: Variable) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[var._output_nr] = weakref.ref(var)

    # ---- used by in-place operations (ops/inplace.py) -----------------------------------
    def adopt_output(self, var: Variable, output_nr: int, history: bool = True) -> None:
        """``var`` was overwritten in place with this node's output ``output_nr`` and takes it as
        its history: a gradient retained for ``var``, and a saved copy of that output, follow it.
        With ``history=False`` (a view written through, whose history is its base's) only the
        saved copy follows."""
        if history and var._retains_grad:  # retain_grad follows the Variable to its new version, as in PyTorch
            self._retained = dict(self._retained or {})
            self._retained[output_nr] = weakref.ref(var)
        if not self._saves_outputs:
            return
        saved: Any = self._saved
        for j, s in enumerate(saved):
            if type(s) is SavedOutput and s._output_nr == output_nr:
                s._data, s._vc = var._data, var._version_counter
                if self._saved_versions is None:
                    self._saved_versions = [0] * len(saved)
                self._saved_versions[j] = var._version

    def drop_retained(self, output_nr: int) -> None:
        """Stop keeping the gradient of output ``output_nr`` (its Variable moved to a new node)."""
        if self._retained:
            self._retained.pop(output_nr, None)

    def name(self) -> str:
        return type(self).__name__

    def _release(self) -> None:
        """Free what forward saved (called by the engine unless retain_graph=True)."""
        if self._saved is not None:
            self._saved = None
            self._released = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class AccumulateGrad(Node):
    """The node at a leaf: adds the incoming gradient into ``variable.grad``."""

    def __init__(self, variable: Variable) -> None:
        self.variable = variable

    @property
    def _output_meta(self) -> tuple:  # type: ignore[override]
        return ((self.variable._data.shape, self.variable._data.dtype),)

    @staticmethod
    def of(var: Variable) -> "AccumulateGrad":
        ref = var._accumulator
        node = ref() if ref is not None else None
        if node is None:
            node = AccumulateGrad(var)
            var._accumulator = weakref.ref(node)  # weak: the node holds the leaf, not back
        return node


class PlainCtx:
    """The ctx handed to forward when nothing is recorded (grad mode off or no input needs grad)."""

    needs_input_grad: tuple = ()
    _dirty: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        pass

    def mark_dirty(self, *tensors: Variable) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Variable) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


__all__ = ["Node", "AccumulateGrad", "PlainCtx", "SavedOutput"]
