"""What chapter 09's exercises share: their checker when ``observe`` takes one more keyword,
the judging of a call that should raise, and whether section 3's ``log_softmax`` is shadowed."""
from __future__ import annotations

from typing import Any



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
