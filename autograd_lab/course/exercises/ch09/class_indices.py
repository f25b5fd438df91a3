"""Check ``_class_indices(targets, logits)``: for logits of shape (N, C) and targets (an array, a
list or a Variable) of shape (N,) holding whole numbers in 0..C-1, return them as an integer
array; anything else raises ``ValueError`` saying what was expected: logits that are not 2-d,
targets of another shape, and values that are negative, >= C or not whole.

``Variable`` is the class the logits are made of (the learner's ``mygrad.Variable``; by default
autograd_lab's)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._observe import expect_raised
from .messages import HINTS

ID = "ch09-class-indices"
PARTS: tuple[str, ...] = ()

_VALUES = "(np.any(t != np.round(t)) or t.min() < 0 or t.max() >= logits.shape[1])"
MISTAKES = (
    Mistake("no ndim check", ("if logits.ndim != 2:", "if False:"), None, "indices.ndim"),
    Mistake("no shape check", ("if t.shape != (logits.shape[0],):", "if False:"), None,
            "indices.column"),
    Mistake("negatives allowed", (_VALUES, "(np.any(t != np.round(t)) or t.max() >= "
                                           "logits.shape[1])"), None, "indices.negative"),
    Mistake("C allowed", (_VALUES, "(np.any(t != np.round(t)) or t.min() < 0 or t.max() > "
                                   "logits.shape[1])"), None, "indices.too-big"),
    Mistake("fractions truncated", (_VALUES, "(t.min() < 0 or t.max() >= logits.shape[1])"),
            None, "indices.whole"),
    Mistake("floats returned", ("return t.astype(np.intp)", "return t.astype(np.float64)"), None,
            "indices.int"),
)

VALID_FORMS = ("an int array", "a float array of whole numbers", "a Variable", "a list")


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    n, c = (5, 4) if not hidden else (7, 10)
    logits = rng.normal(size=(n, c))
    targets = rng.integers(0, c, size=n)
    flat, deep = rng.normal(size=(c,)), rng.normal(size=(n, c, 2))
    negative, too_big, fraction = targets.copy(), targets.copy(), targets.astype(np.float64)
    negative[1], too_big[0], fraction[-1] = -1, c, 1.5
    rejects = {
        "logits that are not (N, C) raise ValueError": [
            ("1-d logits", targets, flat, "indices.ndim"),
            ("3-d logits", targets, deep, "indices.ndim")],
        f"targets not of shape ({n},) raise ValueError": [
            ("targets of shape (N, 1)", targets.reshape(n, 1), logits, "indices.column"),
            ("one target too many", np.append(targets, 0), logits, "indices.count")],
        f"values outside 0..{c - 1}, or not whole, raise ValueError": [
            ("a target of -1", negative, logits, "indices.negative"),
            (f"a target of {c} (= C)", too_big, logits, "indices.too-big"),
            ("a target of 1.5", fraction, logits, "indices.whole")],
    }
    return {"n": n, "c": c, "logits": logits, "targets": targets, "rejects": rejects}


def _valid_title(n: int, c: int) -> str:
    return f"targets of shape ({n},) in 0..{c - 1}, as ints, floats and a Variable"


def observe(ob: Observer, class_indices: Callable[[Any, Any], Any], *, seed: int, hidden: bool,
            Variable: Any = None) -> None:
    Var = Variable if Variable is not None else library().Variable
    inputs = cases(seed, hidden)
    logits, targets = Var(inputs["logits"]), inputs["targets"]
    with ob.case(_valid_title(inputs["n"], inputs["c"])):
        for given, what in zip((targets, targets.astype(np.float64),
                                Var(targets.astype(np.float64)), list(targets)), VALID_FORMS):
            ob.put(what, np.asarray(class_indices(given, logits)))
    for title, calls in inputs["rejects"].items():
        with ob.case(title):
            for why, t, lg, _ in calls:
                ob.put(f"returned: {why}", ob.attempt(f"raised: {why}", class_indices, t,
                                                      Var(lg)))


def judge(ck: Checker, obs: Observations) -> None:
    what = "your _class_indices"
    inputs = cases(obs.seed, obs.hidden)
    n, targets = inputs["n"], inputs["targets"]
    title = _valid_title(n, inputs["c"])
    with ck.case(title):
        seen = obs.case(ck, title, what=what, hint=HINTS["indices.read"])
        for form in VALID_FORMS:
            got = seen[form]
            ck.check(isinstance(got, np.ndarray) and np.issubdtype(got.dtype, np.integer),
                     f"for {form}, the result has dtype {getattr(got, 'dtype', type(got))}; "
                     "indices have to be ints.", expected="an integer dtype",
                     received=getattr(got, "dtype", got), hint=HINTS["indices.int"])
            ck.check(got.shape == (n,) and np.array_equal(got, targets),
                     f"for {form}, the result is not the targets as ints.", expected=targets,
                     received=got, hint=HINTS["indices.same"])
    for title, calls in inputs["rejects"].items():
        with ck.case(title):
            seen = obs.case(ck, title, what=what)
            for why, _, _, hint in calls:
                err = expect_raised(ck, seen[f"raised: {why}"], seen.get(f"returned: {why}"),
                                    "ValueError", what, HINTS[hint])
                ck.check(len(err.message) > 20, f"the ValueError for {why} has no message.",
                         received=err.message, hint=HINTS["indices.message"])
    ck.done()
