"""Check ``hessian(f, x)``: the (n, n) Hessian of the scalar function ``f`` at the 1-D numpy
array ``x``, built column by column from Hessian-vector products (while it runs, the name
``hvp`` of its module is the course's exact one: ch11-hvp is judged on its own)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS
from .problems import Problem, exp_minus_linear, lse_quartic, random_quadratic, rosenbrock, \
    tanh_net
from ._shared import course_names, expect_result, result_array

ID = "ch11-hessian"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("only the diagonal", ("return np.stack(columns, axis=1)",
                                  "return np.diag(np.diag(np.stack(columns, axis=1)))"), None,
            "hessian.diagonal"),
    Mistake("a vector of ones", ("hvp(f, x, np.eye(n)[i])", "hvp(f, x, np.ones(n))"), None,
            "hessian.recipe"),
)

NAMES = ("hvp",)


def cases(seed: int, hidden: bool) -> list[tuple[str, Problem, np.ndarray]]:
    """(title, function, x): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    problems: list[tuple[str, Problem, int]] = [
        ("a random quadratic in 3 dimensions", random_quadratic(rng, 3), 3),
        ("log-sum-exp plus a quartic in 4 dimensions", lse_quartic(), 4),
        ("the Rosenbrock function", rosenbrock(), 2),
        ("a function of a single variable", exp_minus_linear(), 1)]
    if hidden:
        problems += [("a random quadratic in 7 dimensions", random_quadratic(rng, 7), 7),
                     ("a sum of tanh units in 5 dimensions",
                      tanh_net(np.round(rng.normal(size=(4, 5)), 3),
                               np.round(rng.normal(size=4), 3)), 5)]
    return [(name, fn, np.round(rng.normal(size=n), 3)) for name, fn, n in problems]


def observe(ob: Observer, hessian: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    with course_names(hessian, NAMES):
        for name, fn, x in cases(seed, hidden):
            with ob.case(name):
                ob.put("result", result_array(hessian(fn, x)))


def judge(ck: Checker, obs: Observations) -> None:
    hint = HINTS["hessian.recipe"]
    for name, fn, x in cases(obs.seed, obs.hidden):
        n = x.size
        with ck.case(name):
            H, g = fn.hessian(x), fn.gradient(x)
            got = expect_result(ck, obs.case(ck, name, what="your hessian", hint=hint)["result"],
                                "Hessian", (n, n))
            mistakes = [(np.outer(g, g), HINTS["hessian.outer"])]
            if n > 1:
                mistakes += [(np.diag(np.diag(H)), HINTS["hessian.diagonal"]),
                             (np.tile(g, (n, 1)), HINTS["hessian.rows"])]
            ck.close(got, H, atol=1e-7, rtol=1e-6, what="Hessian", hint=hint, mistakes=mistakes)
            ck.close(np.asarray(got) - np.asarray(got).T, np.zeros((n, n)), atol=1e-7,
                     what="asymmetry H − Hᵀ", hint=HINTS["hessian.symmetric"])
    ck.done()
