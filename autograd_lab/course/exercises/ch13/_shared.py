"""What chapter 13's exercise modules share: the checker that takes ``pkg=mygrad``, the
package's presence, and the outputs and gradients observed as plain arrays."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._observe import Case, Observations, Observer, raise_learner_error
from .messages import HINTS

PACKAGE = "the package"
"""The observation of whether a package was given (checked before any case)."""


def observe_pkg(ob: Observer, pkg: Any) -> bool:
    """Keep whether ``pkg`` looks like a package; True when the cases can run."""
    given = pkg is not None and hasattr(pkg, "Variable")
    with ob.case(PACKAGE):
        ob.put("given", given)
    return given


def judge_pkg(ck: Checker, obs: Observations) -> None:
    ck.check(obs.case(ck, PACKAGE).get("given") is True, "no package was given.",
             hint=HINTS["common.pkg"])


def put_data(ob: Observer, key: str, value: Any) -> bool:
    """Keep ``value``'s data (a Variable's ``.data``) under ``key``; False when it is None."""
    ob.put(key + " is None", value is None)
    if value is not None:
        ob.put(key, np.asarray(getattr(value, "data", value)))
    return value is not None


def put_grad(ob: Observer, key: str, v: Any) -> None:
    """Keep ``v.grad.data`` under ``key`` (None when ``v`` got no gradient)."""
    grad = getattr(v, "grad", None)
    ob.put(key, None if grad is None else np.asarray(grad.data))


def backward(ob: Observer, key: str, out: Any, grad: Any) -> None:
    """``out.backward(grad)``; what it raised is kept under ``key``."""
    ob.attempt(key, out.backward, grad)


def data(ck: Checker, seen: Case, key: str, what: str) -> Any:
    """The observed data under ``key``; fails when the learner's result was None."""
    if seen[key + " is None"]:
        ck.fail(f"the {what} is None.", hint=HINTS["common.return"])
    return seen[key]


def grad(ck: Checker, seen: Case, key: str, what: str, hint: str) -> np.ndarray:
    """The observed gradient under ``key``; fails when there was none."""
    got = seen[key]
    if got is None:
        ck.fail(f"{what} got no gradient.", hint=hint)
    return np.asarray(got)


def raised(ck: Checker, seen: Case, key: str, what: str, hint: str | None = None) -> None:
    """Report what a call kept under ``key`` raised, as the checker's call did."""
    err = seen[key]
    if err is not None:
        raise_learner_error(ck, err, what, hint)
