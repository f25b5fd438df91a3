"""Observe in the learner's kernel, judge anywhere: the two halves of an exercise's check.

An exercise written this way has two functions (see ``ch01/central_difference.py``):

``observe(ob, *student_objects, seed, hidden)``
    Runs in the learner's kernel. It builds the cases' inputs from ``seed`` and calls the
    learner's code, and keeps only **plain data**: numbers, arrays, strings, shapes, type names,
    and for a call that raised, the exception's class names and message. It computes no
    expected value and decides nothing.

``judge(ck, obs, seed, hidden)``
    Runs on those observations, after a JSON round trip, with a :class:`~._common.Checker`: it
    builds the same inputs from ``seed``, computes the expected values and makes every
    comparison, the hints included. It never sees a learner's object.

In the learner's notebook ``check.chNN_x(...)`` runs both, one after the other, in the kernel:
instant feedback, and the same definition of the check as the grade's. When the environment
variable :data:`OBSERVE_ONLY` is set (the grader's sandbox sets it), the kernel runs only
``observe`` and shows the observations as one output of type :data:`MIME`; the grader's own
process, which never runs a student's code, then reads that output and runs ``judge``
(:mod:`autograd_lab.course.exercises.verdict`). A patched ``contextlib``, ``numpy.allclose``
or exception class in the kernel then changes nothing the verdict depends on: the kernel's
only say is the plain data its calls returned, and the expected values never enter it.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from ._common import Checker

__all__ = ["MIME", "OBSERVE_ONLY", "Observer", "Observations", "Raised", "Opaque",
           "encode", "decode", "expect_raised", "RECORD_LIMIT"]

MIME = "application/vnd.autograd-lab.observations+json"
"""The output type of an observation record (a JSON object, see :meth:`Observer.record`)."""

OBSERVE_ONLY = "AUTOGRAD_LAB_OBSERVE_ONLY"
"""Set (to anything) in a kernel whose checks should only observe: the grader's sandbox."""

RECORD_LIMIT = 8_000_000
"""Characters of one record's JSON; the grader refuses a longer one (that call fails)."""

_TEXT_LIMIT = 2_000  # characters kept of one string or message
_ARRAY_LIMIT = 200_000  # elements kept of one array (a larger one is kept as its shape only)


@dataclass(frozen=True)
class Raised:
    """What a learner's call raised: its class's name, the names of the classes it derives from
    (``ValueError`` for a subclass of it), and its message, cut to 2,000 characters."""

    name: str
    bases: tuple[str, ...]
    message: str

    def is_a(self, *names: str) -> bool:
        return self.name in names or any(b in names for b in self.bases)


@dataclass(frozen=True)
class Opaque:
    """A value the kernel could not turn into plain data: its type's name and a short repr."""

    type: str
    repr: str


def _cut(text: str) -> str:
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT] + " [cut]"


def _safe_text(fn: Callable[[], str]) -> str:
    try:
        return _cut(str(fn()))
    except BaseException:  # noqa: BLE001 - a learner's __str__ or __repr__ may do anything
        return "<unprintable>"


def _type_name(value: Any) -> str:
    cls = type(value)
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}"


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-able plain data; :func:`decode` gives it back (arrays as arrays).

    Only exact built-in and numpy types are read (a subclass of ``float`` or ``ndarray``
    written by a learner is :class:`Opaque`), so no learner's method runs here but ``repr``."""
    kind = type(value)
    if value is None or kind is bool:
        return value
    plain = _PLAIN.get(kind)
    if plain is not None:
        return plain(value)
    if kind is np.ndarray and value.dtype.kind in "biufc":
        return _encode_array(value)
    if isinstance(value, np.generic) and kind.__module__ == "numpy" and value.dtype.kind in "biuf":
        return {"$": "scalar", "dtype": str(value.dtype), "value": encode(value.item())}
    if depth < 6 and kind in (list, tuple, dict):
        return _encode_container(value, depth)
    if isinstance(value, Raised):
        return {"$": "raised", "name": value.name, "bases": list(value.bases),
                "message": value.message}
    return {"$": "opaque", "type": _type_name(value), "repr": _safe_text(lambda: repr(value))}


_PLAIN: dict[type, Callable[[Any], Any]] = {
    str: _cut,
    int: lambda v: v if abs(v) < 2**63 else {"$": "int", "text": _cut(str(v))},
    float: lambda v: v if math.isfinite(v) else {"$": "float", "text": repr(v)},
}


