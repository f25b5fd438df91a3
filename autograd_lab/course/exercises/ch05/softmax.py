"""Check ``Softmax.apply(x, axis)``: a numerically stable softmax along ``axis`` whose backward
is ``y * (g - sum(g * y, axis, keepdims=True))`` and passes gradcheck. The course's apply,
engine and every other Function stand in for the learner's while it runs, so only Softmax is
judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import attempt, judge_attempt, judge_shapes_call
from ._gradcheck import judge_gradcheck, observe_gradcheck
from ._shared import axis_mistakes, dropped_axis, isolated, library_of, softmax_reference
from .messages import HINTS

ID = "ch05-softmax"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no maximum subtracted", ("z = x.data - x.data.max(axis=axis, keepdims=True)",
                                      "z = x.data"), None, "sm.stable"),
    Mistake("no keepdims in forward", ("e / e.sum(axis=axis, keepdims=True)",
                                       "e / e.sum(axis=axis)"), None, "sm.keepdims-forward"),
    Mistake("no keepdims in backward", ("(g * y).sum(axis=ctx.axis, keepdims=True)",
                                        "(g * y).sum(axis=ctx.axis)"), None,
            "sm.keepdims-backward"),
    Mistake("the Jacobian's diagonal only", (
        "return y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)), None",
        "return g * y * (1 - y), None"), None, "sm.diagonal"),
    Mistake("grad_output passed through", (
        "return y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)), None", "return g, None"),
        None, "sm.passthrough"),
)

LARGE = [("large inputs [1000, 1001, 1002] do not overflow", np.array([[1000.0, 1001.0, 1002.0]])),
         ("very negative inputs [-1000, -1001, -1002] do not give 0/0",
          np.array([[-1000.0, -1001.0, -1002.0]]))]


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases, by name: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found: list[tuple[str, np.ndarray, int]] = [
        ("a (2, 5) input along axis -1", np.round(rng.normal(size=(2, 5)), 3), -1),
        ("a (4, 3) input along axis 0", np.round(rng.normal(size=(4, 3)), 3), 0),
        ("a (5,) input", np.round(rng.normal(size=5), 3), -1),
    ]
    if hidden:
        found += [("a (2, 3, 4) input along axis 1", rng.normal(size=(2, 3, 4)), 1),
                  ("a (3, 6) input along axis 1", 3 * rng.normal(size=(3, 6)), 1)]
    main = [(name, data, axis, np.round(rng.normal(size=data.shape), 3))
            for name, data, axis in found]
    axes = [(-1, (3, 4)), (0, (4, 3))] + ([(1, (2, 3, 2))] if hidden else [])
    checked = [(f"gradcheck on a {shape} input along axis {axis}", axis,
                rng.normal(size=shape)) for axis, shape in axes]
    return {"main": main, "gradcheck": checked}


def observe(ob: Observer, Softmax: Any, *, seed: int, hidden: bool) -> None:
    with isolated(Softmax):
        _observe(ob, Softmax, seed, hidden)


def _observe(ob: Observer, Softmax: Any, seed: int, hidden: bool) -> None:
    al = library_of(Softmax)
    inputs = cases(seed, hidden)
    name = str(getattr(Softmax, "__name__", Softmax))
    for title, data, axis, g in inputs["main"]:
        with ob.case(title):
            ob.put("class", name)
            x = al.Variable(data.copy(), requires_grad=True)
            ok, y = attempt(ob, "raised", lambda: Softmax.apply(x, axis))
            if not ok:
                continue
            ob.put("x after forward", np.array(data_of(x)))
            ob.put("output", np.asarray(data_of(y)))
            ok, _ = attempt(ob, "backward raised", lambda: y.backward(al.Variable(g)))
            if ok:
                ob.put("x.grad", None if x.grad is None else np.asarray(data_of(x.grad)))
    for title, data in LARGE:
        with ob.case(title), np.errstate(all="ignore"):
            ob.put("class", name)
            x = al.Variable(data)
            ok, y = attempt(ob, "raised", lambda: Softmax.apply(x, -1))
            if ok:
                ob.put("output", np.asarray(data_of(y), dtype=np.float64))
    for title, axis, data in inputs["gradcheck"]:
        with ob.case(title):
            x = al.Variable(data.copy(), requires_grad=True)
            observe_gradcheck(ob, al.Variable, lambda v: Softmax.apply(v, axis), (x,))


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    for title, data, axis, g in inputs["main"]:
        with ck.case(title):
            seen = obs.case(ck, title)
            name = str(seen["class"])
            judge_shapes_call(ck, seen, "raised", name, HINTS["sm.keepdims-forward"])
            after = seen["x after forward"]
            ck.check(isinstance(after, np.ndarray) and np.array_equal(after, data),
                     "your forward changed its input x.", hint=HINTS["sm.input-changed"])
            s = softmax_reference(data, axis)
            ck.close(seen["output"], s, what="forward result", hint=HINTS["sm.forward"],
                     mistakes=axis_mistakes(data, axis) + dropped_axis(
                         lambda: np.exp(data) / np.exp(data).sum(axis=axis),
                         HINTS["sm.forward-lost-axis"]))
            judge_shapes_call(ck, seen, "backward raised", "Softmax.backward",
                              HINTS["sm.keepdims-backward"])
            grad = seen["x.grad"]
            ck.check(grad is not None, "x.grad is None after backward.",
                     hint=HINTS["sm.grad-none"])
            ck.close(grad, s * (g - (g * s).sum(axis=axis, keepdims=True)),
                     what="gradient of x", hint=HINTS["sm.backward"], mistakes=dropped_axis(
                         lambda: s * (g - (g * s).sum(axis=axis)),
                         HINTS["sm.backward-lost-axis"]) + [
                         (data * (g - (g * data).sum(axis=axis, keepdims=True)),
                          HINTS["sm.input-saved"]),
                         (g * s * (1 - s), HINTS["sm.diagonal"]),
                         (g, HINTS["sm.passthrough"])])
    for title, data in LARGE:
        with ck.case(title):
            seen = obs.case(ck, title)
            judge_attempt(ck, seen, "raised", str(seen["class"]))
            out = seen["output"]
            ck.check(bool(np.all(np.isfinite(out))), "the result is not finite.",
                     expected=softmax_reference(data, -1), received=out, hint=HINTS["sm.stable"])
            ck.close(out, softmax_reference(data, -1), what="forward result",
                     hint=HINTS["sm.finite-wrong"], mistakes=axis_mistakes(data, -1))
    for title, _, data in inputs["gradcheck"]:
        with ck.case(title):
            judge_gradcheck(ck, obs.case(ck, title), [data.shape])
    ck.done()
