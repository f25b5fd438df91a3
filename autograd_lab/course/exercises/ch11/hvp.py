"""Check ``hvp(f, x, v)``: the Hessian of the scalar function ``f`` at the numpy array ``x``,
times the numpy array ``v``, computed by differentiating twice; returns an array like ``x``.

Exact to rounding: an approximation by finite differences of the gradient fails, with a
hint that says so. ``f`` uses only operations ``mygrad`` has, so ``hvp`` may be written
with ``mygrad.grad`` (or ``autograd_lab.grad``)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import autograd_lab as al

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS
from .problems import Problem, linear_plus_lse, lse_quartic, random_quadratic, rosenbrock, \
    tanh_net
from ._shared import expect_result, result_array

ID = "ch11-hvp"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no create_graph", ("g, = grad(f(xv), xv, create_graph=True)",
                                "g, = grad(f(xv), xv)"), None, "hvp.recipe"),
    Mistake("returns the gradient", ("return hv.numpy()", "return g.numpy()"), None,
            "hvp.gradient"),
    Mistake("returns g * v", ("return hv.numpy()", "return (g * Variable(v)).numpy()"), None,
            "hvp.g-times-v"),
    Mistake("float32", ("np.array(x, dtype=np.float64)", "np.array(x, dtype=np.float32)"),
            None, "hvp.approx"),
)

HVP_EXACT = 1e-12
"""The learner's H v must equal the exact one to HVP_EXACT · max|H| · max|v| (differentiating
twice is exact to rounding, ~1e-16 of that scale; the best finite difference is ~1e-12 at best
and far worse on :func:`linear_plus_lse`)."""

C_AXIS = "v along a coordinate axis gives a column of the Hessian"
C_TWICE = "two calls in a row give the same answer"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    n_big = int(rng.integers(4, 7))
    problems: list[tuple[str, Problem, int]] = [
        ("a random quadratic in 3 dimensions", random_quadratic(rng, 3), 3),
        ("a random quadratic in 5 dimensions", random_quadratic(rng, 5), 5),
        ("log-sum-exp plus a quartic (not quadratic)", lse_quartic(), 4),
        (f"a large linear term plus a little log-sum-exp in {n_big} dimensions",
         linear_plus_lse(np.round(100 * rng.normal(size=n_big), 2), 0.05), n_big)]
    if hidden:
        n = int(rng.integers(2, 5))
        problems += [("a random quadratic in 8 dimensions", random_quadratic(rng, 8), 8),
                     (f"a sum of tanh units in {n} dimensions",
                      tanh_net(np.round(rng.normal(size=(3, n)), 3),
                               np.round(rng.normal(size=3), 3)), n),
                     ("the Rosenbrock function", rosenbrock(), 2)]
    exact = []
    for name, fn, n in problems:
        x = np.round(rng.normal(size=n), 3)
        v = np.round(rng.normal(size=n), 3)
        exact.append((f"{name}: equals the exact Hessian times v", name, fn, x, v))
    axis = (lse_quartic(), np.round(rng.normal(size=3), 3), np.array([0.0, 1.0, 0.0]))
    fn = random_quadratic(rng, 3)
    twice = (fn, rng.normal(size=3), rng.normal(size=3))
    return {"exact": exact, "axis": axis, "twice": twice}


def _fd_title(name: str) -> str:
    return f"{name}: agrees with finite differences of the gradient"


def observe(ob: Observer, hvp: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    inputs = cases(seed, hidden)
    for title, _, fn, x, v in inputs["exact"]:
        with ob.case(title):
            ob.put("result", result_array(hvp(fn, x, v)))
            ob.put("x, v after the call", [x, v])
    fn, x, e1 = inputs["axis"]
    with ob.case(C_AXIS):
        ob.put("result", result_array(hvp(fn, x, e1)))
    fn, x, v = inputs["twice"]
    with ob.case(C_TWICE):
        ob.put("first", result_array(hvp(fn, x, v)))
        ob.put("second", result_array(hvp(fn, x, v)))


def _fd_hvp(f: Callable[[Any], Any], x: np.ndarray, v: np.ndarray,
            eps: float = 1e-5) -> np.ndarray:
    """(∇f(x + εv) − ∇f(x − εv)) / 2ε with the library's gradient."""
    def g(at: np.ndarray) -> np.ndarray:
        xv = al.tensor(at, requires_grad=True)
        dx = al.grad(f(xv), xv)[0]
        assert dx is not None, "grad gave no gradient for x"
        return dx.data
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


def check_exact(ck: Checker, got: Any, H: np.ndarray, v: np.ndarray, g: np.ndarray,
                what: str = "Hessian-vector product") -> None:
    """First the typical wrong formulas (loose tolerance), then exactness."""
    want = H @ v
    ck.close(got, want, atol=1e-7, rtol=1e-6, what=what, hint=HINTS["hvp.recipe"],
             mistakes=[(g, HINTS["hvp.gradient"]), (g + want, HINTS["hvp.accumulated"]),
                       (g * v, HINTS["hvp.g-times-v"])])
    scale = max(float(np.abs(H).max() * np.abs(v).max()), 1e-300)
    got = np.asarray(got, dtype=np.float64)
    near = np.abs(got - want).max() <= 1e-4 * scale
    ck.close(got, want, atol=HVP_EXACT * scale, rtol=0.0, what=f"{what} (exactness)",
             hint=HINTS["hvp.approx" if near else "hvp.recipe"])


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    what = "your hvp"
    for title, name, fn, x, v in inputs["exact"]:
        with ck.case(title):
            seen = obs.case(ck, title, what=what, hint=HINTS["hvp.recipe"])
            got = expect_result(ck, seen["result"], "Hessian-vector product", x.shape)
            after = seen["x, v after the call"]
            ck.check(np.array_equal(after[0], x) and np.array_equal(after[1], v),
                     "hvp changed x or v in place.", hint=HINTS["hvp.in-place"])
            check_exact(ck, got, fn.hessian(x), v, fn.gradient(x))
        if name.startswith("log-sum-exp"):
            with ck.case(_fd_title(name)):
                ck.close(got, _fd_hvp(fn, x, v), atol=1e-5, rtol=1e-4,
                         what="Hessian-vector product", hint=HINTS["hvp.fd"])
    fn, x, e1 = inputs["axis"]
    with ck.case(C_AXIS):
        got = expect_result(ck, obs.case(ck, C_AXIS, what=what)["result"],
                            "Hessian-vector product", (3,))
        check_exact(ck, got, fn.hessian(x), e1, fn.gradient(x), what="H e₁")
    with ck.case(C_TWICE):
        seen = obs.case(ck, C_TWICE, what=what)
        first = np.array(expect_result(ck, seen["first"], "first result", (3,)), dtype=float)
        second = np.array(expect_result(ck, seen["second"], "second result", (3,)), dtype=float)
        ck.close(second, first, what="second result", hint=HINTS["hvp.fresh"])
    ck.done()
