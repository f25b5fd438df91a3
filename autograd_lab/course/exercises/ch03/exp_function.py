"""Check the learner's ``Exp``: forward gives e**x as a new Variable; backward gives
grad_output * e**x (the derivative of e**x is e**x itself)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import by_hand, judge_by_hand, judge_setup, setup
from .messages import HINTS

ID = "ch03-exp-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("the input saved", ("        ctx.save_for_backward(y)",
                                "        ctx.save_for_backward(x)"), None, "exp.input"),
    Mistake("grad_output forgotten", ("        return grad_output * y", "        return y"),
            None, "exp.chain"),
    Mistake("grad_output passed through", ("        return grad_output * y",
                                           "        return grad_output"), None, "exp.through"),
    Mistake("a numpy gradient", ("        return grad_output * y",
                                 "        return (grad_output * y).data"), None,
            "by-hand.not-variable"),
    Mistake("x changed in place", ("        y = Variable(np.exp(x.data))",
                                   "        y = Variable(np.exp(x.data, out=x.data))"), None,
            "by-hand.input-changed"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(title, x, grad_output) of each case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(4,), (2, 3)] + ([(3, 1, 2), ()] if hidden else []):
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((f"a {shape} input", x, g))
    return found


def observe(ob: Observer, Exp: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, Exp, "forward", ("Variable",), ((Exp, "Exp"),))
    if ns is None:
        return
    for title, x, g in cases(seed, hidden):
        with ob.case(title):
            by_hand(ob, Exp, ns, x, g)


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("Exp",))
    for title, x, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            out, grad = judge_by_hand(ck, obs.case(ck, title, what="your Exp"), "Exp", x, g,
                                      HINTS)
            ck.close(out, np.exp(x), what="output", hint=HINTS["exp.output"])
            ck.close(grad, g * np.exp(x), what="gradient of x", hint=HINTS["exp.gradient"],
                     mistakes=[(g * x, HINTS["exp.input"]),
                               (np.broadcast_to(np.exp(x), np.shape(g)), HINTS["exp.chain"]),
                               (g, HINTS["exp.through"])])
    ck.done()
