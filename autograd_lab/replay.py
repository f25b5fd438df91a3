"""Capture a training step once, then replay it without building a graph (opt-in).

    step = al.capture(lambda x, y: F.cross_entropy(model(x), y))
    for x, y in batches:
        loss = step(x, y)        # forward and backward: every parameter's .grad is filled
        opt.step()
        opt.zero_grad()

The first call runs ``fn`` on the ordinary path and writes down which Function ran on what: the
*trace*. A later call with inputs of the same shapes and dtypes does not call ``fn``: it runs the
traced Functions' ``forward`` on the new inputs, then their ``backward`` in the order the engine
used, reusing the nodes of the first call. No module is called, no node, edge or metadata is made,
and no topological order is computed; the numbers are the ordinary path's, bit for bit (the tests
compare them). It is the idea behind CUDA graphs and ``torch.compile``, in plain Python.

What a replay cannot see, it repeats as it was captured (as CUDA graphs do):

- Python decisions: an ``if`` on a value, ``model.train()``/``eval()``, a different loss.
  Call ``step.reset()`` after such a change, so that the next call captures again.
- Values that reach the loss without a recorded operation: ``.item()``, ``.numpy()``,
  comparisons, what ``fn`` computes under ``al.no_grad()``, and Variables made inside ``fn``
  (``al.randn`` noise is frozen; a Function that draws inside its forward, such as dropout,
  draws anew on every replay).
- ``fn`` must only compute: no ``backward()``, no optimizer step, no in-place change of a
  parameter inside it (a captured in-place operation is refused).

A call with inputs of new shapes or dtypes captures again and keeps both captures (the last
batch of an epoch is often smaller); a parameter that stops requiring grad or changes shape
makes the next call capture again too. ``step.captures`` counts the captures.
"""
from __future__ import annotations

import gc
import threading
from typing import Any, Callable

import numpy as np

from . import function
from .engine import _accumulate_leaf, _add, _as_grad, materialize, one_per_input, topological_order
from .errors import AutogradLabError
from .function import AccumulateGrad, _call_forward, _interned, _NO_EDGE, _PlainCtx, _wrap_outputs
from .grad_mode import STATE
from .variable import Variable


_MAX_PLANS = 8


class CaptureError(AutogradLabError, RuntimeError):
    """A step cannot be captured or replayed as asked."""


class _Entry:
    """One traced Function call: how to rebuild its arguments, and its node (the ctx)."""

    __slots__ = ("cls", "template", "links", "kwargs", "node", "is_tuple", "n_out")

    def __init__(self, cls, template, links, kwargs, node, is_tuple, n_out):
        self.cls = cls
        self.template = template  # the arguments as traced; linked positions are filled per call
        self.links = links  # (position, slot): arguments that are inputs or earlier outputs
        self.kwargs = kwargs
        self.node = node  # the ctx to reuse, or None: nothing in this call needs a gradient
        self.is_tuple = is_tuple
        self.n_out = n_out


class _Plan:
    """What a capture leaves: the entries in forward order, the backward order, the guards."""

    def __init__(self, key, entries, loss, returns, order, leaves):
        self.key = key  # (shape, dtype) of every input
        self.entries = entries
        self.returns = returns  # one value slot per value fn returned, and whether it was a tuple
        self.steps, first = _backward_steps(order)  # the engine's order over the pruned graph
        self.n_slots = sum(1 if s[0] is None else s[2] for s in self.steps)
        self.root_value = returns[0][0]
        self.root_slot = first[loss.grad_fn] + loss._output_nr
        self.nodes = [e.node for e in entries if e.node is not None]
        self.program = [((e.cls.forward if e.kwargs is None and not e.cls._setup_style and not e.is_tuple
                          else None), e.template,
                         # (value, constant) calls keep just the value's slot
                         e.links[0][1] if len(e.template) == 2 and len(e.links) == 1 and e.links[0][0] == 0
                         else e.links, e.node, e) for e in entries]
        self.leaves = leaves  # [(Variable, shape, dtype)]: the parameters gradients flow into

    def still_fits(self, key: tuple) -> bool:
        if key != self.key:
            return False
        for var, shape, dtype in self.leaves:
            if not var._requires_grad or var._data.shape != shape or var._data.dtype != dtype:
                return False
        return True


