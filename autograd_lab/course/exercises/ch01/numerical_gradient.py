"""Check ``numerical_gradient(f, x, h=1e-6)``: central differences for every element.

The result must be a float64 array of x's shape, and x must be left unchanged.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._parts import Parts
from .messages import HINTS

ID = "ch01-numerical-gradient"
PARTS = ("float64 arrays of any shape", "integer and float32 inputs")

_ODD = ("sum(x**3) on an integer array [1, 2, 3]", "sum(x**2) on a float32 (4,) array")
GIVEN_H = "sum(x)**3 on a (4,) array with h=0.01 given"
"""The case that uses the h it is given: large enough that a one-sided difference, an x that is
not restored between elements or an ignored h is far outside the tolerance."""

MISTAKES = (
    Mistake("no float64 copy", ("x = np.array(x, dtype=np.float64)", "x = x"), PARTS[1],
            "numgrad.values"),
    Mistake("a one-sided difference", ("grad[idx] = (f_plus - f_minus) / (2 * h)",
                                        "grad[idx] = (f_plus - float(f(x))) / h"), PARTS[0],
            "numgrad.values"),
    Mistake("x not restored", ("x[idx] = old                          # restore", "# restore"),
            PARTS[0], "numgrad.values"),
    Mistake("a gradient of x's dtype", ("grad = np.zeros(x.shape, dtype=np.float64)",
                                        "grad = np.zeros(x.shape, dtype=np.float32)"), PARTS,
            "numgrad.float64"),
    Mistake("a copy that is never used", ("x = np.array(x, dtype=np.float64)",
                                          "y = np.array(x, dtype=np.float64)"), PARTS[1],
            "numgrad.values"),
)


def _pick_grad(x: np.ndarray) -> np.ndarray:
    grad = np.zeros_like(x)
    grad[0, 1], grad[1, 2] = x[1, 2], x[0, 1]
    return grad


def cases(seed: int, hidden: bool) -> list[tuple[str, Callable, Callable, np.ndarray]]:
    """(name, f, its gradient, x): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found: list[tuple[str, Callable, Callable, np.ndarray]] = [
        ("sum(x**2) on a (5,) array", lambda x: np.sum(x**2), lambda x: 2 * x,
         rng.normal(size=5)),
        ("sum(sin(x) * x) on a (3, 4) array", lambda x: np.sum(np.sin(x) * x),
         lambda x: np.sin(x) + x * np.cos(x), rng.normal(size=(3, 4))),
        ("x[0, 1] * x[1, 2] on a (2, 3) array", lambda x: x[0, 1] * x[1, 2], _pick_grad,
         rng.normal(size=(2, 3))),
        (_ODD[0], lambda x: np.sum(x**3), lambda x: 3 * x**2.0, np.array([1, 2, 3])),
        (_ODD[1], lambda x: np.sum(x**2), lambda x: 2 * x,
         np.array([10.5, -3.25, 0.5, 7.0], dtype=np.float32)),
    ]
    if hidden:
        w = rng.normal(size=(2, 2, 3))
        found += [
            ("sum(w * exp(x)) on a (2, 2, 3) array", lambda x: np.sum(w * np.exp(x)),
             lambda x: w * np.exp(x), rng.normal(size=(2, 2, 3))),
            ("sum(x**2 * arange) on a transposed (3, 2) view", lambda x: np.sum(x**2 * [1, 2]),
             lambda x: 2 * x * [1, 2], rng.normal(size=(2, 3)).T),
        ]
    # the central difference of s**3 (s = sum(x)) with step h is exactly 3 s**2 + h**2
    found.append((GIVEN_H, lambda x: np.sum(x) ** 3,
                  lambda x: np.full(x.shape, 3 * np.sum(x) ** 2 + 0.01**2), rng.normal(size=4)))
    return found


def observe(ob: Observer, numerical_gradient: Callable[..., np.ndarray], *, seed: int,
            hidden: bool) -> None:
    for name, f, _, x in cases(seed, hidden):
        with ob.case(name):
            ob.put("result", numerical_gradient(f, x, 0.01) if name == GIVEN_H else
                   numerical_gradient(f, x))
            ob.put("x after the call", x)


def judge(ck: Checker, obs: Observations) -> None:
    parts = Parts(ck, PARTS)
    every = cases(obs.seed, obs.hidden)
    with parts.part(PARTS[0]):
        _judge(ck, obs, [c for c in every if c[0] not in _ODD])
    with parts.part(PARTS[1]):
        _judge(ck, obs, [c for c in every if c[0] in _ODD])
    parts.done()


def _judge(ck: Checker, obs: Observations, chosen: list) -> None:
    for name, _, df, x in chosen:
        with ck.case(name):
            seen = obs.case(ck, name, what="your numerical_gradient")
            got, after = seen["result"], seen["x after the call"]
            ck.check(isinstance(got, np.ndarray), "the result is not a numpy array.",
                     expected=f"np.ndarray of shape {x.shape}", received=_kind(got),
                     hint=HINTS["numgrad.array"])
            ck.check(got.shape == x.shape, "the gradient does not have the shape of x.",
                     expected=f"shape {x.shape}", received=f"shape {got.shape}",
                     hint=HINTS["numgrad.shape"])
            ck.check(isinstance(after, np.ndarray) and after.dtype == x.dtype
                     and np.array_equal(after, x),
                     "your function changed its input x.", expected=x, received=after,
                     hint=HINTS["numgrad.input-changed"])
            ck.check(got.dtype == np.float64, "the gradient is not float64.",
                     expected="float64", received=str(got.dtype), hint=HINTS["numgrad.float64"])
            tight = name == GIVEN_H  # exact up to round-off: a one-sided difference is 3*s*h off
            ck.close(got, df(x.astype(np.float64)), atol=1e-7 if tight else 1e-5,
                     rtol=1e-7 if tight else 1e-5, what="gradient",
                     hint=HINTS["numgrad.values"])


def _kind(value: object) -> str:
    return getattr(value, "type", None) or type(value).__name__
