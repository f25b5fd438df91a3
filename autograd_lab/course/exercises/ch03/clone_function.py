"""Check the learner's ``Clone``: forward gives a new Variable with a copy of x's data (a
write into the clone leaves x alone); backward passes grad_output through (the derivative
of a copy is 1)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._functions import StandInCtx, course_apply, course_ops
from .._observe import Observations, Observer
from ._shared import FAILED, by_hand, call, judge_by_hand, judge_setup, ok, setup
from .messages import HINTS

ID = "ch03-clone-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("x itself", ("        return Variable(x.data.copy())", "        return x"), None,
            "clone.same"),
    Mistake("the same array", ("        return Variable(x.data.copy())",
                               "        return Variable(x.data)"), None, "clone.shares"),
    Mistake("the local derivative alone", ("        return grad_output\n",
                                           "        return Variable(np.ones_like("
                                           "grad_output.data))\n"), None, "clone.local"),
    Mistake("a zero gradient", ("        return grad_output\n",
                                "        return Variable(np.zeros_like(grad_output.data))\n"),
            None, "clone.zeros"),
)

C_COPY = "the clone is a new Variable with its own copy of the data"


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(title, x, grad_output) of each case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(3,), (2, 2)] + ([(2, 1, 3), ()] if hidden else []):
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((f"a {shape} input", x, g))
    return found


def observe(ob: Observer, Clone: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, Clone, "forward", ("Variable",), ((Clone, "Clone"),))
    if ns is None:
        return
    Variable = ns["Variable"]
    with ob.case(C_COPY):
        x = Variable(np.array([1.0, -2.0, 3.0]), requires_grad=True)
        with course_ops(ns), course_apply(Clone, ns):
            out = call(ob, "forward", Clone.forward, StandInCtx((True,)), x)
        if out is not FAILED:
            ob.put("type", type(out).__name__)
            ob.put("is a Variable", isinstance(out, Variable))
            ob.put("is x", out is x)
            ob.put("shares memory", bool(np.shares_memory(out.data, x.data)))
    for title, x, g in cases(seed, hidden):
        with ob.case(title):
            by_hand(ob, Clone, ns, x, g)


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("Clone",))
    with ck.case(C_COPY):
        seen = obs.case(ck, C_COPY, what="your Clone")
        ok(ck, seen, "forward", "your Clone.forward")
        ck.check(seen["is a Variable"], "forward did not return a Variable.",
                 received=seen["type"], hint=HINTS["clone.variable"])
        ck.check(not seen["is x"], "forward returned x itself.", hint=HINTS["clone.same"])
        ck.check(not seen["shares memory"], "the clone shares its array with x, so a write "
                 "into the clone changes x too.", hint=HINTS["clone.shares"])
    for title, x, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            out, grad = judge_by_hand(ck, obs.case(ck, title, what="your Clone"), "Clone", x,
                                      g, HINTS)
            ck.close(out, x, what="output", hint=HINTS["clone.output"])
            ck.close(grad, g, what="gradient of x", hint=HINTS["clone.gradient"],
                     mistakes=[(np.ones(x.shape), HINTS["clone.local"]),
                               (np.zeros(x.shape), HINTS["clone.zeros"]),
                               (x, HINTS["clone.returned-data"])])
    ck.done()
