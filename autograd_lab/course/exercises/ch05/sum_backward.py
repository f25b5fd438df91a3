"""Check ``SumFunction.apply(x, axis, keepdims)``: numpy's sum, and a backward that spreads the
incoming gradient back over the summed axes (a gradient shaped like x). The course's apply,
engine and every other Function stand in for the learner's while it runs, so only Sum (and
its helper ``_kept_shape``) is judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake
from .._functions import function_of
from .._observe import Observations, Observer
from ._byhand import attempt, judge_attempt, judge_shapes_call
from ._gradcheck import judge_gradcheck, observe_gradcheck
from ._shared import isolated, kept_shape_reference, library_of, sum_grad
from .messages import HINTS

ID = "ch05-sum-backward"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("_kept_shape ignores axis=None",
            ("    if axis is None:\n        return (1,) * len(shape)\n", ""), None, "kept.none"),
    Mistake("_kept_shape ignores a tuple", ("axes = axis if isinstance(axis, tuple) else (axis,)",
                                            "axes = (axis,)"), None, "kept.tuple"),
    Mistake("_kept_shape returns a list", ("    return tuple(kept)", "    return kept"), None,
            "kept.tuple-type"),
    Mistake("_kept_shape ignores negative axes", ("kept[a % len(shape)] = 1", "kept[abs(a)] = 1"),
            None, "kept.negative"),
    Mistake("no shape on ctx", ("        ctx.x_shape, ctx.axis = x.shape, axis\n"
                                "        return Variable(x.data.sum(",
                                "        return Variable(x.data.sum("), None, "fn.keep-on-ctx"),
    Mistake("the summed axis not put back", (
        "g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))", "g = grad_output"),
        None, "sum.not-put-back"),
)

KEPT = "_kept_shape for an int, None, a tuple and negative axes"
KEPT_CASES = [((2, 3, 4), 1, "int"), ((2, 3, 4), None, "none"), ((2, 3, 4), (0, 2), "tuple"),
              ((2, 3, 4), -1, "negative"), ((2, 3, 4), (0, -1), "negative"), ((5,), 0, "int")]
SETUP = "Sum's helpers"
GRADCHECK = "gradcheck of sum over axis 1 of a (2, 3) input"


def cases(seed: int, hidden: bool) -> tuple[list[tuple], np.ndarray]:
    """(shape, axis, keepdims, x, upstream gradient) of the cases, and the gradcheck's input:
    the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[tuple[int, ...], Any, bool]] = [
        ((3, 4), None, False), ((3, 4), 0, False), ((3, 4), 1, True), ((3, 3), 1, False),
        ((3, 3), 0, True), ((2, 3, 4), (0, 2), False), ((2, 3, 4), -1, False)]
    if hidden:
        shapes += [((4, 2, 3), 1, True), ((2, 2, 2), (1, 2), False), ((5,), 0, True),
                   ((3, 2), None, True)]
    found = []
    for shape, axis, keepdims in shapes:
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.normal(size=np.shape(x.sum(axis=axis, keepdims=keepdims))), 3)
        found.append((shape, axis, keepdims, x, g))
    return found, rng.normal(size=(2, 3))


def _title(shape: tuple[int, ...], axis: Any, keepdims: bool) -> str:
    return f"x of shape {shape}, axis={axis}, keepdims={keepdims}"


def observe(ob: Observer, SumFunction: Any, *, seed: int, hidden: bool) -> None:
    with isolated(SumFunction, helpers=("_kept_shape",)):
        _observe(ob, SumFunction, seed, hidden)


def _observe(ob: Observer, SumFunction: Any, seed: int, hidden: bool) -> None:
    al = library_of(SumFunction)
    found, checked = cases(seed, hidden)
    kept_shape = getattr(function_of(SumFunction, "forward"), "__globals__", {}).get("_kept_shape")
    with ob.case(SETUP):
        ob.put("class", str(getattr(SumFunction, "__name__", SumFunction)))
        ob.put("kept shape", callable(kept_shape))
    if callable(kept_shape):
        with ob.case(KEPT):
            for j, (shape, axis, _) in enumerate(KEPT_CASES):
                ok, got = attempt(ob, f"raised {j}", lambda: kept_shape(shape, axis))
                if not ok:
                    break
                ob.put(f"result {j}", got)
    for shape, axis, keepdims, x0, g in found:
        with ob.case(_title(shape, axis, keepdims)):
            x = al.Variable(x0.copy(), requires_grad=True)
            ok, y = attempt(ob, "raised", lambda: SumFunction.apply(x, axis, keepdims))
            if not ok:
                continue
            ob.put("output", np.asarray(data_of(y)))
            ok, _ = attempt(ob, "backward raised", lambda: y.backward(al.Variable(g)))
            if ok:
                ob.put("x.grad", None if x.grad is None else np.asarray(data_of(x.grad)))
    with ob.case(GRADCHECK):
        x = al.Variable(checked.copy(), requires_grad=True)
        observe_gradcheck(ob, al.Variable, lambda v: SumFunction.apply(v, 1, False), (x,))


def judge(ck: Checker, obs: Observations) -> None:
    found, checked = cases(obs.seed, obs.hidden)
    setup = obs.case(ck, SETUP)
    name = str(setup["class"])
    if setup["kept shape"]:
        _judge_kept_shape(ck, obs)
    for shape, axis, keepdims, x, g in found:
        title = _title(shape, axis, keepdims)
        with ck.case(title):
            seen = obs.case(ck, title)
            judge_attempt(ck, seen, "raised", name)
            expected_y = x.sum(axis=axis, keepdims=keepdims)
            ck.close(seen["output"], expected_y, what="forward result", hint=HINTS["sum.forward"])
            judge_shapes_call(ck, seen, "backward raised", f"{name}.backward", HINTS["sum.shape"])
            grad = seen["x.grad"]
            ck.check(grad is not None, "x.grad is None after backward.",
                     hint=HINTS["sum.grad-none"])
            mistakes = []
            if keepdims is False and axis is not None:
                try:
                    mistakes.append((np.broadcast_to(g, shape), HINTS["sum.not-put-back"]))
                except ValueError:
                    pass
            mistakes.append((np.ones(shape), HINTS["sum.ones"]))
            ck.close(grad, sum_grad(g, shape, axis, keepdims), what="gradient of x",
                     hint=HINTS["sum.shape"], mistakes=mistakes)
    with ck.case(GRADCHECK):
        judge_gradcheck(ck, obs.case(ck, GRADCHECK), [checked.shape], HINTS["sum.shape"])
    ck.done()


def _judge_kept_shape(ck: Checker, obs: Observations) -> None:
    with ck.case(KEPT):
        seen = obs.case(ck, KEPT)
        for j, (shape, axis, kind) in enumerate(KEPT_CASES):
            judge_attempt(ck, seen, f"raised {j}", "_kept_shape", HINTS[f"kept.{kind}"])
            got = seen[f"result {j}"]
            want = kept_shape_reference(shape, axis)
            ck.check(isinstance(got, tuple), f"_kept_shape{(shape, axis)} is not a tuple.",
                     expected=want, received=got, hint=HINTS["kept.tuple-type"])
            ck.check(got == want, f"_kept_shape{(shape, axis)} is wrong.", expected=want,
                     received=got, hint=HINTS[f"kept.{kind}"])
