"""The observe side of ch03-own-apply: Functions built on the learner's ``Function`` with plain
numpy inside, run through the learner's ``apply``; only plain data is kept."""
from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._common import format_value
from .._functions import data
from .._observe import Observer
from ._shared import FAILED, call, plain_array


C_VALUE = "forward's value comes back as a Variable"
C_MODE = "forward runs with grad mode off; afterwards it is on again"
C_NODE = "the node: grad_fn is forward's ctx, named after the Function"
C_NEEDS = "needs_input_grad: one bool per argument"
C_RAW = "a numpy array returned by forward is wrapped as a Variable"
C_NO_GRAD = "no input requires grad: nothing is recorded"
C_OFF = "grad mode off (as inside no_grad): nothing is recorded"
C_RAISES = "forward raises: the error comes through and grad mode is on again"


def depth_title(depth: int) -> str:
    return f"a graph of {depth} levels can be walked back by hand"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases, as (data, requires_grad): the same from the same seed."""
    rng = np.random.default_rng(seed)

    def var(shape: tuple[int, ...], requires_grad: bool = True) -> tuple[np.ndarray, bool]:
        return np.round(rng.normal(size=shape), 3), requires_grad

    found: dict[str, Any] = {
        C_VALUE: [var((3,)), var((3,))], C_MODE: [var((2,)), var((2,))],
        C_NODE: [var((2, 2)), var((2, 2), False)],
        C_NEEDS: [var((2,)), var((2,), False), var((2,), False), var((2,)), var((3,))],
        C_RAW: [var((4,))], C_NO_GRAD: [var((2,), False), var((2,), False)],
        C_OFF: [var((2,)), var((2,))], C_RAISES: [var((2,))]}
    found["depths"] = [(depth, [var((3,)), var((3,))]) for depth in
                       [2] + ([3, 5] if hidden else [])]
    return found


def text(value: Any) -> str:
    try:
        return format_value(value)
    except Exception:  # noqa: BLE001 - a learner's repr may raise
        return f"<{type(value).__name__}>"


@contextlib.contextmanager
def grad_mode_kept(GradMode: Any) -> Iterator[None]:
    """Whatever the learner's apply does to grad mode, the notebook gets its old value back."""
    before = getattr(GradMode, "enabled", True)
    try:
        yield
    finally:
        GradMode.enabled = before


def probe_functions(Function: type[Any], Variable: type[Any],
                    GradMode: Any) -> types.SimpleNamespace:
    """Functions built on the learner's Function, with plain numpy inside."""

    class RefMul(Function):
        """a * b"""

        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            ctx.save_for_backward(a, b)
            ctx.grad_mode_in_forward = GradMode.enabled
            ctx.seen_in_forward = True
            return Variable(a.data * b.data)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> tuple:
            a, b = ctx.saved_tensors
            return Variable(grad.data * b.data), Variable(grad.data * a.data)

    class RefScale(Function):
        """x * k for a Python number k"""

        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            ctx.k = k
            return Variable(x.data * k)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> tuple:
            return Variable(grad.data * ctx.k), None

    class RefRaw(RefScale):
        """x * k, returned as a plain numpy array"""

        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            ctx.k = k
            return x.data * k

    class RefSwitchesOn(Function):
        """x, with grad mode switched on inside forward (to see when apply reads grad mode)"""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            GradMode.enabled = True
            return Variable(x.data.copy())

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    class RefFails(Function):
        """a forward that raises"""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            raise ValueError("this forward fails on purpose")

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    return types.SimpleNamespace(Mul=RefMul, Scale=RefScale, Raw=RefRaw,
                                 SwitchesOn=RefSwitchesOn, Fails=RefFails)


class _Run:
    """The learner's apply on the probes, with grad mode read before and after each call."""

    def __init__(self, ob: Observer, refs: types.SimpleNamespace, Variable: type[Any],
                 GradMode: Any) -> None:
        self.ob, self.refs, self.Variable, self.GradMode = ob, refs, Variable, GradMode

    def var(self, spec: tuple[np.ndarray, bool]) -> Any:
        return self.Variable(spec[0].copy(), requires_grad=spec[1])

    def apply(self, key: str, cls: type[Any], *args: Any) -> Any:
        before = self.GradMode.enabled
        out = call(self.ob, key, cls.apply, *args)
        after, self.GradMode.enabled = self.GradMode.enabled, before
        if out is not FAILED:
            self.ob.put(f"{key} mode", [bool(before), after is True, after is False, text(after)])
        return out

    def why_not_recorded(self, out: Any) -> None:
        """What tells why a recorded call's output has no node."""
        self.ob.put("why: requires grad", bool(getattr(out, "requires_grad", False)))
        try:
            with grad_mode_kept(self.GradMode):
                probe = self.refs.SwitchesOn.apply(self.Variable(np.ones(2), requires_grad=True))
            recorded = getattr(probe, "grad_fn", None) is not None
        except Exception:  # noqa: BLE001 - then it did not record either
            recorded = False
        self.ob.put("why: probe recorded", recorded)

    def recorded(self, out: Any, attribute: str | None = None) -> Any:
        node = getattr(out, "grad_fn", None)
        ok = node is not None and (attribute is None or hasattr(node, attribute))
        self.ob.put("recorded", ok)
        if not ok:
            self.why_not_recorded(out)
            return None
        return node


