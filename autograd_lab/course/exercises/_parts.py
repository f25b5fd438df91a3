"""Partial credit for an exercise made of independent parts.

A chapter declares the parts of such an exercise in its module's ``PARTS`` dict (exercise id
to part names) and its checker runs each part in :meth:`Parts.part`::

    PARTS = {"ch10-conv2d-backward": ("dx", "dweight", "dbias")}

    def ch10_conv2d_backward(conv2d_backward, *, seed=0, hidden=False):
        ck = Checker("ch10-conv2d-backward", seed=seed, hidden=hidden)
        parts = Parts(ck)
        with parts.part("dbias"):
            ...                       # cases that check dbias only
        ...
        parts.done()

A failing part does not stop the others. When every part passed, :meth:`Parts.done` prints
the usual closing line. When only some did, it raises :class:`PartsFailed` (an
``AssertionError``) whose message names the parts that failed, with each one's own message
and hint, and ends with the line ``parts failed: ["dweight"]``. When every part failed on an
untouched stub, or a part uses another exercise that is not done yet, that
``NotImplementedError`` is raised as before (the exercise is "not started" or waits for the
other one).

How the score follows: ``points × parts passed / parts``, rounded to two decimals (down, so a
share is never rounded up into points not earned). The grader decides it in its own process,
from the kernel's observations (:mod:`autograd_lab.course.exercises.verdict`, which reads
``PartsFailed.failed`` of the judge it runs itself). :func:`parts_score` reads the same share from
a cell's outputs, for ``autograd-lab check`` in the learner's own kernel and for an exercise not
written as ``observe`` and ``judge``; there only this evidence counts: the cell has exactly one
error output, it is a ``PartsFailed``, nothing went to standard error, and its last line names a
non-empty set of the parts that the exercise declares (the count of parts is never read from the
output). Anything else scores as before: 0 for a failed cell.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import math
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from ._common import Checker

__all__ = ["MARKER", "Parts", "PartsFailed", "declared_parts", "failed_parts", "parts_score"]

MARKER = "parts failed: "
"""The start of the last line of a :class:`PartsFailed` message; a JSON list follows."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_DEPENDS = re.compile(r"uses exercise [\w-]+, which is not done yet")


class PartsFailed(AssertionError):
    """Some parts of an exercise failed, others passed (see the module docstring); ``failed``
    names them (read by the grader's judge, in its own process)."""

    def __init__(self, message: str, failed: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.failed = tuple(failed)


class Parts:
    """The parts of one exercise, checked one after another by the same :class:`Checker`."""

    def __init__(self, ck: Checker, names: Sequence[str] | None = None) -> None:
        self.ck = ck
        self.names = tuple(names) if names is not None else declared_parts(ck.exercise_id)
        if not self.names or len(set(self.names)) != len(self.names):
            raise ValueError(f"Exercise {ck.exercise_id} needs distinct part names; got "
                             f"{self.names!r}. Declare them in the chapter module's PARTS.")
        self.failures: dict[str, BaseException] = {}

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Run one part: its first failure is recorded and the next part runs.

        Anything the learner's code raises inside (even ``SystemExit`` or an exception class of
        its own) fails the part; only a plain ``KeyboardInterrupt`` (the time limit, Ctrl-C)
        goes through."""
        if name not in self.names:
            raise ValueError(f"{name!r} is not a part of {self.ck.exercise_id}; its parts are "
                             f"{', '.join(self.names)}.")
        try:
            yield
        except BaseException as err:  # noqa: BLE001 - see the docstring
            if type(err) is KeyboardInterrupt:
                raise
            self.failures.setdefault(name, err)
            print(f"✗ part {name!r} failed (the other parts go on)")
            sys.stdout.flush()

    def done(self) -> None:
        """Print the closing line if every part passed, else raise (see the module docstring)."""
        if not self.failures:
            self.ck.done()
            return
        failed = [n for n in self.names if n in self.failures]
        errors = [self.failures[n] for n in failed]
        waiting = [e for e in errors if isinstance(e, NotImplementedError)
                   and _DEPENDS.search(str(e))]
        if waiting:  # it uses an unfinished exercise: that one comes first, as without parts
            raise waiting[0]
        if len(failed) == len(self.names) and all(
                isinstance(e, NotImplementedError) for e in errors):
            raise errors[0]  # an untouched stub: "not started", as without parts
        passed = len(self.names) - len(failed)
        lines = [f"Exercise {self.ck.exercise_id}: {passed} of {len(self.names)} parts passed, "
                 f"failed: {', '.join(failed)}."]
        for name, err in zip(failed, errors):
            text = str(err) if isinstance(err, (AssertionError, NotImplementedError)) else \
                f"your code raised {type(err).__name__}: {err}"
            lines.append(f"[{name}] {text}")
        lines.append(MARKER + json.dumps(failed))
        raise PartsFailed("\n".join(lines), failed)


def declared_parts(exercise_id: str) -> tuple[str, ...]:
    """The parts the exercise's chapter module declares (``chNN.PARTS``); ``()`` if none.

    Imported here, in the caller's process: the grader asks this of its own installed
    package, never of a notebook's output."""
    match = re.match(r"^(ch\d\d)-", exercise_id)
    if match is None:
        return ()
    try:
        module = importlib.import_module(f"{__package__}.{match.group(1)}")
    except ImportError:
        return ()
    parts = getattr(module, "PARTS", {}).get(exercise_id, ())
    return tuple(str(p) for p in parts)


def failed_parts(outputs: Sequence[Any], exercise_id: str) -> list[str] | None:
    """The parts a graded cell's outputs show as failed, when they are the checker's evidence
    of a partial pass (see the module docstring); ``None`` otherwise."""
    declared = declared_parts(exercise_id)
    if not declared:
        return None
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if any(o.get("output_type") == "stream" and o.get("name") == "stderr" for o in outputs):
        return None
    if len(errors) != 1 or errors[0].get("ename") != PartsFailed.__name__:
        return None
    lines = _ANSI.sub("", str(errors[0].get("evalue", ""))).strip().splitlines()
    if not lines or not lines[-1].startswith(MARKER):
        return None
    try:
        failed = json.loads(lines[-1][len(MARKER):])
    except ValueError:
        return None
    if (not isinstance(failed, list) or not failed or len(set(map(str, failed))) != len(failed)
            or not all(isinstance(n, str) and n in declared for n in failed)):
        return None
    return failed


def parts_score(outputs: Sequence[Any], exercise_id: str, points: float) -> float | None:
    """``points × parts passed / parts`` (two decimals, rounded down) from a graded cell's
    outputs, or ``None`` when they are not a partial pass (then the usual rule applies)."""
    failed = failed_parts(outputs, exercise_id)
    if failed is None:
        return None
    total = len(declared_parts(exercise_id))
    share = float(points) * (total - len(failed)) / total
    return min(max(math.floor(share * 100 + 1e-9) / 100, 0.0), float(points))
