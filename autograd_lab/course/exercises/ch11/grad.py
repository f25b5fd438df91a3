"""Check ``grad(outputs, inputs, create_graph=False)``: one gradient per input, the sums over
every path (a Variable used twice gets both contributions), without touching any ``.grad``;
with ``create_graph=False`` the gradients have no history, with ``create_graph=True`` they
have one, so that grad of a gradient is the second derivative; the recording switch is
restored afterwards, also when the walk fails. Only the learner's ``grad`` and their
Variable's operations (chapters 02-05) are used; the switch the check found is put back after
it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import learner_call, observed_case, reraise
from .messages import HINTS

ID = "ch11-grad"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("replaces instead of adding",
            ("grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx", "grads[id(x)] = gx"),
            None, "grad.paths"),
    Mistake("never records", ("GradMode.enabled, bool(create_graph)",
                              "GradMode.enabled, False"), None, "grad.record"),
    Mistake("recording not restored", ("        GradMode.enabled = enabled\n    ### END",
                                       "        pass\n    ### END"), None,
            "grad.restore-first"),
)

C_PATHS = "y = sum(w * x * x): dy/dx = 2 w x, dy/dw = x * x (x is used twice)"
C_SECOND = ("create_graph=True: the gradient has a history; grad of it is the second "
            "derivative, d2/dx2 sum(x ** 3) = 6 x")
C_RESTORE = "the recording switch is restored, also after a failing walk"


class _FailingBackward:
    """Stands in for a node's Function so that the walk fails halfway, inside grad."""

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        raise RuntimeError("a backward that fails on purpose, inside the walk")


