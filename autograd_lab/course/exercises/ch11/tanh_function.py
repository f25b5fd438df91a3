"""Check ``MyTanh``: forward gives tanh(x); backward is written with Variable operations,
so that gradients of gradients are right (gradgradcheck passes)."""
from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab import Function, Variable, grad, gradcheck, gradgradcheck, tensor

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer, Raised, raise_learner_error
from .messages import HINTS
from ._shared import Stop, learner_call, observed_case, reraise
from .problems import tanh_net

ID = "ch11-tanh-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("backward on numpy", ("return grad_output * (1 - y * y)",
                                  "return al.Variable(grad_output.data * (1 - y.data ** 2))"),
            None, "tanh.variable-ops"),
    Mistake("a saved copy", ("ctx.save_for_backward(y)",
                             "ctx.save_for_backward(al.Variable(np.tanh(x.data)))"), None,
            "tanh.saved-copy"),
    Mistake("1 - tanh", ("return grad_output * (1 - y * y)", "return grad_output * (1 - y)"),
            None, "tanh.square"),
    Mistake("no chain rule", ("return grad_output * (1 - y * y)", "return 1 - y * y"), None,
            "tanh.chain"),
)

C_CLASS = "the class"
C_GRADCHECK = "gradcheck passes"
C_HISTORY = "with create_graph=True the gradient has a history"
C_SECOND = "second derivative: d²/dx² tanh(x) = -2 tanh(x) (1 - tanh²(x))"
C_HESSIAN = "inside a larger function: Hessian of sum(MyTanh(Wx + c))"


def _shape_title(shape: tuple[int, ...]) -> str:
    return f"forward and first derivative on a {shape} input"


def _gradgrad_title(k: int) -> str:
    return "gradgradcheck passes" + (f" (random grad_outputs, seed {k})" if k else "")


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found: dict[str, Any] = {"shapes": []}
    for shape in [(5,), (3, 4)] + ([(2, 3, 2)] if hidden else []):
        data = np.round(rng.normal(size=shape), 4)
        found["shapes"].append((shape, data, np.round(rng.uniform(0.5, 2.0, size=shape), 3)))
    found["gradcheck"] = rng.normal(size=(2, 3))
    found["history"] = np.round(rng.normal(size=4), 4)
    found["second"] = np.round(rng.uniform(-2, 2, size=5), 4)
    found["gradgrad"] = []
    for _ in range(2 if hidden else 1):
        x = rng.normal(size=(3, 2))
        found["gradgrad"].append((x, int(rng.integers(1000))))
    if hidden:
        W, c = np.round(rng.normal(size=(3, 2)), 3), np.round(rng.normal(size=3), 3)
        found["hessian"] = (W, c, np.round(rng.normal(size=2), 3))
    return found


def _saved(ob: Observer, MyTanh: Any) -> None:
    """What forward saved, for the diagnosis of a saved copy (no verdict here)."""
    try:
        x = tensor(np.linspace(-1.5, 1.5, 4), requires_grad=True)
        y = MyTanh.apply(x)
        saved = tuple(y.grad_fn.saved_tensors)
        ob.put("y", np.array(y.data))
        ob.put("fresh leaves", [np.array(s.data) for s in saved
                                if isinstance(s, Variable) and s is not x and s is not y
                                and s.grad_fn is None and s.shape == y.shape])
    except Exception:  # noqa: BLE001 - only a diagnosis; the cases report the failure itself
        ob.put("y", None)


def _first_grad(ob: Observer, MyTanh: Any, x: Any) -> Any:
    y = learner_call(ob, "apply raised", MyTanh.apply, x)
    return learner_call(ob, "grad raised", grad, y.sum(), x, create_graph=True)[0]


def observe(ob: Observer, MyTanh: type[Any], *, seed: int, hidden: bool) -> None:
    inputs = cases(seed, hidden)
    is_function = isinstance(MyTanh, type) and issubclass(MyTanh, Function)
    with ob.case(C_CLASS):
        ob.put("is a Function", is_function)
        ob.put("class", repr(MyTanh))
        if is_function:
            _saved(ob, MyTanh)
    if not is_function:
        return
    for shape, data, gy in inputs["shapes"]:
        with observed_case(ob, _shape_title(shape)):
            x = tensor(data, requires_grad=True)
            y = learner_call(ob, "apply raised", MyTanh.apply, x)
            recorded = isinstance(y, Variable) and y.grad_fn is not None
            ob.put("recorded", recorded)
            if not recorded:
                ob.put("y", y)
                raise Stop
            ob.put("output", y.data)
            g = learner_call(ob, "grad raised", grad, y, x, tensor(gy))[0]
            ob.put("gradient", g.data if g is not None else None)
    with observed_case(ob, C_GRADCHECK):
        x = tensor(inputs["gradcheck"], requires_grad=True)
        ob.put("ok", learner_call(ob, "gradcheck raised", gradcheck, MyTanh.apply, (x,)) is True)
    with observed_case(ob, C_HISTORY):
        x = tensor(inputs["history"], requires_grad=True)
        g = _first_grad(ob, MyTanh, x)
        ob.put("node", type(g.grad_fn).__name__ if g.grad_fn is not None else None)
        ob.put("requires grad", bool(g.requires_grad))
    with observed_case(ob, C_SECOND):
        x = tensor(inputs["second"], requires_grad=True)
        g = _first_grad(ob, MyTanh, x)
        gg = ob.attempt("second raised", lambda: grad(g.sum(), x, allow_unused=True)[0])
        ob.put("second", None if gg is None else gg.data)
    for k, (data, s) in enumerate(inputs["gradgrad"]):
        with observed_case(ob, _gradgrad_title(k)):
            ok = ob.attempt("raised", gradgradcheck, MyTanh.apply,
                            (tensor(data, requires_grad=True),), seed=s)
            ob.put("ok", ok is True)
    if "hessian" in inputs:
        W, c, xd = inputs["hessian"]
        with observed_case(ob, C_HESSIAN):
            x = tensor(xd, requires_grad=True)
            z = tensor(W) @ x + tensor(c)
            g = learner_call(ob, "grad raised", grad, learner_call(ob, "apply raised", MyTanh.apply, z).sum(),
                      x, create_graph=True)[0]
            rows = []
            for i in range(2):
                dx = grad(g[i], x, retain_graph=True)[0]
                rows.append(None if dx is None else dx.data)
            ob.put("rows", rows)


