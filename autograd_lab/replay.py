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

The trace becomes straight-line Python, compiled once per capture: a ``forward`` that calls each
Function's ``forward`` in turn and a ``backward`` that calls their ``backward`` in the engine's
order. ``print(step.code)`` shows it. Where a library Function has an *array form* that does its
arithmetic on numpy arrays (``array_forms.FORMS``: Linear, ReLU, CrossEntropy, Conv2d,
MaxPool2d, Reshape, Add, Mul), for inputs on which that gives exactly its numbers, the code
calls the array form instead, and no Variable is made around the values between two such calls. Compiling takes
about a millisecond for the digits MLP, and about 0.3 ms per operation for long graphs (0.3 s
for a chain of 1000): a capture pays for itself after some tens of replays.

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

import builtins
import gc
import keyword
import math
import re
import threading
from typing import Any, Callable

import numpy as np

from . import function
from .engine import accumulate_leaf, add_gradients, checked_grad, materialize, one_per_input, topological_order
from .errors import AutogradLabError
from .function import call_forward, NO_EDGE, wrap_outputs
from .node import AccumulateGrad, PlainCtx
from .grad_mode import STATE
from .variable import Variable


_MAX_PLANS = 8


class CaptureError(AutogradLabError, RuntimeError):
    """A step cannot be captured or replayed as asked."""


class _Entry:
    """One traced Function call: how to rebuild its arguments, its node (the ctx), and the class
    that replays it on numpy arrays, if its Function has one for these inputs (``arrays``)."""

    __slots__ = ("cls", "template", "links", "kwargs", "node", "is_tuple", "n_out", "arrays")

    def __init__(self, cls, template, links, kwargs, node, is_tuple, n_out, arrays):
        self.cls = cls
        self.template = template  # the arguments as traced; linked positions are filled per call
        self.links = links  # (position, slot): arguments that are inputs or earlier outputs
        self.kwargs = kwargs
        self.node = node  # the ctx to reuse, or None: nothing in this call needs a gradient
        self.is_tuple = is_tuple
        self.n_out = n_out
        self.arrays = arrays


class _Plan:
    """What a capture leaves: the entries in forward order, the backward order, the guards, and
    the code a replay runs (``forward``, ``backward`` and their source, ``code``)."""

    def __init__(self, key, entries, loss, returns, order, leaves):
        self.key = key  # (shape, dtype) of every input
        self.entries = entries
        self.returns = returns  # one value slot per value fn returned, and whether it was a tuple
        self.steps, first = _backward_steps(order)  # the engine's order over the pruned graph
        self.n_slots = sum(1 if s[0] is None else s[2] for s in self.steps)
        self.root_node = loss.grad_fn
        self.root_slot = first[loss.grad_fn] + loss._output_nr
        self.nodes = [e.node for e in entries if e.node is not None]
        self.drops = _last_uses(key, entries, returns[0])
        self.leaves = leaves  # [(Variable, shape, dtype)]: the parameters gradients flow into
        self.forward, self.backward, self.code = _compile(self, len(key))

    def free_saved(self) -> None:
        """Let go of what the forwards saved, until the next call."""
        for node in self.nodes:
            node._saved = None
            if node._saves_outputs:  # the capture's saved outputs were kept as parts; replays
                node._saves_outputs = False  # save plain Variables (no grad_fn: no cycle)

    def leaves_fit(self) -> bool:
        """Whether every parameter still requires grad and has its shape and dtype (the inputs'
        are the key the plan was found by)."""
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
        self._last: _Plan | None = None

    def reset(self) -> None:
        """Forget the captures: the next call runs ``fn`` and captures again."""
        self._plans = {}
        self._last = None

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
        key = tuple([(v._data.shape, v._data.dtype) for v in inputs])
        with self._lock:
            plan = self._plans.get(key)
            if plan is None or not plan.leaves_fit():
                plan, vals = self._capture(inputs, key)
                # the capture's values carry its graph: the step returns them cut from it
                values = tuple(v.detach() for v in _run(plan, None, tuple(vals[k] for k in plan.returns[0])))
            else:
                # A replay makes no reference cycle (its values carry no grad_fn), so there is
                # nothing for the cyclic garbage collector to find while it runs: pause it, as its
                # passes over every live object would cost about 5 % of a replayed chain.
                collecting = gc.isenabled()
                gc.disable()
                try:
                    values = _run(plan, inputs)
                finally:
                    if collecting:
                        gc.enable()
            self._last = plan
        return values if plan.returns[1] else values[0]

    @property
    def code(self) -> str:
        """The Python that replays the last call's capture: ``print(step.code)``."""
        if self._last is None:
            raise CaptureError("nothing is captured yet: call the step once (it captures on its "
                               "first call), then read step.code")
        return self._last.code

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

        def on_record(cls: type, args: tuple, kwargs: dict, out: Any) -> None:
            outs = out if isinstance(out, tuple) else (out,)
            trace.append((cls, args, kwargs, out, _node_of(cls, outs), _versions(outs)))

        try:
            with function.tracing(on_record):
                result = self.fn(*stand_ins)
        except function.TracingError:
            raise CaptureError("another step is being captured; capture one step at a time") from None
        plan, vals = _build_plan(trace, stand_ins, inputs, result, key)
        self._plans[key] = plan
        self.captures += 1
        return plan, vals


