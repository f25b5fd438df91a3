"""Checks isolate: one broken exercise costs only its own points.

For a chapter, the key's exercise cells are run on a fresh copy of the reference ``mygrad``,
with exactly one exercise replaced by a realistic mistake; then every checker of the chapter
runs on what the notebook would hold. The broken exercise's checker must fail (so the mistake
is real), and every other checker must pass (full points). The checkers are called directly on
the namespaces, without running notebooks, so the test stays fast.

Chapter 06 is covered here; the mistakes are those whose hints ``test_exercises_ch06`` tests.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from autograd_lab.exercises import check

from .test_exercises_ch06 import (DETACH_MISTAKES, INPLACE_MISTAKES, PREDICTIONS,
                                  SWITCH_MISTAKES, key_cell, mutated, reference_package,
                                  train_step)

# The chapter's %%mygrad cells in notebook order: (grade id of the exercise, or None if given;
# the cell's source).
CH06_CELLS = ("ch06-grad-mode-switch", "ch06-detach", None, "ch06-inplace-ops",
              "ch06-version-check")

VERSION_CHECK_MISTAKES = [
    # versions read at unpack time: saved_tensors never raises
    [("ctx._saved_versions = tuple(None if t is None else t._version for t in tensors)",
      "ctx._saved_versions = ()")],
    # the comparison left out
    [("if t is not None and t._version != version:", "if False:")],
    # only the first saved tensor comes back
    [("return tuple(ctx._saved)", "return tuple(ctx._saved[:1])")],
]


def _versions_cell() -> str:
    """The given cell between detach and the in-place operations (section ``versions``)."""
    from .test_exercises_ch06 import solution_cells
    for cell in solution_cells("06_grad_modes_inplace.ipynb"):
        source = "".join(cell["source"])
        if source.startswith("%%mygrad grad_mode versions"):
            return source.split("\n", 1)[1]
    raise LookupError("%%mygrad grad_mode versions")


def ch06_notebook(broken: str | None, replacements: list[tuple[str, str]]) -> dict[str, Any]:
    """What the chapter 06 notebook holds when exercise ``broken`` has the mistake
    ``replacements`` and the others are the key's: its globals, ``mygrad`` included."""
    pkg = reference_package()
    namespace = dict(vars(pkg.grad_mode))
    for exercise in CH06_CELLS:
        if exercise is None:
            source = _versions_cell()
        elif exercise == broken:
            source = mutated(f"{exercise}-code", *replacements)
        else:
            source = key_cell(f"{exercise}-code")
        exec(source, namespace)  # noqa: S102 - the key's cells, one of them made wrong
    namespace["mygrad"] = pkg
    return namespace


CH06_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "ch06-grad-mode-switch": lambda ns: check.ch06_grad_mode_switch(
        ns["set_grad_enabled"], ns["no_grad"], ns["enable_grad"], hidden=True),
    "ch06-detach": lambda ns: check.ch06_detach(ns["detach"], ns["requires_grad_"],
                                                hidden=True),
    "ch06-inplace-ops": lambda ns: check.ch06_inplace_ops(ns["Variable"], hidden=True),
    "ch06-version-check": lambda ns: check.ch06_version_check(ns["mygrad"], hidden=True),
    "ch06-predict-raises": lambda ns: check.ch06_predict_raises(dict(PREDICTIONS), hidden=True),
    "ch06-train-step": lambda ns: check.ch06_train_step(train_step, hidden=True),
}

CH06_BREAKS = (
    [("ch06-grad-mode-switch", r) for r, _ in SWITCH_MISTAKES]
    + [("ch06-detach", r) for r, _ in DETACH_MISTAKES]
    + [("ch06-inplace-ops", r) for r, _ in INPLACE_MISTAKES]
    + [("ch06-version-check", r) for r in VERSION_CHECK_MISTAKES])


def test_the_key_passes_every_check_of_chapter_06(capsys):
    namespace = ch06_notebook(None, [])
    for run in CH06_CHECKS.values():
        run(namespace)
    out = capsys.readouterr().out
    assert out.count("passed (with hidden cases).") == len(CH06_CHECKS)
    assert "note:" not in out


@pytest.mark.parametrize("broken,replacements", CH06_BREAKS,
                         ids=[f"{b}-{i}" for i, (b, _) in enumerate(CH06_BREAKS)])
def test_one_broken_exercise_of_chapter_06_costs_only_its_own_points(broken, replacements,
                                                                     capsys):
    namespace = ch06_notebook(broken, replacements)
    with pytest.raises(AssertionError, match=f"Exercise {broken} failed"):
        CH06_CHECKS[broken](namespace)
    for exercise, run in CH06_CHECKS.items():
        if exercise != broken:
            run(namespace)                     # full points: no AssertionError
    out = capsys.readouterr().out
    for note in (line for line in out.splitlines() if line.startswith("note:")):
        assert broken in note, note       # a note names the exercise that is broken


def test_version_check_names_the_failing_inplace_exercise_in_one_line(capsys):
    """A mul_ that forgets the version bump: the version check still passes a correct
    save_for_backward/saved_tensors, and says in one line which exercise fails."""
    replacements = INPLACE_MISTAKES[0][0]
    namespace = ch06_notebook("ch06-inplace-ops", replacements)
    check.ch06_version_check(namespace["mygrad"])
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1                      # the product's case (zero_ is not broken)
    assert "exercise ch06-inplace-ops fails" in notes[0] and "not to 1" in notes[0]