def observe_cases(ob: Observer, Function: type[Any], Variable: type[Any], GradMode: Any,
                  inputs: dict[str, Any]) -> None:
    """Every case of ch03-own-apply, observed (the titles are the judge's)."""
    run = _Run(ob, probe_functions(Function, Variable, GradMode), Variable, GradMode)
    refs = run.refs
    with ob.case(C_VALUE):
        out = run.apply("apply", refs.Mul, *map(run.var, inputs[C_VALUE]))
        if out is not FAILED:
            _output(ob, out, Variable)
    with ob.case(C_MODE):
        out = run.apply("apply", refs.Mul, *map(run.var, inputs[C_MODE]))
        if out is not FAILED and (node := run.recorded(out, "grad_mode_in_forward")) is not None:
            ob.put("off in forward", node.grad_mode_in_forward is False)
    with ob.case(C_NODE):
        a, b = map(run.var, inputs[C_NODE])
        out = run.apply("apply", refs.Mul, a, b)
        if out is not FAILED and (node := run.recorded(out)) is not None:
            _node(ob, out, node, a, b)
    with ob.case(C_NEEDS):
        args = list(map(run.var, inputs[C_NEEDS]))
        for i, pair in enumerate([(args[0], args[1]), (args[2], args[3]), (args[4], 2.0)]):
            out = run.apply(f"apply {i}", refs.Mul if i < 2 else refs.Scale, *pair)
            if out is FAILED:
                break
            needs = getattr(out.grad_fn, "needs_input_grad", None)
            ob.put(f"needs {i}", None if needs is None else [bool(n) for n in needs])
            ob.put(f"needs text {i}", text(needs))
    with ob.case(C_RAW):
        out = run.apply("apply", refs.Raw, run.var(inputs[C_RAW][0]), 2.5)
        if out is not FAILED:
            _output(ob, out, Variable)
    for title in (C_NO_GRAD, C_OFF):
        with ob.case(title):
            args = list(map(run.var, inputs[title]))
            GradMode.enabled = title != C_OFF
            try:
                out = run.apply("apply", refs.Mul, *args)
            finally:
                GradMode.enabled = True
            if out is not FAILED:
                ob.put("nothing recorded", out.grad_fn is None and out.requires_grad is False)
                ob.put("text", f"grad_fn {text(out.grad_fn)}, requires_grad "
                               f"{text(out.requires_grad)}")
    with ob.case(C_RAISES):
        returned = ob.attempt("raised", refs.Fails.apply, run.var(inputs[C_RAISES][0]))
        ob.put("returned", text(returned))
        ob.put("on again", GradMode.enabled is True)
        ob.put("mode text", text(GradMode.enabled))
        GradMode.enabled = True
    for depth, (a_spec, b_spec) in inputs["depths"]:
        with ob.case(depth_title(depth)):
            _graph(ob, run, depth, run.var(a_spec), run.var(b_spec))


def _output(ob: Observer, out: Any, Variable: type[Any]) -> None:
    ob.put("is None", out is None)
    ob.put("type", type(out).__name__)
    ob.put("is a Variable", isinstance(out, Variable))
    if isinstance(out, Variable):
        ob.put("output", plain_array(out))


def _node(ob: Observer, out: Any, node: Any, a: Any, b: Any) -> None:
    ob.put("seen in forward", bool(getattr(node, "seen_in_forward", False)))
    ob.put("node type", type(node).__name__)
    ob.put("requires grad, not a leaf", out.requires_grad is True and out.is_leaf is False)
    ob.put("flags", f"requires_grad {text(out.requires_grad)}, is_leaf {text(out.is_leaf)}")
    inputs = getattr(node, "inputs", None)
    ob.put("inputs", [("a" if v is a else "b" if v is b else f"<{type(v).__name__}>")
                      for v in inputs] if type(inputs) is tuple else None)
    ob.put("inputs text", text(inputs))


def _graph(ob: Observer, run: _Run, depth: int, a: Any, b: Any) -> None:
    h = run.apply("apply 0", run.refs.Mul, a, b)
    for level in range(1, depth):
        if h is FAILED:
            return
        h = run.apply(f"apply {level}", run.refs.Scale, h, float(level + 1))
    if h is FAILED:
        return
    labels = {id(a): "a", id(b): "b"}
    grads: dict[int, Any] = {}
    stack = [(h, np.ones(np.shape(h.data)))]
    ob.put("walk raised", None)
    for _ in range(1000):  # a graph of a few nodes; a cycle must not hang the check
        if not stack:
            break
        var, g = stack.pop()
        node = var.grad_fn
        if node is None:
            grads[id(var)] = grads.get(id(var), 0) + g
            continue
        fn = getattr(node, "function", None)
        if fn is None:
            ob.put("no function", True)
            return
        result = call(ob, "walk", fn.backward, node, run.Variable(g))
        if result is FAILED:
            return
        result = result if isinstance(result, tuple) else (result,)
        for inp, gi in zip(node.inputs, result):
            if isinstance(inp, run.Variable) and inp.requires_grad and gi is not None:
                stack.append((inp, np.asarray(data(gi))))
    ob.put("reached", [labels[k] for k in grads if k in labels])
    ob.put("gradient of a", grads.get(id(a)))
    ob.put("gradient of b", grads.get(id(b)))
