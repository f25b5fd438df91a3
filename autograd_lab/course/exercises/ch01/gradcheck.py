"""Check ``gradcheck(f, df, x, h=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True)``.

It returns True when ``|df(x) - numerical| <= atol + rtol * |numerical|`` everywhere;
otherwise it raises a RuntimeError naming the worst element's index, or returns
False when ``raise_exception=False``. Different shapes raise ValueError.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer, expect_raised
from .._parts import Parts
from .messages import HINTS

ID = "ch01-gradcheck"
PARTS = ("accepts a correct derivative", "reports a wrong derivative", "tolerances", "shapes")

MISTAKES = (
    Mistake("no relative tolerance", ("atol + rtol * np.abs(numerical)", "atol"), PARTS[2],
            "gradcheck.rtol"),
    Mistake("raises ValueError on a mismatch", ("raise RuntimeError(", "raise ValueError("),
            PARTS[1], "gradcheck.raise"),
    Mistake("no index in the message", ("worst element at index {idx}", "worst element"),
            PARTS[1], "gradcheck.index"),
    Mistake("no shape check", ("if analytical.shape != np.shape(x):", "if False:"), PARTS[3],
            "gradcheck.shapes"),
    Mistake("returns a number", ("return True", "return 1"), (PARTS[0], PARTS[2]), "gradcheck.bool"),
)


def _square(x: np.ndarray) -> float:
    return np.sum(x**2)


def _sinx(x: np.ndarray) -> float:
    return np.sum(np.sin(x) * x)


def _dsinx(x: np.ndarray) -> np.ndarray:
    return np.sin(x) + x * np.cos(x)


def _big(x: np.ndarray) -> float:
    return np.sum(1000 * x**2)


def _wrong_at(bad: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    other = (2, 3) if bad != (2, 3) else (0, 0)

    def df_bad(x: np.ndarray) -> np.ndarray:
        grad = _dsinx(x)
        grad[bad] += 0.5
        grad[other] += 0.01
        return grad
    return df_bad


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases, by name: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found: dict[str, Any] = {
        "square": rng.normal(size=4), "sinx": rng.normal(size=(3, 4)),
        "unchanged": rng.normal(size=(2, 2)), "missing factor": rng.normal(size=4)}
    bad = [(1, 2)] + ([tuple(int(i) for i in rng.integers(0, 3, size=2))] if hidden else [])
    found["wrong elements"] = [(b, rng.normal(size=(3, 4))) for b in bad]
    found["rtol"] = rng.uniform(1, 2, size=5)
    found["atol"] = np.array([0.0, 0.5, -1.0])
    found["shapes"] = rng.normal(size=(2, 3))
    return found


C_SQUARE = "a correct derivative of sum(x**2) passes"
C_SINX = "a correct derivative of sum(sin(x) * x) on (3, 4) passes"
C_UNCHANGED = "x is left unchanged"
C_FACTOR = "a derivative missing its factor 2 returns False (raise_exception=False)"
C_RTOL = "relative tolerance: a 1e-4 relative error on large gradients passes"
C_ATOL = "absolute tolerance: an error of 1e-4 where the gradient is 0 fails"
C_SHAPES = "a derivative of the wrong shape raises ValueError naming both shapes"


def _wrong_title(bad: tuple[int, ...]) -> str:
    return f"one wrong element at {bad} raises RuntimeError naming {bad}"


def observe(ob: Observer, gradcheck: Callable[..., bool], *, seed: int, hidden: bool) -> None:
    inputs = cases(seed, hidden)
    with ob.case(C_SQUARE):
        ob.put("result", gradcheck(_square, lambda x: 2 * x, inputs["square"]))
    with ob.case(C_SINX):
        ob.put("result", gradcheck(_sinx, _dsinx, inputs["sinx"]))
    with ob.case(C_UNCHANGED):
        x = inputs["unchanged"]
        gradcheck(_sinx, _dsinx, x)
        ob.put("x after the call", x)
    with ob.case(C_FACTOR):
        ob.put("result", gradcheck(_square, lambda x: x, inputs["missing factor"],
                                   raise_exception=False))
    for bad, x in inputs["wrong elements"]:
        with ob.case(_wrong_title(bad)):
            ob.put("returned", ob.attempt("raised", gradcheck, _sinx, _wrong_at(bad), x))
    with ob.case(C_RTOL):
        ob.put("result", gradcheck(_big, lambda x: 2000 * x * (1 + 1e-4), inputs["rtol"]))
    with ob.case(C_ATOL):
        ob.put("result", gradcheck(_square, lambda x: 2 * x + np.array([1e-4, 0, 0]),
                                   inputs["atol"], raise_exception=False))
    with ob.case(C_SHAPES):
        ob.put("returned", ob.attempt("raised", gradcheck, _sinx, lambda x: _dsinx(x)[0],
                                      inputs["shapes"], raise_exception=False))


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    what = "your gradcheck"
    rejected = HINTS["gradcheck.rejected"]
    parts = Parts(ck, PARTS)
    with parts.part(PARTS[0]):
        for title in (C_SQUARE, C_SINX):
            with ck.case(title):
                _expect_bool(ck, obs.case(ck, title, what=what, hint=rejected)["result"], True)
        with ck.case(C_UNCHANGED):
            after = obs.case(ck, C_UNCHANGED, what=what, hint=rejected)["x after the call"]
            x = inputs["unchanged"]
            ck.check(isinstance(after, np.ndarray) and np.array_equal(after, x),
                     "your gradcheck changed x.", expected=x, received=after,
                     hint=HINTS["gradcheck.x-changed"])
    with parts.part(PARTS[1]):
        with ck.case(C_FACTOR):
            _expect_bool(ck, obs.case(ck, C_FACTOR, what=what)["result"], False)
        for bad, _ in inputs["wrong elements"]:
            title = _wrong_title(bad)
            with ck.case(title):
                seen = obs.case(ck, title, what=what)
                err = expect_raised(ck, seen["raised"], seen.get("returned"), "RuntimeError",
                                    what, HINTS["gradcheck.raise"])
                _expect_index(ck, err.message, bad)
    with parts.part(PARTS[2]):
        with ck.case(C_RTOL):
            got = obs.case(ck, C_RTOL, what=what, hint=HINTS["gradcheck.rtol"])["result"]
            _expect_bool(ck, got, True, hint=HINTS["gradcheck.rtol"])
        with ck.case(C_ATOL):
            _expect_bool(ck, obs.case(ck, C_ATOL, what=what)["result"], False,
                         hint=HINTS["gradcheck.atol"])
    with parts.part(PARTS[3]):
        with ck.case(C_SHAPES):
            seen = obs.case(ck, C_SHAPES, what=what)
            err = expect_raised(ck, seen["raised"], seen.get("returned"), "ValueError", what,
                                HINTS["gradcheck.shapes"])
            ck.check("(2, 3)" in err.message and "(3,)" in err.message,
                     "the ValueError message does not name both shapes.",
                     expected="a message containing (2, 3) and (3,)", received=err.message,
                     hint=HINTS["gradcheck.shapes-message"])
    parts.done()


def _expect_bool(ck: Checker, got: object, want: bool, hint: str | None = None) -> None:
    ck.check(isinstance(got, (bool, np.bool_)), "gradcheck did not return True or False.",
             expected=want, received=got, hint=HINTS["gradcheck.bool"])
    ck.check(bool(got) == want, f"gradcheck returned {bool(got)}.", expected=want, received=got,
             hint=hint or HINTS["gradcheck.should-pass" if want else "gradcheck.should-fail"])


def _expect_index(ck: Checker, message: str, index: tuple[int, ...]) -> None:
    plain = re.sub(r"np\.\w+\((-?\d+)\)", r"\1", message).replace(" ", "")
    forms = ["(" + ",".join(map(str, index)) + ")", "[" + ",".join(map(str, index)) + "]"]
    ck.check(any(form in plain for form in forms),
             f"the error message does not name the worst element {index}.",
             expected=f"a message containing {index}", received=message,
             hint=HINTS["gradcheck.index"])
