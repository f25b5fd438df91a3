"""The ideas of chapters 02-06 are the learner's: ownership of the key's mygrad modules.

Measured as ``autograd-lab ownership`` prints it: code lines of the key's ``%%mygrad`` cells
inside solution regions, over all their code lines. Targets (issue 31): at least 40 % over the
modules of chapters 02-06 together, and no core module under 30 %; both are held here.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograd_lab.course.learner.ownership import Row, key_table, split_key_cell, summarise

ROOT = Path(__file__).resolve().parents[2]
CORE = ("variable", "function", "engine", "ops", "grad_mode")
MODULE_TARGET, OVERALL_TARGET = 0.30, 0.40

# Modules whose share is still under the target (issue 31, part 1: not reached yet).
SHORT: set[str] = set()


@pytest.fixture(scope="module")
def table() -> dict[str, Row]:
    return {row.module: row for row in key_table([ROOT / "solutions"])}


def _mark(module: str) -> list:
    return [pytest.mark.xfail(strict=True, reason=f"{module}.py is still under 30 % (issue 31)")
            ] if module in SHORT else []


@pytest.mark.parametrize("module", [pytest.param(m, marks=_mark(m)) for m in CORE])
def test_every_core_module_of_chapters_02_06_is_at_least_30_percent_learner_written(
        table, module):
    row = table[module]
    assert row.share >= MODULE_TARGET, (
        f"{module}.py: the learner writes {row.learner} of {row.total} code lines "
        f"({row.share:.0%}); move the lines that carry the chapter's ideas into solution regions")


def test_chapters_02_06_together_are_at_least_40_percent_learner_written(table):
    total = summarise(list(table.values()), range(2, 7))
    assert total.share >= OVERALL_TARGET, f"{total.learner} of {total.total} ({total.share:.0%})"


def test_the_count_can_fail():
    """A cell with one solution line of four counts 1 of 4; markers and comments do not count."""
    cell = ("class A:\n    # a comment\n    def f(self):\n        ### BEGIN SOLUTION\n"
            "        return 1\n        ### END SOLUTION\n\n    x = 2\n")
    assert split_key_cell(cell) == (1, 4)
