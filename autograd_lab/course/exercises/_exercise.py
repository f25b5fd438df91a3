"""An exercise as data: its id, parts, cases, ``observe`` and ``judge``, and its known mistakes.

One module per exercise, in its chapter's package (``chNN/<slug>.py``), defines::

    ID = "ch01-central-difference"
    PARTS = ("the formula with a given h", "the default h")    # or () for one verdict
    def observe(ob, central_difference, *, seed, hidden): ...  # in the learner's kernel
    def judge(ck, obs): ...                                    # anywhere; decides
    MISTAKES = (Mistake(...), ...)                             # what the tests make sure it catches

and the chapter's ``__init__`` turns it into the checker the notebooks call with
:func:`checker`. :mod:`._observe` says what each half may do.
"""
from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._common import Checker
from ._observe import Observations, Observer, observe_only, show_record

__all__ = ["Mistake", "checker", "decide", "judge_record", "is_observed"]


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer, as data: the tests apply ``replace`` (old text, new text) to the
    key's solution of the exercise and expect the check to fail exactly the parts ``fails``
    names (one part's name, or several; ``None`` for an exercise without parts), with the
    chapter catalog's hint ``hint`` in its message."""

    name: str
    replace: tuple[str, str]
    fails: str | tuple[str, ...] | None
    hint: str

    @property
    def failed_parts(self) -> frozenset[str | None]:
        return frozenset(self.fails if isinstance(self.fails, tuple) else (self.fails,))


def is_observed(module: types.ModuleType) -> bool:
    """Whether an exercise module is written as ``observe`` and ``judge``."""
    return callable(getattr(module, "observe", None)) and callable(getattr(module, "judge", None))


def judge_record(module: types.ModuleType, record: dict[str, Any]) -> Checker:
    """Run ``module.judge`` on a record (after the JSON round trip the grader's copy takes).

    Raises as a checker does (``AssertionError``, ``PartsFailed``, ``NotImplementedError``);
    returns the :class:`Checker` it used."""
    plain = json.loads(json.dumps(record, allow_nan=False))
    obs = Observations(plain)
    ck = Checker(module.ID, seed=obs.seed, hidden=obs.hidden)
    module.judge(ck, obs)
    return ck


def decide(module: types.ModuleType, *objects: Any, seed: int = 0, hidden: bool = False,
           **named: Any) -> None:
    """Observe and judge one exercise here, whatever the kernel is: raises as its check does.

    For a check that asks whether *another* exercise passes (the notes "exercise X fails its own
    check", the loader's module checks): in the grader's sandbox ``checker``'s function would
    only show a record and never fail."""
    ob = Observer(module.ID, seed, hidden)
    module.observe(ob, *objects, seed=seed, hidden=hidden, **named)
    judge_record(module, ob.record())


def checker(module: types.ModuleType,
            keywords: tuple[str, ...] | None = None) -> Callable[..., None]:
    """The function ``check.chNN_x`` for an exercise module: observe, then judge (or, in the
    grader's sandbox, observe and show the record). Keyword objects (``Variable=``, ``pkg=``)
    go on to ``observe``; with ``keywords``, any other keyword is a ``TypeError``."""
    name = module.ID.replace("-", "_")

    def check(*objects: Any, seed: int = 0, hidden: bool = False, **named: Any) -> None:
        unknown = sorted(set(named) - set(keywords)) if keywords is not None else []
        if unknown:
            raise TypeError(f"{name}() got an unexpected keyword argument {unknown[0]!r}")
        ob = Observer(module.ID, seed, hidden)
        module.observe(ob, *objects, seed=seed, hidden=hidden, **named)
        record = ob.record()
        if observe_only():
            show_record(record)
            return
        judge_record(module, record)

    check.__name__ = check.__qualname__ = name
    check.__doc__ = module.__doc__
    check.__module__ = module.__name__
    check.exercise = module  # type: ignore[attr-defined]
    return check
