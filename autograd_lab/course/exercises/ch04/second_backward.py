"""Check ``predict_x_grad(x0, calls)``: x.grad after ``calls`` backward calls (with
retain_graph=True) of out = 3 * (x * x) + x, starting from no gradient."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch04-second-backward"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("one call's gradient", ("return calls * (6 * x0 + 1)", "return 6 * x0 + 1"), None,
            "second.one-call"),
    Mistake("the + x term forgotten", ("return calls * (6 * x0 + 1)", "return calls * 6 * x0"),
            None, "second.no-plus-x"),
    Mistake("calls times out", ("return calls * (6 * x0 + 1)",
                                "return calls * (3 * x0 * x0 + x0)"), None, "second.out"),
    Mistake("doubling per call", ("return calls * (6 * x0 + 1)",
                                  "return (6 * x0 + 1) * 2 ** (calls - 1)"), None,
            "second.doubles"),
)


def cases(seed: int, hidden: bool) -> list[tuple[float, int]]:
    """(x0, calls): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found: list[tuple[float, int]] = [(2.0, 1), (2.0, 2), (-0.5, 3)]
    if hidden:
        for _ in range(4):
            x0 = round(float(rng.uniform(-3, 3)), 2)
            found.append((x0, int(rng.integers(1, 6))))
    return found


def _title(x0: float, calls: int) -> str:
    return f"x0 = {x0:g}, {calls} call{'s' if calls > 1 else ''}"


def observe(ob: Observer, predict_x_grad: Callable[[float, int], float], *, seed: int,
            hidden: bool) -> None:
    for x0, calls in cases(seed, hidden):
        with ob.case(_title(x0, calls)):
            ob.put("result", predict_x_grad(x0, calls))


def judge(ck: Checker, obs: Observations) -> None:
    for x0, calls in cases(obs.seed, obs.hidden):
        title = _title(x0, calls)
        with ck.case(title):
            got = obs.case(ck, title, what="your predict_x_grad")["result"]
            once = 6 * x0 + 1
            ck.close(got, calls * once, what="predicted x.grad", hint=HINTS["second.grad"],
                     mistakes=[(once, HINTS["second.one-call"]),
                               (calls * 6 * x0, HINTS["second.no-plus-x"]),
                               (calls * (3 * x0 * x0 + x0), HINTS["second.out"]),
                               (once * 2 ** (calls - 1), HINTS["second.doubles"])])
    ck.done()
