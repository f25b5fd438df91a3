"""What chapter 09's exercises share: their checker when ``observe`` takes one more keyword,
the judging of a call that should raise, and whether section 3's ``log_softmax`` is shadowed."""
from __future__ import annotations

from typing import Any

from .._common import Checker
from .._observe import Raised


def expect_raised(ck: Checker, err: Any, returned: Any, wanted: str, what: str,
                  hint: str) -> Raised:
    """The learner's call raised ``wanted`` (as :meth:`Checker.raises` checked it)."""
    if err is None:
        ck.fail(f"{what} did not raise.", expected=wanted, received=f"it returned {returned!r}",
                hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError") and wanted != "NotImplementedError":
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a(wanted):
        ck.fail(f"{what} raised the wrong kind of error.", expected=wanted,
                received=f"{err.name}: {err.message}", hint=hint)
    return err


def takes_dim(fn: Any) -> bool:
    """Whether ``fn`` takes a ``dim`` argument (section 3's ``log_softmax(x, dim=-1)`` does)."""
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "dim" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def shadowed_log_softmax(fn: Any) -> bool:
    """True if ``fn`` looks ``log_softmax`` up in a namespace (the notebook's) where it is a
    function without a ``dim`` argument although section 3's cell has run there."""
    names = getattr(fn, "__globals__", None)
    code = getattr(fn, "__code__", None)
    if not isinstance(names, dict) or code is None or "log_softmax" not in code.co_names:
        return False
    found = names.get("log_softmax")
    return callable(found) and not takes_dim(found)
