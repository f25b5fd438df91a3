"""The ownership table: how many of mygrad's code lines the learner writes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat

from autograd_lab.course.learner.ownership import (Row, format_table, is_code, key_table, learner_lines,
                                           learner_table, split_key_cell)

ROOT = Path(__file__).resolve().parents[2]


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


def test_code_lines_leave_out_blanks_comments_and_markers() -> None:
    assert is_code("x = 1")
    assert not is_code("   ")
    assert not is_code("    # a comment")
    assert not is_code("### BEGIN SOLUTION")


def test_a_key_cell_splits_at_its_solution_region() -> None:
    code = ("def f(x):\n"
            "    \"\"\"Doc.\"\"\"\n"
            "    ### BEGIN SOLUTION\n"
            "    # the idea\n"
            "    y = x * 2\n"
            "\n"
            "    return y\n"
            "    ### END SOLUTION\n")
    assert split_key_cell(code) == (2, 4)


def test_learner_lines_are_those_not_in_the_template() -> None:
    template = "def f(x):\n    raise NotImplementedError('ch03-f')\n"
    written = "def f(x):\n    # mine\n    y = x * 2\n    return y\n"
    assert learner_lines(written, template) == (2, 3)
    assert learner_lines(template, template) == (0, 2)  # an untouched stub: nothing written


def test_tables_of_a_small_key_and_a_learner(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.mkdir()
    _notebook(key / "03_x.ipynb", "%%mygrad function f\ndef f(x):\n    ### BEGIN SOLUTION\n"
              "    return x\n    ### END SOLUTION\n", "print('not a library cell')")
    rows = key_table([key])
    assert rows == [Row("function", 3, 1, 2)]
    assert rows[0].share == 0.5
    course = tmp_path / "course"
    course.mkdir()
    _notebook(course / "03_x.ipynb", "%%mygrad function f\ndef f(x):\n"
              "    raise NotImplementedError\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    _notebook(mine / "03_x.ipynb", "%%mygrad function f\ndef f(x):\n    y = x\n    return y\n")
    assert learner_table([mine], course) == [Row("function", 3, 2, 3)]
    assert "function" in format_table(rows) and "50%" in format_table(rows)


def test_the_cli_prints_the_keys_table() -> None:
    done = subprocess.run([sys.executable, "-m", "autograd_lab", "ownership"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    for module in ("variable", "function", "engine", "ops", "grad_mode", "all"):
        assert f"\n{module} " in done.stdout
