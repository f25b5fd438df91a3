"""The grader's verdict on a graded cell, decided from the kernel's observations alone.

The grader's sandbox runs the notebook with :data:`~._observe.OBSERVE_ONLY` set, so each check
of an exercise written as ``observe`` and ``judge`` shows one observation record instead of
deciding. :func:`judge_cell` runs in the grader's own process, which never runs a student's
code: it reads which checks the cell calls from the cell's source (the key's, restored by the
grader), takes exactly one record per call from the cell's outputs, runs the exercise's
``judge`` on it and says which parts passed. Nothing else in the outputs counts: no error,
exception name, message or printed line of the kernel can add or remove a point.
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import io
import json
import math
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._exercise import is_observed, judge_record
from ._observe import MIME, RECORD_LIMIT
from ._parts import PartsFailed

__all__ = ["Verdict", "exercise_module", "graded_calls", "judge_cell", "points_for"]

_TEXT_LIMIT = 20_000


@dataclass(frozen=True)
class Verdict:
    """Which parts of one exercise passed every call of its graded cell, and what the judge
    said (the checker's own lines, cut to 20,000 characters)."""

    exercise: str
    parts: tuple[str, ...]
    failed: tuple[str, ...]
    text: str
    note: str = ""
    """Why a call could not be judged at all (no record, several records), or ``""``."""

    @property
    def share(self) -> float:
        return (len(self.parts) - len(self.failed)) / len(self.parts)

    @property
    def passed(self) -> bool:
        return not self.failed


def points_for(verdict: Verdict, points: float) -> float:
    """``points × share``, rounded down to two decimals (a share is never rounded up)."""
    value = math.floor(float(points) * verdict.share * 100 + 1e-9) / 100
    return min(max(value, 0.0), float(points))


def exercise_module(exercise_id: str) -> types.ModuleType | None:
    """The module of an exercise written as ``observe`` and ``judge``; ``None`` for any other."""
    match = re.fullmatch(r"(ch\d\d)-[\w-]+", exercise_id)
    if match is None:
        return None
    try:
        chapter = importlib.import_module(f"{__package__}.{match.group(1)}")
    except ImportError:
        return None
    for module in getattr(chapter, "EXERCISES", ()):
        if module.ID == exercise_id and is_observed(module):
            return module
    return None


def graded_calls(source: str, exercise_id: str) -> list[tuple[int, bool]]:
    """``(seed, hidden)`` of each ``check.<exercise>(...)`` call in a graded cell's source, in
    order (defaults 0 and False; a seed or flag that is not a constant counts as the default)."""
    name = exercise_id.replace("-", "_")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == name):
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            seed = keywords.get("seed")
            hidden = keywords.get("hidden")
            calls.append((
                int(seed.value) if isinstance(seed, ast.Constant) and type(seed.value) is int else 0,
                bool(hidden.value) if isinstance(hidden, ast.Constant) else False))
    calls.sort(key=lambda c: c[1], reverse=True)  # the order does not matter; hidden first
    return calls


def _records(outputs: Sequence[Any]) -> list[Any]:
    found = []
    for output in outputs:
        if not hasattr(output, "get"):
            continue
        data = output.get("data")
        if output.get("output_type") in ("display_data", "execute_result") and \
                isinstance(data, dict) and MIME in data:
            found.append(data[MIME])
    return found


def _stopped_by(outputs: Sequence[Any]) -> str:
    """What the kernel said stopped the cell (its first error), shown to the student as the
    cell's own words; it decides nothing."""
    for output in outputs:
        if hasattr(output, "get") and output.get("output_type") == "error":
            message = str(output.get("evalue", "")).strip().splitlines()
            first = message[0][:300] if message else ""
            return f" (it stopped with {str(output.get('ename', 'an error'))[:80]}: {first})"
    return ""


def _judge_one(module: types.ModuleType, record: Any) -> tuple[set[str], str]:
    parts = tuple(module.PARTS) or ("the exercise",)
    out = io.StringIO()
    try:
        if len(json.dumps(record, allow_nan=False)) > RECORD_LIMIT:
            return set(parts), f"the observations are larger than {RECORD_LIMIT:,} characters."
        with contextlib.redirect_stdout(out):
            judge_record(module, record)
    except PartsFailed as err:
        return set(err.failed), out.getvalue() + str(err)
    except (AssertionError, NotImplementedError) as err:
        return set(parts), out.getvalue() + str(err)
    except Exception as err:  # a record whose shape is not the judge's: it passes nothing
        return set(parts), f"the observations could not be read ({type(err).__name__}: {err})."
    return set(), out.getvalue()


def judge_cell(exercise_id: str, source: str, outputs: Sequence[Any]) -> Verdict | None:
    """The verdict on one graded cell, or ``None`` when its exercise is not written as
    ``observe`` and ``judge`` (then the cell's outputs decide, as before)."""
    module = exercise_module(exercise_id)
    if module is None:
        return None
    parts = tuple(module.PARTS) or ("the exercise",)
    calls = graded_calls(source, exercise_id)
    if not calls:
        return Verdict(exercise_id, parts, parts, "the graded cell calls no check.",
                       "the graded cell calls no check")
    records = [r for r in _records(outputs) if isinstance(r, dict)]
    failed: set[str] = set()
    texts, notes = [], []
    for seed, hidden in calls:
        mine = [r for r in records if r.get("exercise") == exercise_id
                and r.get("seed") == seed and r.get("hidden") == hidden]
        label = "hidden cases" if hidden else "visible cases"
        if len(mine) != 1:
            failed.update(parts)
            notes.append(f"{label}: " + (
                "no observations, the cell stopped before its check finished"
                + _stopped_by(outputs) if not mine else
                f"{len(mine)} observation records instead of one, the cell's output is not the "
                "check's own"))
            texts.append(f"[{label}] {notes[-1]}.")
            continue
        lost, text = _judge_one(module, mine[0])
        failed.update(lost)
        texts.append(f"[{label}]\n{text.strip()}")
    text = "\n".join(texts)
    if len(text) > _TEXT_LIMIT:
        text = text[:_TEXT_LIMIT] + "\n[cut: the judge's report is longer than 20,000 characters]"
    return Verdict(exercise_id, parts, tuple(p for p in parts if p in failed), text,
                   "; ".join(notes))