def _encode_array(value: np.ndarray) -> dict[str, Any]:
    head = {"dtype": str(value.dtype), "shape": list(value.shape)}
    if value.size > _ARRAY_LIMIT:
        return {"$": "bigarray", **head}
    if value.dtype.kind == "c":
        data: list = [[_float(z.real), _float(z.imag)] for z in value.ravel().tolist()]
    elif value.dtype.kind == "f":
        data = [_float(x) for x in value.astype(np.float64).ravel().tolist()]
    else:
        data = value.ravel().tolist()
    return {"$": "array", **head, "data": data}


def _encode_container(value: Any, depth: int) -> Any:
    if type(value) is dict:
        if not all(type(k) is str for k in value):
            return {"$": "opaque", "type": "builtins.dict",
                    "repr": _safe_text(lambda: repr(value))}
        return {"$": "dict", "items": {k: encode(v, depth + 1)
                                       for k, v in list(value.items())[:10_000]}}
    items = [encode(v, depth + 1) for v in value[:10_000]]
    return items if type(value) is list else {"$": "tuple", "items": items}


def _float(x: float) -> Any:
    return x if math.isfinite(x) else {"$": "float", "text": repr(x)}


def decode(data: Any) -> Any:
    """The value :func:`encode` turned into ``data`` (arrays and numpy scalars with their dtype)."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    tag = data.get("$")
    if tag == "float":
        return float(data["text"])
    if tag == "int":
        return int(data["text"])
    if tag == "array":
        dtype = np.dtype(data["dtype"])
        if dtype.kind == "c":
            flat = [complex(*(_unfloat(p) for p in pair)) for pair in data["data"]]
        else:
            flat = [_unfloat(x) for x in data["data"]]
        return np.array(flat, dtype=dtype).reshape(tuple(data["shape"]))
    if tag == "bigarray":
        return Opaque(f"numpy.ndarray {data['dtype']} {tuple(data['shape'])}",
                      "an array too large to keep")
    if tag == "scalar":
        return np.dtype(data["dtype"]).type(decode(data["value"]))
    if tag == "tuple":
        return tuple(decode(v) for v in data["items"])
    if tag == "dict":
        return {k: decode(v) for k, v in data["items"].items()}
    if tag == "raised":
        return Raised(str(data["name"]), tuple(map(str, data["bases"])), str(data["message"]))
    if tag == "opaque":
        return Opaque(str(data["type"]), str(data["repr"]))
    raise ValueError(f"not an encoded value: {str(data)[:200]}")


def _unfloat(x: Any) -> float:
    return float(x["text"]) if isinstance(x, dict) else x


def raised(err: BaseException) -> Raised:
    """The plain-data form of a learner's exception."""
    bases = tuple(c.__name__ for c in type(err).__mro__[1:]
                  if c.__module__ == "builtins" and c not in (object, BaseException))
    name = type(err).__name__ if isinstance(type(err).__name__, str) else "?"
    return Raised(_cut(name), bases, _safe_text(lambda: str(err)))