def _last_uses(key: tuple, entries: list, kept: tuple) -> list[tuple]:
    """Per entry, the value slots no later entry reads (its own outputs included), so that a replay
    lets go of them at once, as the ordinary path does: what a backward needs, its node saved."""
    last: dict[int, int] = {}
    slot = len(key)
    for k, e in enumerate(entries):
        for _, s in e.links:
            last[s] = k
        for s in range(slot, slot + e.n_out):
            last[s] = k  # an output nothing reads goes at once
        slot += e.n_out
    drops: list[list[int]] = [[] for _ in entries]
    for s, k in last.items():
        if s not in kept:
            drops[k].append(s)
    return [tuple(d) for d in drops]


def _versions(values: Any) -> tuple:
    return tuple(v._vc.value if isinstance(v, Variable) and v._vc is not None else 0 for v in values)


def _node_of(cls: Any, outs: tuple) -> Any:
    for o in outs:
        if isinstance(o, Variable) and type(o.grad_fn) is cls._backward_cls:
            return o.grad_fn
    return None


def _build_plan(trace: list, stand_ins: list, inputs: list, result: Any, key: tuple) -> tuple[_Plan, list]:
    """The plan of a traced step: one entry per traced call (its arguments linked to value slots,
    its node pruned to the edges that reach a parameter), the slots of the returned values, and
    the engine's order from the loss; and the capture's values, slot by slot (the inputs: the
    caller's). Refuses what a replay would skip or get wrong (``CaptureError``)."""
    slot_of = {id(s): k for k, s in enumerate(stand_ins)}
    vals: list = list(inputs)  # the capture's values, slot by slot (the inputs: the caller's)
    carries: list[bool] = [False] * len(stand_ins)  # does the slot carry a gradient to a parameter?
    entries = []
    leaves: dict[int, Variable] = {}
    changed = _versions(stand_ins) != (0,) * len(stand_ins)
    for cls, args, kwargs, out, node, versions in trace:
        outs = out if isinstance(out, tuple) else (out,)
        changed = changed or _versions(outs) != versions
        _refuse_what_a_replay_skips(cls, node, changed)
        template, links, needs = _link_arguments(args, slot_of, carries, leaves)
        node = _pruned(node, needs)
        for o in outs:
            slot_of[id(o)] = len(vals)
            vals.append(o)
            carries.append(node is not None and isinstance(o, Variable) and o.grad_fn is node)
        entries.append(_Entry(cls, template, tuple(links), kwargs or None, node,
                              isinstance(out, tuple), len(outs), _on_arrays(cls, args, kwargs, node, out)))

    _check_inputs_reach_the_trace(entries, stand_ins)
    slots, is_tuple = _returned_slots(result, slot_of, len(stand_ins))
    loss = vals[slots[0]]
    _check_loss(loss, carries[slots[0]])
    order = topological_order([loss.grad_fn])
    plan = _Plan(key, entries, loss, (tuple(slots), is_tuple), order,
                 [(v, v._data.shape, v._data.dtype) for v in leaves.values()])
    vals = [v if k >= len(stand_ins) else inputs[k] for k, v in enumerate(vals)]
    return plan, vals


