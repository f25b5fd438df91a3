"""Checkers for chapter 03, Function: the learner's ``mygrad/function.py``.

The exercises are parts of the learner's own library, so the checkers run them on the
learner's classes: ``Variable`` and ``GradMode`` are read from the globals the learner's code
runs in (the notebook, or the module ``mygrad.function``). There is no engine before chapter
04, so backward formulas are called by hand, ``node.function.backward(node, grad)``, and
compared with central differences of the learner's own forward.
"""
from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np

from .._common import Checker, returns_variables
from .._functions import data as _data, \
    names as _names


_MISSING = object()


# -- finding the learner's library ------------------------------------------------------------




def _is_function_class(ck: Checker, cls: Any, name: str, ns: dict[str, Any]) -> None:
    function = ns.get("Function")
    ck.check(isinstance(cls, type) and function is not None and issubclass(cls, function),
             f"{name} is not a subclass of your Function.", expected=f"class {name}(Function)",
             received=cls, hint=f"Write class {name}(Function): with static forward and "
                                "backward, and pass the class itself (not an instance, not "
                                ".apply).")


@contextlib.contextmanager
def _grad_mode_kept(GradMode: Any) -> Iterator[None]:
    """Whatever the learner's apply does to grad mode, the notebook gets its old value back."""
    before = getattr(GradMode, "enabled", True)
    try:
        yield
    finally:
        GradMode.enabled = before