class CapturedStep:
    """``fn`` captured on its first call and replayed afterwards (see the module's docstring)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"al.capture expects a function (the step), got {type(fn).__name__}")
        self.fn = fn
        self.captures = 0
        self._plans: dict[tuple, _Plan] = {}  # one capture per input shapes (a last batch is smaller)
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget the captures: the next call runs ``fn`` and captures again."""
        self._plans = {}

    def __call__(self, *args: Any) -> Any:
        if not STATE.enabled:
            raise CaptureError(
                "a captured step computes gradients, but grad mode is off (al.no_grad()). Call it "
                "outside no_grad, or call the function itself for a forward pass only."
            )
        inputs = [a if isinstance(a, Variable) else Variable(a) for a in args]
        for i, v in enumerate(inputs):
            if v._requires_grad:
                raise CaptureError(
                    f"argument {i} of the captured step requires grad. The arguments of a step are "
                    "its data (inputs, targets); the step fills the .grad of the parameters it "
                    "reads. Pass x.detach(), or use loss.backward() for gradients of an input."
                )
        key = tuple((v._data.shape, v._data.dtype) for v in inputs)
        with self._lock:
            plan = self._plans.get(key)
            if plan is None or not plan.still_fits(key):
                plan, vals = self._capture(inputs, key)
                _backward(plan, vals)
            else:
                # A replay makes no reference cycle (its values carry no grad_fn), so there is
                # nothing for the cyclic garbage collector to find while it runs: pause it, as its
                # passes over every live object would cost about 5 % of a replayed chain.
                collecting = gc.isenabled()
                gc.disable()
                try:
                    vals = _replay(plan, inputs)
                    _backward(plan, vals)
                finally:
                    if collecting:
                        gc.enable()
            slots, is_tuple = plan.returns
            out = tuple(vals[k].detach() for k in slots)
        return out if is_tuple else out[0]

    # ---- capture ---------------------------------------------------------------------
    def _capture(self, inputs: list[Variable], key: tuple) -> tuple[_Plan, list]:
        self._plans.pop(key, None)
        if len(self._plans) >= _MAX_PLANS:  # shapes that keep changing: keep the latest few
            self._plans.pop(next(iter(self._plans)))
        # the inputs stand in as Variables that require grad, so that every operation on them is
        # recorded (and traced); their edges are cut afterwards, so no gradient is made for them
        stand_ins = []
        for v in inputs:
            s = Variable._make(v._data)
            s._requires_grad = True
            stand_ins.append(s)
        trace: list = []
        me = threading.get_ident()
        original = function._record

        def tracing(cls: type, args: tuple, kwargs: dict) -> Any:
            out = original(cls, args, kwargs)
            if threading.get_ident() == me:
                outs = out if isinstance(out, tuple) else (out,)
                trace.append((cls, args, kwargs, out, _node_of(cls, outs), _versions(outs)))
            return out

        if getattr(original, "_tracing", False):
            raise CaptureError("another step is being captured; capture one step at a time")
        tracing._tracing = True  # type: ignore[attr-defined]
        function._record = tracing
        try:
            result = self.fn(*stand_ins)
        finally:
            function._record = original
        plan, vals = _build_plan(trace, stand_ins, inputs, result, key)
        self._plans[key] = plan
        self.captures += 1
        return plan, vals


def _versions(values: Any) -> tuple:
    return tuple(v._vc.value if isinstance(v, Variable) and v._vc is not None else 0 for v in values)


def _node_of(cls: type, outs: tuple) -> Any:
    for o in outs:
        if isinstance(o, Variable) and type(o.grad_fn) is cls._backward_cls:
            return o.grad_fn
    return None


