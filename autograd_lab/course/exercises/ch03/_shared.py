"""What the observe and judge halves of chapter 03's exercises share.

Observe side (in the learner's kernel): calling a learner's method and keeping what it raised,
finding the globals a class's code runs in, running a Function's forward and backward by hand
with the course's ``apply`` and operators around it, and describing a result as plain data.
Judge side: the same failures, said as the old checkers said them, from that plain data.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, format_value
from .._functions import StandInCtx, course_apply, course_ops, data, function_of
from .._observe import Case, Observations, Observer, Raised, raise_learner_error

FAILED = object()
"""What :func:`call` returns when the learner's call raised (it is recorded)."""

SETUP = "setup"
"""The case that records what the checker needs before its cases: the class and its globals."""


# -- observe side -----------------------------------------------------------------------------
def call(ob: Observer, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args)``; what it raised (or None) goes under ``"<key> raised"``; FAILED if it raised."""
    try:
        result = fn(*args, **kwargs)
    except BaseException as err:  # noqa: BLE001 - the learner's code may raise anything
        if type(err) is KeyboardInterrupt:
            raise
        from .._observe import raised
        ob.put(f"{key} raised", raised(err))
        return FAILED
    ob.put(f"{key} raised", None)
    return result


def array_or_type(value: Any) -> Any:
    """A numpy array as it is (a copy), anything else as its type's name."""
    if type(value) is np.ndarray:
        return value.copy()
    return f"<{type(value).__name__}>"


def plain_array(value: Any) -> Any:
    """``np.asarray`` of a result's data (a Variable's ``.data``), as the old checkers read it."""
    return np.asarray(data(value))


def describe(value: Any, Variable: type[Any]) -> Any:
    """A gradient a backward returned: None, or whether it is a Variable, its type and data."""
    if value is None:
        return None
    try:
        values: Any = np.asarray(data(value), dtype=np.float64)
    except (TypeError, ValueError):
        values = f"<{type(value).__name__}>"
    return {"variable": isinstance(value, Variable), "type": type(value).__name__,
            "text": format_value(value), "data": values,
            "dtype": str(getattr(np.asarray(data(value)), "dtype", "?"))}


def setup(ob: Observer, cls: Any, method: str, wanted: tuple[str, ...],
          function_classes: tuple[tuple[Any, str], ...] = ()) -> dict[str, Any] | None:
    """Record how ``cls.method`` finds its globals (``wanted`` among them) and whether each
    class of ``function_classes`` is a subclass of the learner's Function; the globals or None."""
    with ob.case(SETUP):
        fn = function_of(cls, method)
        ns = getattr(fn, "__globals__", None)
        ob.put("name", str(getattr(cls, "__name__", cls)))
        ob.put("has method", isinstance(ns, dict))
        if not isinstance(ns, dict):
            return None
        missing = [n for n in wanted if n not in ns]
        ob.put("missing", missing)
        function = ns.get("Function")
        ob.put("function classes", [
            (isinstance(k, type) and function is not None and issubclass(k, function),
             f"<{type(k).__name__}>" if not isinstance(k, type) else repr(k))
            for k, _ in function_classes])
        return None if missing else ns
    return None


def by_hand(ob: Observer, cls: type[Any], ns: dict[str, Any], x: np.ndarray, g: np.ndarray,
            extra: tuple = ()) -> None:
    """forward and backward of ``cls`` on a Variable of x, with the gradient g, with the course's
    apply and operators around them; records what :func:`judge_by_hand` reads."""
    Variable = ns["Variable"]
    ctx = StandInCtx((True,) + (False,) * len(extra))
    var = Variable(x.copy(), requires_grad=True)
    with course_ops(ns), course_apply(cls, ns):
        out = call(ob, "forward", cls.forward, ctx, var, *extra)
        if out is FAILED:
            return
        ob.put("input after forward", array_or_type(var.data))
        output = plain_array(out)
        ob.put("output", output)
        ob.put("output writeable", bool(output.flags.writeable))
        ob.put("output shares input", bool(np.shares_memory(output, np.asarray(data(var)))))
        grad_output = Variable(g.copy())
        grads = call(ob, "backward", lambda: cls.backward(ctx, grad_output))
        if grads is FAILED:
            return
    ob.put("grad_output after", array_or_type(grad_output.data))
    grads = grads if isinstance(grads, tuple) else (grads,)
    ob.put("grads", [describe(gr, Variable) for gr in grads])


def saved_nothing(node: Any) -> bool:
    """Whether a node's forward saved nothing (a broken Context counts as saving something)."""
    try:
        return len(node.saved_tensors) == 0
    except Exception:  # noqa: BLE001 - a broken Context: let the original error speak
        return False


def apply_and_backward(ob: Observer, apply: Callable[..., Any], cls: type[Any],
                       Variable: type[Any], inputs: tuple, grad: Any) -> tuple[Any, Any]:
    """``apply(*inputs)`` then ``cls.backward(node, grad)``, observed for
    :func:`judge_node` and :func:`judge_backward`; (output, gradients) or FAILED where it
    stopped."""
    y = call(ob, "apply", apply, *inputs)
    if y is FAILED:
        return FAILED, FAILED
    node = getattr(y, "grad_fn", None)
    ob.put("type", type(y).__name__)
    ob.put("is a Variable", isinstance(y, Variable))
    ob.put("node", type(node).__name__ if node is not None else None)
    if not isinstance(y, Variable) or node is None:
        return y, FAILED
    ob.put("output", plain_array(y))
    ob.put("dtype", str(getattr(y, "dtype", "?")))
    grads = call(ob, "backward", cls.backward, node, grad)
    if grads is FAILED:
        ob.put("saved nothing", saved_nothing(node))
        return y, FAILED
    grads = grads if isinstance(grads, tuple) else (grads,)
    ob.put("grads", [describe(g, Variable) for g in grads])
    return y, grads


