"""What the chapter 06 judges share: reading a call observed with ``Observer.attempt``."""
from __future__ import annotations

from .._common import Checker, format_value
from .._observe import Case, Raised, raise_learner_error


def expect_raised(ck: Checker, seen: Case, key: str, label: str, wanted: str,
                  hint: str | None) -> Raised:
    """The error the call ``label`` (observed under ``key``) raised, as ``Checker.raises`` has
    it: an untouched stub is "not done yet", no error or another kind fails the case."""
    err = seen[key]
    if err is None:
        text = seen.get(key + " returned repr")  # a repr where the value is no plain data
        shown = format_value(seen.get(key + " returned")) if not isinstance(text, str) else \
            text if len(text) <= 200 else text[:197] + "..."
        ck.fail(f"your {label} did not raise.", expected=wanted, received=f"it returned {shown}",
                hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError") and wanted != "NotImplementedError":
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a(wanted):
        ck.fail(f"your {label} raised the wrong kind of error.", expected=wanted,
                received=f"{err.name}: {err.message}", hint=hint)
    return err


def expect_ran(ck: Checker, seen: Case, key: str, label: str, hint: str | None = None) -> None:
    """The call ``label`` (observed under ``key``) ran without an error, as ``Checker.call``
    has it."""
    err = seen[key]
    if err is None:
        return
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    raise_learner_error(ck, err, f"your {label}", hint)



def ran(ck: Checker, seen: Case, key: str, hint: str | None = None) -> None:
    """The call ``key`` of a ``Steps`` case ran; if it is the one that raised, report it as
    ``Checker.call`` does ("your <name> raised ...", or "not done yet")."""
    if seen.get("failed at") != key:
        return
    err = seen["error"]
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    raise_learner_error(ck, err, f"your {seen['failed name']}", hint)
