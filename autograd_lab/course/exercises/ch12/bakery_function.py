"""Check ``BakeryLoss.apply(y, t, alpha, reduction)``: forward values as the numpy reference, a
hand-written backward that agrees with central differences and with the engine's gradient of the
composite formula, finite gradients for huge residuals, and ``apply(y, t)`` with the default
alpha=3.0 and reduction='mean'.

``pkg`` is the library BakeryLoss is written for (the learner's ``mygrad`` in the chapter); by
default autograd_lab. The references are always autograd_lab's and numpy's."""
from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab import tensor

from .._common import Checker, grad_data
from .._exercise import Mistake
from .._observe import Observations, Observer, raise_learner_error
from ._shared import bakery_loss_composite, bakery_loss_gradient, bakery_loss_reference, \
    course_names, judge_differences, lib_of, log_cosh_reference, no_warning, number, \
    observe_differences, quiet
from ._shared import bakery_loss_np as course_bakery_loss_np
from .loss_forward import forward_mistakes
from .messages import HINTS

ID = "ch12-bakery-function"
PARTS: tuple[str, ...] = ()

_GRAD = "grad_y = np.where(r < 0, ctx.alpha, 1.0) * np.tanh(r) * grad_output.data"
MISTAKES = (
    Mistake("no grad_output", (_GRAD, "grad_y = np.where(r < 0, ctx.alpha, 1.0) * np.tanh(r)"),
            None, "bakery.chain"),
    Mistake("sign, not tanh", (_GRAD, "grad_y = np.where(r < 0, ctx.alpha, 1.0) * np.sign(r) * "
                                      "grad_output.data"), None, "bakery.sign"),
    Mistake("weights on the wrong side", (_GRAD, "grad_y = np.where(r > 0, ctx.alpha, 1.0) * "
                                                 "np.tanh(r) * grad_output.data"), None,
            "loss.wrong-side"),
    Mistake("no mean", ("grad_y = grad_y / r.size", "grad_y = grad_y"), None, "bakery.mean"),
    Mistake("dL/dt = dL/dy", ("Variable(-grad_y), None, None", "Variable(grad_y), None, None"),
            None, "bakery.dt"),
    Mistake("no defaults", ("def forward(ctx, y, t, alpha=3.0, reduction=\"mean\"):",
                            "def forward(ctx, y, t, alpha, reduction):"), None,
            "bakery.defaults"),
)

T_FIXED = "t without requires_grad: y still gets its gradient"
HUGE = "huge residuals: finite loss, gradients ±w/n (the composite formula gives nan)"
DEFAULTS = "apply(y, t) uses the defaults alpha=3.0 and reduction='mean'"
IS_FUNCTION = "BakeryLoss is a Function of the library"


def _gradcheck_title(reduction: str) -> str:
    return f"gradcheck passes for y and t (reduction={reduction!r})"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    configs = [((6,), 3.0, "mean"), ((3, 4), 3.0, "sum"), ((5,), 2.0, "none")]
    if hidden:
        configs += [((2, 3, 2), 0.5, "mean"), ((7,), 10.0, "sum"), ((4, 2), 1.0, "none")]
    values = []
    for shape, alpha, reduction in configs:
        yd = np.round(rng.uniform(5, 15, size=shape), 3)
        td = np.round(rng.uniform(5, 15, size=shape), 3)
        go = (np.round(rng.uniform(0.5, 2.0, size=shape), 3) if reduction == "none"
              else np.array(float(np.round(rng.uniform(0.5, 2.0), 3))))
        values.append((f"shape {shape}, alpha={alpha:g}, reduction={reduction!r}: values and "
                       "gradients", yd, td, alpha, reduction, go))
    checks = [(reduction, rng.uniform(-3, 3, size=5), rng.uniform(-3, 3, size=5))
              for reduction in ["mean", "none"] + (["sum"] if hidden else [])]
    fixed = (np.round(rng.uniform(0, 4, size=4), 3), np.round(rng.uniform(0, 4, size=4), 3))
    huge = (np.array([0.0, 2000.0, 100.0, 1e5] + ([-3e4, 800.0] if hidden else [])),
            np.array([1000.0, 0.0, 100.0, 0.0] + ([0.0, 0.0] if hidden else [])))
    defaults = (np.round(rng.uniform(0, 4, size=5), 3), np.round(rng.uniform(0, 4, size=5), 3))
    return {"values": values, "gradchecks": checks, "fixed": fixed, "huge": huge,
            "defaults": defaults}