def _refuse_what_a_replay_skips(cls: Any, node: Any, changed: bool) -> None:
    """A traced call after an in-place change, or whose node has a hook or a retained gradient,
    would be skipped by a replay: refuse the step."""
    if changed or (node is not None and (node._dirty or node._hooks_by_output or node._retained)):
        what = ("changes a Variable in place" if changed or node._dirty else "has a hook or retain_grad")
        raise CaptureError(
            f"the step {what} (at or after {cls.__name__}); a replay would skip it. Capture "
            "a step that only computes its loss: register hooks on parameters, and write "
            "in-place changes out of place (y = x + 1) or make them outside the step."
        )


def _link_arguments(args: tuple, slot_of: dict, carries: list[bool],
                    leaves: dict[int, Variable]) -> tuple[list, list[tuple[int, int]], list[bool]]:
    """One traced call's arguments: the template (a linked position left None), the links
    ``(position, slot)`` to the inputs and earlier outputs, and which arguments need a gradient.
    The parameters it reads are added to ``leaves``; a Variable with a graph made outside the step
    is refused."""
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
    return template, links, needs


def _pruned(node: Any, needs: list[bool]) -> Any:
    """The call's node with no edge into the stand-ins (or what only they computed), as on the
    ordinary path, where the inputs do not require grad; None when no argument needs a gradient."""
    if node is None or not any(needs):
        return None
    node.next_functions = tuple(e if n else NO_EDGE for e, n in zip(node.next_functions, needs))
    node.needs_input_grad = tuple(needs)
    return node


def _returned_slots(result: Any, slot_of: dict, n_inputs: int) -> tuple[list[int], bool]:
    """The value slot of each value the step returned, and whether it returned a tuple; a value
    that no recorded operation computed (a number, an input) is refused."""
    is_tuple = isinstance(result, tuple)
    returned = result if is_tuple else (result,)
    slots = []
    for j, r in enumerate(returned):
        k = slot_of.get(id(r)) if isinstance(r, Variable) else None
        if k is None or k < n_inputs:
            raise CaptureError(
                f"value {j} the step returned is not computed by a recorded operation from its "
                f"inputs or parameters (got {type(r).__name__}); a replay could not compute it. "
                "Return the loss (and other Variables the step computes), not numbers or inputs."
            )
        slots.append(k)
    return slots, is_tuple


def _check_loss(loss: Variable, carries: bool) -> None:
    """The step's first value must reach a parameter and have one element: backward starts there."""
    if not carries:
        raise CaptureError(
            "the step's loss does not depend on any Variable that requires grad, so there is no "
            "gradient to compute. Give the parameters requires_grad=True (nn modules do)."
        )
    if loss._data.size != 1:
        raise CaptureError(
            f"the step's loss has shape {loss.shape}; a captured step calls backward on it, which "
            "needs one element. Reduce it first (loss.mean() or loss.sum())."
        )


def _on_arrays(cls: Any, args: tuple, kwargs: dict, node: Any, out: Any) -> type | None:
    """The array form that replays this call on numpy arrays, or None (the Function's own forward
    and backward on Variables): see ``array_forms``, e.g. ``Linear`` with a 2-d input and one float
    dtype. An array form's forward keeps what its backward reads in ``ctx._saved``, as arrays:
    what this capture's forward saved is turned into arrays too, so that this call's backward can
    be the same code."""
    if node is None or kwargs or cls._setup_style or isinstance(out, tuple):
        return None
    from .array_forms import array_form  # at capture time: it loads the kernels' modules

    arrays = array_form(cls, args)
    if arrays is not None:
        node._saved = tuple(None if t is None else t._data for t in node.saved_tensors)
        node._saves_outputs = False
    return arrays


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


# ---- replay: the plan as straight-line Python ------------------------------------------
# A plan is turned into the source of two functions, compiled once: ``forward(v0, v1, ...)`` calls
# every traced Function's forward in order and returns the step's values; ``backward(loss)`` calls
# their backwards in the engine's order and fills the parameters' ``.grad``. No loop over the plan
# is interpreted per call, and ``step.code`` shows a learner exactly what a replay runs. The names
# in the code are the objects of the capture: ``ctx3`` a node, ``p0`` a parameter, ``c1`` another
# constant, ``Linear`` a Function; ``v5`` is a value and ``g5`` a gradient.
_LOCALS = re.compile(r"^(r|g|buf|loss|forward|backward|[vgw]\d+)$")


