"""Check ``double(x) -> 2 * x``: the ungraded demonstration of how checks report."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch00-demo-double"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("adds 2", ("2 * x", "x + 2"), None, "double.added"),
    Mistake("squares", ("2 * x", "x * x"), None, "double.multiply"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray]]:
    """(name, x) of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    return [(f"a {shape} array", np.round(rng.normal(size=shape), 2)) for shape in [(3,), (2, 2)]]


def observe(ob: Observer, double: Callable[[np.ndarray], np.ndarray], *, seed: int,
            hidden: bool) -> None:
    for name, x in cases(seed, hidden):
        with ob.case(name):
            ob.put("result", double(x))


def judge(ck: Checker, obs: Observations) -> None:
    for name, x in cases(obs.seed, obs.hidden):
        with ck.case(name):
            got = obs.case(ck, name, what="your double")["result"]
            ck.close(got, 2 * x, what="result", hint=HINTS["double.multiply"],
                     mistakes=[(x + 2, HINTS["double.added"])])
    ck.done()
