"""Check the helpers: ``as_variable`` wraps what is not a Variable; ``BroadcastTo`` repeats
x to a shape (a new array) and its backward sums back (SumTo); ``SumTo`` sums g down to a
shape and its backward repeats back (BroadcastTo); ``sum_to`` applies SumTo where the
shapes differ. forward and backward are called by hand with the course's apply."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, format_value
from .._exercise import Mistake
from .._functions import course_apply, course_ops, data, sum_to as sum_to_array
from .._observe import Case, Observations, Observer
from ._shared import FAILED, by_hand, call, judge_by_hand, judge_setup, ok, setup
from .messages import HINTS

ID = "ch03-sum-to"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("BroadcastTo's backward passes the gradient through",
            ("        return SumTo.apply(grad_output, ctx.x_shape), None",
             "        return grad_output, None"), None, "sumto.broadcast-backward"),
    Mistake("numpy's read-only view", ("np.broadcast_to(x.data, shape).copy()",
                                       "np.broadcast_to(x.data, shape)"), None, "sumto.read-only"),
    Mistake("x itself where the shapes agree", ("np.broadcast_to(x.data, shape).copy()",
                                                "(x.data if x.shape == tuple(shape) else "
                                                "np.broadcast_to(x.data, shape).copy())"), None,
            "sumto.shares"),
    Mistake("SumTo's backward passes the gradient through",
            ("        return BroadcastTo.apply(grad_output, ctx.g_shape), None",
             "        return grad_output, None"), None, "sumto.sum-backward"),
    Mistake("as_variable wraps a Variable again",
            ("    return x if isinstance(x, Variable) else Variable(x)",
             "    return Variable(x)"), None, "sumto.as-variable-same"),
    Mistake("sum_to never sums", ("    return grad if grad.shape == tuple(shape) else "
                                  "SumTo.apply(grad, tuple(shape))", "    return grad"), None,
            "sumto.sum-to"),
)

C_WRAP = "as_variable: a Variable as it is, a number or an array wrapped"
C_SUM_TO = "sum_to(grad, shape): the grad itself when the shapes agree, else summed"
_WRAPPED = (2.5, np.array([3.0, 4.0]))


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[tuple[int, ...], tuple[int, ...]]] = [((3,), (2, 3)), ((2, 1), (2, 4)),
                                                             ((), (3, 2))]
    if hidden:
        shapes += [((1, 3), (4, 2, 3)), ((4,), (4,))]
    found: list[tuple[str, str, np.ndarray, np.ndarray, tuple[int, ...]]] = []
    for small, big in shapes:
        x, g = np.round(rng.normal(size=small), 3), np.round(rng.normal(size=big), 3)
        found.append((f"BroadcastTo {small} -> {big}, and its backward", "BroadcastTo", x, g, big))
        gdata, up = np.round(rng.normal(size=big), 3), np.round(rng.normal(size=small), 3)
        found.append((f"SumTo {big} -> {small}, and its backward", "SumTo", gdata, up, small))
    return {"by hand": found, "sum_to": np.round(rng.normal(size=(2, 3)), 3)}


def observe(ob: Observer, as_variable: Callable[[Any], Any], SumTo: type[Any],
            BroadcastTo: type[Any], sum_to: Callable[[Any, tuple], Any], *, seed: int,
            hidden: bool) -> None:
    ns = setup(ob, SumTo, "forward", ("Variable",), ((SumTo, "SumTo"),
                                                    (BroadcastTo, "BroadcastTo")))
    if ns is None:
        return
    Variable = ns["Variable"]
    inputs = cases(seed, hidden)
    with ob.case(C_WRAP):
        v = Variable(np.array([1.0, 2.0]))
        got = call(ob, "wrap", as_variable, v)
        if got is not FAILED:
            ob.put("same", got is v)
            for i, value in enumerate(_WRAPPED):
                got = call(ob, f"wrap {i}", as_variable, value)
                if got is FAILED:
                    break
                ob.put(f"type {i}", type(got).__name__)
                ob.put(f"is a Variable {i}", isinstance(got, Variable))
                ob.put(f"data {i}", data(got))
    for title, name, x, g, shape in inputs["by hand"]:
        with ob.case(title):
            by_hand(ob, BroadcastTo if name == "BroadcastTo" else SumTo, ns, x, g,
                    extra=(shape,))
    with ob.case(C_SUM_TO):
        g = Variable(inputs["sum_to"].copy())
        with course_ops(ns), course_apply(SumTo, ns):
            same = call(ob, "same", sum_to, g, (2, 3))
            summed = FAILED if same is FAILED else call(ob, "summed", sum_to, g, (3,))
        if summed is not FAILED:
            ob.put("same", data(same))
            ob.put("summed", data(summed))


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("SumTo", "BroadcastTo"))
    inputs = cases(obs.seed, obs.hidden)
    with ck.case(C_WRAP):
        seen = obs.case(ck, C_WRAP, what="your as_variable")
        ok(ck, seen, "wrap", "your as_variable")
        ck.check(seen["same"], "as_variable(v) of a Variable is not v itself.",
                 hint=HINTS["sumto.as-variable-same"])
        for i, value in enumerate(_WRAPPED):
            ok(ck, seen, f"wrap {i}", "your as_variable")
            ck.check(seen[f"is a Variable {i}"], "as_variable did not give a Variable.",
                     received=seen[f"type {i}"], hint=HINTS["sumto.as-variable-wrap"])
            ck.close(seen[f"data {i}"], value, what=f"as_variable({format_value(value)})")
    for title, name, x, g, shape in inputs["by hand"]:
        with ck.case(title):
            seen = obs.case(ck, title, what=f"your {name}")
            out, grad = judge_by_hand(ck, seen, name, x, g, HINTS)
            if name == "BroadcastTo":
                _judge_broadcast(ck, seen, x, g, shape, out, grad)
            else:
                _judge_sum(ck, x, g, shape, out, grad)
    with ck.case(C_SUM_TO):
        seen = obs.case(ck, C_SUM_TO, what="your sum_to")
        ok(ck, seen, "same", "your sum_to")
        ok(ck, seen, "summed", "your sum_to")
        g = inputs["sum_to"]
        ck.close(seen["same"], g, what="sum_to(g, g.shape)")
        summed = seen["summed"]
        ck.check(np.shape(summed) == (3,), f"sum_to(g, (3,)) has shape {np.shape(summed)}, "
                 "expected (3,).", hint=HINTS["sumto.sum-to"])
        ck.close(summed, g.sum(axis=0), what="sum_to(g, (3,))",
                 hint=HINTS["sumto.sum-to"])
    ck.done()


def _judge_broadcast(ck: Checker, seen: Case, x: np.ndarray, g: np.ndarray,
                     big: tuple[int, ...], out: Any, grad: np.ndarray) -> None:
    ck.close(out, np.broadcast_to(x, big), what="forward result",
             hint=HINTS["sumto.broadcast-forward"])
    ck.check(seen["output writeable"], "forward's result is a read-only view of x.",
             hint=HINTS["sumto.read-only"])
    ck.check(not seen["output shares input"], "forward's result shares its memory with x.",
             hint=HINTS["sumto.shares"])
    if grad.shape != x.shape:
        ck.fail(f"BroadcastTo.backward's gradient has shape {grad.shape}, but x has "
                f"shape {x.shape}.", hint=HINTS["sumto.broadcast-backward"])
    ck.close(grad, sum_to_array(g, x.shape), what="gradient of x",
             hint=HINTS["sumto.broadcast-gradient"])


def _judge_sum(ck: Checker, gdata: np.ndarray, up: np.ndarray, small: tuple[int, ...],
               out: Any, grad: np.ndarray) -> None:
    if np.shape(out) != small:
        ck.fail(f"SumTo's forward gave shape {np.shape(out)}, expected {small}.",
                hint=HINTS["sumto.sum-forward"])
    ck.close(out, sum_to_array(gdata, small), what="forward result")
    if grad.shape != gdata.shape:
        ck.fail(f"SumTo.backward's gradient has shape {grad.shape}, but its input has "
                f"shape {gdata.shape}.", hint=HINTS["sumto.sum-backward"])
    ck.close(grad, np.broadcast_to(up, gdata.shape), what="gradient of g")
