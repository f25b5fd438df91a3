"""Check ``softmax_rows(x, out)``: the numerically stable softmax of each row of the 2-d
float64 array ``x``, written into ``out`` (same shape), ``x`` unchanged, ``out`` returned."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._shared import (filled, judge_kernel, judge_structure, observe_kernel, quiet_call, shown,
                      softmax, unwritten_hint)
from .messages import HINTS

ID = "ch07-softmax-rows"
PARTS: tuple[str, ...] = ()
NAME = "softmax_rows"

MISTAKES = (
    Mistake("rows not normalised", ("out[i, j] /= s", "out[i, j] /= 1.0"), None,
            "softmax.unnormalised"),
    Mistake("no shift by the row maximum", ("e = np.exp(x[i, j] - m)", "e = np.exp(x[i, j])"),
            None, "softmax.overflow"),
    Mistake("returns x", ("return out", "return x"), None, "kernel.return-out"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray]]:
    """(name, x): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = [
        ("a (3, 5) input", np.round(rng.normal(size=(3, 5)), 3)),
        ("a (4, 4) input (square: rows, not columns)", np.round(2 * rng.normal(size=(4, 4)), 3)),
        ("one row, one column", np.array([[3.0]])),
        ("a row of equal values gives 1/n each", np.full((2, 4), 7.5)),
        ("logits of +-1000 (exp would overflow without the shift)",
         np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.0]])),
        ("no rows: a (0, 4) input", np.zeros((0, 4))),
    ]
    if hidden:
        found += [("a (6, 3) input", rng.normal(size=(6, 3))),
                  ("a (2, 50) input with large logits", 300 * rng.normal(size=(2, 50))),
                  ("a (17, 1) input: every row is [1]", rng.normal(size=(17, 1)))]
    return [(name, np.ascontiguousarray(x, dtype=np.float64)) for name, x in found]


def global_shift_pattern(out: np.ndarray, x: np.ndarray) -> bool:
    """True if ``out`` fails (inf or nan) exactly where a softmax shifted by the maximum of the
    whole array, instead of each row's, fails: rows far below the global maximum underflow."""
    if not x.size:
        return False
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max())
        shifted = e / e.sum(axis=1, keepdims=True)
    bad = ~np.isfinite(shifted)
    return bool(bad.any() and np.array_equal(bad, ~np.isfinite(out)))


def observe(ob: Observer, softmax_rows: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    observe_kernel(ob, softmax_rows, NAME)
    for name, x in cases(seed, hidden):
        with ob.case(name):
            out = filled(x.shape)
            with np.errstate(all="ignore"):
                result = ob.attempt("raised", quiet_call, softmax_rows, x, out)
            ob.put("x after the call", x)
            ob.put("out", out)
            ob.put("returned out", result is out)
            ob.put("result", result)


def _hint(out: Any, x: np.ndarray, expected: np.ndarray) -> str:
    hint = HINTS["softmax.formula"]
    if (isinstance(out, np.ndarray) and out.shape == x.shape and out.dtype.kind == "f"
            and not np.isfinite(out).all() and np.isfinite(expected).all()):
        hint = HINTS["softmax.overflow"] if np.abs(x).max() > 700 else (
            unwritten_hint(out, expected) or hint)
        if global_shift_pattern(out, x):
            hint = HINTS["softmax.global-max"]
    return hint


def _raised(ck: Checker, err: Raised, x: np.ndarray) -> None:
    """A division by a zero sum (every exp underflowed) or an overflow: the missing shift."""
    text = f"{err.name}: {err.message}"
    if ("OverflowError" in text or "ZeroDivisionError" in text) and np.abs(x).max() > 700:
        first = str(ck.error(f"your {NAME} raised {text}")).splitlines()[0]
        ck.fail(f"your kernel failed on these logits: {first}", hint=HINTS["softmax.overflow"])
    raise_learner_error(ck, err, f"your {NAME}", HINTS["kernel.numba"])


def judge(ck: Checker, obs: Observations) -> None:
    kernel = judge_kernel(ck, obs, NAME)
    for name, x in cases(obs.seed, obs.hidden):
        with ck.case(name):
            seen = obs.case(ck, name, what=f"your {NAME}", hint=HINTS["kernel.numba"])
            if isinstance(seen["raised"], Raised):
                _raised(ck, seen["raised"], x)
            expected = softmax(x)
            ck.check(np.array_equal(seen["x after the call"], x),
                     "your kernel changed its input x.", hint=HINTS["softmax.x-changed"])
            out = seen["out"]
            mistakes = []
            if x.size:
                shifted = np.exp(x - x.max(axis=1, keepdims=True))
                with np.errstate(all="ignore"):
                    mistakes = [(shifted, HINTS["softmax.unnormalised"]),
                                (softmax(x, axis=0), HINTS["softmax.columns"]),
                                (shifted / shifted.sum(), HINTS["softmax.whole-sum"])]
            ck.close(out, expected, atol=1e-12, rtol=1e-9, what="content of out",
                     hint=_hint(out, x, expected), mistakes=mistakes)
            ck.check(seen["returned out"] is True, "your kernel did not return out.",
                     expected="the array out itself", received=shown(seen["result"]),
                     hint=HINTS["kernel.return-out"])
    judge_structure(ck, kernel.get("source"), NAME, {"x": 2, "out": 2})
    ck.done()
