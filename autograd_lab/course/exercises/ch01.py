"""Checkers for chapter 01, Derivatives by hand and by numbers."""
from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from ._common import Checker
from ._parts import Parts

__all__ = ["ch01_central_difference", "ch01_numerical_gradient", "ch01_gradcheck"]

PARTS = {
    "ch01-central-difference": ("the formula with a given h", "the default h"),
    "ch01-numerical-gradient": ("float64 arrays of any shape", "integer and float32 inputs"),
    "ch01-gradcheck": ("accepts a correct derivative", "reports a wrong derivative",
                       "tolerances", "shapes"),
}
"""Exercises made of independent parts: each part earns its share of the points
(:mod:`autograd_lab.course.exercises._parts`)."""

# (name, f, f') pairs used by the cases; plain numpy, float64.
_SCALAR_FUNCTIONS: list[tuple[str, Callable[[float], float], Callable[[float], float]]] = [
    ("sin", np.sin, np.cos),
    ("exp", np.exp, np.exp),
    ("x**3 - 2*x", lambda x: x**3 - 2 * x, lambda x: 3 * x**2 - 2),
    ("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2),
]


def ch01_central_difference(central_difference: Callable[..., float], *,
                            seed: int = 0, hidden: bool = False) -> None:
    """Check ``central_difference(f, x, h=1e-5)`` = (f(x + h) - f(x - h)) / (2h)."""
    ck = Checker("ch01-central-difference", seed=seed, hidden=hidden)
    cases = [("x**3", lambda x: x**3, lambda x: 3 * x**2, 1.0, 0.1)]
    functions = _SCALAR_FUNCTIONS if hidden else _SCALAR_FUNCTIONS[:2]
    for name, f, df in functions:
        for h in (1e-2, 1e-3):
            cases.append((name, f, df, round(float(ck.rng.uniform(-2, 2)), 3), h))
    parts = Parts(ck)
    with parts.part("the formula with a given h"):
        _central_cases(ck, central_difference, cases)
    with parts.part("the default h"):
        _central_default(ck, central_difference)
    parts.done()


def _central_cases(ck: Checker, central_difference: Callable[..., float], cases: list) -> None:
    for name, f, df, x, h in cases:
        with ck.case(f"h={h:g} on {name} at {x:g}"):
            got = ck.call(central_difference, f, x, h)
            expected = (f(x + h) - f(x - h)) / (2 * h)
            ck.close(got, expected, atol=1e-10, rtol=1e-7,
                     hint="Evaluate f once on each side of x: (f(x + h) - f(x - h)) / (2 * h).",
                     mistakes=[((f(x + h) - f(x)) / h, "That is the forward difference "
                                "(f(x + h) - f(x)) / h; the central one uses both sides: "
                                "(f(x + h) - f(x - h)) / (2 * h)."),
                               ((f(x) - f(x - h)) / h, "That is the backward difference "
                                "(f(x) - f(x - h)) / h; use (f(x + h) - f(x - h)) / (2 * h)."),
                               (2 * expected, "Twice the expected value: the two points are "
                                "2*h apart, so divide by 2 * h."),
                               (expected * 2 * h * h, "Divide by 2 * h, not multiply by it."),
                               (df(x), "That is the exact derivative, so your function ignores "
                                "the h it is given: use h, not a fixed step.")])
            ck.check(np.ndim(got) == 0, "the result is not a single number.",
                     received=got, hint="Return a float.")


def _central_default(ck: Checker, central_difference: Callable[..., float]) -> None:
    with ck.case("the default h gives an accurate derivative of sin at 0.7"):
        got = ck.call(central_difference, np.sin, 0.7,
                      hint="Give h a default value: def central_difference(f, x, h=1e-5).")
        ck.close(got, np.cos(0.7), atol=1e-8, rtol=0,
                 hint="With a default h near 1e-5 the central difference is accurate to about "
                      "1e-10; a much smaller h drowns in round-off, a larger one in truncation.")


def ch01_numerical_gradient(numerical_gradient: Callable[..., np.ndarray], *,
                            seed: int = 0, hidden: bool = False) -> None:
    """Check ``numerical_gradient(f, x, h=1e-6)``: central differences for every element.

    The result must be a float64 array of x's shape, and x must be left unchanged.
    """
    ck = Checker("ch01-numerical-gradient", seed=seed, hidden=hidden)
    rng = ck.rng
    cases: list[tuple[str, Callable[[np.ndarray], float], Callable[[np.ndarray], np.ndarray],
                      np.ndarray]] = [
        ("sum(x**2) on a (5,) array", lambda x: np.sum(x**2), lambda x: 2 * x,
         rng.normal(size=5)),
        ("sum(sin(x) * x) on a (3, 4) array", lambda x: np.sum(np.sin(x) * x),
         lambda x: np.sin(x) + x * np.cos(x), rng.normal(size=(3, 4))),
        ("x[0, 1] * x[1, 2] on a (2, 3) array", lambda x: x[0, 1] * x[1, 2], _pick_grad,
         rng.normal(size=(2, 3))),
        ("sum(x**3) on an integer array [1, 2, 3]", lambda x: np.sum(x**3), lambda x: 3 * x**2.0,
         np.array([1, 2, 3])),
        ("sum(x**2) on a float32 (4,) array", lambda x: np.sum(x**2), lambda x: 2 * x,
         np.array([10.5, -3.25, 0.5, 7.0], dtype=np.float32)),
    ]
    if hidden:
        w = rng.normal(size=(2, 2, 3))
        cases += [
            ("sum(w * exp(x)) on a (2, 2, 3) array", lambda x: np.sum(w * np.exp(x)),
             lambda x: w * np.exp(x), rng.normal(size=(2, 2, 3))),
            ("sum(x**2 * arange) on a transposed (3, 2) view", lambda x: np.sum(x**2 * [1, 2]),
             lambda x: 2 * x * [1, 2], rng.normal(size=(2, 3)).T),
        ]
    parts = Parts(ck)
    odd = {"sum(x**3) on an integer array [1, 2, 3]", "sum(x**2) on a float32 (4,) array"}
    with parts.part("float64 arrays of any shape"):
        _gradient_cases(ck, numerical_gradient, [c for c in cases if c[0] not in odd])
    with parts.part("integer and float32 inputs"):
        _gradient_cases(ck, numerical_gradient, [c for c in cases if c[0] in odd])
    parts.done()


def _gradient_cases(ck: Checker, numerical_gradient: Callable[..., np.ndarray],
                    cases: list) -> None:
    for name, f, df, x in cases:
        with ck.case(name):
            before = x.copy()
            got = ck.call(numerical_gradient, f, x)
            ck.check(isinstance(got, np.ndarray), "the result is not a numpy array.",
                     expected=f"np.ndarray of shape {x.shape}", received=type(got).__name__,
                     hint="Start from grad = np.zeros(x.shape) and fill it in element by element.")
            ck.check(got.shape == x.shape, "the gradient does not have the shape of x.",
                     expected=f"shape {x.shape}", received=f"shape {got.shape}",
                     hint="The gradient has one entry per element of x: np.zeros(x.shape).")
            ck.check(np.array_equal(x, before) and x.dtype == before.dtype,
                     "your function changed its input x.", expected=before, received=x,
                     hint="Work on a float64 copy (x = np.array(x, dtype=np.float64)), or put each "
                          "element back exactly: old = x[idx]; ...; x[idx] = old.")
            ck.check(got.dtype == np.float64, "the gradient is not float64.",
                     expected="float64", received=str(got.dtype),
                     hint="Compute in float64: np.zeros(x.shape, dtype=np.float64), and convert x "
                          "to a float64 copy so that x + h is not rounded away.")
            expected = df(before.astype(np.float64))
            ck.close(got, expected, atol=1e-5, rtol=1e-5, what="gradient",
                     hint="Nudge one element at a time by +h and -h (the others stay put) and "
                          "use (f(x + h e_i) - f(x - h e_i)) / (2 h); compute on a float64 copy "
                          "of x (an integer array cannot hold x + h).")


def _pick_grad(x: np.ndarray) -> np.ndarray:
    grad = np.zeros_like(x)
    grad[0, 1], grad[1, 2] = x[1, 2], x[0, 1]
    return grad


def ch01_gradcheck(gradcheck: Callable[..., bool], *, seed: int = 0,
                   hidden: bool = False) -> None:
    """Check ``gradcheck(f, df, x, h=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True)``.

    It returns True when ``|df(x) - numerical| <= atol + rtol * |numerical|`` everywhere;
    otherwise it raises a RuntimeError naming the worst element's index, or returns
    False when ``raise_exception=False``. Different shapes raise ValueError.
    """
    ck = Checker("ch01-gradcheck", seed=seed, hidden=hidden)
    rng = ck.rng
    square = lambda x: np.sum(x**2)  # noqa: E731
    sinx = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    dsinx = lambda x: np.sin(x) + x * np.cos(x)  # noqa: E731

    rejected = ("Your gradcheck rejected a correct derivative: compare df(x) with "
                "numerical_gradient(f, x, h) and allow |analytical - numerical| <= "
                "atol + rtol * |numerical| in every element.")
    parts = Parts(ck)
    with parts.part("accepts a correct derivative"):
        with ck.case("a correct derivative of sum(x**2) passes"):
            got = ck.call(gradcheck, square, lambda x: 2 * x, rng.normal(size=4), hint=rejected)
            _expect_bool(ck, got, True)
        with ck.case("a correct derivative of sum(sin(x) * x) on (3, 4) passes"):
            got = ck.call(gradcheck, sinx, dsinx, rng.normal(size=(3, 4)), hint=rejected)
            _expect_bool(ck, got, True)
        with ck.case("x is left unchanged"):
            x = rng.normal(size=(2, 2))
            before = x.copy()
            ck.call(gradcheck, sinx, dsinx, x, hint=rejected)
            ck.check(np.array_equal(x, before), "your gradcheck changed x.", expected=before,
                     received=x, hint="numerical_gradient must restore (or copy) x.")
    with parts.part("reports a wrong derivative"):
        with ck.case("a derivative missing its factor 2 returns False (raise_exception=False)"):
            got = ck.call(gradcheck, square, lambda x: x, rng.normal(size=4), raise_exception=False)
            _expect_bool(ck, got, False)

        shape = (3, 4)
        for bad in [(1, 2)] + ([tuple(int(i) for i in rng.integers(0, 3, size=2))] if hidden else []):
            with ck.case(f"one wrong element at {bad} raises RuntimeError naming {bad}"):
                x = rng.normal(size=shape)
                other = (2, 3) if bad != (2, 3) else (0, 0)

                def df_bad(x: np.ndarray, bad: tuple[int, ...] = bad, other: tuple = other):
                    grad = dsinx(x)
                    grad[bad] += 0.5
                    grad[other] += 0.01
                    return grad
                err = ck.raises(RuntimeError, gradcheck, sinx, df_bad, x,
                                hint="When the check fails and raise_exception is True, raise "
                                     "RuntimeError with a message naming the worst element's index.")
                _expect_index(ck, str(err), bad)

    with parts.part("tolerances"):
        with ck.case("relative tolerance: a 1e-4 relative error on large gradients passes"):
            big = lambda x: np.sum(1000 * x**2)  # noqa: E731
            tolerance = ("Allow atol + rtol * |numerical| per element: with gradients near 3000 "
                         "a difference of 0.3 is within rtol=1e-3.")
            got = ck.call(gradcheck, big, lambda x: 2000 * x * (1 + 1e-4), rng.uniform(1, 2, size=5),
                          hint=tolerance)
            _expect_bool(ck, got, True, hint=tolerance)
        with ck.case("absolute tolerance: an error of 1e-4 where the gradient is 0 fails"):
            x = np.array([0.0, 0.5, -1.0])
            got = ck.call(gradcheck, square, lambda x: 2 * x + np.array([1e-4, 0, 0]), x,
                          raise_exception=False)
            _expect_bool(ck, got, False, hint="Where the numerical gradient is 0 only atol=1e-5 "
                         "applies: |analytical - numerical| <= atol + rtol * |numerical|.")
    with parts.part("shapes"):
        with ck.case("a derivative of the wrong shape raises ValueError naming both shapes"):
            x = rng.normal(size=(2, 3))
            err = ck.raises(ValueError, gradcheck, sinx, lambda x: dsinx(x)[0], x,
                            raise_exception=False,
                            hint="Compare shapes before values (numpy would broadcast (3,) against "
                                 "(2, 3) silently) and raise ValueError naming both shapes.")
            ck.check("(2, 3)" in str(err) and "(3,)" in str(err),
                     "the ValueError message does not name both shapes.",
                     expected="a message containing (2, 3) and (3,)", received=str(err),
                     hint="For example: f'df(x) has shape {analytical.shape}, x has shape {x.shape}'.")
    parts.done()


def _expect_bool(ck: Checker, got: object, want: bool, hint: str | None = None) -> None:
    ck.check(isinstance(got, (bool, np.bool_)), "gradcheck did not return True or False.",
             expected=want, received=got, hint="Return a bool, e.g. bool(np.all(ok)).")
    ck.check(bool(got) == want, f"gradcheck returned {bool(got)}.", expected=want,
             received=got, hint=hint or ("The analytical gradient is correct here: compare it with "
                                         "numerical_gradient(f, x, h) within atol + rtol * "
                                         "|numerical|." if want else "The analytical gradient "
                                         "is wrong here, so gradcheck must not pass."))


def _expect_index(ck: Checker, message: str, index: tuple[int, ...]) -> None:
    plain = re.sub(r"np\.\w+\((-?\d+)\)", r"\1", message).replace(" ", "")
    forms = ["(" + ",".join(map(str, index)) + ")", "[" + ",".join(map(str, index)) + "]"]
    ck.check(any(form in plain for form in forms),
             f"the error message does not name the worst element {index}.",
             expected=f"a message containing {index}", received=message,
             hint="Find it with np.unravel_index(np.argmax(error), x.shape) and put it in the "
                  "message, e.g. f'worst element at index {idx}'.")