class Observer:
    """Collects one exercise's observations in the learner's kernel (see the module docstring).

    ::

        with ob.case("h=0.01 on sin at 0.3"):
            ob.put("result", central_difference(np.sin, 0.3, 0.01))

    Anything raised inside a case ends that case and is recorded as its outcome (a plain
    ``KeyboardInterrupt``, the time limit, goes through). The judge fails a case whose
    observation is missing, so a case that never ran cannot pass."""

    def __init__(self, exercise_id: str, seed: int, hidden: bool) -> None:
        self.exercise_id = exercise_id
        self.seed = int(seed)
        self.hidden = bool(hidden)
        self.cases: dict[str, dict[str, Any]] = {}
        self._current: dict[str, Any] | None = None

    @contextlib.contextmanager
    def case(self, name: str) -> Iterator[None]:
        entry: dict[str, Any] = {"values": {}, "raised": None}
        self.cases[name] = entry
        self._current = entry
        try:
            yield
        except BaseException as err:  # noqa: BLE001 - the learner's code may raise anything
            if _stops(err):
                raise
            entry["raised"] = encode(raised(err))
        finally:
            self._current = None

    def put(self, key: str, value: Any) -> Any:
        """Keep ``value`` (as plain data) under ``key`` in the current case; return it."""
        if self._current is None:
            raise RuntimeError("Observer.put outside a case")
        self._current["values"][key] = encode(value)
        return value

    def attempt(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call ``fn``; keep what it raised under ``key`` (or ``None``) and return its result
        (``None`` when it raised). For calls that should raise."""
        try:
            result = fn(*args, **kwargs)
        except BaseException as err:  # noqa: BLE001
            if _stops(err):
                raise
            self.put(key, raised(err))
            return None
        self.put(key, None)
        return result

    def record(self) -> dict[str, Any]:
        """The observations as one JSON object: what the kernel shows the grader."""
        return {"exercise": self.exercise_id, "seed": self.seed, "hidden": self.hidden,
                "cases": self.cases}


def _stops(err: BaseException) -> bool:
    """Whether ``err`` ends the whole observation instead of one case: a plain
    ``KeyboardInterrupt`` (the time limit, Ctrl-C), or an exception whose class says
    ``stops_observing = True`` (the loader's limit on a check's time). A learner's code that
    raises one only loses the observations of the cases after it."""
    return type(err) is KeyboardInterrupt or getattr(type(err), "stops_observing", False) is True


class Observations:
    """The observations of one run, decoded, as the judge reads them."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.exercise_id = str(record["exercise"])
        self.seed = int(record["seed"])
        self.hidden = bool(record["hidden"])
        self._cases = record["cases"]

    def case(self, ck: Checker, name: str, *, what: str = "your code",
             hint: str | None = None) -> Case:
        """The observations of case ``name``. Fails the case (through ``ck``) when it was not
        observed, and raises what the learner's code raised, as the checker's message says it:
        ``NotImplementedError`` for an untouched stub, else an ``AssertionError`` (with
        ``hint``, where given)."""
        entry = self._cases.get(name)
        if not isinstance(entry, dict):
            ck.fail("this case was not observed: the check stopped before it ran.",
                    hint="Run the check cell again; if this stays, your code stops the check "
                         "itself (for example by exiting or replacing the checker).")
        if entry.get("raised") is not None:
            err = decode(entry["raised"])
            if not isinstance(err, Raised):
                ck.fail("the observation of this case is not readable.")
            raise_learner_error(ck, err, what, hint)
        return Case(ck, name, {k: decode(v) for k, v in entry.get("values", {}).items()})


class Case:
    """One case's observed values: ``case["result"]``; a missing one fails the case."""

    def __init__(self, ck: Checker, name: str, values: dict[str, Any]) -> None:
        self.ck, self.name, self.values = ck, name, values

    def __getitem__(self, key: str) -> Any:
        if key not in self.values:
            self.ck.fail(f"no observation of {key!r}: the check stopped early in this case.")
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values


def raise_learner_error(ck: Checker, err: Raised, what: str = "your code",
                        hint: str | None = None) -> NoReturn:
    """Raise what a learner's call raised as the checker reports it (see :meth:`Checker.call`)."""
    if err.is_a("NotImplementedError"):
        raise ck._not_done(NotImplementedError(err.message)) from None
    raise ck.error(f"{what} raised {err.name}: {err.message}", hint=hint or
                   "Read the traceback above to find the failing line in your code.") from None


def expect_raised(ck: Checker, err: Any, returned: Any, wanted: str, what: str,
                  hint: str | None) -> Raised:
    """The learner's call (observed with :meth:`Observer.attempt`) raised ``wanted``, as
    :meth:`Checker.raises` has it: no error or another kind fails the case, an untouched stub
    is "not done yet". ``returned`` is what the call returned instead, ``what`` names it."""
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


def observe_only() -> bool:
    """Whether this kernel should only observe (the grader's sandbox sets the variable)."""
    return bool(os.environ.get(OBSERVE_ONLY))


def show_record(record: dict[str, Any]) -> None:
    """Show the record as the cell's output: the grader reads it from there."""
    text = json.dumps(record, allow_nan=False)
    count = len(record["cases"])
    try:
        from IPython.display import display
    except ImportError:  # outside IPython: the record goes to standard output
        print(text)
        return
    display({MIME: json.loads(text),
             "text/plain": f"{count} cases of {record['exercise']} observed; the grader "
                           "judges them."}, raw=True)
    sys.stdout.flush()