def _grads(ob: Observer, **variables: Any) -> None:
    for name, v in variables.items():
        ob.put(f"grad of {name}", None if v.grad is None else number(v.grad))


def observe(ob: Observer, BakeryLoss: Any, *, seed: int, hidden: bool, pkg: Any = None) -> None:
    lib = lib_of(pkg)
    with ob.case(IS_FUNCTION):
        ob.put("library", lib.name)
        ob.put("class", BakeryLoss)
        ob.put("is a Function", isinstance(BakeryLoss, type) and issubclass(BakeryLoss,
                                                                            lib.Function))
    if not (isinstance(BakeryLoss, type) and issubclass(BakeryLoss, lib.Function)):
        return
    with course_names(getattr(BakeryLoss, "forward", None),
                      {"bakery_loss_np": course_bakery_loss_np, "log_cosh": log_cosh_reference}):
        _observe_cases(ob, BakeryLoss, lib, cases(seed, hidden))


def _observe_cases(ob: Observer, BakeryLoss: Any, lib: Any, inputs: dict[str, Any]) -> None:
    for name, yd, td, alpha, reduction, go in inputs["values"]:
        with ob.case(name):
            y, t = lib.tensor(yd, requires_grad=True), lib.tensor(td, requires_grad=True)
            loss = BakeryLoss.apply(y, t, alpha, reduction)
            ob.put("returned", loss)
            ob.put("is a Variable", isinstance(loss, lib.Variable))
            ob.put("recorded", getattr(loss, "grad_fn", None) is not None)
            ob.put("loss", number(loss))
            ob.attempt("backward raised", loss.backward, lib.tensor(go))
            _grads(ob, y=y, t=t)
    for reduction, yd, td in inputs["gradchecks"]:
        with ob.case(_gradcheck_title(reduction)):
            observe_differences(ob, lib, lambda a, b: BakeryLoss.apply(a, b, 3.0, reduction),
                                yd, td, reduction)
    with ob.case(T_FIXED):
        y = lib.tensor(inputs["fixed"][0], requires_grad=True)
        loss = BakeryLoss.apply(y, lib.tensor(inputs["fixed"][1]), 3.0, "sum")
        ob.attempt("backward raised", loss.backward)
        _grads(ob, y=y)
    with ob.case(HUGE):
        y, t = (lib.tensor(a, requires_grad=True) for a in inputs["huge"])
        loss = quiet(ob, "raised", BakeryLoss.apply, y, t, 3.0, "mean")
        if loss is not None:
            ob.put("loss", number(loss))
            quiet(ob, "backward raised", loss.backward)
            _grads(ob, y=y, t=t)
    with ob.case(DEFAULTS):
        y = lib.tensor(inputs["defaults"][0], requires_grad=True)
        loss = BakeryLoss.apply(y, lib.tensor(inputs["defaults"][1]))
        ob.put("loss", number(loss))
        ob.attempt("backward raised", loss.backward)
        _grads(ob, y=y)


def judge(ck: Checker, obs: Observations) -> None:
    what = "your BakeryLoss"
    seen = obs.case(ck, IS_FUNCTION, what=what)
    lib_name = seen["library"]
    ck.check(seen["is a Function"] is True, f"BakeryLoss is not a subclass of {lib_name}.Function.",
             expected=f"class BakeryLoss({lib_name}.Function)", received=_shown(seen["class"]),
             hint=HINTS["bakery.function"])
    inputs = cases(obs.seed, obs.hidden)
    for name, yd, td, alpha, reduction, go in inputs["values"]:
        with ck.case(name):
            _judge_values(ck, obs.case(ck, name, what=what), lib_name, yd, td, alpha, reduction,
                          go)
    for reduction, yd, td in inputs["gradchecks"]:
        title = _gradcheck_title(reduction)
        with ck.case(title):
            judge_differences(ck, obs.case(ck, title, what=what, hint=HINTS["bakery.gradcheck"]),
                              yd, td, reduction, HINTS["bakery.gradcheck"])
    with ck.case(T_FIXED):
        seen = obs.case(ck, T_FIXED, what=what)
        _backward_ran(ck, seen, what, HINTS["bakery.backward"])
        fy, ft = inputs["fixed"]
        ck.close(_grad(ck, seen, "y"), bakery_loss_gradient(fy, ft, 3.0, "sum"),
                 atol=1e-12, what="gradient of y", hint=HINTS["bakery.backward"])
    with ck.case(HUGE):
        _judge_huge(ck, obs.case(ck, HUGE, what=what), *inputs["huge"])
    with ck.case(DEFAULTS):
        seen = obs.case(ck, DEFAULTS, what=what, hint=HINTS["bakery.defaults"])
        yd, td = inputs["defaults"]
        ck.close(seen["loss"], bakery_loss_reference(yd, td), atol=1e-10, rtol=1e-9,
                 what="loss with the default arguments", hint=HINTS["bakery.defaults"])
        _backward_ran(ck, seen, what, HINTS["bakery.defaults"])
        ck.close(_grad(ck, seen, "y"), bakery_loss_gradient(yd, td), atol=1e-12,
                 what="gradient of y with the default arguments", hint=HINTS["bakery.defaults"])
    ck.done()


