"""Check ``central_difference(f, x, h=1e-5)`` = (f(x + h) - f(x - h)) / (2h)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._parts import Parts
from .messages import HINTS

ID = "ch01-central-difference"
PARTS = ("the formula with a given h", "the default h")

SCALAR_FUNCTIONS: list[tuple[str, Callable[[float], float], Callable[[float], float]]] = [
    ("sin", np.sin, np.cos),
    ("exp", np.exp, np.exp),
    ("x**3 - 2*x", lambda x: x**3 - 2 * x, lambda x: 3 * x**2 - 2),
    ("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2),
]
"""(name, f, f') of the scalar functions the cases use; plain numpy, float64."""

DEFAULT_CASE = "the default h gives an accurate derivative of sin at 0.7"

MISTAKES = (
    Mistake("forward difference", ("(f(x + h) - f(x - h)) / (2 * h)", "(f(x + h) - f(x)) / h"),
            PARTS, "central.forward"),
    Mistake("divides by h", ("(f(x + h) - f(x - h)) / (2 * h)", "(f(x + h) - f(x - h)) / h"),
            PARTS, "central.twice"),
    Mistake("a fixed step", ("(f(x + h) - f(x - h)) / (2 * h)",
                             "(f(x + 1e-6) - f(x - 1e-6)) / 2e-6"), PARTS[0], "central.ignores-h"),
    Mistake("no default h", ("h: float = 1e-5", "h: float"), PARTS[1], "central.default-missing"),
    Mistake("a default h far too small", ("h: float = 1e-5", "h: float = 1e-15"), PARTS[1],
            "central.default-h"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, Callable, Callable, float, float]]:
    """(name, f, f', x, h) of the formula's cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found: list[tuple[str, Callable, Callable, float, float]] = [
        ("x**3", lambda x: x**3, lambda x: 3 * x**2, 1.0, 0.1)]
    for name, f, df in SCALAR_FUNCTIONS if hidden else SCALAR_FUNCTIONS[:2]:
        for h in (1e-2, 1e-3):
            found.append((name, f, df, round(float(rng.uniform(-2, 2)), 3), h))
    return found


def _title(name: str, x: float, h: float) -> str:
    return f"h={h:g} on {name} at {x:g}"


def observe(ob: Observer, central_difference: Callable[..., float], *, seed: int,
            hidden: bool) -> None:
    for name, f, _, x, h in cases(seed, hidden):
        with ob.case(_title(name, x, h)):
            ob.put("result", central_difference(f, x, h))
    with ob.case(DEFAULT_CASE):
        ob.put("result", central_difference(np.sin, 0.7))


def judge(ck: Checker, obs: Observations) -> None:
    parts = Parts(ck, PARTS)
    with parts.part(PARTS[0]):
        for name, f, df, x, h in cases(obs.seed, obs.hidden):
            title = _title(name, x, h)
            with ck.case(title):
                got = obs.case(ck, title, what="your central_difference")["result"]
                expected = (f(x + h) - f(x - h)) / (2 * h)
                ck.close(got, expected, atol=1e-10, rtol=1e-7, hint=HINTS["central.formula"],
                         mistakes=[((f(x + h) - f(x)) / h, HINTS["central.forward"]),
                                   ((f(x) - f(x - h)) / h, HINTS["central.backward"]),
                                   (2 * expected, HINTS["central.twice"]),
                                   (expected * 2 * h * h, HINTS["central.times-h"]),
                                   (df(x), HINTS["central.ignores-h"])])
                ck.check(np.ndim(got) == 0, "the result is not a single number.",
                         received=got, hint=HINTS["central.scalar"])
    with parts.part(PARTS[1]):
        with ck.case(DEFAULT_CASE):
            got = obs.case(ck, DEFAULT_CASE, what="your central_difference",
                           hint=HINTS["central.default-missing"])["result"]
            ck.close(got, np.cos(0.7), atol=1e-8, rtol=0, hint=HINTS["central.default-h"])
    parts.done()
