"""Check ``log_cosh(r)``: log(cosh(r)) elementwise for a numpy array ``r``, accurate and
without overflow (or numpy warnings) for any finite r; returns an array of r's shape."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import LOG2, log_cosh_reference, no_warning, number, quiet
from .messages import HINTS

ID = "ch12-log-cosh"
PARTS: tuple[str, ...] = ()

_RETURN = "return np.where(a < 1.0, near_zero, far)"
MISTAKES = (
    Mistake("log cosh straight", (_RETURN, "return np.log(np.cosh(r))"), None, "cosh.stable"),
    Mistake("the |r| form everywhere", (_RETURN, "return far"), None, "cosh.tiny"),
    Mistake("no log 2", (_RETURN, "return a + np.log1p(np.exp(-2 * a))"), None, "cosh.log2"),
    Mistake("r itself, not |r|", ("a = np.abs(r)", "a = r"), None, "cosh.stable"),
    Mistake("writes into r", ("a = np.abs(r)", "a = np.abs(r, out=r)"), None, "cosh.in-place"),
)

HUGE = "huge |r|: no overflow, no warning, |r| - log 2"
TINY = "log cosh(0) = 0, and tiny r give r²/2 to 12 digits"
EVEN = "log cosh is even: log_cosh(-r) = log_cosh(r)"
TINY_R = np.array([0.0, 1e-8, -1e-8, 1e-12, -1e-12, 1e-4, -3e-3])


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    shapes = [(7,), (3, 4)] + ([(2, 2, 5), (1,)] if hidden else [])
    moderate = [(f"moderate values, shape {s}", np.round(rng.uniform(-5, 5, size=s), 4))
                for s in shapes]
    big = [50.0, -50.0, 800.0, -800.0, 1e6, -1e300] + ([3e5, -711.0] if hidden else [])
    return {"moderate": moderate, "huge": np.array(big),
            "even": np.round(rng.uniform(0, 30, size=6), 3)}


def observe(ob: Observer, log_cosh: Callable[[np.ndarray], np.ndarray], *, seed: int,
            hidden: bool) -> None:
    inputs = cases(seed, hidden)
    for name, r in inputs["moderate"]:
        with ob.case(name):
            ob.put("result", number(log_cosh(r)))
            ob.put("r after", r)
    with ob.case(HUGE):
        ob.put("result", number(quiet(ob, "raised", log_cosh, inputs["huge"].copy())))
    with ob.case(TINY):
        ob.put("result", number(log_cosh(TINY_R.copy())))
    with ob.case(EVEN):
        r = inputs["even"]
        ob.put("plus", number(log_cosh(r.copy())))
        ob.put("minus", number(log_cosh(-r)))


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    what = "your log_cosh"
    for name, r in inputs["moderate"]:
        with ck.case(name):
            seen = obs.case(ck, name, what=what)
            got = _result(ck, seen["result"])
            after = seen["r after"]
            ck.check(isinstance(after, np.ndarray) and np.array_equal(after, r),
                     "log_cosh changed its input in place.", hint=HINTS["cosh.in-place"])
            a = np.abs(r)
            ck.close(got, log_cosh_reference(r), atol=1e-12, rtol=1e-10, what="log cosh",
                     mistakes=[(a + np.log1p(np.exp(-2 * a)), HINTS["cosh.log2"])],
                     hint=HINTS["cosh.stable"])
    with ck.case(HUGE):
        seen = obs.case(ck, HUGE, what=what)
        no_warning(ck, seen["raised"], what, HINTS["cosh.stable"])
        r = inputs["huge"]
        got = _result(ck, seen["result"])
        ck.check(_finite(got), "log_cosh returned inf or nan for a large |r|.",
                 expected=log_cosh_reference(r), received=got, hint=HINTS["cosh.stable"])
        ck.close(got, log_cosh_reference(r), atol=1e-9, rtol=1e-12, what="log cosh",
                 hint=HINTS["cosh.stable"])
    with ck.case(TINY):
        got = _result(ck, obs.case(ck, TINY, what=what)["result"])
        a = np.abs(TINY_R)
        ck.close(got, log_cosh_reference(TINY_R), atol=1e-300, rtol=1e-12, what="log cosh",
                 mistakes=[(a + np.log1p(np.exp(-2 * a)) - LOG2, HINTS["cosh.tiny"]),
                           (np.log(np.cosh(TINY_R)), HINTS["cosh.tiny"])],
                 hint=HINTS["cosh.tiny"])
    with ck.case(EVEN):
        seen = obs.case(ck, EVEN, what=what)
        plus, minus = _result(ck, seen["plus"]), _result(ck, seen["minus"])
        ck.close(_floats(ck, minus), _floats(ck, plus), atol=1e-12, what="log_cosh(-r)",
                 hint=HINTS["cosh.even"])
    ck.done()


def _result(ck: Checker, got: Any) -> Any:
    if got is None:
        ck.fail("the result is None.", hint=HINTS["return"])
    return got


def _finite(got: Any) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(got, dtype=float))))
    except (TypeError, ValueError):
        return False


def _floats(ck: Checker, got: Any) -> np.ndarray:
    try:
        return np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        ck.fail("the result is not a number or an array of numbers.", received=got)
