"""Check ``center_rows(X)``: subtract from each row of a 2-D array that row's mean."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import keyed
from .messages import HINTS

ID = "ch00-center-rows"
PARTS: tuple[str, ...] = ()

_KEY = "return X - X.mean(axis=1, keepdims=True)"
MISTAKES = (
    Mistake("column means", ("axis=1, keepdims=True", "axis=0, keepdims=True"), None,
            "center.columns"),
    Mistake("the mean of the whole array", ("X.mean(axis=1, keepdims=True)", "X.mean()"), None,
            "center.whole"),
    Mistake("divides by the mean", ("X - X.mean(", "X / X.mean("), None, "center.formula"),
    Mistake("a list", (_KEY, "return (X - X.mean(axis=1, keepdims=True)).tolist()"), None,
            "center.array"),
    Mistake("in place", (_KEY, "X -= X.mean(axis=1, keepdims=True)\n    return X"), None,
            "center.in-place"),
    Mistake("means rounded to the input's dtype",
            (_KEY, "return X - X.mean(axis=1, keepdims=True).astype(X.dtype)"), None,
            "center.ints"),
)

INTEGERS = "an integer array gives floats"


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray]]:
    """(name, X) of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[int, ...]] = [(3, 5), (4, 4), (1, 6), (5, 1)]
    if hidden:
        shapes += [tuple(int(n) for n in rng.integers(2, 9, size=2)) for _ in range(2)]
    found = [(f"a {shape} array", np.round(rng.normal(2.0, 3.0, size=shape), 2))
             for shape in shapes]
    return found + [(INTEGERS, np.arange(12).reshape(3, 4))]


def observe(ob: Observer, center_rows: Callable[[np.ndarray], np.ndarray], *, seed: int,
            hidden: bool) -> None:
    found = cases(seed, hidden)
    for key, (_, X) in zip(keyed(name for name, _ in found), found):
        with ob.case(key):
            got = center_rows(X)
            ob.put("result", got)
            ob.put("type", type(got).__name__)
            ob.put("is an array", isinstance(got, np.ndarray))
            ob.put("X after the call", X)


def judge(ck: Checker, obs: Observations) -> None:
    found = cases(obs.seed, obs.hidden)
    for key, (name, X) in zip(keyed(name for name, _ in found), found):
        with ck.case(name):
            seen = obs.case(ck, key, what="your center_rows")
            expected = X - X.mean(axis=1, keepdims=True)
            if name == INTEGERS:
                ck.close(seen["result"], expected, atol=1e-12, what="result",
                         hint=HINTS["center.ints"])
                continue
            ck.check(seen["is an array"] is True, "the result is not a numpy array.",
                     expected="np.ndarray", received=seen["type"], hint=HINTS["center.array"])
            after = seen["X after the call"]
            ck.check(isinstance(after, np.ndarray) and np.array_equal(after, X),
                     "your function changed its input X.", hint=HINTS["center.in-place"])
            ck.close(seen["result"], expected, atol=1e-9, what="result",
                     hint=HINTS["center.formula"], mistakes=_mistakes(X))
    ck.done()


def _mistakes(X: np.ndarray) -> list[tuple[np.ndarray, str]]:
    found = [(X - X.mean(axis=0, keepdims=True), HINTS["center.columns"]),
             (X - X.mean(), HINTS["center.whole"])]
    if X.shape[0] == X.shape[1]:
        found.append((X - X.mean(axis=1), HINTS["center.keepdims"]))
    return found
