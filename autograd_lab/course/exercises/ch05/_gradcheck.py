"""gradcheck split in two: :func:`observe_gradcheck` runs the learner's Function in the kernel
(its backward once with a random upstream gradient, then forward at each input element moved
by ±eps) and keeps plain data; :func:`judge_gradcheck` computes the central differences from
it and compares them with the gradients backward gave, as ``numeric_gradcheck`` does."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._observe import Case, Observer
from ._byhand import attempt, judge_attempt

__all__ = ["observe_gradcheck", "judge_gradcheck", "EPS"]

EPS = 1e-6


def _upstream(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(0).normal(size=shape)


def observe_gradcheck(ob: Observer, Variable: type[Any], fn: Callable[..., Any],
                      inputs: tuple) -> None:
    """Inside a case: what the judge needs to gradcheck ``fn`` at ``inputs``."""
    def run() -> None:
        for x in inputs:
            x.grad = None
        out = fn(*inputs)
        shape = np.shape(data_of(out))
        ob.put("output shape", tuple(int(n) for n in shape))
        out.backward(Variable(_upstream(shape)))
        for k, x in enumerate(inputs):
            if not getattr(x, "requires_grad", False):
                continue
            ob.put(f"grad {k}", None if x.grad is None else np.asarray(data_of(x.grad),
                                                                         dtype=np.float64))
            plus, minus = [], []
            for i in np.ndindex(*x.shape):
                old = x.data[i]
                x.data[i] = old + EPS
                plus.append(np.asarray(data_of(fn(*inputs)), dtype=np.float64))
                x.data[i] = old - EPS
                minus.append(np.asarray(data_of(fn(*inputs)), dtype=np.float64))
                x.data[i] = old
            ob.put(f"plus {k}", plus)
            ob.put(f"minus {k}", minus)
    ob.put("inputs", len(inputs))
    attempt(ob, "raised", run)


def judge_gradcheck(ck: Checker, seen: Case, shapes: list[tuple[int, ...]],
                    hint: str | None = None, atol: float = 1e-5, rtol: float = 1e-3) -> None:
    """Fail as ``ck.call(gradcheck)`` did when the gradients backward gave differ from
    central differences (``shapes``: the inputs' shapes, each of them requiring grad)."""
    judge_attempt(ck, seen, "raised", "gradcheck", hint)
    g = _upstream(tuple(seen["output shape"]))
    for k, shape in enumerate(shapes):
        plus, minus = seen[f"plus {k}"], seen[f"minus {k}"]
        numeric = np.zeros(shape)
        for j, i in enumerate(np.ndindex(*shape)):
            numeric[i] = (float((g * plus[j]).sum()) - float((g * minus[j]).sum())) / (2 * EPS)
        analytic = seen[f"grad {k}"]
        if analytic is None or analytic.shape != numeric.shape:
            _fail(ck, f"input {k}: backward gave "
                      f"{'no gradient' if analytic is None else analytic.shape} "
                      f"for an input of shape {numeric.shape}", hint)
        if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
            i = np.unravel_index(int(np.argmax(np.abs(analytic - numeric))), numeric.shape)
            _fail(ck, f"gradient of input {k} differs from central differences at index "
                      f"{tuple(int(j) for j in i)}: backward gives {analytic[i]:.6g}, "
                      f"numerically {numeric[i]:.6g}", hint)


def _fail(ck: Checker, message: str, hint: str | None) -> None:
    ck.fail(f"your gradcheck raised GradcheckFailed: {message}", hint=hint or
            "Read the traceback above to find the failing line in your code.")