def cases(seed: int, hidden: bool) -> tuple[np.ndarray, np.ndarray]:
    """(x0, w0): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    n = 4 if not hidden else 6
    x0 = np.round(rng.uniform(0.5, 1.5, size=n), 3)
    return x0, np.round(rng.normal(size=n), 3)


def observe(ob: Observer, my_grad: Callable[..., Any], MyVariable: type[Any], *, seed: int,
            hidden: bool) -> None:
    x0, w0 = cases(seed, hidden)
    mode = getattr(my_grad, "__globals__", {}).get("GradMode")
    enabled = getattr(mode, "enabled", None)

    def var(a: np.ndarray) -> Any:
        return learner_call(ob, "Variable raised", lambda: MyVariable(a.copy(),
                                                                      requires_grad=True))

    def grads_of(key: str, outputs: Any, inputs: Any, **kw: Any) -> Any:
        out = learner_call(ob, f"{key} raised", lambda: my_grad(outputs, inputs, **kw))
        ob.put(f"{key} is a tuple", isinstance(out, tuple))
        ob.put(f"{key} type", type(out).__name__)
        return out

    def recorded(a: Any, b: Any) -> bool:
        return getattr(learner_call(ob, "op raised", lambda: a * b), "grad_fn", None) is not None

    try:
        with observed_case(ob, C_PATHS):
            x, w = var(x0), var(w0)
            y = (w * x * x).sum()
            out = grads_of("grad", y, (x, w))
            ob.put("recording after", recorded(x, x))
            gx, gw = out
            ob.put("dy/dx", data_of(gx))
            ob.put("dy/dw", data_of(gw))
            ob.put(".grad untouched", x.grad is None and w.grad is None)
            ob.put("no history", not getattr(gx, "requires_grad", False)
                   and getattr(gx, "grad_fn", None) is None)
        with observed_case(ob, C_SECOND):
            x = var(x0)
            g, = grads_of("grad", (x * x * x).sum(), x, create_graph=True)
            ob.put("dy/dx", data_of(g))
            ob.put("history", getattr(g, "grad_fn", None) is not None)
            h, = grads_of("second grad", g.sum(), x)
            ob.put("d2y/dx2", data_of(h))
        with observed_case(ob, C_RESTORE):
            _observe_restore(ob, my_grad, var, grads_of, recorded, x0, w0)
    finally:
        if mode is not None and enabled is not None:
            mode.enabled = enabled


def _observe_restore(ob: Observer, my_grad: Callable[..., Any], var: Callable[..., Any],
                     grads_of: Callable[..., Any], recorded: Callable[..., bool],
                     x0: np.ndarray, w0: np.ndarray) -> None:
    x = var(x0)
    grads_of("grad", (x * x).sum(), x, create_graph=True)
    ob.put("recording after create_graph", recorded(x, x))
    unused = var(w0)
    y = (x * x).sum()
    try:
        my_grad(y, (x, unused))
    except Exception:          # noqa: BLE001  (the error itself is checked by the library)
        pass
    y = (x * x).sum()          # and a walk that fails halfway (left off, y has no graph)
    if getattr(x * x, "grad_fn", None) is not None and hasattr(y.grad_fn, "inputs"):
        inner = y.grad_fn.inputs[0].grad_fn   # the product's node: make its backward fail
        try:
            inner.function = _FailingBackward
        except (AttributeError, TypeError):  # a node that takes no attribute: skip this part
            inner = None
        if inner is not None:
            try:
                my_grad(y, (x,))
            except Exception:      # noqa: BLE001  (it fails on purpose, inside the walk)
                pass
    ob.put("recording after a raise", recorded(x, x))
    gx, gu = grads_of("allow_unused", (x * x).sum(), (x, unused), allow_unused=True)
    ob.put("unused is None", gu is None)
    ob.put("unused", gu if gu is None else type(gu).__name__)


def _tuple(ck: Checker, seen: Any, key: str) -> None:
    reraise(ck, seen, "Variable raised", "your Variable")
    reraise(ck, seen, f"{key} raised", "your grad", HINTS["grad.walk"])
    ck.check(seen[f"{key} is a tuple"] is True, "grad does not return a tuple.",
             received=seen[f"{key} type"], hint=HINTS["grad.tuple"])


def judge(ck: Checker, obs: Observations) -> None:
    x0, w0 = cases(obs.seed, obs.hidden)
    walk = HINTS["grad.walk"]
    with ck.case(C_PATHS):
        seen = obs.case(ck, C_PATHS, what="your code")
        _tuple(ck, seen, "grad")
        reraise(ck, seen, "op raised", "your Variable's operations")
        ck.check(seen["recording after"] is True,
                 "after grad(...) new operations are not recorded any more.",
                 hint=HINTS["grad.restore-first"])
        ck.close(seen["dy/dx"], 2 * w0 * x0, rtol=1e-9, atol=1e-12, what="dy/dx", hint=walk,
                 mistakes=[(w0 * x0, HINTS["grad.paths"])])
        ck.close(seen["dy/dw"], x0 * x0, rtol=1e-9, atol=1e-12, what="dy/dw", hint=walk)
        ck.check(seen[".grad untouched"] is True, "grad changed the inputs' .grad.",
                 expected=None, received="a gradient in x.grad or w.grad",
                 hint=HINTS["grad.dot-grad"])
        ck.check(seen["no history"] is True,
                 "with create_graph=False the gradient has a history.",
                 hint=HINTS["grad.no-history"])
    with ck.case(C_SECOND):
        seen = obs.case(ck, C_SECOND, what="your code")
        _tuple(ck, seen, "grad")
        ck.close(seen["dy/dx"], 3 * x0 ** 2, rtol=1e-9, atol=1e-12, what="dy/dx", hint=walk)
        ck.check(seen["history"] is True,
                 "with create_graph=True the gradient has no grad_fn: its computation was not "
                 "recorded.", hint=HINTS["grad.record"])
        _tuple(ck, seen, "second grad")
        ck.close(seen["d2y/dx2"], 6 * x0, rtol=1e-9, atol=1e-12, what="d2y/dx2",
                 hint=HINTS["grad.second"])
    with ck.case(C_RESTORE):
        seen = obs.case(ck, C_RESTORE, what="your code")
        _tuple(ck, seen, "grad")
        reraise(ck, seen, "op raised", "your Variable's operations")
        ck.check(seen["recording after create_graph"] is True,
                 "after grad(..., create_graph=True) new operations are not recorded any more.",
                 hint=HINTS["grad.restore"])
        ck.check(seen["recording after a raise"] is True,
                 "after a grad call that raised, new operations are not recorded any more.",
                 hint=HINTS["grad.finally"])
        _tuple(ck, seen, "allow_unused")
        ck.check(seen["unused is None"] is True,
                 "an unused input with allow_unused=True does not get None.",
                 received=seen["unused"], hint=HINTS["grad.unused"])
    ck.done()
