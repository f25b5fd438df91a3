"""Check ``Pow``: x ** p for a number p; gradient g * p * x ** (p - 1), None for p."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import grad_of, judge_by_hand, observe_by_hand
from .messages import HINTS

ID = "ch05-pow-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no factor p", ("grad_output * ctx.p * x ** (ctx.p - 1)",
                            "grad_output * x ** (ctx.p - 1)"), None, "pow.factor"),
    Mistake("the exponent kept", ("x ** (ctx.p - 1), None", "x ** ctx.p, None"), None,
            "pow.exponent"),
    Mistake("no grad_output", ("grad_output * ctx.p * x ** (ctx.p - 1)",
                               "ctx.p * x ** (ctx.p - 1)"), None, "pow.chain"),
    Mistake("a gradient for p", ("x ** (ctx.p - 1), None", "x ** (ctx.p - 1), grad_output"),
            None, "pow.p-none"),
)


def cases(seed: int, hidden: bool) -> list[tuple[tuple[int, ...], float, np.ndarray, np.ndarray]]:
    """(shape, p, x, upstream gradient): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape, p in [((4,), 2), ((2, 3), 3), ((3,), 0.5)] + (
            [((2, 2), -1), ((3,), 1)] if hidden else []):
        x = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((shape, p, x, g))
    return found


def _title(shape: tuple[int, ...], p: float) -> str:
    return f"x of shape {shape} to the power {p}"


def observe(ob: Observer, Pow: Any, *, seed: int, hidden: bool) -> None:
    for shape, p, x, g in cases(seed, hidden):
        with ob.case(_title(shape, p)):
            observe_by_hand(ob, Pow, [x], g, extra=(p,))


def judge(ck: Checker, obs: Observations) -> None:
    for shape, p, x, g in cases(obs.seed, obs.hidden):
        title = _title(shape, p)
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [x], g)
            ck.close(out, x ** p, what="output", hint=HINTS["pow.forward"])
            grad_of(ck, grads, 0, "x", shape, g * p * x ** (p - 1), [
                (g * x ** (p - 1), HINTS["pow.factor"]),
                (g * p * x ** p, HINTS["pow.exponent"]),
                (p * x ** (p - 1), HINTS["pow.chain"])])
            ck.check(len(grads) == 1 or grads[1] is None, "backward returned a gradient for p.",
                     received=grads[1], hint=HINTS["pow.p-none"])
    ck.done()