class _Names:
    """A readable, unique global name for each object the generated code refers to."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = {
            "Variable": Variable, "ndarray": np.ndarray, "ones": np.ones, "PlainCtx": PlainCtx,
            "as_output": wrap_outputs, "general": _replay_general, "one_per_input": one_per_input,
            "results": _results, "checked": _checked, "total": _total, "accumulate": accumulate_leaf,
            "materialize": materialize,
        }
        self._by_id: dict[int, str] = {}
        self._params = 0

    def of(self, obj: Any, stem: str) -> str:
        name = self._by_id.get(id(obj))
        if name is not None:
            return name
        if not stem.isidentifier():  # a class may be given any __name__: the code only says "obj"
            stem = "obj"
        if keyword.iskeyword(stem) or _LOCALS.match(stem) or hasattr(builtins, stem):
            stem += "_"
        name, k = stem, 1
        while name in self.env:
            k += 1
            name = f"{stem}_{k}"
        self.env[name] = obj  # the env keeps obj alive, so its id stays its own
        self._by_id[id(obj)] = name
        return name

    def constant(self, value: Any, k: int, i: int) -> str:
        if value is None or type(value) in (bool, int, str) or (type(value) is float and math.isfinite(value)):
            return repr(value)
        if type(value) is tuple and all(type(x) in (bool, int) for x in value):
            return repr(value)
        if isinstance(value, Variable) and value._requires_grad:
            if id(value) not in self._by_id:
                self._params += 1
            return self.of(value, f"p{self._params - 1}")
        return self.of(value, f"c{k}_{i}")


def _compile(plan: _Plan, n_inputs: int) -> tuple[Callable, Callable, str]:
    """The plan's ``forward`` and ``backward`` functions, and their source."""
    names = _Names()
    for var, _, _ in plan.leaves:  # the parameters first: p0, p1, ... in the order the step reads them
        names.constant(var, 0, 0)
    source = "\n".join(_forward_source(plan, n_inputs, names) + ["", ""] + _backward_source(plan, names)) + "\n"
    exec(compile(source, "<captured step>", "exec"), names.env)
    return names.env["forward"], names.env["backward"], source


def _forward_source(plan: _Plan, n_inputs: int, names: _Names) -> list[str]:
    code = [f"def forward({', '.join(f'v{k}' for k in range(n_inputs))}):"]
    slot = n_inputs  # the first output's value slot
    arrays: set[int] = set()  # the value slots that hold numpy arrays (the others hold Variables)
    # array slots given a Variable (w5) for calls on Variables: one each, so that a call given one
    # value twice gets one Variable twice
    wrapped: set[int] = set()

    def arg(e: _Entry, k: int, i: int, a: Any, linked: dict) -> str:
        if i in linked:
            s = linked[i]
            if e.arrays is not None:
                return f"v{s}" if s in arrays else f"v{s}._data"
            if s in arrays and s not in wrapped:
                wrapped.add(s)
                code.append(f"    w{s} = Variable._make(v{s})")
            return f"w{s}" if s in arrays else f"v{s}"
        text = names.constant(a, k, i)
        return f"{text}._data" if e.arrays is not None and isinstance(a, Variable) else text

    for k, e in enumerate(plan.entries):
        linked = dict(e.links)
        args = ", ".join([arg(e, k, i, a, linked) for i, a in enumerate(e.template)])
        cls = names.of(e.cls, e.cls.__name__)
        if e.arrays is not None:  # the Function's arithmetic on arrays: no Variable to make
            ctx = names.of(e.node, f"ctx{k}")
            code.append(f"    v{slot} = {names.of(e.arrays, e.arrays.__name__)}.forward({ctx}, {args})")
            arrays.add(slot)
        elif e.kwargs is None and not e.cls._setup_style and not e.is_tuple:
            ctx = names.of(e.node, f"ctx{k}") if e.node is not None else "PlainCtx()"
            code.append(f"    v{slot} = {cls}.forward({ctx}, {args})")
            code.append(f"    if type(v{slot}) is not Variable: v{slot} = as_output({cls}, v{slot})")
        else:  # keyword arguments, setup_context or several outputs
            outs = "".join(f"v{slot + j}, " for j in range(e.n_out))
            code.append(f"    {outs}= general({names.of(e, f'call{k}')}, [{args}])")
        slot += e.n_out
        if plan.drops[k]:  # values no later call reads: let go of them, as the ordinary path does
            dropped = [f"{c}{s}" for s in plan.drops[k] for c in ("vw" if s in wrapped else "v")]
            code.append(f"    del {', '.join(dropped)}")
    # what the step returns, cut from any graph: an array gets a new Variable, a Variable is detached
    variables = [f"Variable._make(v{s})" if s in arrays else f"v{s}.detach()" for s in plan.returns[0]]
    code.append(f"    return ({''.join(f'{v}, ' for v in variables)})")
    return code


