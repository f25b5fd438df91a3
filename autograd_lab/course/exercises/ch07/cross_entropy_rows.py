"""Check the fused kernel ``cross_entropy_rows(x, targets, grad)``: for logits ``x`` (N, C)
and one class index per row, return the SUMMED loss, sum_i (log sum_j exp x[i, j] -
x[i, t_i]), computed stably (the row maximum subtracted before exp), and write
``grad[i] = softmax(x[i]) - onehot(t_i)``, leaving ``x`` unchanged."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._shared import (filled, judge_kernel, judge_structure, observe_kernel, quiet_call,
                      softmax, unwritten_hint)
from .messages import HINTS

ID = "ch07-cross-entropy-rows"
PARTS: tuple[str, ...] = ()
NAME = "cross_entropy_rows"

MISTAKES = (
    Mistake("returns the mean", ("return total", "return total / rows"), None, "xent.mean"),
    Mistake("no onehot", ("grad[i, t] -= 1.0", "grad[i, t] -= 0.0"), None, "xent.no-onehot"),
    Mistake("the sign", ("total += math.log(s) + m - x[i, t]", "total -= math.log(s) + m - x[i, t]"),
            None, "xent.sign"),
    Mistake("no shift by the row maximum", (
        "e = math.exp(x[i, j] - m)\n            grad[i, j] = e\n            s += e\n"
        "        t = targets[i]\n        total += math.log(s) + m - x[i, t]",
        "e = math.exp(x[i, j])\n            grad[i, j] = e\n            s += e\n"
        "        t = targets[i]\n        total += math.log(s) - x[i, t]"), None, "xent.shift"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, x, targets): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = [("a (4, 3) batch", np.round(rng.normal(size=(4, 3)), 3)),
             ("a (5, 10) batch", np.round(2 * rng.normal(size=(5, 10)), 3)),
             ("logits of +-1000 (exp would overflow without the shift)",
              np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.0]]))]
    if hidden:
        found += [("a (9, 7) batch, scale 300", 300 * rng.normal(size=(9, 7))),
                  ("one row, one class", np.array([[2.5]]))]
    result = []
    for name, x in found:
        x = np.ascontiguousarray(x, dtype=np.float64)
        result.append((name, x, rng.integers(0, x.shape[1], size=x.shape[0]).astype(np.int64)))
    return result


def observe(ob: Observer, cross_entropy_rows: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    observe_kernel(ob, cross_entropy_rows, NAME)
    for name, x, t in cases(seed, hidden):
        with ob.case(name):
            grad = filled(x.shape)
            with np.errstate(all="ignore"):
                total = ob.attempt("raised", quiet_call, cross_entropy_rows, x, t, grad)
            ob.put("x after the call", x)
            ob.put("grad", grad)
            ob.put("loss", float(np.asarray(total, dtype=np.float64)))


def _raised(ck: Checker, err: Raised) -> None:
    text = f"{err.name}: {err.message}"
    if "OverflowError" in text or "ZeroDivisionError" in text:
        first = str(ck.error(f"your {NAME} raised {text}")).splitlines()[0]
        ck.fail(f"your kernel failed on these logits: {first}", hint=HINTS["xent.shift"])
    raise_learner_error(ck, err, f"your {NAME}", HINTS["kernel.numba"])


def judge(ck: Checker, obs: Observations) -> None:
    kernel = judge_kernel(ck, obs, NAME)
    for name, x, t in cases(obs.seed, obs.hidden):
        with ck.case(name):
            seen = obs.case(ck, name, what=f"your {NAME}", hint=HINTS["kernel.numba"])
            if isinstance(seen["raised"], Raised):
                _raised(ck, seen["raised"])
            m = x.max(axis=1, keepdims=True)
            lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
            rows = np.arange(len(t))
            expected = float((lse - x[rows, t]).sum())
            want_grad = softmax(x)
            want_grad[rows, t] -= 1.0
            ck.check(np.array_equal(seen["x after the call"], x),
                     "your kernel changed its input x.", hint=HINTS["xent.x-changed"])
            got = seen["loss"]
            ck.check(np.isfinite(got) or not np.isfinite(expected), "the loss is inf or nan.",
                     expected=expected, received=got, hint=HINTS["xent.shift"])
            ck.close(got, expected, rtol=1e-9, atol=1e-9, what="the summed loss",
                     hint=HINTS["xent.loss"],
                     mistakes=[(expected / len(t), HINTS["xent.mean"]),
                               (-expected, HINTS["xent.sign"])])
            grad = seen["grad"]
            hint = unwritten_hint(grad, want_grad) or (
                HINTS["xent.shift"] if not np.isfinite(grad).all() else HINTS["xent.grad"])
            ck.close(grad, want_grad, rtol=1e-9, atol=1e-12, what="grad", hint=hint,
                     mistakes=[(softmax(x), HINTS["xent.no-onehot"]),
                               (want_grad / len(t), HINTS["xent.grad-mean"])])
    judge_structure(ck, kernel.get("source"), NAME, {"x": 2, "grad": 2})
    ck.done()
