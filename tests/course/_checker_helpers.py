"""What the exercise-checker tests share: the seeds they run, how they read a failure, and
the checks that a solutions notebook's graded cells call their own checkers."""
from __future__ import annotations

import json
import pathlib
import re
from collections.abc import Callable
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# (seed, hidden) pairs: the plain notebook run, then two graded runs with hidden cases.
SEEDS = [(0, False), (1, True), (2024, True)]


def failure(checker: Callable[..., None], obj: Any, seed: int = 0, hidden: bool = False) -> str:
    """The message of the ``AssertionError`` that ``checker`` must raise on ``obj``."""
    with pytest.raises(AssertionError) as info:
        checker(obj, seed=seed, hidden=hidden)
    return str(info.value)


def solution_cells(name: str) -> list[dict]:
    """The cells of ``solutions/<name>`` (every chapter's notebook is written: no skipping)."""
    return json.loads((ROOT / "solutions" / name).read_text(encoding="utf-8"))["cells"]


def graded_cells(cells: list[dict]) -> list[dict]:
    """The nbgrader cells that give points."""
    return [c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]


def assert_calls_own_checker(cell: dict) -> str:
    """A graded cell is locked, gives points and calls ``check.<its grade_id>``, with hidden
    cases; returns the checker's name."""
    meta = cell["metadata"]["nbgrader"]
    source = "".join(cell["source"])
    checker = meta["grade_id"].replace("-", "_")
    assert meta["points"] > 0 and meta["locked"] and meta["schema_version"] == 3
    assert "from autograd_lab.course.exercises import check" in source
    assert re.search(rf"check\.{checker}\(", source), meta["grade_id"]
    assert "### BEGIN HIDDEN TESTS" in source and "hidden=True" in source
    return checker


def assert_has_heading_and_solution(cell: dict, cells: list[dict]) -> None:
    """The notebook has a heading naming the graded cell's exercise and one solution cell."""
    grade_id = cell["metadata"]["nbgrader"]["grade_id"]
    sources = ["".join(c["source"]) for c in cells]
    assert any(f"Exercise {grade_id}" in s for s in sources)  # the heading
    solution = [c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get(
        "grade_id") == grade_id + "-code"]
    assert len(solution) == 1 and "### BEGIN SOLUTION" in "".join(solution[0]["source"])


def assert_all_passed(out: str, count: int, hidden: bool) -> None:
    """``out`` holds the closing lines of ``count`` checkers, each naming the hidden cases
    exactly when they ran."""
    assert out.count("All ") == count
    assert out.count("passed (with hidden cases).") == (count if hidden else 0)


# -- isolation: one broken exercise costs only its own points ---------------------------------------
Checks = dict  # exercise id -> a zero-argument callable that runs its check (raises when it fails)


def bound(checks: dict[str, Callable[[dict[str, Any]], None]], namespace: dict[str, Any]) -> Checks:
    """Checks that take the notebook's namespace, bound to one namespace."""
    return {exercise: (lambda run=run: run(namespace)) for exercise, run in checks.items()}


def assert_the_key_passes(checks: Checks, capsys) -> None:
    """Every check passes on the key, with hidden cases and no note about an earlier exercise."""
    for run in checks.values():
        run()
    out = capsys.readouterr().out
    assert out.count("passed (with hidden cases).") == len(checks)
    assert "note:" not in out


def assert_only_its_own_points(checks: Checks, broken: str, capsys, words: str = "",
                               errors: tuple[type[BaseException], ...] = (AssertionError,)) -> list[str]:
    """The broken exercise fails (its message names it, and ``words``); every other check passes
    (full points); each note printed names the broken exercise. Returns the notes."""
    with pytest.raises(errors) as info:
        checks[broken]()
    message = str(info.value)
    opening = f"Exercise {broken} failed" if isinstance(info.value, AssertionError) else f"Exercise {broken}"
    assert message.startswith(opening) and words in message, message
    for exercise, run in checks.items():
        if exercise != broken:
            run()                               # full points: no AssertionError
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    for note in notes:
        assert broken in note, note
    return notes


def with_mistake(source: str, replacements: list[tuple[str, str]], where: str) -> str:
    """``source`` with each ``old`` replaced by ``new``; each must occur (``where`` names the cell)."""
    for old, new in replacements:
        assert old in source, (where, old)
        source = source.replace(old, new)
    return source
