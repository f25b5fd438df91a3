"""What chapter 08's exercise modules share: learner calls that remember where they raised,
and the judge's side of them.

A case of ``observe`` runs the learner's calls through :func:`call`; the first call that raises
ends the case with its exception and the label of the call (``"raised at"``). The judge walks
the same steps and, at each, :meth:`Seen.called` raises that exception the way the old checker
did for that call (its own ``what`` and hint), so the messages stay the call's own.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._common import Checker, format_value, library
from .._observe import Case, Observations, Observer, Raised, raise_learner_error, raised

__all__ = ["Stop", "case", "call", "Seen", "seen", "expect_raised", "put_class_name", "class_name",
           "variable_class"]


class Stop(Exception):
    """Ends an observed case after a learner's call raised (kept as the case's values)."""


@contextlib.contextmanager
def case(ob: Observer, name: str) -> Iterator[None]:
    """``ob.case(name)`` that ends quietly at a :class:`Stop`."""
    with ob.case(name):
        try:
            yield
        except Stop:
            pass


def call(ob: Observer, label: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; when it raises, keep the exception and ``label`` and stop."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - the learner's code may raise anything
        ob.put("raised at", label)
        ob.put("raised", raised(err))
        raise Stop from None


class Seen:
    """One observed case, as the judge walks it."""

    def __init__(self, ck: Checker, values: Case) -> None:
        self.ck, self.values = ck, values

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def called(self, label: str, what: str, hint: str | None = None) -> None:
        """Raise, the checker's way, what the call ``label`` raised (nothing if it did not)."""
        if self.values.get("raised at") == label:
            err = self.values["raised"]
            if not isinstance(err, Raised):
                self.ck.fail("the observation of this case is not readable.")
            raise_learner_error(self.ck, err, what, hint)


def seen(ck: Checker, obs: Observations, name: str, what: str = "your code") -> Seen:
    return Seen(ck, obs.case(ck, name, what=what))


def expect_raised(ck: Checker, err: Any, returned: Any, wanted: str, what: str,
                  hint: str | None) -> Raised:
    """The judge's side of :meth:`Checker.raises` on an ``ob.attempt`` observation."""
    if err is None:
        ck.fail(f"{what} did not raise.", expected=wanted,
                received=f"it returned {format_value(returned)}", hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError") and wanted != "NotImplementedError":
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a(wanted):
        ck.fail(f"{what} raised the wrong kind of error.", expected=wanted,
                received=f"{err.name}: {err.message}", hint=hint)
    return err



CLASS_CASE = "the learner's class"


def put_class_name(ob: Observer, cls: Any) -> None:
    """Keep the name of the learner's class: the cases' titles show it, as before."""
    with ob.case(CLASS_CASE):
        ob.put("name", getattr(cls, "__name__", None))


def class_name(ck: Checker, obs: Observations, default: str) -> str:
    """The name :func:`put_class_name` kept (``default`` when it is not a short identifier)."""
    name = obs.case(ck, CLASS_CASE).get("name")
    return name if isinstance(name, str) and name.isidentifier() and len(name) < 80 \
        else default


def variable_class(layer_class: type[Any]) -> Any:
    """The Variable class of the library a learner's layer class was written with (kernel side:
    sets the stage)."""
    import sys
    module = sys.modules.get(layer_class.__module__)
    found = getattr(module, "Variable", None)
    if found is None:
        import __main__
        found = getattr(__main__, "Variable", None)
    return found if found is not None else library().Variable
