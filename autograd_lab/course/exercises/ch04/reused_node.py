"""Check ``reused_node_grads(x, y)`` for h = x*y; a = h + x; out = h*a: a dict with the
gradients of out with respect to "a", "h", "x" and "y"."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch04-reused-node"
PARTS: tuple[str, ...] = ()
KEYS = ("a", "h", "x", "y")

MISTAKES = (
    Mistake("h only through out = h * a", ("d_h = a + d_a * 1.0", "d_h = a"), None,
            "reused.h-direct-only"),
    Mistake("h only through a = h + x", ("d_h = a + d_a * 1.0", "d_h = d_a * 1.0"), None,
            "reused.h-through-a-only"),
    Mistake("x only through h", ("d_x = d_h * y + d_a * 1.0", "d_x = d_h * y"), None,
            "reused.x-through-h-only"),
    Mistake("a wrong key", ('"y": d_y', '"dy": d_y'), None, "reused.keys"),
    Mistake("a wrong gradient of a", ("d_a = h  ", "d_a = a  "), None, "reused.a"),
)


def cases(seed: int, hidden: bool) -> list[tuple[float, float]]:
    """The points (x, y): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    points: list[tuple[float, float]] = [(2.0, 3.0), (-1.0, 0.5), (0.5, -2.0)]
    if hidden:
        for _ in range(4):
            x, y = (round(float(v), 3) for v in rng.uniform(-3, 3, size=2))
            points.append((x, y))
    return points


def _title(x: float, y: float) -> str:
    return f"x = {x:g}, y = {y:g}"


def observe(ob: Observer, reused_node_grads: Callable[[float, float], dict], *, seed: int,
            hidden: bool) -> None:
    for x, y in cases(seed, hidden):
        with ob.case(_title(x, y)):
            got = reused_node_grads(x, y)
            ob.put("is a dict", isinstance(got, dict))
            if not isinstance(got, dict):
                ob.put("returned", got)
                continue
            ob.put("keys", sorted(str(k) for k in got))
            for key in KEYS:
                if key in got:
                    ob.put(f"value {key}", got[key])


def _expected(x: float, y: float) -> dict[str, float]:
    h = x * y
    a = h + x
    d_a = h
    d_h = a + h
    return {"a": d_a, "h": d_h, "x": d_h * y + d_a, "y": d_h * x}


def judge(ck: Checker, obs: Observations) -> None:
    for x, y in cases(obs.seed, obs.hidden):
        title = _title(x, y)
        with ck.case(title):
            seen = obs.case(ck, title, what="your reused_node_grads")
            ck.check(seen["is a dict"] is True, "reused_node_grads did not return a dict.",
                     expected='a dict with keys "a", "h", "x", "y"', received=seen.get("returned"),
                     hint=HINTS["reused.dict"])
            want = _expected(x, y)
            for key in want:
                ck.check(key in seen["keys"], f"the dict has no key {key!r}.",
                         expected=sorted(want), received=seen["keys"], hint=HINTS["reused.keys"])
            h, a = x * y, x * y + x
            ck.close(seen["value a"], want["a"], what='gradient "a"', hint=HINTS["reused.a"])
            ck.close(seen["value h"], want["h"], what='gradient "h"', hint=HINTS["reused.h"],
                     mistakes=[(a, HINTS["reused.h-direct-only"]),
                               (h, HINTS["reused.h-through-a-only"])])
            ck.close(seen["value x"], want["x"], what='gradient "x"', hint=HINTS["reused.x"],
                     mistakes=[(want["h"] * y, HINTS["reused.x-through-h-only"]),
                               (a * y + h, HINTS["reused.x-partial-h"])])
            ck.close(seen["value y"], want["y"], what='gradient "y"', hint=HINTS["reused.y"],
                     mistakes=[(a * x, HINTS["reused.y-partial-h"])])
    ck.done()