def _numeric_grads(f: Callable[..., np.ndarray], arrays: list[np.ndarray], g: np.ndarray,
                   eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of sum(g * f(*arrays)) with respect to each array (float64)."""
    grads = []
    for i, a in enumerate(arrays):
        grad = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            grad[idx] = np.sum(g * (f(*plus) - f(*minus))) / (2 * eps)
        grads.append(grad)
    return grads


def _saved_nothing(node: Any) -> bool:
    try:
        return len(node.saved_tensors) == 0
    except Exception:  # a broken Context: let the original error speak
        return False


def _backward(ck: Checker, cls: type[Any], node: Any, grad: Any, inputs: str) -> tuple:
    """``cls.backward(node, grad)`` as a tuple; a crash names its real cause where it can."""
    def call() -> Any:
        return cls.backward(node, grad)
    call.__name__ = f"{cls.__name__}.backward"
    try:
        result = call()
    except NotImplementedError as err:
        raise ck._not_done(err) from None
    except Exception as err:
        if _saved_nothing(node):
            raise ck.error(
                f"your {cls.__name__}.backward raised {type(err).__name__}: {err} -- because "
                "ctx.saved_tensors is empty: forward saved nothing.",
                hint=f"backward can only read what forward kept: call "
                     f"ctx.save_for_backward({inputs}) in forward, before it returns.") from err
        raise ck.error(f"your {cls.__name__}.backward raised {type(err).__name__}: {err}",
                       hint="Read the traceback above to find the failing line.") from err
    result = result if isinstance(result, tuple) else (result,)
    returns_variables(ck, cls, result, type(grad))
    return result


def _check_node(ck: Checker, y: Any, cls: type[Any], Variable: type[Any]) -> Any:
    ck.check(isinstance(y, Variable), f"{cls.__name__}.apply did not return a Variable.",
             expected="a Variable", received=type(y).__name__,
             hint="forward must return a Variable, e.g. Variable(np.maximum(x.data, 0)).")
    want = cls.__name__ + "Backward"
    node = getattr(y, "grad_fn", None)
    name = type(node).__name__ if node is not None else None
    ck.check(name == want, "the output's grad_fn is not the node of your Function.",
             expected=f"<{want}>", received=f"<{name}>" if name else "None",
             hint="Call the Function through .apply(...): apply records the node. Inside "
                  "forward, compute and return a new Variable.")
    return node


# -- ch03-own-apply ----------------------------------------------------------------------------
def _probe_functions(Function: type[Any], Variable: type[Any], GradMode: Any) -> types.SimpleNamespace:
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


def _why_not_recorded(ck: Checker, out: Any, refs: types.SimpleNamespace, var: Callable,
                      GradMode: Any) -> NoReturn:
    """The output of a recorded call has no grad_fn: find out why, and say it."""
    if getattr(out, "requires_grad", False):
        ck.fail("the output requires grad but has no grad_fn.",
                hint="After output.requires_grad = True, also set output.grad_fn = ctx, so "
                     "the output remembers the node that made it.")
    with _grad_mode_kept(GradMode):
        probe = refs.SwitchesOn.apply(var((2,)))
    if getattr(probe, "grad_fn", None) is not None:
        ck.fail("apply did not record the node although grad mode was on when it was called.",
                hint="apply reads grad mode while it is switched off for forward, so it always "
                     "reads False. Read GradMode.enabled once, before switching it off, keep it "
                     "in a variable (enabled = GradMode.enabled) and decide with that.")
    ck.fail("apply did not record the node: the output has no grad_fn.",
            hint="When grad mode was on and any(ctx.needs_input_grad): set "
                 "output.requires_grad = True and output.grad_fn = ctx.")


def ch03_own_apply(Function: type[Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check mygrad's ``Function.apply``: a new node ``cls.Node()`` is forward's ``ctx``;
    ``ctx.needs_input_grad`` has one bool per argument; forward runs with grad mode off (and
    grad mode is restored, even if forward raises); a non-Variable result is wrapped; the node
    is recorded as ``output.grad_fn`` (with ``ctx.inputs``) exactly when grad mode was on and
    some input requires grad."""
    ck = Checker("ch03-own-apply", seed=seed, hidden=hidden)
    ck.check(isinstance(Function, type), "Function is not a class.", received=Function,
             hint="Pass the class itself: check.ch03_own_apply(Function).")
    ns = _names(ck, Function, "apply", ("Variable", "GradMode"))
    Variable, GradMode = ns["Variable"], ns["GradMode"]
    with _grad_mode_kept(GradMode):
        GradMode.enabled = True
        _own_apply_cases(ck, Function, Variable, GradMode)
    ck.done()


def _own_apply_cases(ck: Checker, Function: type[Any], Variable: type[Any], GradMode: Any) -> None:
    rng = ck.rng
    refs = _probe_functions(Function, Variable, GradMode)

    def var(shape: tuple[int, ...], requires_grad: bool = True) -> Any:
        return Variable(np.round(rng.normal(size=shape), 3), requires_grad=requires_grad)

    def apply(cls: type[Any], *args: Any, hint: str | None = None) -> Any:
        before = GradMode.enabled
        out = ck.call(_renamed(cls.apply, "Function.apply"), *args, hint=hint)
        after, GradMode.enabled = GradMode.enabled, before
        if before and after is not True:
            ck.fail("grad mode is still off after apply returned.",
                    expected="GradMode.enabled == True again", received=after,
                    hint="Put the value you read before forward back afterwards (in a finally: "
                         "block, so it is restored even if forward raises).")
        if not before and after is not False:
            ck.fail("apply switched grad mode on although it was off before.",
                    expected="GradMode.enabled == False after apply", received=after,
                    hint="Restore the value you read before forward, not True.")
        return out

    with ck.case("forward's value comes back as a Variable"):
        a, b = var((3,)), var((3,))
        out = apply(refs.Mul, a, b)
        ck.check(out is not None, "apply returned None.", hint="Return forward's output.")
        ck.check(isinstance(out, Variable), "apply did not return a Variable.",
                 received=type(out).__name__, hint="Return the output of forward.")
        ck.close(out.data, a.data * b.data, what="output",
                 hint="output = cls.forward(ctx, *inputs)")
    with ck.case("forward runs with grad mode off; afterwards it is on again"):
        out = apply(refs.Mul, var((2,)), var((2,)))
        ctx = getattr(out, "grad_fn", None)
        if ctx is None or not hasattr(ctx, "grad_mode_in_forward"):
            _why_not_recorded(ck, out, refs, var, GradMode)
        ck.check(ctx.grad_mode_in_forward is False, "grad mode was on inside forward.",
                 expected="GradMode.enabled == False inside forward", received=True,
                 hint="Switch it off around the call: GradMode.enabled = False, then forward, "
                      "then switch it back.")
    with ck.case("the node: grad_fn is forward's ctx, named after the Function"):
        a, b = var((2, 2)), var((2, 2), requires_grad=False)
        out = apply(refs.Mul, a, b)
        node = getattr(out, "grad_fn", None)
        if node is None:
            _why_not_recorded(ck, out, refs, var, GradMode)
        ck.check(getattr(node, "seen_in_forward", False),
                 "the output's grad_fn is not the ctx that forward received.",
                 hint="Make one node, ctx = cls.Node(), pass it to forward and record that same "
                      "object: output.grad_fn = ctx.")
        ck.check(type(node).__name__ == "RefMulBackward",
                 "the node is not an instance of the Function's own node class.",
                 expected="<RefMulBackward>", received=f"<{type(node).__name__}>",
                 hint="__init_subclass__ gives each Function a node class, cls.Node: create "
                      "the ctx with cls.Node().")
        ck.check(out.requires_grad is True and out.is_leaf is False,
                 "the output must require grad and not be a leaf.",
                 expected="requires_grad True, is_leaf False",
                 received=f"requires_grad {out.requires_grad}, is_leaf {out.is_leaf}",
                 hint="Set output.requires_grad = True when you record the node.")
        inputs = getattr(node, "inputs", None)
        ck.check(isinstance(inputs, tuple) and len(inputs) == 2 and inputs[0] is a
                 and inputs[1] is b, "node.inputs is not the tuple of the arguments.",
                 expected="(a, b)", received=inputs, hint="ctx.inputs = inputs: the edges of "
                 "the graph, pointing back to what the output was computed from.")
    with ck.case("needs_input_grad: one bool per argument"):
        cases = [((var((2,)), var((2,), False)), (True, False)),
                 ((var((2,), False), var((2,))), (False, True))]
        for args, want in cases:
            out = apply(refs.Mul, *args)
            needs = getattr(out.grad_fn, "needs_input_grad", None)
            ck.check(needs is not None and tuple(bool(n) for n in needs) == want,
                     "needs_input_grad is wrong.", expected=want, received=needs,
                     hint="One bool per argument: isinstance(x, Variable) and x.requires_grad.")
        out = apply(refs.Scale, var((3,)), 2.0)
        needs = getattr(out.grad_fn, "needs_input_grad", None)
        ck.check(needs is not None and tuple(bool(n) for n in needs) == (True, False),
                 "needs_input_grad is wrong for (Variable, number).", expected=(True, False),
                 received=needs, hint="A number never needs a gradient: test isinstance(x, "
                                      "Variable) before reading x.requires_grad.")
    with ck.case("a numpy array returned by forward is wrapped as a Variable"):
        x = var((4,))
        out = apply(refs.Raw, x, 2.5, hint="This forward returns a numpy array: wrap anything "
                    "that is not a Variable as one, Variable(output), before recording.")
        ck.check(isinstance(out, Variable), "forward's numpy array was not made a Variable.",
                 received=type(out).__name__,
                 hint="If forward's result is not a Variable, wrap it: Variable(output).")
        ck.close(out.data, 2.5 * x.data, what="output")
    with ck.case("no input requires grad: nothing is recorded"):
        out = apply(refs.Mul, var((2,), False), var((2,), False))
        ck.check(out.grad_fn is None and out.requires_grad is False,
                 "an output whose inputs need no gradient got a graph node.",
                 expected="grad_fn None, requires_grad False",
                 received=f"grad_fn {out.grad_fn!r}, requires_grad {out.requires_grad}",
                 hint="Record only if any(ctx.needs_input_grad).")
    with ck.case("grad mode off (as inside no_grad): nothing is recorded"):
        GradMode.enabled = False
        try:
            out = apply(refs.Mul, var((2,)), var((2,)))
        finally:
            GradMode.enabled = True
        ck.check(out.grad_fn is None and out.requires_grad is False,
                 "apply recorded a node while grad mode was off.",
                 expected="grad_fn None, requires_grad False",
                 received=f"grad_fn {out.grad_fn!r}, requires_grad {out.requires_grad}",
                 hint="Record only if grad mode was on when apply was called: "
                      "enabled and any(ctx.needs_input_grad).")
    with ck.case("forward raises: the error comes through and grad mode is on again"):
        ck.raises(ValueError, _renamed(refs.Fails.apply, "Function.apply"), var((2,)),
                  hint="Let forward's error pass (do not catch it).")
        ck.check(GradMode.enabled is True, "grad mode stayed off after forward raised.",
                 expected="GradMode.enabled == True", received=GradMode.enabled,
                 hint="Restore grad mode in a finally: block: try: forward ... finally: "
                      "GradMode.enabled = enabled.")
    for depth in [2] + ([3, 5] if ck.hidden else []):
        with ck.case(f"a graph of {depth} levels can be walked back by hand"):
            a, b = var((3,)), var((3,))
            h = apply(refs.Mul, a, b)
            want_a, want_b = b.data.copy(), a.data.copy()
            for level in range(depth - 1):
                k = float(level + 2)
                h = apply(refs.Scale, h, k)
                want_a, want_b = want_a * k, want_b * k
            grads = _walk(ck, h, Variable)
            ck.check(id(a) in grads and id(b) in grads, "walking node.inputs from the output "
                     "did not reach the leaves.", hint="Each node keeps its inputs "
                     "(ctx.inputs = inputs) and each output its node (output.grad_fn = ctx).")
            ck.close(grads[id(a)], want_a, what="gradient of a")
            ck.close(grads[id(b)], want_b, what="gradient of b")


def _renamed(fn: Callable, name: str) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    call.__name__ = name
    return call


def _walk(ck: Checker, out: Any, Variable: type[Any]) -> dict[int, np.ndarray]:
    """A tiny backward over the learner's nodes: node.function.backward(node, g), node.inputs."""
    grads: dict[int, np.ndarray] = {}
    stack = [(out, np.ones(out.data.shape))]
    while stack:
        var, g = stack.pop()
        node = var.grad_fn
        if node is None:
            grads[id(var)] = grads.get(id(var), 0) + g
            continue
        fn = getattr(node, "function", None)
        if fn is None:
            ck.fail("a node does not know its Function (node.function).",
                    hint="The node class that __init_subclass__ makes carries function = cls; "
                         "create the ctx with cls.Node().")
        result = ck.call(fn.backward, node, Variable(g))
        result = result if isinstance(result, tuple) else (result,)
        for inp, gi in zip(node.inputs, result):
            if isinstance(inp, Variable) and inp.requires_grad and gi is not None:
                stack.append((inp, np.asarray(_data(gi))))
    return grads


# -- ch03-mul-function -------------------------------------------------------------------------


# -- isolation: the course's apply and Mul around the piece under test -------------------------