def _backward_source(plan: _Plan, names: _Names) -> list[str]:
    """The source of ``backward(loss)``: every gradient slot starts empty, the loss's holds ones,
    then each step of the engine's order in turn, a node's backward or a parameter's ``.grad``."""
    code = ["def backward(loss):"]
    others = [f"g{s}" for s in range(plan.n_slots) if s != plan.root_slot]
    for i in range(0, len(others), 16):
        code.append(f"    {' = '.join(others[i:i + 16])} = None")
    on_arrays = {id(e.node): e.arrays for e in plan.entries if e.arrays is not None}
    writers, arrays = _gradient_writers(plan, on_arrays)
    ones = "ones(loss._data.shape, loss._data.dtype)"
    if id(plan.root_node) in on_arrays:
        arrays.add(plan.root_slot)
        code.append(f"    g{plan.root_slot} = {ones}")
    else:
        code.append(f"    g{plan.root_slot} = Variable._make({ones})")
    note = "  # freed at once: the next gradient can reuse the memory"
    for step in plan.steps:
        if step[0] is None:  # a parameter: its .grad
            _, var, s = step
            code += [f"    if g{s} is not None:",
                     f"        accumulate({names.of(var, 'p')}, {_as_variable(s, arrays)}, False)",
                     f"        g{s} = None"]
            continue
        code += _node_backward_source(step, names, on_arrays.get(id(step[0])), arrays, writers, note)
        note = ""
    return code


def _gradient_writers(plan: _Plan, on_arrays: dict) -> tuple[dict[int, list[bool]], set[int]]:
    """Per gradient slot, for each edge that brings it a gradient, whether its node's backward
    works on arrays; and the slots that hold arrays: those one backward on arrays writes (the
    others hold Variables; ``_backward_source`` adds the loss's slot when its backward is on arrays)."""
    writers: dict[int, list] = {}
    for step in plan.steps:
        for edge in (step[3] if step[0] is not None else ()):
            writers.setdefault(edge[1], []).append(id(step[0]) in on_arrays)
    return writers, {s for s, w in writers.items() if w == [True]}


def _as_variable(s: int, arrays: set[int]) -> str:
    """Gradient slot ``s``, known to hold a gradient, as a Variable."""
    return f"Variable._make(g{s})" if s in arrays else f"g{s}"


def _node_backward_source(step: tuple, names: _Names, on: Any, arrays: set[int],
                          writers: dict[int, list[bool]], note: str) -> list[str]:
    """One node's backward in the generated code: called when a gradient reached one of its
    outputs, its gradients then let go of, and what it returned written (or added) into the
    gradient slots of its inputs. ``on`` is its array form, or None (the backward on Variables)."""
    node, first, n_out, edges, n_in = step
    ctx = names.of(node, "ctx")
    cls = names.of(node._forward_cls, node._forward_cls.__name__)
    g, code = _backward_call_source(ctx, cls, on, first, n_out, arrays, names)
    code.append(f"        {g} = None{note}")
    if on is None:
        code.append(f"        if type(r) is not tuple or len(r) != {n_in}: r = results(r, {n_in}, {ctx})")
    for i, s, shape, dtype in edges:
        if on is not None:  # the arrays' own backward: shapes and dtypes are the inputs'
            got = f"r[{i}]" if s in arrays else f"Variable._make(r[{i}])"
        else:
            got = f"checked(r[{i}], {ctx}, {i}, {shape!r}, {names.of(dtype, dtype.name)})"
        code.append(f"        g{s} = {got}" if len(writers[s]) == 1 else f"        g{s} = total(g{s}, {got})")
    return code


