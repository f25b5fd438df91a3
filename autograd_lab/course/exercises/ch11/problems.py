"""The test functions of chapter 11's checks, with their exact gradients and Hessians in numpy.

The checks compare the learner's Hessian-vector products, Hessians and Newton steps with these
formulas, not with another run of the same autograd code.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Problem", "quadratic", "linear_plus_lse", "lse_quartic", "tanh_net", "rosenbrock",
           "exp_minus_linear", "random_quadratic"]

ScalarFn = Callable[[Any], Any]


class Problem:
    """A scalar function of a 1-D Variable with its exact gradient and Hessian in numpy."""

    def __init__(self, name: str, f: ScalarFn, gradient: Callable[[np.ndarray], np.ndarray],
                 hessian: Callable[[np.ndarray], np.ndarray]) -> None:
        self.name, self.f, self.gradient, self.hessian = name, f, gradient, hessian

    def __call__(self, x: Any) -> Any:
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


def random_quadratic(rng: np.random.Generator, n: int, definite: bool = False) -> Problem:
    M = rng.normal(size=(n, n))
    A = M @ M.T + n * np.eye(n) if definite else (M + M.T) / 2
    return quadratic(np.round(A, 3), np.round(rng.normal(size=n), 3))
