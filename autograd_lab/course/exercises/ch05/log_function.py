"""Check ``Log``: the natural logarithm; gradient g / x."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import grad_of, judge_by_hand, observe_by_hand
from .messages import HINTS

ID = "ch05-log-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("multiplies by x", ("return grad_output / x", "return grad_output * x"), None,
            "log.multiplied"),
    Mistake("no grad_output", ("return grad_output / x", "return 1 / x"), None, "log.chain"),
    Mistake("exp instead of log", ("Variable(np.log(x.data))", "Variable(np.exp(x.data))"), None,
            "log.forward"),
)


def cases(seed: int, hidden: bool) -> list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]:
    """(shape, x, upstream gradient): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(4,), (2, 3)] + ([(3, 1, 2), ()] if hidden else []):
        x = np.round(rng.uniform(0.5, 3.0, size=shape), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((shape, x, g))
    return found


def _title(shape: tuple[int, ...]) -> str:
    return f"x of shape {shape}"


def observe(ob: Observer, Log: Any, *, seed: int, hidden: bool) -> None:
    for shape, x, g in cases(seed, hidden):
        with ob.case(_title(shape)):
            observe_by_hand(ob, Log, [x], g)


def judge(ck: Checker, obs: Observations) -> None:
    for shape, x, g in cases(obs.seed, obs.hidden):
        title = _title(shape)
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [x], g)
            ck.close(out, np.log(x), what="output", hint=HINTS["log.forward"])
            grad_of(ck, grads, 0, "x", shape, g / x, [
                (g * x, HINTS["log.multiplied"]),
                (1 / x, HINTS["log.chain"]),
                (g * np.log(x), HINTS["log.times-log"])])
    ck.done()