def _build_plan(trace: list, stand_ins: list, inputs: list, result: Any, key: tuple) -> tuple[_Plan, list]:
    slot_of = {id(s): k for k, s in enumerate(stand_ins)}
    vals: list = list(inputs)  # the capture's values, slot by slot (the inputs: the caller's)
    carries: list[bool] = [False] * len(stand_ins)  # does the slot carry a gradient to a parameter?
    entries = []
    leaves: dict[int, Variable] = {}
    changed = _versions(stand_ins) != (0,) * len(stand_ins)
    for cls, args, kwargs, out, node, versions in trace:
        outs = out if isinstance(out, tuple) else (out,)
        changed = changed or _versions(outs) != versions
        if changed or (node is not None and (node._dirty or node._hooks_by_output or node._retained)):
            what = ("changes a Variable in place" if changed or node._dirty else "has a hook or retain_grad")
            raise CaptureError(
                f"the step {what} (at or after {cls.__name__}); a replay would skip it. Capture "
                "a step that only computes its loss: register hooks on parameters, and write "
                "in-place changes out of place (y = x + 1) or make them outside the step."
            )
        template, links, needs = list(args), [], []
        for i, a in enumerate(args):
            if not isinstance(a, Variable):
                needs.append(False)
                continue
            k = slot_of.get(id(a))
            if k is not None:
                links.append((i, k))
                template[i] = None
                needs.append(carries[k])
            elif a._requires_grad and a.grad_fn is not None:
                raise CaptureError(
                    f"the step reads a Variable of shape {a.shape} that was computed, with a graph, "
                    "outside the step; every replay would backward through that old graph again. "
                    "Compute it inside the step, pass it as an argument, or detach() it."
                )
            else:
                needs.append(a._requires_grad)  # a parameter (a leaf), or a constant
                if a._requires_grad:
                    leaves[id(a)] = a
        if node is not None and any(needs):
            # prune: no edge into the stand-ins (or what only they computed), as on the
            # ordinary path, where the inputs do not require grad
            node.next_functions = tuple(e if n else _NO_EDGE for e, n in zip(node.next_functions, needs))
            node.needs_input_grad = _interned(tuple(needs))
        else:
            node = None
        for o in outs:
            slot_of[id(o)] = len(vals)
            vals.append(o)
            carries.append(node is not None and isinstance(o, Variable) and o.grad_fn is node)
        entries.append(_Entry(cls, template, tuple(links), kwargs or None, node,
                              isinstance(out, tuple), len(outs)))

    _check_inputs_reach_the_trace(entries, stand_ins)
    is_tuple = isinstance(result, tuple)
    returned = result if is_tuple else (result,)
    slots = []
    for j, r in enumerate(returned):
        k = slot_of.get(id(r)) if isinstance(r, Variable) else None
        if k is None or k < len(stand_ins):
            raise CaptureError(
                f"value {j} the step returned is not computed by a recorded operation from its "
                f"inputs or parameters (got {type(r).__name__}); a replay could not compute it. "
                "Return the loss (and other Variables the step computes), not numbers or inputs."
            )
        slots.append(k)
    loss = vals[slots[0]]
    if not carries[slots[0]]:
        raise CaptureError(
            "the step's loss does not depend on any Variable that requires grad, so there is no "
            "gradient to compute. Give the parameters requires_grad=True (nn modules do)."
        )
    if loss._data.size != 1:
        raise CaptureError(
            f"the step's loss has shape {loss.shape}; a captured step calls backward on it, which "
            "needs one element. Reduce it first (loss.mean() or loss.sum())."
        )
    order = topological_order([loss.grad_fn])
    plan = _Plan(key, entries, loss, (tuple(slots), is_tuple), order,
                 [(v, v._data.shape, v._data.dtype) for v in leaves.values()])
    vals = [v if k >= len(stand_ins) else inputs[k] for k, v in enumerate(vals)]
    return plan, vals


def _check_inputs_reach_the_trace(entries: list, stand_ins: list) -> None:
    """Refuse a step that reads an input's values outside the recorded operations: a replay
    would go on using the captured values (the two mistakes a capture can see)."""
    n = len(stand_ins)
    used = {k for e in entries for _, k in e.links if k < n}
    for k in range(n):
        if k not in used:
            raise CaptureError(
                f"argument {k} of the step reaches no recorded operation: the step reads it as "
                "numbers (.data, .numpy(), .item(), np.asarray, a comparison) or not at all, so a "
                "replay would keep using its first value. Pass it to a Variable operation or a "
                "loss instead, or leave it out of the step's arguments."
            )
    for e in entries:
        for a in list(e.template) + list((e.kwargs or {}).values()):
            data = a._data if isinstance(a, Variable) else a
            if isinstance(data, np.ndarray) and any(np.may_share_memory(data, s._data) for s in stand_ins):
                raise CaptureError(
                    f"{e.cls.__name__} was given an array that views a step argument's memory "
                    "without a recorded operation (e.g. x.data[...]); a replay would keep using the "
                    "captured values. Use Variable operations on the argument instead."
                )


# ---- replay -------------------------------------------------------------------------
def _replay(plan: _Plan, inputs: list) -> list:
    """Run every traced forward on the new inputs; the values, slot by slot."""
    vals = list(inputs)
    STATE.enabled = False  # as inside any forward: nothing is recorded
    try:
        for forward, template, links, ctx, e in plan.program:
            if forward is None:  # keyword arguments, setup_context or several outputs
                _replay_general(e, _arguments(template, links, vals), vals)
                continue
            if type(links) is int:  # (an earlier value, a constant): the most common call
                result = forward(ctx if ctx is not None else _PlainCtx(), vals[links], template[1])
            else:
                result = forward(ctx if ctx is not None else _PlainCtx(), *_arguments(template, links, vals))
            vals.append(result if type(result) is Variable else _wrap_outputs(e.cls, result))
    finally:
        STATE.enabled = True
    return vals