def _shown(value: Any) -> Any:
    return getattr(value, "repr", value)


def _backward_ran(ck: Checker, seen: Any, what: str, hint: str) -> None:
    err = seen["backward raised"]
    if err is not None:
        raise_learner_error(ck, err, what, hint)


def _grad(ck: Checker, seen: Any, name: str) -> Any:
    grad = seen[f"grad of {name}"]
    if grad is None:
        ck.fail(f"{name} got no gradient.", hint=HINTS["bakery.backward"])
    return grad


def _judge_values(ck: Checker, seen: Any, lib_name: str, yd: np.ndarray, td: np.ndarray,
                  alpha: float, reduction: str, go: np.ndarray) -> None:
    ck.check(seen["is a Variable"] is True and seen["recorded"] is True,
             "apply did not return a Variable recorded in the graph.",
             received=_shown(seen["returned"]),
             hint=HINTS["bakery.apply"].replace("{lib}", lib_name))
    ck.close(seen["loss"], bakery_loss_reference(yd, td, alpha, reduction), atol=1e-10,
             rtol=1e-9, what="loss", hint=HINTS["loss.weight"],
             mistakes=forward_mistakes(yd, td, alpha, reduction))
    _backward_ran(ck, seen, "your BakeryLoss", HINTS["bakery.backward"])
    # the engine's gradient of the same formula, built from Variable operations
    y2, t2 = tensor(yd, requires_grad=True), tensor(td, requires_grad=True)
    bakery_loss_composite(y2, t2, alpha, reduction).backward(tensor(go))
    want = grad_data(y2)
    r = yd - td
    n = r.size if reduction == "mean" else 1
    mistakes = [(bakery_loss_gradient(yd, td, alpha, reduction), HINTS["bakery.chain"]),
                (np.where(r < 0, alpha, 1.0) * np.sign(r) * go / n, HINTS["bakery.sign"]),
                (np.where(r > 0, alpha, 1.0) * np.tanh(r) * go / n, HINTS["loss.wrong-side"])]
    mistakes.insert(0, (want * r.size, HINTS["bakery.mean"]) if reduction == "mean" else
                    (want / r.size, HINTS["bakery.only-mean"]))
    ck.close(_grad(ck, seen, "y"), want, atol=1e-10, rtol=1e-8, what="gradient of y",
             hint=HINTS["bakery.backward"], mistakes=mistakes)
    ck.close(_grad(ck, seen, "t"), -want, atol=1e-10, rtol=1e-8, what="gradient of t",
             mistakes=[(want, HINTS["bakery.dt"])], hint=HINTS["bakery.backward"])


def _judge_huge(ck: Checker, seen: Any, yd: np.ndarray, td: np.ndarray) -> None:
    what = "your BakeryLoss"
    no_warning(ck, seen["raised"], what, HINTS["cosh.stable"])
    ck.close(seen["loss"], bakery_loss_reference(yd, td), atol=1e-9, rtol=1e-12, what="loss",
             hint=HINTS["cosh.stable"])
    no_warning(ck, seen["backward raised"], what, HINTS["bakery.tanh"])
    want = bakery_loss_gradient(yd, td)
    ck.close(_grad(ck, seen, "y"), want, atol=1e-12, what="gradient of y",
             hint=HINTS["bakery.backward"])
    ck.close(_grad(ck, seen, "t"), -want, atol=1e-12, what="gradient of t",
             hint=HINTS["bakery.backward"])
