"""Kernel-side pieces the chapter 06 checks share: the course's ``_counter`` and
``_check_inplace``, put in the learner's namespaces where another exercise's own one fails (with
a one-line note naming that exercise), and the helpers that find those namespaces. Nothing here
judges an exercise's own answer."""
from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np

from .._common import swapped_names
from .._observe import Observer, raised

def named_call(change: Callable[[Any], Any], value: Any, label: str) -> Callable[[], Any]:
    """``change(value)`` as a function with no arguments, named after the operation."""
    def call() -> Any:
        return change(value)
    call.__name__ = label
    return call


# -- the course's pieces, for checks that must not depend on another exercise ------------------
def _course_counter(v: Any) -> list[int]:
    """The course's _counter: v's one-element version counter, made the first time."""
    counter = v.__dict__.get("_counter")
    if counter is None:
        counter = v._counter = [0]
    return counter


def _counter_problem(counter: Any, Variable: Any) -> tuple[str, str] | None:
    """What is wrong with the learner's ``_counter`` (None if nothing): it must give a new
    Variable ``[0]``, the same list on every call, kept in ``v._counter``, one per Variable."""
    try:
        a, b = Variable(np.zeros(2)), Variable(np.zeros(2))
        first = counter(a)
        if not isinstance(first, list) or first != [0]:
            return (f"_counter(v) of a new Variable is {first!r}, not [0]",
                    "A new Variable has made no change yet: its counter starts as [0], a "
                    "one-element list (a list, so that a detached alias can share it).")
        if counter(a) is not first:
            return ("_counter(v) gave a different list on the second call",
                    "Make the list only the first time (when v has none yet) and keep it: a new "
                    "list on every call forgets the changes counted so far.")
        if a.__dict__.get("_counter") is not first:
            return ("_counter(v) did not keep its list in v._counter",
                    "Keep the counter in v._counter: detach gives the new Variable its counter "
                    "by setting out._counter, and _counter must then return that one.")
        if counter(b) is first:
            return ("two Variables got the same counter",
                    "Each Variable gets its own list (kept on the Variable, not on the class or "
                    "in a global); only detach shares one, on purpose.")
    except Exception as err:  # noqa: BLE001 - the learner's code may raise anything
        return (f"_counter raised {type(err).__name__}: {err}",
                "Read the traceback above to find the failing line in your _counter.")
    return None


def _namespaces(*fns: Any) -> list[dict[str, Any]]:
    """The distinct global namespaces of the learner's functions (those that have one)."""
    found: dict[int, dict[str, Any]] = {}
    for fn in fns:
        ns = getattr(getattr(fn, "fget", fn), "__globals__", None)
        if isinstance(ns, dict):
            found.setdefault(id(ns), ns)
    return list(found.values())


_MISSING = object()


@contextlib.contextmanager
def _with_course(namespaces: list[dict[str, Any]], name: str, course: Any,
                 problem: str | None, exercise: str) -> Iterator[None]:
    """Run with ``name`` in each namespace replaced by the course's ``course``, then put the
    learner's back. ``problem``: why the learner's own fails its exercise (None if it passes):
    then say so in one line naming the exercise."""
    if problem is not None:
        print(f"note: {problem} -- exercise {exercise} fails its own check; this check uses "
              f"the course's {name}.")
    with contextlib.ExitStack() as stack:
        for ns in namespaces:
            stack.enter_context(swapped_names(ns, {name: course}))
        yield


def _own_counter(namespaces: list[dict[str, Any]], Variable: Any) -> str | None:
    """Why the learner's _counter in these namespaces fails ch06-detach (None if it passes)."""
    for ns in namespaces:
        own = ns.get("_counter")
        if callable(own) and own is not _course_counter:
            found = _counter_problem(own, Variable)
            return None if found is None else found[0]
    return None


# -- ch06-inplace-rules --------------------------------------------------------------------------
_LEAF_WORDS = "a leaf Variable that requires grad is being used in an in-place operation"


def _course_check_inplace(GradMode: Any) -> Callable[..., None]:
    """The course's _check_inplace, reading the learner's ``GradMode``."""
    def _check_inplace(self: Any, other: Any = None) -> None:
        if not GradMode.enabled:
            return
        if self.requires_grad and self.is_leaf:
            raise RuntimeError(_LEAF_WORDS + ". Wrap the update in `with no_grad():` (as an "
                               "optimizer step does).")
        if self.requires_grad or getattr(other, "requires_grad", False):
            raise RuntimeError("mygrad does not record in-place operations: this one involves "
                               "a Variable that requires grad. Write it out of place (y = y + "
                               "1) or under `with no_grad():`.")
    return _check_inplace


def _rules_checker(own: Any) -> None:
    """Observe and judge ch06-inplace-rules on ``own``, here (only to decide the note): not
    through its checker, which in the grader's sandbox would show a record of that exercise."""
    from .._exercise import judge_record
    from . import inplace_rules
    ob = Observer(inplace_rules.ID, 0, False)
    inplace_rules.observe(ob, own, seed=0, hidden=False)
    judge_record(inplace_rules, ob.record())


def _own_rules_problem(own: Any) -> str | None:
    """Why the learner's _check_inplace fails ch06-inplace-rules (None if it passes)."""
    if own is _MISSING:
        return "_check_inplace is not defined"
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            _rules_checker(own)
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return "your _check_inplace does not pass its own check"
    return None


def _counter_namespaces(Variable: Any) -> list[dict[str, Any]]:
    """Where the learner's version counting looks up _counter: the globals of _version, the
    in-place methods, bump_version and detach."""
    add = getattr(Variable, "add_", None)
    scope = getattr(add, "__globals__", {})
    return _namespaces(Variable.__dict__.get("_version"), add, scope.get("bump_version"),
                       Variable.__dict__.get("detach"))


class _Stop(Exception):
    """Ends a case of :class:`Steps` at the learner's call that raised (recorded before)."""


class Steps:
    """An observer's case made of several calls of the learner's code, each named: the first
    that raises is recorded as ``failed at`` (its key), ``failed name`` (the function's name)
    and ``error``, and ends the case; the judge reports it where it checks that call
    (``_judge.ran``), after the checks of the calls before it."""

    def __init__(self, ob: Observer) -> None:
        self.ob = ob

    @contextlib.contextmanager
    def case(self, name: str) -> Iterator[Steps]:
        with self.ob.case(name):
            try:
                yield self
            except _Stop:
                pass

    def call(self, key: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - the learner's code may raise anything
            self.fail(key, getattr(fn, "__name__", None) or repr(fn), err)

    def fail(self, key: str, name: str, err: BaseException) -> NoReturn:
        self.ob.put("failed at", key)
        self.ob.put("failed name", name if type(name) is str else "?")
        self.ob.put("error", raised(err))
        raise _Stop from None
