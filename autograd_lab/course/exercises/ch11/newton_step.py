"""Check ``newton_step(f, x)``: x − H(x)⁻¹ ∇f(x) as a numpy array, for the scalar function
``f`` at the 1-D numpy array ``x`` (the caller's ``x`` is left unchanged). While it runs, the
name ``hessian`` of its module is the course's exact one (ch11-hessian is judged on its own)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS
from .problems import Problem, exp_minus_linear, lse_quartic, random_quadratic, rosenbrock
from ._shared import course_names, expect_result, result_array

ID = "ch11-newton-step"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("a gradient step", ("return x - np.linalg.solve(hessian(f, x), g.numpy())",
                                "return x - g.numpy()"), None, "newton.gd"),
    Mistake("uphill", ("return x - np.linalg.solve(", "return x + np.linalg.solve("), None,
            "newton.uphill"),
    Mistake("times H", ("return x - np.linalg.solve(hessian(f, x), g.numpy())",
                        "return x - hessian(f, x) @ g.numpy()"), None, "newton.times-h"),
    Mistake("in place", ("return x - np.linalg.solve(hessian(f, x), g.numpy())",
                         "x -= np.linalg.solve(hessian(f, x), g.numpy())\n    return x"), None,
            "newton.in-place"),
)

NAMES = ("hessian",)
C_EXP = "a sum of exp(x) - 2x: each coordinate steps to x - 1 + 2 exp(-x)"
C_ROSEN = "the Rosenbrock function from (-1.2, 1)"
C_REPEAT = "repeated steps converge to the minimum of log-sum-exp plus a quartic"
C_RANDOM = "the Rosenbrock function from a random start"
STEPS = 25


def _quadratic_title(n: int) -> str:
    return f"a convex quadratic in {n} dimensions: one step lands on the minimum"


def cases(seed: int, hidden: bool) -> list[tuple[str, Problem, np.ndarray]]:
    """(title, function, start): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for n in [3] + ([6] if hidden else []):
        fn = random_quadratic(rng, n, definite=True)
        found.append((_quadratic_title(n), fn, np.round(rng.normal(size=n), 3)))
    found.append((C_EXP, exp_minus_linear(), np.round(rng.uniform(-1, 2, size=4), 3)))
    found.append((C_ROSEN, rosenbrock(), np.array([-1.2, 1.0])))
    found.append((C_REPEAT, lse_quartic(), np.round(rng.normal(size=3), 3)))
    if hidden:
        found.append((C_RANDOM, rosenbrock(), np.round(rng.uniform(-1.5, 1.5, size=2), 3)))
    return found


def observe(ob: Observer, newton_step: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    with course_names(newton_step, NAMES), np.errstate(all="ignore"):  # a wrong step diverges
        for title, fn, x in cases(seed, hidden):
            with ob.case(title):
                for k in range(STEPS if title == C_REPEAT else 1):
                    before = x.copy()
                    got = result_array(newton_step(fn, x))
                    ob.put(f"step {k}", got)
                    ob.put(f"x after step {k}", [before, x])
                    if got is None:
                        break
                    x = np.array(got, dtype=float)


def _wrong(fn: Problem, x: np.ndarray) -> list:
    g, H = fn.gradient(x), fn.hessian(x)
    d = np.linalg.solve(H, g)
    return [(x - g, HINTS["newton.gd"]), (x + d, HINTS["newton.uphill"]),
            (x - H @ g, HINTS["newton.times-h"]), (x - g / np.diag(H), HINTS["newton.diagonal"])]


def _step(ck: Checker, seen: Any, k: int) -> Any:
    got = expect_result(ck, seen[f"step {k}"], "new point", ())
    before, after = seen[f"x after step {k}"]
    ck.check(np.array_equal(before, after), "newton_step changed x in place.",
             hint=HINTS["newton.in-place"])
    return got


def judge(ck: Checker, obs: Observations) -> None:
    hint = HINTS["newton.recipe"]
    what = "point after one Newton step"
    for title, fn, x in cases(obs.seed, obs.hidden):
        with ck.case(title):
            seen = obs.case(ck, title, what="your newton_step", hint=hint)
            if title == C_REPEAT:
                for k in range(STEPS):
                    x = np.asarray(_step(ck, seen, k), dtype=float)
                ck.close(fn.gradient(x), np.zeros(3), atol=1e-8,
                         what=f"gradient after {STEPS} Newton steps", hint=hint)
                continue
            got = _step(ck, seen, 0)
            if title == C_EXP:
                want = x - 1 + 2 * np.exp(-x)
                ck.close(got, want, atol=1e-8, rtol=1e-7, what=what, hint=hint,
                         mistakes=_wrong(fn, x))
                continue
            if title.startswith("a convex quadratic"):
                want = np.linalg.solve(fn.hessian(x), -fn.gradient(np.zeros(x.size)))
            else:
                want = x - np.linalg.solve(fn.hessian(x), fn.gradient(x))
            ck.close(got, want, atol=1e-7, rtol=1e-6, what=what, hint=hint,
                     mistakes=_wrong(fn, x))
    ck.done()