def perturbed(f: Callable[..., Any], arrays: list[np.ndarray], eps: float = 1e-6) -> list[Any]:
    """f's outputs (as arrays) with each element of each array moved by +eps and -eps, in the
    order :func:`numeric_grads` reads them."""
    outputs = []
    for i, a in enumerate(arrays):
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            outputs.append((np.asarray(f(*plus)), np.asarray(f(*minus))))
    return outputs


# -- judge side -------------------------------------------------------------------------------
def ok(ck: Checker, seen: Case, key: str, what: str, hint: str | None = None) -> None:
    """Fail as the checker did when the learner's call ``key`` raised."""
    err = seen[f"{key} raised"]
    if err is None:
        return
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    raise_learner_error(ck, err, what, hint)


def judge_setup(ck: Checker, obs: Observations, method: str, hints: dict[str, str],
                names: tuple[str, ...] = ()) -> None:
    """The checks the old checkers made before their cases: the class's globals, and that each
    of ``names`` is a subclass of the learner's Function."""
    seen = obs.case(ck, SETUP, what="your code")
    name = seen["name"]
    if not seen["has method"]:
        ck.fail(f"{name} has no method {method}.",
                hint=f"Define {method} inside the class, as in the cell above.")
    missing = seen["missing"]
    ck.check(not missing, f"the code of {name}.{method} cannot see {missing}.",
             hint=hints["setup.globals"])
    for (is_sub, received), cls_name in zip(seen["function classes"], names):
        ck.check(is_sub, f"{cls_name} is not a subclass of your Function.",
                 expected=f"class {cls_name}(Function)", received=received,
                 hint=hints["setup.subclass"].format(name=cls_name))


def judge_by_hand(ck: Checker, seen: Case, name: str, x: np.ndarray, g: np.ndarray,
                  hints: dict[str, str]) -> tuple[Any, np.ndarray]:
    """What :func:`by_hand` observed, checked as the old checkers did; (output, gradient of x)."""
    ok(ck, seen, "forward", f"your {name}.forward")
    after = seen["input after forward"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, x),
             f"{name}.forward changed its input.", hint=hints["by-hand.input-changed"])
    out = seen["output"]
    ok(ck, seen, "backward", f"your {name}.backward")
    after = seen["grad_output after"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, g),
             f"{name}.backward changed grad_output in place.",
             hint=hints["by-hand.grad-output-changed"])
    grads = seen["grads"]
    ck.check(len(grads) >= 1 and grads[0] is not None, f"{name}.backward returned no "
             "gradient for x.", received=tuple(None if d is None else d["text"] for d in grads),
             hint=hints["by-hand.no-gradient"])
    returned_variables(ck, name, grads, hints)
    return out, np.asarray(grads[0]["data"], dtype=np.float64)


def returned_variables(ck: Checker, name: str, grads: list[Any], hints: dict[str, str]) -> None:
    """Every gradient a backward returned is a Variable (or None)."""
    bad = [d for d in grads if d is not None and not d["variable"]]
    ck.check(not bad, f"{name}.backward returned a {bad[0]['type'] if bad else ''}"
             ", not a Variable.", expected="Variables (or None)",
             received=bad[0]["text"] if bad else None, hint=hints["by-hand.not-variable"])


def judge_node(ck: Checker, seen: Case, name: str, hints: dict[str, str]) -> None:
    """The checks of the output of ``name.apply`` (a Variable whose grad_fn is its node)."""
    ok(ck, seen, "apply", f"your {name}.apply")
    ck.check(seen["is a Variable"], f"{name}.apply did not return a Variable.",
             expected="a Variable", received=seen["type"], hint=hints["node.variable"])
    want, node = name + "Backward", seen["node"]
    ck.check(node == want, "the output's grad_fn is not the node of your Function.",
             expected=f"<{want}>", received=f"<{node}>" if node else "None",
             hint=hints["node.apply"])


def judge_backward(ck: Checker, seen: Case, name: str, inputs: str,
                   hints: dict[str, str]) -> list[Any]:
    """What ``name.backward`` returned, checked as the old checkers did (a crash of a forward
    that saved nothing names that cause)."""
    err = seen["backward raised"]
    if isinstance(err, Raised):
        if err.is_a("NotImplementedError"):
            raise ck._not_done(NotImplementedError(err.message))
        if seen["saved nothing"]:
            ck.fail(f"your {name}.backward raised {err.name}: {err.message} -- because "
                    "ctx.saved_tensors is empty: forward saved nothing.",
                    hint=hints[f"node.saved-nothing.{inputs}"])
        ck.fail(f"your {name}.backward raised {err.name}: {err.message}",
                hint=hints["node.backward-raised"])
    grads: list[Any] = seen["grads"]
    returned_variables(ck, name, grads, hints)
    return grads


def numeric_grads(outputs: list[Any], arrays: list[np.ndarray], g: np.ndarray,
                  eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of sum(g * f(*arrays)) from the outputs :func:`perturbed` kept."""
    grads, k = [], 0
    for a in arrays:
        grad = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus, minus = outputs[k]
            grad[idx] = np.sum(g * (np.asarray(plus, dtype=np.float64) -
                                    np.asarray(minus, dtype=np.float64))) / (2 * eps)
            k += 1
        grads.append(grad)
    return grads
