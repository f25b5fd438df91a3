"""Check ``PinballLoss.apply(y, t, tau=0.75, reduction="mean")`` in two parts, as the chapter's
rubric scores it: the values (three reductions, the defaults, an unknown reduction refused) and
the gradients of y and t (against the derivative, −tau where y < t and 1 − tau where y > t, and
central differences away from the kink)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer, raise_learner_error
from .._parts import Parts
from .._observe import expect_raised
from ._shared import judge_differences, lib_of, number, observe_differences, \
    pinball_reference
from .messages import HINTS

ID = "ch12-pinball"
PARTS = ("values", "gradients")

_GRAD = "grad_y = np.where(y.data < t.data, -ctx.tau, 1 - ctx.tau) * grad_output.data"
MISTAKES = (
    Mistake("sides swapped in backward", (_GRAD, "grad_y = np.where(y.data > t.data, -ctx.tau, "
                                                 "1 - ctx.tau) * grad_output.data"),
            "gradients", "pinball.rule"),
    Mistake("no mean in backward", ("grad_y = grad_y / y.data.size", "grad_y = grad_y"),
            "gradients", "pinball.rule"),
    Mistake("tau on the wrong side", ("per_item = np.maximum(tau * u, (tau - 1) * u)",
                                      "per_item = np.maximum(-tau * u, (1 - tau) * u)"),
            PARTS, "pinball.rule"),
    Mistake("no reduction check", ("if reduction not in (\"mean\", \"sum\", \"none\"):\n"
                                   "            raise", "if False:\n            raise"),
            "values", "pinball.reduction"),
)

DEFAULTS = "apply(y, t) uses the defaults tau=0.75 and reduction='mean'"
REDUCTION = "an unknown reduction raises ValueError"
KINK = "central differences away from the kink"
DEFAULT_GRAD = "the gradient of y with the defaults"
IS_FUNCTION = "PinballLoss is a Function of the library"


def cases(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    settings = [(tau, reduction, np.round(rng.uniform(0, 10, size=7), 3),
                 np.round(rng.uniform(0, 10, size=7), 3))
                for tau, reduction in [(0.75, "mean"), (0.3, "sum"), (0.5, "none")]]
    defaults = (np.round(rng.uniform(0, 4, size=5), 3), np.round(rng.uniform(0, 4, size=5), 3))
    y = rng.uniform(-3, 3, size=5)
    t = y + rng.choice([-1, 1], size=5) * rng.uniform(0.5, 2, size=5)
    return {"settings": settings, "defaults": defaults, "kink": (y, t)}


def _titles(tau: float, reduction: str) -> tuple[str, str]:
    return (f"tau={tau:g}, reduction={reduction!r}: the loss",
            f"tau={tau:g}, reduction={reduction!r}: the gradients of y and t")


def observe(ob: Observer, PinballLoss: Any, *, seed: int, hidden: bool = False,
            pkg: Any = None) -> None:
    lib = lib_of(pkg)
    is_function = isinstance(PinballLoss, type) and issubclass(PinballLoss, lib.Function)
    with ob.case(IS_FUNCTION):
        ob.put("library", lib.name)
        ob.put("class", PinballLoss)
        ob.put("is a Function", is_function)
    if not is_function:
        return
    inputs = cases(seed)
    yd0, td0 = inputs["defaults"]
    for tau, reduction, yd, td in inputs["settings"]:
        with ob.case(_titles(tau, reduction)[0]):
            ob.put("loss", number(PinballLoss.apply(lib.tensor(yd), lib.tensor(td), tau,
                                                    reduction)))
    with ob.case(DEFAULTS):
        ob.put("loss", number(PinballLoss.apply(lib.tensor(yd0), lib.tensor(td0))))
    with ob.case(REDUCTION):
        ob.put("returned", number(ob.attempt("raised", PinballLoss.apply, lib.tensor(np.ones(2)),
                                             lib.tensor(np.ones(2)), 0.75, "average")))
    for tau, reduction, yd, td in inputs["settings"]:
        with ob.case(_titles(tau, reduction)[1]):
            y, t = lib.tensor(yd, requires_grad=True), lib.tensor(td, requires_grad=True)
            loss = PinballLoss.apply(y, t, tau, reduction)
            shape = tuple(loss.shape)
            ob.put("loss shape", shape)
            ob.attempt("backward raised", loss.backward, lib.tensor(_go(shape)))
            _grads(ob, y=y, t=t)
    with ob.case(KINK):
        ky, kt = inputs["kink"]
        observe_differences(ob, lib, lambda a, b: PinballLoss.apply(a, b, 0.75, "mean"), ky, kt,
                            "mean")
    with ob.case(DEFAULT_GRAD):
        y = lib.tensor(yd0, requires_grad=True)
        loss = PinballLoss.apply(y, lib.tensor(td0))
        ob.attempt("backward raised", loss.backward)
        _grads(ob, y=y)


def _go(shape: tuple[int, ...]) -> np.ndarray:
    return np.round(np.linspace(0.5, 2, num=int(np.prod(shape))), 3).reshape(shape)


def _grads(ob: Observer, **variables: Any) -> None:
    for name, v in variables.items():
        ob.put(f"grad of {name}", None if v.grad is None else number(v.grad))


def judge(ck: Checker, obs: Observations) -> None:
    what, rule = "your PinballLoss", HINTS["pinball.rule"]
    seen = obs.case(ck, IS_FUNCTION, what=what)
    lib_name = seen["library"]
    ck.check(seen["is a Function"] is True,
             f"PinballLoss is not a subclass of {lib_name}.Function.",
             expected=f"class PinballLoss({lib_name}.Function)",
             received=getattr(seen["class"], "repr", seen["class"]),
             hint=HINTS["bakery.function"])
    inputs = cases(obs.seed)
    yd0, td0 = inputs["defaults"]
    parts = Parts(ck, PARTS)
    with parts.part("values"):
        for tau, reduction, yd, td in inputs["settings"]:
            title = _titles(tau, reduction)[0]
            with ck.case(title):
                ck.close(obs.case(ck, title, what=what)["loss"],
                         pinball_reference(yd, td, tau, reduction), atol=1e-12, what="loss",
                         hint=rule)
        with ck.case(DEFAULTS):
            got = obs.case(ck, DEFAULTS, what=what, hint=HINTS["pinball.defaults"])["loss"]
            ck.close(got, pinball_reference(yd0, td0), atol=1e-12, what="loss with defaults")
        with ck.case(REDUCTION):
            seen = obs.case(ck, REDUCTION, what=what)
            expect_raised(ck, seen["raised"], seen.get("returned"), "ValueError", what,
                          HINTS["pinball.reduction"])
    with parts.part("gradients"):
        for tau, reduction, yd, td in inputs["settings"]:
            title = _titles(tau, reduction)[1]
            with ck.case(title):
                seen = obs.case(ck, title, what=what)
                _ran(ck, seen, what, rule)
                n = yd.size if reduction == "mean" else 1
                want = np.where(yd < td, -tau, 1 - tau) * _go(tuple(seen["loss shape"])) / n
                ck.close(_grad(ck, seen, "y"), want, atol=1e-12, what="gradient of y", hint=rule)
                ck.close(_grad(ck, seen, "t"), -want, atol=1e-12, what="gradient of t", hint=rule)
        with ck.case(KINK):
            ky, kt = inputs["kink"]
            judge_differences(ck, obs.case(ck, KINK, what=what, hint=rule), ky, kt, "mean", rule)
        with ck.case(DEFAULT_GRAD):
            seen = obs.case(ck, DEFAULT_GRAD, what=what, hint=HINTS["pinball.defaults"])
            _ran(ck, seen, what, "")
            ck.close(_grad(ck, seen, "y"), np.where(yd0 < td0, -0.75, 0.25) / 5, atol=1e-12,
                     what="gradient of y with defaults", hint=rule)
    parts.done()


def _ran(ck: Checker, seen: Any, what: str, hint: str) -> None:
    err = seen["backward raised"]
    if err is not None:
        raise_learner_error(ck, err, what, hint or None)


def _grad(ck: Checker, seen: Any, name: str) -> Any:
    grad = seen[f"grad of {name}"]
    if grad is None:
        ck.fail(f"{name} got no gradient.", hint=HINTS["bakery.backward"])
    return grad