def _backward_call_source(ctx: str, cls: str, on: Any, first: int, n_out: int, arrays: set[int],
                          names: _Names) -> tuple[str, list[str]]:
    """The call of one node's backward, as ``r = ...`` under a test that a gradient came; and the
    gradient slots it reads, as the target of the line that lets go of them."""
    if on is not None:  # one output; its backward returns one array (or None) per input
        g = f"g{first}"
        got = g if first in arrays else f"{g}._data"
        return g, [f"    # {cls}'s backward, on arrays", f"    if {g} is not None:",
                   f"        r = {names.of(on, on.__name__)}.backward({ctx}, {got})"]
    if n_out == 1:
        g = f"g{first}"
        return g, [f"    # {cls}'s backward", f"    if {g} is not None:",
                   f"        r = {cls}.backward({ctx}, {_as_variable(first, arrays)})"]
    # one gradient per output; materialize makes zeros for those that got none
    gs = [f"g{first + j}" for j in range(n_out)]
    buf = ", ".join(f"None if {x} is None else Variable._make({x})" if first + j in arrays else x
                    for j, x in enumerate(gs))
    return " = ".join(gs), [f"    # {cls}'s backward", f"    if {' or '.join(f'{x} is not None' for x in gs)}:",
                            f"        buf = [{buf}]", f"        materialize({ctx}, buf)",
                            f"        r = {cls}.backward({ctx}, *buf)", "        buf = None"]


def _results(result: Any, n_inputs: int, node: Any) -> tuple:
    """What a backward returned, as one gradient (or None) per input of its forward."""
    if type(result) is not tuple:
        result = (result,)
    return result if len(result) == n_inputs else one_per_input(node, result)


def _checked(g: Any, node: Any, index: int, shape: tuple, dtype: np.dtype) -> Variable | None:
    """A gradient checked against its input's shape and dtype (as the engine checks it)."""
    if type(g) is np.ndarray and g.shape == shape and g.dtype == dtype:
        return Variable._make(g)  # as the library's backwards return them
    if g is None or (type(g) is Variable and g._data.shape == shape and g._data.dtype == dtype):
        return g
    return checked_grad(g, node, index, (shape, dtype))


def _total(a: Variable | None, b: Variable | None) -> Variable | None:
    """Two gradients of one value added (either may be None)."""
    return a if b is None else add_gradients(a, b)


def _replay_general(e: _Entry, args: list) -> tuple:
    """One traced call with keyword arguments, setup_context or several outputs: its outputs."""
    cls = e.cls
    result = call_forward(cls, e.node if e.node is not None else PlainCtx(), tuple(args), e.kwargs or {})
    result = wrap_outputs(cls, result)
    if not e.is_tuple:
        return (result,)
    if not isinstance(result, tuple) or len(result) != e.n_out:
        raise CaptureError(
            f"{cls.__name__} returned {len(result) if isinstance(result, tuple) else 1} outputs on "
            f"replay, {e.n_out} when captured; call step.reset() (the step takes another path now)."
        )
    return result


def _backward_steps(order: list) -> tuple[list, dict]:
    """The engine's order as a list of steps over numbered gradient slots (one per node output):
    ``(node, first_slot, n_slots, edges, n_inputs)`` with ``edges = ((input_index, slot,
    shape, dtype), ...)`` for the inputs that get a gradient, or ``(None, variable, slot)`` for a
    parameter's leaf."""
    first: dict = {}
    n = 0
    for node in order:
        first[node] = n
        n += 1 if type(node) is AccumulateGrad else max(len(node._output_meta), 1)
    steps: list[tuple] = []
    for node in order:
        if type(node) is AccumulateGrad:
            steps.append((None, node.variable, first[node]))
            continue
        edges = tuple((i, first[nxt] + nr) + tuple(nxt._output_meta[nr])
                      for i, (nxt, nr) in enumerate(node.next_functions) if nxt is not None)
        steps.append((node, first[node], max(len(node._output_meta), 1), edges, len(node.next_functions)))
    return steps, first


def _run(plan: _Plan, inputs: list | None, captured: tuple | None = None) -> tuple:
    """The plan's forward on ``inputs`` (or the values a capture just computed), then its
    backward from a gradient of ones at the loss; the values the step returns."""
    STATE.enabled = False  # as inside any forward and backward: nothing is recorded
    try:
        values = plan.forward(*(inputs or ())) if captured is None else captured
        plan.backward(values[0])
    finally:
        STATE.enabled = True
        plan.free_saved()
    return values


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
