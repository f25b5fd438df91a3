"""The note the checks of Mul, ReLU and FixedReLU print when the learner's ``apply`` fails its
own exercise (they run the learner's forward and backward with the course's apply instead);
chapter 05's checks print it too, through the package's public ``note_apply``."""
from __future__ import annotations

import contextlib
import io
from typing import Any

from .._exercise import decide
from . import own_apply


def own_apply_fails(Function: Any) -> bool:
    """Whether the learner's ``Function.apply`` fails exercise ch03-own-apply: observed and
    judged here, quietly (in the grader's sandbox too, where a check would only show its
    record instead of deciding)."""
    if Function is None:
        return False
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            decide(own_apply, Function)
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return True
    return False


def note_apply(ns: dict[str, Any]) -> None:
    """One line when the learner's apply fails: this check does not use it."""
    if own_apply_fails(ns.get("Function")):
        print("note: exercise ch03-own-apply fails its own check; this check runs your "
              "forward and backward with the course's apply instead.")
