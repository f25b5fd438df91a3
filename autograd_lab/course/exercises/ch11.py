"""Checkers for chapter 11, Higher-order gradients.

The test functions below come with exact Hessians written out in numpy, so the checkers
compare the learner's Hessian-vector products, Hessians and Newton steps with formulas,
not with another run of the same autograd code.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import (BackwardError, Function, GradcheckError, Variable, grad, gradcheck,
                          gradgradcheck, tensor)
from ._common import Checker, data_of, named

__all__ = ["Problem", "quadratic", "linear_plus_lse", "lse_quartic", "tanh_net", "rosenbrock", "exp_minus_linear",
           "ch11_grad", "ch11_hvp", "ch11_hessian", "ch11_newton_step", "ch11_tanh_function"]

ScalarFn = Callable[[Variable], Variable]


class Problem:
    """A scalar function of a 1-D Variable with its exact gradient and Hessian in numpy."""

    def __init__(self, name: str, f: ScalarFn, gradient: Callable[[np.ndarray], np.ndarray],
                 hessian: Callable[[np.ndarray], np.ndarray]) -> None:
        self.name, self.f, self.gradient, self.hessian = name, f, gradient, hessian

    def __call__(self, x: Variable) -> Variable:
        return self.f(x)


def _const(x: Any, value: np.ndarray) -> Any:
    """``value`` as a constant of ``x``'s own library (``mygrad``, ``autograd_lab``, ...).

    The test functions use only operators and methods both libraries have (``+ - * / ** @``,
    indexing, ``exp``, ``log``, ``sum``), so the learner's ``hvp`` may run them on ``mygrad``.
    """
    return type(x)(value)


def _tanh(z: Any) -> Any:
    """tanh(z) = 1 - 2 / (exp(2z) + 1), written with exp only (mygrad has no tanh)."""
    return 1 - 2 / ((2 * z).exp() + 1)


def quadratic(A: np.ndarray, b: np.ndarray) -> Problem:
    """f(x) = ½ xᵀAx + bᵀx with symmetric A: gradient Ax + b, Hessian A."""
    return Problem("a quadratic",
                   lambda x: 0.5 * (x * (_const(x, A) @ x)).sum() + (_const(x, b) * x).sum(),
                   lambda x: A @ x + b, lambda x: A.copy())


def linear_plus_lse(b: np.ndarray, scale: float) -> Problem:
    """f(x) = bᵀx + scale · log Σ exp(xᵢ): a large gradient, a small Hessian scale·(diag(p) − ppᵀ).

    Central differences of the gradient lose many digits here (rounding grows with the
    gradient, the Hessian is small); differentiating twice stays exact.
    """
    def softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max())
        return e / e.sum()
    return Problem("a large linear term plus a little log-sum-exp",
                   lambda x: (_const(x, b) * x).sum() + scale * x.exp().sum().log(),
                   lambda x: b + scale * softmax(x),
                   lambda x: scale * (np.diag(softmax(x)) - np.outer(softmax(x), softmax(x))))


def lse_quartic() -> Problem:
    """f(x) = log Σ exp(xᵢ) + ¼ Σ xᵢ⁴: Hessian diag(p) − ppᵀ + diag(3x²), p = softmax(x)."""
    def softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max())
        return e / e.sum()
    return Problem("log-sum-exp plus a quartic",
                        lambda x: x.exp().sum().log() + 0.25 * (x ** 4).sum(),
                        lambda x: softmax(x) + x ** 3,
                        lambda x: np.diag(softmax(x)) - np.outer(softmax(x), softmax(x))
                        + np.diag(3 * x ** 2))


def tanh_net(W: np.ndarray, c: np.ndarray) -> Problem:
    """f(x) = Σ tanh(Wx + c): Hessian Wᵀ diag(−2 tanh(z)(1 − tanh²(z))) W."""
    def second(x: np.ndarray) -> np.ndarray:
        t = np.tanh(W @ x + c)
        return W.T @ np.diag(-2 * t * (1 - t ** 2)) @ W
    return Problem("a sum of tanh units",
                   lambda x: _tanh(_const(x, W) @ x + _const(x, c)).sum(),
                   lambda x: W.T @ (1 - np.tanh(W @ x + c) ** 2), second)


def rosenbrock() -> Problem:
    """f(x) = 100 (x₁ − x₀²)² + (1 − x₀)², the banana-shaped valley (2-D)."""
    def gradient(x: np.ndarray) -> np.ndarray:
        return np.array([-400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0]), 200 * (x[1] - x[0] ** 2)])

    def second(x: np.ndarray) -> np.ndarray:
        return np.array([[1200 * x[0] ** 2 - 400 * x[1] + 2, -400 * x[0]], [-400 * x[0], 200.0]])
    return Problem("the Rosenbrock function",
                        lambda x: 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2, gradient, second)


def exp_minus_linear() -> Problem:
    """f(x) = Σ (exp(xᵢ) − 2xᵢ): minimum at x = log 2, Hessian diag(exp(x))."""
    return Problem("a sum of exp(x) - 2x", lambda x: (x.exp() - 2 * x).sum(),
                        lambda x: np.exp(x) - 2, lambda x: np.diag(np.exp(x)))


# -- helpers ---------------------------------------------------------------------------------
def _random_quadratic(ck: Checker, n: int, definite: bool = False) -> Problem:
    M = ck.rng.normal(size=(n, n))
    A = M @ M.T + n * np.eye(n) if definite else (M + M.T) / 2
    return quadratic(np.round(A, 3), np.round(ck.rng.normal(size=n), 3))


def _array(ck: Checker, got: Any, what: str, n_shape: tuple[int, ...]) -> Any:
    """The learner's result as an array (a Variable is accepted too)."""
    if isinstance(got, Variable):
        return got.data
    if got is None:
        ck.fail(f"the {what} is None.", expected=f"an array of shape {n_shape}",
                hint="Did you forget the `return` statement?")
    return got


