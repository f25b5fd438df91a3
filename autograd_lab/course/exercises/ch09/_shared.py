"""What chapter 09's exercises share: their checker when ``observe`` takes one more keyword,
the judging of a call that should raise, and whether section 3's ``log_softmax`` is shadowed."""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from .._common import Checker
from .._exercise import judge_record
from .._observe import Observer, Raised, observe_only, show_record


def keyword_checker(module: types.ModuleType, keyword: str) -> Callable[..., None]:
    """The ``check.chNN_x`` of an exercise whose ``observe`` takes one more keyword (such as
    ``Variable``, the class the learner's library builds its inputs with)."""
    def check(*objects: Any, seed: int = 0, hidden: bool = False, **extra: Any) -> None:
        unknown = set(extra) - {keyword}
        if unknown:
            raise TypeError(f"{module.ID.replace('-', '_')}() got an unexpected keyword "
                            f"argument {sorted(unknown)[0]!r}")
        ob = Observer(module.ID, seed, hidden)
        module.observe(ob, *objects, seed=seed, hidden=hidden, **extra)
        record = ob.record()
        if observe_only():
            show_record(record)
            return
        judge_record(module, record)

    check.__name__ = check.__qualname__ = module.ID.replace("-", "_")
    check.__doc__ = module.__doc__
    check.__module__ = module.__name__
    check.exercise = module  # type: ignore[attr-defined]
    return check


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