def _arguments(template: tuple, links: tuple, vals: list) -> Any:
    if not links:
        return template
    args = list(template)
    for i, k in links:
        args[i] = vals[k]
    return args


def _replay_general(e: _Entry, args: Any, vals: list) -> None:
    """One traced call with keyword arguments, setup_context or several outputs."""
    cls = e.cls
    result = _call_forward(cls, e.node if e.node is not None else _PlainCtx(), args, e.kwargs or {})
    result = _wrap_outputs(cls, result)
    if not e.is_tuple:
        vals.append(result)
        return
    if not isinstance(result, tuple) or len(result) != e.n_out:
        raise CaptureError(
            f"{cls.__name__} returned {len(result) if isinstance(result, tuple) else 1} outputs on "
            f"replay, {e.n_out} when captured; call step.reset() (the step takes another path now)."
        )
    vals.extend(result)


def _backward_steps(order: list) -> tuple[list, dict]:
    """The engine's order as a list of steps over numbered gradient slots (one per node output):
    ``(node, first_slot, n_slots, edges, backward, n_inputs)`` with ``edges = ((input_index, slot,
    shape, dtype), ...)`` for the inputs that get a gradient, or ``(None, variable, slot)`` for a
    parameter's leaf."""
    first: dict = {}
    n = 0
    for node in order:
        first[node] = n
        n += 1 if type(node) is AccumulateGrad else max(len(node._output_meta), 1)
    steps = []
    for node in order:
        if type(node) is AccumulateGrad:
            steps.append((None, node.variable, first[node]))
            continue
        edges = tuple((i, first[nxt] + nr) + tuple(nxt._output_meta[nr])
                      for i, (nxt, nr) in enumerate(node.next_functions) if nxt is not None)
        steps.append((node, first[node], max(len(node._output_meta), 1), edges,
                      node._forward_cls.backward, len(node.next_functions)))
    return steps, first


def _backward(plan: _Plan, vals: list) -> None:
    """The engine's loop, over the captured steps, from a gradient of ones at the loss."""
    loss = vals[plan.root_value]._data
    grads: list = [None] * plan.n_slots
    grads[plan.root_slot] = Variable._make(np.ones(loss.shape, loss.dtype))
    STATE.enabled = False
    try:
        for step in plan.steps:
            node = step[0]
            if node is None:
                g = grads[step[2]]
                if g is not None:
                    _accumulate_leaf(step[1], g, False)
                continue
            _, first, n_out, edges, backward, n_in = step
            if n_out == 1:
                g = grads[first]
                if g is None:
                    continue
                result = backward(node, g)
            else:
                buf = grads[first:first + n_out]
                if all(g is None for g in buf):
                    continue
                materialize(node, buf)
                result = backward(node, *buf)
            if type(result) is not tuple:
                result = (result,)
            if len(result) != n_in:
                result = one_per_input(node, result)
            for i, slot, shape, dtype in edges:
                g = result[i]
                if g is None:
                    continue
                if type(g) is np.ndarray and g.shape == shape and g.dtype == dtype:
                    g = Variable._make(g)  # as the library's backwards return them
                elif not (type(g) is Variable and g._data.shape == shape and g._data.dtype == dtype):
                    g = _as_grad(g, node, i, (shape, dtype))
                cur = grads[slot]
                grads[slot] = g if cur is None else _add(cur, g)
    finally:
        STATE.enabled = True
        for node in plan.nodes:  # free what the forwards saved, until the next call
            node._saved = None
            if node._saves_outputs:  # the capture's saved outputs were kept as parts; replays
                node._saves_outputs = False  # save plain Variables (no grad_fn: no cycle)


def capture(fn: Callable[..., Any]) -> CapturedStep:
    """Capture ``fn`` (a step that returns a scalar loss, or a tuple whose first item is the loss)
    on its first call; later calls replay it and fill the parameters' ``.grad``. Also a decorator.

    >>> import autograd_lab as al
    >>> w = al.tensor([1.0, 2.0], requires_grad=True)
    >>> step = al.capture(lambda x: (w * x).sum())
    >>> step(al.tensor([3.0, 4.0]))
    Variable(11.)
    >>> w.grad
    Variable([3., 4.])
    >>> w.grad = None
    >>> step(al.tensor([5.0, 6.0]))  # replayed: fn is not called again
    Variable(17.)
    >>> w.grad
    Variable([5., 6.])
    >>> step.captures
    1
    """
    return CapturedStep(fn)


__all__ = ["capture", "CapturedStep", "CaptureError"]