def _dx(output: Variable, x: Variable, **kwargs: Any) -> np.ndarray:
    """d output / d x with the library's ``grad`` (which raises rather than leave x without one)."""
    dx = grad(output, x, **kwargs)[0]
    assert dx is not None, "grad gave no gradient for x"
    return dx.data


def _fd_hvp(f: ScalarFn, x: np.ndarray, v: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """(∇f(x + εv) − ∇f(x − εv)) / 2ε with the library's gradient."""
    def g(at: np.ndarray) -> np.ndarray:
        xv = tensor(at, requires_grad=True)
        return _dx(f(xv), xv)
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


_HVP_HINT = ("Compute the gradient with create_graph=True, so that it is itself a Variable with a "
             "history: g, = grad(f(xv), xv, create_graph=True); then differentiate the scalar "
             "(g * v).sum() with respect to xv once more: hv, = grad((g * Variable(v)).sum(), xv).")
_HVP_APPROX_HINT = ("Your H v is close to the exact product but not equal to it, as an "
                    "approximation is: finite differences of the gradient, "
                    "(∇f(x + εv) − ∇f(x − εv)) / 2ε, lose digits to rounding and to the step ε "
                    "(or the arithmetic ran in float32). The exercise asks for the exact product: "
                    "differentiate twice with grad, the first time with create_graph=True.")
HVP_EXACT = 1e-12
"""The learner's H v must equal the exact one to HVP_EXACT · max|H| · max|v| (differentiating
twice is exact to rounding, ~1e-16 of that scale; the best finite difference is ~1e-12 at best
and far worse on :func:`linear_plus_lse`)."""


def _check_exact_hvp(ck: Checker, got: Any, H: np.ndarray, v: np.ndarray, g: np.ndarray,
                     what: str = "Hessian-vector product") -> None:
    """First the typical wrong formulas (loose tolerance), then exactness."""
    want = H @ v
    ck.close(got, want, atol=1e-7, rtol=1e-6, what=what, hint=_HVP_HINT,
             mistakes=[(g, "You returned the gradient of f, not the Hessian times v: "
                           "differentiate (g * v).sum() once more."),
                       (g + want, "You returned gradient + H v: x.grad still held the first "
                                  "gradient when the second backward added into it. Use grad "
                                  "(which leaves .grad alone), or set x.grad = None between the "
                                  "two backward calls."),
                       (g * v, "You returned g * v; its gradient with respect to x is H v.")])
    scale = max(float(np.abs(H).max() * np.abs(v).max()), 1e-300)
    got = np.asarray(got, dtype=np.float64)
    near = np.abs(got - want).max() <= 1e-4 * scale
    ck.close(got, want, atol=HVP_EXACT * scale, rtol=0.0, what=f"{what} (exactness)",
             hint=_HVP_APPROX_HINT if near else _HVP_HINT)


def ch11_hvp(hvp: Callable[..., Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``hvp(f, x, v)``: the Hessian of the scalar function ``f`` at the numpy array ``x``,
    times the numpy array ``v``, computed by differentiating twice; returns an array like ``x``.

    Exact to rounding: an approximation by finite differences of the gradient fails, with a
    hint that says so. ``f`` uses only operations ``mygrad`` has, so ``hvp`` may be written
    with ``mygrad.grad`` (or ``autograd_lab.grad``)."""
    ck = Checker("ch11-hvp", seed=seed, hidden=hidden)
    rng = ck.rng
    n_big = int(rng.integers(4, 7))
    cases: list[tuple[str, Problem, int]] = [
        ("a random quadratic in 3 dimensions", _random_quadratic(ck, 3), 3),
        ("a random quadratic in 5 dimensions", _random_quadratic(ck, 5), 5),
        ("log-sum-exp plus a quartic (not quadratic)", lse_quartic(), 4),
        (f"a large linear term plus a little log-sum-exp in {n_big} dimensions",
         linear_plus_lse(np.round(100 * rng.normal(size=n_big), 2), 0.05), n_big)]
    if hidden:
        n = int(rng.integers(2, 5))
        cases += [("a random quadratic in 8 dimensions", _random_quadratic(ck, 8), 8),
                  (f"a sum of tanh units in {n} dimensions",
                   tanh_net(np.round(rng.normal(size=(3, n)), 3), np.round(rng.normal(size=3), 3)), n),
                  ("the Rosenbrock function", rosenbrock(), 2)]
    for name, fn, n in cases:
        with ck.case(f"{name}: equals the exact Hessian times v"):
            x = np.round(rng.normal(size=n), 3)
            v = np.round(rng.normal(size=n), 3)
            x0, v0 = x.copy(), v.copy()
            got = _array(ck, ck.call(hvp, fn, x, v, hint=_HVP_HINT), "Hessian-vector product", (n,))
            ck.check(np.array_equal(x, x0) and np.array_equal(v, v0), "hvp changed x or v in place.",
                     hint="Make a new Variable from a copy of x (Variable(np.array(x), "
                          "requires_grad=True)) and leave the caller's arrays alone.")
            _check_exact_hvp(ck, got, fn.hessian(x0), v0, fn.gradient(x0))
        if name.startswith("log-sum-exp"):
            with ck.case(f"{name}: agrees with finite differences of the gradient"):
                fd = _fd_hvp(fn, x, v)
                ck.close(got, fd, atol=1e-5, rtol=1e-4, what="Hessian-vector product",
                         hint="(∇f(x + εv) − ∇f(x − εv)) / 2ε should be close to your H v.")
    with ck.case("v along a coordinate axis gives a column of the Hessian"):
        fn = lse_quartic()
        x = np.round(rng.normal(size=3), 3)
        e1 = np.array([0.0, 1.0, 0.0])
        got = _array(ck, ck.call(hvp, fn, x, e1), "Hessian-vector product", (3,))
        _check_exact_hvp(ck, got, fn.hessian(x), e1, fn.gradient(x), what="H e₁")
    with ck.case("two calls in a row give the same answer"):
        fn = _random_quadratic(ck, 3)
        x, v = rng.normal(size=3), rng.normal(size=3)
        first = np.array(_array(ck, ck.call(hvp, fn, x, v), "first result", (3,)), dtype=float)
        second = np.array(_array(ck, ck.call(hvp, fn, x, v), "second result", (3,)), dtype=float)
        ck.close(second, first, what="second result",
                 hint="Nothing may carry over between calls: make a fresh Variable each time.")
    ck.done()


def ch11_hessian(hessian: Callable[..., Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``hessian(f, x)``: the (n, n) Hessian of the scalar function ``f`` at the 1-D numpy
    array ``x``, built column by column from Hessian-vector products."""
    ck = Checker("ch11-hessian", seed=seed, hidden=hidden)
    rng = ck.rng
    cases: list[tuple[str, Problem, int]] = [("a random quadratic in 3 dimensions",
                                                   _random_quadratic(ck, 3), 3),
                                                  ("log-sum-exp plus a quartic in 4 dimensions",
                                                   lse_quartic(), 4),
                                                  ("the Rosenbrock function", rosenbrock(), 2),
                                                  ("a function of a single variable", exp_minus_linear(), 1)]
    if hidden:
        cases += [("a random quadratic in 7 dimensions", _random_quadratic(ck, 7), 7),
                  ("a sum of tanh units in 5 dimensions",
                   tanh_net(np.round(rng.normal(size=(4, 5)), 3), np.round(rng.normal(size=4), 3)), 5)]
    hint = ("Column i of the Hessian is H eᵢ, where eᵢ is 1 at position i and 0 elsewhere: call "
            "hvp(f, x, e) for each i and stack the results with np.stack(columns, axis=1).")
    for name, fn, n in cases:
        with ck.case(f"{name}"):
            x = np.round(rng.normal(size=n), 3)
            H = fn.hessian(x)
            g = fn.gradient(x)
            got = _array(ck, ck.call(hessian, fn, x, hint=hint), "Hessian", (n, n))
            mistakes = [(np.outer(g, g), "That is the outer product of the gradient with itself "
                                         "(ggᵀ), not the matrix of second derivatives.")]
            if n > 1:
                mistakes += [(np.diag(np.diag(H)), "Only the diagonal is filled in: column i is H eᵢ, "
                                                   "a whole vector."),
                             (np.tile(g, (n, 1)), "Every row is the gradient: differentiate the "
                                                  "gradient once more for each column.")]
            ck.close(got, H, atol=1e-7, rtol=1e-6, what="Hessian", hint=hint, mistakes=mistakes)
            ck.close(np.asarray(got) - np.asarray(got).T, np.zeros((n, n)), atol=1e-7,
                     what="asymmetry H − Hᵀ", hint="A Hessian of a smooth function is symmetric.")
    ck.done()


_NEWTON_HINT = ("The Newton step solves H d = ∇f(x) and returns x − d: "
                "np.linalg.solve(hessian(f, x), gradient) with the gradient from grad.")


def _newton_reference(fn: Problem, x: np.ndarray) -> np.ndarray:
    return x - np.linalg.solve(fn.hessian(x), fn.gradient(x))


def ch11_newton_step(newton_step: Callable[..., Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``newton_step(f, x)``: x − H(x)⁻¹ ∇f(x) as a numpy array, for the scalar function
    ``f`` at the 1-D numpy array ``x`` (the caller's ``x`` is left unchanged)."""
    ck = Checker("ch11-newton-step", seed=seed, hidden=hidden)
    rng = ck.rng

    def step(fn: Problem, x: np.ndarray) -> np.ndarray:
        x0 = x.copy()
        got = _array(ck, ck.call(newton_step, fn, x, hint=_NEWTON_HINT), "new point", x.shape)
        ck.check(np.array_equal(x, x0), "newton_step changed x in place.",
                 hint="Return a new array x − d; leave the caller's x alone.")
        return got

    def wrong(fn: Problem, x: np.ndarray) -> list:
        g, H = fn.gradient(x), fn.hessian(x)
        d = np.linalg.solve(H, g)
        return [(x - g, "That is a gradient-descent step with step size 1; Newton's step divides by "
                        "the curvature: solve H d = g."),
                (x + d, "The step points uphill: subtract the solution d of H d = g."),
                (x - H @ g, "You multiplied the gradient by H; Newton's step multiplies by H⁻¹ "
                            "(np.linalg.solve(H, g))."),
                (x - g / np.diag(H), "You divided by the diagonal of H only; use the whole matrix.")]

    sizes = [3] + ([6] if hidden else [])
    for n in sizes:
        with ck.case(f"a convex quadratic in {n} dimensions: one step lands on the minimum"):
            fn = _random_quadratic(ck, n, definite=True)
            x = np.round(rng.normal(size=n), 3)
            A = fn.hessian(x)
            minimum = np.linalg.solve(A, -fn.gradient(np.zeros(n)))
            got = step(fn, x)
            ck.close(got, minimum, atol=1e-7, rtol=1e-6, what="point after one Newton step",
                     hint=_NEWTON_HINT, mistakes=wrong(fn, x))
    with ck.case("a sum of exp(x) - 2x: each coordinate steps to x - 1 + 2 exp(-x)"):
        fn = exp_minus_linear()
        x = np.round(rng.uniform(-1, 2, size=4), 3)
        got = step(fn, x)
        ck.close(got, x - 1 + 2 * np.exp(-x), atol=1e-8, rtol=1e-7, what="point after one Newton step",
                 hint=_NEWTON_HINT, mistakes=wrong(fn, x))
    with ck.case("the Rosenbrock function from (-1.2, 1)"):
        fn = rosenbrock()
        x = np.array([-1.2, 1.0])
        got = step(fn, x)
        ck.close(got, _newton_reference(fn, x), atol=1e-7, rtol=1e-6, what="point after one Newton step",
                 hint=_NEWTON_HINT, mistakes=wrong(fn, x))
    with ck.case("repeated steps converge to the minimum of log-sum-exp plus a quartic"):
        fn = lse_quartic()
        x = np.round(rng.normal(size=3), 3)
        for _ in range(25):
            x = np.asarray(step(fn, x), dtype=float)
        ck.close(fn.gradient(x), np.zeros(3), atol=1e-8, what="gradient after 25 Newton steps",
                 hint=_NEWTON_HINT)
    if hidden:
        with ck.case("the Rosenbrock function from a random start"):
            fn = rosenbrock()
            x = np.round(rng.uniform(-1.5, 1.5, size=2), 3)
            ck.close(step(fn, x), _newton_reference(fn, x), atol=1e-7, rtol=1e-6,
                     what="point after one Newton step", hint=_NEWTON_HINT, mistakes=wrong(fn, x))
    ck.done()


# -- ch11-tanh-function ------------------------------------------------------------------------
def _function_class(ck: Checker, cls: Any) -> None:
    ck.check(isinstance(cls, type) and issubclass(cls, Function), "MyTanh is not a subclass of al.Function.",
             expected="class MyTanh(al.Function)", received=cls,
             hint="Pass the class itself (not an instance, not .apply).")


_VARIABLE_OPS = ("Write backward with Variable operations on Variables (grad_output * (1 - y * y), "
                 "with y from ctx.saved_tensors), not with numpy arrays (.data, np.tanh): only "
                 "Variable operations are recorded when create_graph=True.")


def _saved_copy_hint(MyTanh: type[Any], data: np.ndarray) -> str | None:
    """If forward saved a new Variable holding tanh(x) instead of its output y, say so.

    Such a copy is a leaf with no grad_fn: the first derivative is right, but under
    create_graph=True the second backward cannot reach x through it.
    """
    try:
        x = tensor(data, requires_grad=True)
        y = MyTanh.apply(x)
        saved = tuple(y.grad_fn.saved_tensors)
    except Exception:  # noqa: BLE001 - only a diagnosis; the cases report the failure itself
        return None
    for s in saved:
        if (isinstance(s, Variable) and s is not x and s is not y and s.grad_fn is None
                and s.shape == y.shape and np.allclose(s.data, y.data)):
            return ("forward saved a new Variable holding tanh(x) (e.g. "
                    "ctx.save_for_backward(al.Variable(y_np))), not the output it returns. That copy "
                    "is a new leaf with no grad_fn, cut off from the graph, so a second derivative "
                    "loses the path through y back to x. Save the very Variable that forward "
                    "returns; under create_graph=True it comes back with MyTanh's node as grad_fn.")
    return None


def ch11_tanh_function(MyTanh: type[Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``MyTanh``: forward gives tanh(x); backward is written with Variable operations,
    so that gradients of gradients are right (gradgradcheck passes)."""
    ck = Checker("ch11-tanh-function", seed=seed, hidden=hidden)
    rng = ck.rng
    _function_class(ck, MyTanh)
    shapes = [(5,), (3, 4)] + ([(2, 3, 2)] if hidden else [])
    for shape in shapes:
        with ck.case(f"forward and first derivative on a {shape} input"):
            data = np.round(rng.normal(size=shape), 4)
            x = tensor(data, requires_grad=True)
            y = ck.call(MyTanh.apply, x)
            ck.check(isinstance(y, Variable) and y.grad_fn is not None,
                     "apply did not return a Variable recorded in the graph.", received=y,
                     hint="forward returns a new Variable, e.g. al.Variable(np.tanh(x.data)).")
            ck.close(y.data, np.tanh(data), what="output", hint="forward computes tanh(x).")
            gy = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
            g = ck.call(grad, y, x, tensor(gy), hint=_VARIABLE_OPS)[0]
            ck.close(g.data if g is not None else None, gy * (1 - np.tanh(data) ** 2),
                     what="gradient of x", hint="d tanh(x)/dx = 1 − tanh²(x); multiply by grad_output.",
                     mistakes=[(1 - np.tanh(data) ** 2, "Multiply by grad_output (the chain rule)."),
                               (gy * (1 - np.tanh(data)), "d tanh/dx is 1 − tanh², not 1 − tanh.")])
    with ck.case("gradcheck passes"):
        x = tensor(rng.normal(size=(2, 3)), requires_grad=True)
        ok = ck.call(gradcheck, MyTanh.apply, (x,), hint="The first derivative disagrees with central "
                     "differences; the message above names the numbers.")
        ck.check(ok is True, "gradcheck did not pass.", expected=True, received=ok)
    cut_hint = _saved_copy_hint(MyTanh, np.linspace(-1.5, 1.5, 4))
    with ck.case("with create_graph=True the gradient has a history"):
        x = tensor(np.round(rng.normal(size=4), 4), requires_grad=True)
        g = ck.call(grad, ck.call(MyTanh.apply, x).sum(), x, create_graph=True)[0]
        node = type(g.grad_fn).__name__ if g.grad_fn is not None else None
        ck.check(node != "_DelayedErrorBackward", "backward is decorated with @once_differentiable.",
                 hint="Remove @al.once_differentiable: that decorator promises the backward is NOT "
                      "differentiable. " + _VARIABLE_OPS)
        ck.check(g.requires_grad and node is not None, "the gradient computed with create_graph=True "
                 "has no grad_fn, so it cannot be differentiated again.", expected="a grad_fn",
                 received=node, hint=cut_hint or _VARIABLE_OPS)
    with ck.case("second derivative: d²/dx² tanh(x) = -2 tanh(x) (1 - tanh²(x))"):
        data = np.round(rng.uniform(-2, 2, size=5), 4)
        x = tensor(data, requires_grad=True)
        g = ck.call(grad, ck.call(MyTanh.apply, x).sum(), x, create_graph=True)[0]
        try:
            gg = grad(g.sum(), x, allow_unused=True)[0]
        except BackwardError as err:
            raise ck.error(f"the second backward raised: {err}", hint=_VARIABLE_OPS) from err
        t = np.tanh(data)
        ck.close(np.zeros(5) if gg is None else gg.data, -2 * t * (1 - t ** 2), atol=1e-9,
                 what="second derivative",
                 mistakes=[(np.zeros(5), cut_hint or "The second derivative came out as 0: the first "
                                         "gradient was computed outside the graph. " + _VARIABLE_OPS)],
                 hint=cut_hint or "If backward uses the saved output y, the second derivative also flows through y "
                      "(y has MyTanh's node as grad_fn); use y from ctx.saved_tensors, not a copy.")
    n_checks = 2 if hidden else 1
    for k in range(n_checks):
        with ck.case("gradgradcheck passes" + (f" (random grad_outputs, seed {k})" if k else "")):
            x = tensor(rng.normal(size=(3, 2)), requires_grad=True)
            try:
                ok = gradgradcheck(MyTanh.apply, (x,), seed=int(rng.integers(1000)))
            except (GradcheckError, BackwardError) as err:
                raise ck.error(f"gradgradcheck failed: {err}", hint=cut_hint or _VARIABLE_OPS) from err
            except NotImplementedError as err:
                raise ck._not_done(err) from None
            ck.check(ok is True, "gradgradcheck did not pass.", expected=True, received=ok)
    if hidden:
        with ck.case("inside a larger function: Hessian of sum(MyTanh(Wx + c))"):
            W, c = np.round(rng.normal(size=(3, 2)), 3), np.round(rng.normal(size=3), 3)
            ref = tanh_net(W, c)
            xd = np.round(rng.normal(size=2), 3)
            x = tensor(xd, requires_grad=True)
            z = tensor(W) @ x + tensor(c)
            g = ck.call(grad, ck.call(MyTanh.apply, z).sum(), x, create_graph=True)[0]
            rows = [_dx(g[i], x, retain_graph=True) for i in range(2)]
            ck.close(np.stack(rows), ref.hessian(xd), atol=1e-9, what="Hessian",
                     hint=cut_hint or _VARIABLE_OPS)
    ck.done()


# -- the learner's mygrad/higher.py -----------------------------------------------------------
def mygrad_higher(pkg: Any) -> None:
    """The loader's check of ``mygrad/higher.py``: ``grad`` (PyTorch's semantics, exact second
    derivatives, ``.grad`` untouched), ``hvp`` exact, and a Newton step."""
    ck = Checker("mygrad-higher")
    with ck.case("grad twice gives exact second derivatives and leaves .grad alone"):
        x = pkg.Variable(np.array([0.5, 2.0, -1.5]), requires_grad=True)
        y = (x ** 3).sum()
        d1, = ck.call(pkg.grad, y, x, create_graph=True,
                      hint="grad(outputs, inputs, create_graph=True) returns a tuple of gradients.")
        ck.close(d1.data, 3 * x.data ** 2, atol=1e-12, rtol=1e-12, what="first derivative 3x²")
        ck.check(x.grad is None, "grad wrote into x.grad.", received=x.grad,
                 hint="grad returns the gradients it found at the inputs; it never accumulates "
                      "into .grad.")
        ck.check(getattr(d1, "grad_fn", None) is not None,
                 "with create_graph=True the first derivative has no history (grad_fn is None).",
                 hint="Run the backward formulas with GradMode.enabled = True when "
                      "create_graph=True, so that they are recorded.")
        d2, = ck.call(pkg.grad, d1.sum(), x)
        ck.close(d2.data, 6 * x.data, atol=1e-12, rtol=1e-12, what="second derivative 6x")
    with ck.case("grad with grad_outputs, several inputs, allow_unused"):
        a = pkg.Variable(np.array([1.0, 2.0]), requires_grad=True)
        b = pkg.Variable(np.array([3.0, -1.0]), requires_grad=True)
        unused = pkg.Variable(np.array([1.0]), requires_grad=True)
        ga, gb = ck.call(pkg.grad, a * b, (a, b), pkg.Variable(np.array([1.0, 10.0])))
        ck.close(ga.data, np.array([3.0, -10.0]), what="d(a·b)/da weighted by grad_outputs")
        ck.close(gb.data, np.array([1.0, 20.0]), what="d(a·b)/db weighted by grad_outputs")
        got = ck.call(pkg.grad, (a * b).sum(), (a, unused), allow_unused=True)
        ck.check(got[1] is None, "an unused input must get None with allow_unused=True.",
                 received=got[1])
        ck.raises(RuntimeError, pkg.grad, (a * b).sum(), (a, unused),
                  hint="Without allow_unused=True, an input the outputs do not depend on raises "
                       "RuntimeError saying so.")
    with ck.case("hvp and newton_step on a quadratic"):
        fn = quadratic(np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([1.0, -1.0]))
        x0, v0 = np.array([0.3, -0.7]), np.array([1.0, 2.0])
        hv = ck.call(pkg.hvp, fn, x0, v0)
        ck.close(np.asarray(data_of(hv), dtype=float), fn.hessian(x0) @ v0, atol=1e-12,
                 rtol=1e-12, what="hvp on a quadratic")
        step = ck.call(pkg.newton_step, fn, x0)
        ck.close(np.asarray(data_of(step), dtype=float),
                 np.linalg.solve(fn.hessian(x0), -np.array([1.0, -1.0])), atol=1e-10,
                 rtol=1e-10, what="one Newton step on a quadratic (its minimum)")
    ck.done()


# -- ch11-grad ------------------------------------------------------------------------------
class _FailingBackward:
    """Stands in for a node's Function so that the walk fails halfway, inside grad."""

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        raise RuntimeError("a backward that fails on purpose, inside the walk")


def ch11_grad(my_grad: Callable[..., Any], MyVariable: type[Any], *, seed: int = 0,
              hidden: bool = False) -> None:
    """Check ``grad(outputs, inputs, create_graph=False)``: one gradient per input, the sums over
    every path (a Variable used twice gets both contributions), without touching any ``.grad``;
    with ``create_graph=False`` the gradients have no history, with ``create_graph=True`` they
    have one, so that grad of a gradient is the second derivative; the recording switch is
    restored afterwards, also when the walk fails. Only the learner's ``grad`` and their
    Variable's operations (chapters 02-05) are used."""
    ck = Checker("ch11-grad", seed=seed, hidden=hidden)
    rng = ck.rng
    n = 4 if not hidden else 6
    x0 = np.round(rng.uniform(0.5, 1.5, size=n), 3)
    w0 = np.round(rng.normal(size=n), 3)
    walk = ("Walk the graph from the outputs in _walk_order (each Variable after all its "
            "users); pop its complete gradient, keep it if it is an input, call its node's "
            "backward and ADD each input's share into the dict of gradients.")

    def var(a: np.ndarray) -> Any:
        return ck.call(named(lambda: MyVariable(a.copy(), requires_grad=True), "Variable"))

    def grads_of(outputs: Any, inputs: Any, **kw: Any) -> tuple:
        out = ck.call(named(lambda: my_grad(outputs, inputs, **kw), "grad"), hint=walk)
        ck.check(isinstance(out, tuple), "grad does not return a tuple.", received=type(out),
                 hint="Return tuple(found): one gradient per input, as torch.autograd.grad.")
        return out

    with ck.case("y = sum(w * x * x): dy/dx = 2 w x, dy/dw = x * x (x is used twice)"):
        x, w = var(x0), var(w0)
        y = (w * x * x).sum()
        gx, gw = grads_of(y, (x, w))
        ck.check(getattr(x * x, "grad_fn", None) is not None,
                 "after grad(...) new operations are not recorded any more.",
                 hint="Save GradMode.enabled before the walk and restore it in a finally: "
                      "block at its end.")
        got = np.asarray(data_of(gx), dtype=np.float64)
        ck.close(got, 2 * w0 * x0, rtol=1e-9, atol=1e-12, what="dy/dx",
                 hint=walk, mistakes=[(w0 * x0, "Only one of the two paths through x arrived: "
                                      "when a gradient for a Variable is already in the dict, "
                                      "add the new share to it instead of replacing it.")])
        ck.close(np.asarray(data_of(gw), dtype=np.float64), x0 * x0, rtol=1e-9, atol=1e-12,
                 what="dy/dw", hint=walk)
        ck.check(x.grad is None and w.grad is None, "grad changed the inputs' .grad.",
                 expected=None, received="a gradient in x.grad or w.grad",
                 hint="grad returns the gradients and leaves .grad alone: do not call "
                      "backward(); keep the gradients in your own dict.")
        ck.check(not getattr(gx, "requires_grad", False) and getattr(gx, "grad_fn", None) is None,
                 "with create_graph=False the gradient has a history.",
                 hint="Record the backward only when create_graph is True: set "
                      "GradMode.enabled = bool(create_graph) during the walk.")
    with ck.case("create_graph=True: the gradient has a history; grad of it is the second "
                 "derivative, d2/dx2 sum(x ** 3) = 6 x"):
        x = var(x0)
        y = (x * x * x).sum()
        g, = grads_of(y, x, create_graph=True)
        ck.close(np.asarray(data_of(g), dtype=np.float64), 3 * x0 ** 2, rtol=1e-9, atol=1e-12,
                 what="dy/dx", hint=walk)
        ck.check(getattr(g, "grad_fn", None) is not None,
                 "with create_graph=True the gradient has no grad_fn: its computation was not "
                 "recorded.",
                 hint="Turn recording ON during the walk when create_graph is True: enabled, "
                      "GradMode.enabled = GradMode.enabled, bool(create_graph), and call the "
                      "backward of each node on Variables, so that the engine records it.")
        h, = grads_of(g.sum(), x)
        ck.close(np.asarray(data_of(h), dtype=np.float64), 6 * x0, rtol=1e-9, atol=1e-12,
                 what="d2y/dx2", hint="The second grad differentiates the recorded first "
                 "one: keep the graph (retain_graph follows create_graph) and record with "
                 "Variable operations only.")
    with ck.case("the recording switch is restored, also after a failing walk"):
        x = var(x0)
        y = (x * x).sum()
        grads_of(y, x, create_graph=True)
        z = x * x
        ck.check(getattr(z, "grad_fn", None) is not None,
                 "after grad(..., create_graph=True) new operations are not recorded any more.",
                 hint="Restore GradMode.enabled to its old value in a finally: block at the "
                      "end of the walk.")
        unused = var(w0)
        y = (x * x).sum()
        try:
            my_grad(y, (x, unused))
        except Exception:          # noqa: BLE001  (the error itself is checked by the library)
            pass
        y = (x * x).sum()          # and a walk that fails halfway (left off, y has no graph)
        if getattr(x * x, "grad_fn", None) is not None and hasattr(y.grad_fn, "inputs"):
            inner = y.grad_fn.inputs[0].grad_fn   # the product's node: make its backward fail
            try:
                inner.function = _FailingBackward
            except (AttributeError, TypeError):  # a node that takes no attribute: skip this part
                inner = None
            if inner is not None:
                try:
                    my_grad(y, (x,))
                except Exception:      # noqa: BLE001  (it fails on purpose, inside the walk)
                    pass
        z = x * x
        ck.check(getattr(z, "grad_fn", None) is not None,
                 "after a grad call that raised, new operations are not recorded any more.",
                 hint="Restore GradMode.enabled in a finally: block, so that an error inside "
                      "the walk cannot leave recording switched off.")
        y = (x * x).sum()
        gx, gu = grads_of(y, (x, unused), allow_unused=True)
        ck.check(gu is None, "an unused input with allow_unused=True does not get None.",
                 received=gu, hint="An input the walk never reached keeps None in found.")
    ck.done()
