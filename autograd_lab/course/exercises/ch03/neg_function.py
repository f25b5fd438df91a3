"""Check the learner's ``Neg``: forward gives -x; backward gives -grad_output."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import by_hand, judge_by_hand, judge_setup, setup
from .messages import HINTS

ID = "ch03-neg-function"
PARTS: tuple[str, ...] = ()

_FORWARD_TO_BACKWARD = (
    "        return Variable(-x.data)\n        ### END SOLUTION\n\n    @staticmethod\n"
    "    def backward(ctx, grad_output):\n        ### BEGIN SOLUTION\n        return -grad_output")

MISTAKES = (
    Mistake("grad_output passed through", ("        return -grad_output",
                                           "        return grad_output"), None, "neg.through"),
    Mistake("the local derivative alone", (_FORWARD_TO_BACKWARD, _FORWARD_TO_BACKWARD.replace(
        "        return Variable(-x.data)",
        "        ctx.shape = x.shape\n        return Variable(-x.data)").replace(
        "return -grad_output", "return Variable(-np.ones(ctx.shape))")), None, "neg.local"),
    Mistake("x negated in place", ("        return Variable(-x.data)",
                                   "        x.data *= -1\n        return Variable(x.data.copy())"),
            None, "by-hand.input-changed"),
    Mistake("a numpy gradient", ("        return -grad_output", "        return -grad_output.data"),
            None, "by-hand.not-variable"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(title, x, grad_output) of each case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(3,), (2, 2)] + ([(2, 1, 3)] if hidden else []):
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((f"a {shape} input", x, g))
    return found


def observe(ob: Observer, Neg: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, Neg, "forward", ("Variable",), ((Neg, "Neg"),))
    if ns is None:
        return
    for title, x, g in cases(seed, hidden):
        with ob.case(title):
            by_hand(ob, Neg, ns, x, g)


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("Neg",))
    for title, x, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            out, grad = judge_by_hand(ck, obs.case(ck, title, what="your Neg"), "Neg", x, g,
                                      HINTS)
            ck.close(out, -x, what="output", hint=HINTS["neg.output"])
            ck.close(grad, -g, what="gradient of x", hint=HINTS["neg.gradient"],
                     mistakes=[(g, HINTS["neg.through"]), (-np.ones(x.shape), HINTS["neg.local"]),
                               (-x, HINTS["neg.returned-output"])])
    ck.done()
