"""Check ``affine_relu_forward(x, a, b, out)``: writes max(a * x + b, 0) into the 1-d float64
array ``out``, leaves ``x`` unchanged and returns ``out``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import (filled, judge_kernel, judge_structure, observe_kernel, quiet_call, shown,
                      unwritten_hint)
from .messages import HINTS

ID = "ch07-affine-relu-forward"
PARTS: tuple[str, ...] = ()
NAME = "affine_relu_forward"

MISTAKES = (
    Mistake("no relu", ("out[i] = v if v > 0.0 else 0.0", "out[i] = v"), None, "fwd.no-relu"),
    Mistake("whole arrays inside @njit", (
        "for i in range(x.size):\n        v = a * x[i] + b\n        out[i] = v if v > 0.0 else 0.0",
        "out[:] = np.maximum(a * x + b, 0.0)"), None, "kernel.scalars"),
    Mistake("returns nothing", ("return out", "return None"), None, "kernel.return-out"),
)


def forward_cases(rng: np.random.Generator, hidden: bool) -> list[tuple[str, np.ndarray,
                                                                        float, float]]:
    """(name, x, a, b) of the forward cases (the backward check uses them too)."""
    cases = [
        ("7 elements, a=1.5, b=-0.25", np.round(rng.normal(size=7), 3), 1.5, -0.25),
        ("one element", np.array([0.75]), -2.0, 1.0),
        ("an empty array", np.zeros(0), 1.0, 1.0),
        ("a negative a flips which elements pass", np.round(rng.normal(size=9), 3), -3.0, 0.5),
        ("a * x + b exactly 0 gives 0", np.array([0.5, 0.25, 1.0, -1.0]), 2.0, -1.0),
        ("1000 elements", rng.normal(size=1000), 0.8, 0.1),
    ]
    if hidden:
        cases += [("a = 0: every output is relu(b)", rng.normal(size=5), 0.0, 0.3),
                  ("a = 0 and b < 0: all zeros", rng.normal(size=5), 0.0, -0.3),
                  ("513 elements, random a and b", 10 * rng.normal(size=513),
                   float(np.round(rng.normal(), 3)), float(np.round(rng.normal(), 3)))]
    return [(name, np.ascontiguousarray(x, dtype=np.float64), float(a), float(b))
            for name, x, a, b in cases]


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, float, float]]:
    return forward_cases(np.random.default_rng(seed), hidden)


def observe(ob: Observer, affine_relu_forward: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    observe_kernel(ob, affine_relu_forward, NAME)
    for name, x, a, b in cases(seed, hidden):
        with ob.case(name):
            out = filled(x.shape)
            result = quiet_call(affine_relu_forward, x, a, b, out)
            ob.put("x after the call", x)
            ob.put("out", out)
            ob.put("returned out", result is out)
            ob.put("result", result)


def judge(ck: Checker, obs: Observations) -> None:
    kernel = judge_kernel(ck, obs, NAME)
    for name, x, a, b in cases(obs.seed, obs.hidden):
        with ck.case(name):
            seen = obs.case(ck, name, what=f"your {NAME}", hint=HINTS["kernel.numba"])
            expected = np.maximum(a * x + b, 0.0)
            ck.check(np.array_equal(seen["x after the call"], x),
                     "your kernel changed its input x.", hint=HINTS["fwd.x-changed"])
            out = seen["out"]
            ck.close(out, expected, atol=1e-12, rtol=1e-9, what="content of out",
                     hint=unwritten_hint(out, expected) or HINTS["fwd.formula"],
                     mistakes=[(a * x + b, HINTS["fwd.no-relu"]),
                               (a * np.maximum(x, 0) + b, HINTS["fwd.relu-on-x"]),
                               (np.maximum(a * x, 0) + b, HINTS["fwd.b-after"])])
            ck.check(seen["returned out"] is True, "your kernel did not return out.",
                     expected="the array out itself", received=shown(seen["result"]),
                     hint=HINTS["kernel.return-out"])
    judge_structure(ck, kernel.get("source"), NAME, {"x": 1, "out": 1})
    ck.done()