def _cut_hint(ck: Checker, obs: Observations) -> str | None:
    seen = obs.case(ck, C_CLASS)
    y, fresh = seen.get("y"), seen.get("fresh leaves") or []
    if isinstance(y, np.ndarray) and any(isinstance(s, np.ndarray) and s.shape == y.shape
                                         and np.allclose(s, y) for s in fresh):
        return HINTS["tanh.saved-copy"]
    return None


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    seen = obs.case(ck, C_CLASS)
    ck.check(seen["is a Function"] is True, "MyTanh is not a subclass of al.Function.",
             expected="class MyTanh(al.Function)", received=seen["class"],
             hint=HINTS["tanh.class"])
    ops = HINTS["tanh.variable-ops"]
    for shape, data, gy in inputs["shapes"]:
        title = _shape_title(shape)
        with ck.case(title):
            got = obs.case(ck, title)
            reraise(ck, got, "apply raised", "your apply")
            ck.check(got["recorded"] is True,
                     "apply did not return a Variable recorded in the graph.",
                     received=got.get("y"), hint=HINTS["tanh.recorded"])
            ck.close(got["output"], np.tanh(data), what="output", hint=HINTS["tanh.forward"])
            reraise(ck, got, "grad raised", "your grad", ops)
            t = np.tanh(data)
            ck.close(got["gradient"], gy * (1 - t ** 2), what="gradient of x",
                     hint=HINTS["tanh.derivative"],
                     mistakes=[(1 - t ** 2, HINTS["tanh.chain"]),
                               (gy * (1 - t), HINTS["tanh.square"])])
    with ck.case(C_GRADCHECK):
        got = obs.case(ck, C_GRADCHECK)
        reraise(ck, got, "gradcheck raised", "your gradcheck", HINTS["tanh.gradcheck"])
        ck.check(got["ok"] is True, "gradcheck did not pass.", expected=True, received=False)
    cut = _cut_hint(ck, obs)
    with ck.case(C_HISTORY):
        got = obs.case(ck, C_HISTORY)
        reraise(ck, got, "apply raised", "your apply")
        reraise(ck, got, "grad raised", "your grad")
        node = got["node"]
        ck.check(node != "_DelayedErrorBackward", "backward is decorated with "
                 "@once_differentiable.", hint=HINTS["tanh.once"] + ops)
        ck.check(got["requires grad"] is True and node is not None, "the gradient computed with "
                 "create_graph=True has no grad_fn, so it cannot be differentiated again.",
                 expected="a grad_fn", received=node, hint=cut or ops)
    _judge_second(ck, obs, inputs, cut)
    ck.done()


def _judge_second(ck: Checker, obs: Observations, inputs: dict[str, Any],
                  cut: str | None) -> None:
    ops = HINTS["tanh.variable-ops"]
    with ck.case(C_SECOND):
        got = obs.case(ck, C_SECOND)
        reraise(ck, got, "apply raised", "your apply")
        reraise(ck, got, "grad raised", "your grad")
        err = got["second raised"]
        if isinstance(err, Raised):
            if err.name == "BackwardError":
                ck.fail(f"the second backward raised: {err.message}", hint=ops)
            raise_learner_error(ck, err, "the second backward")
        t = np.tanh(inputs["second"])
        second = got["second"]
        ck.close(np.zeros(5) if second is None else second, -2 * t * (1 - t ** 2), atol=1e-9,
                 what="second derivative",
                 mistakes=[(np.zeros(5), cut or HINTS["tanh.second-zero"] + ops)],
                 hint=cut or HINTS["tanh.second"])
    for k in range(len(inputs["gradgrad"])):
        title = _gradgrad_title(k)
        with ck.case(title):
            got = obs.case(ck, title)
            err = got["raised"]
            if isinstance(err, Raised):
                if err.name in ("GradcheckError", "BackwardError"):
                    ck.fail(f"gradgradcheck failed: {err.message}", hint=cut or ops)
                raise_learner_error(ck, err, "gradgradcheck")
            ck.check(got["ok"] is True, "gradgradcheck did not pass.", expected=True,
                     received=False)
    if "hessian" in inputs:
        W, c, xd = inputs["hessian"]
        with ck.case(C_HESSIAN):
            got = obs.case(ck, C_HESSIAN, what="the Hessian's rows")
            reraise(ck, got, "apply raised", "your apply")
            reraise(ck, got, "grad raised", "your grad")
            rows = got["rows"]
            ck.close(None if any(r is None for r in rows) else np.stack(rows),
                     tanh_net(W, c).hessian(xd), atol=1e-9, what="Hessian", hint=cut or ops)
