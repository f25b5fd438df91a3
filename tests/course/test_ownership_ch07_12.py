"""How much of the library chapters 07-12 write the learner writes, measured on the key.

The measure is the course's own (``autograd_lab.course.learner.ownership.key_table``): code lines of the
key's ``%%mygrad`` cells inside solution regions, per module. The goal of the course is at least
35 % over the modules of chapters 07-12 together and none under 25 %; both are held here."""
from __future__ import annotations

import pytest

from autograd_lab.course.learner.ownership import key_table

from ._checker_helpers import ROOT

MODULES_07_12 = ("kernels", "nn", "optim", "functional", "data", "conv", "higher", "capstone")
REACHED = ("kernels", "nn", "optim", "functional", "data", "conv", "higher", "capstone")


@pytest.fixture(scope="module")
def table():
    rows = {row.module: row for row in key_table([ROOT / "solutions"])}
    missing = [m for m in MODULES_07_12 if m not in rows]
    assert not missing, f"the key writes no cells into {missing}"
    return rows


@pytest.mark.parametrize("module", REACHED)
def test_the_learner_writes_at_least_a_quarter_of_the_module(table, module):
    row = table[module]
    assert row.total > 0
    assert row.share >= 0.25, (f"{module}: the learner writes {row.learner} of {row.total} "
                               f"code lines ({row.share:.0%}), under 25 %")


def test_chapters_07_to_12_together_reach_35_percent(table):
    learner = sum(table[m].learner for m in MODULES_07_12)
    total = sum(table[m].total for m in MODULES_07_12)
    assert learner / total >= 0.35


def test_the_share_counts_only_solution_regions(tmp_path):
    """The measure can fail: a key cell without a solution region counts nothing as written."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%mygrad nn Thing\nclass Thing:\n    x = 1\n"),
                nbformat.v4.new_code_cell("%%mygrad data thing\n### BEGIN SOLUTION\n"
                                          "y = 2\n### END SOLUTION\nz = 3\n")]
    path = tmp_path / "08_x.ipynb"
    nbformat.write(nb, path)
    rows = {row.module: row for row in key_table([path])}
    assert (rows["nn"].learner, rows["nn"].total) == (0, 2)
    assert (rows["data"].learner, rows["data"].total) == (1, 2)
