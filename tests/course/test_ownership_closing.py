"""Chapter 12's closing page: which lines of the learner's mygrad they wrote and which were given.

The marks come from ``autograd_lab.course.learner.ownership`` (the learner's notebooks against the released
copies), the same comparison as the counts, so the listing and the table cannot disagree.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograd_lab.course.learner.export import LibraryError
from autograd_lab.course.learner.ownership import (MINE, format_marked, learner_lines, learner_modules,
                                           learner_table, mark_lines, marked_module)

ROOT = Path(__file__).resolve().parents[2]


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


TEMPLATE = ("def f(x):\n"
            "    \"\"\"Twice x.\"\"\"\n"
            "    # YOUR CODE HERE\n"
            "    raise NotImplementedError('ch12-f')\n")
WRITTEN = ("def f(x):\n"
           "    \"\"\"Twice x.\"\"\"\n"
           "    # YOUR CODE HERE\n"
           "\n"
           "    y = x * 2\n"
           "    return y\n")


def test_each_line_is_marked_as_the_learners_given_or_not_code():
    marks = mark_lines(WRITTEN, TEMPLATE)
    assert [line for line, _ in marks] == WRITTEN.splitlines()
    assert [mine for _, mine in marks] == [False, False, None, None, True, True]
    assert learner_lines(WRITTEN, TEMPLATE) == (2, 4)


def test_a_given_line_typed_twice_is_given_once_and_the_learners_once():
    """The template holds `return y` once; the learner's second copy is theirs."""
    marks = mark_lines("return y\nreturn y\n", "return y\n")
    assert [mine for _, mine in marks] == [False, True]


def test_solution_markers_are_left_out_of_the_listing():
    marks = mark_lines("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n",
                       "def f(x):\n    raise NotImplementedError\n")
    assert [line.strip() for line, _ in marks] == ["def f(x):", "return x"]


def test_the_listing_marks_exactly_the_learners_code_lines():
    text = format_marked("capstone", mark_lines(WRITTEN, TEMPLATE))
    head, rule, *body = text.splitlines()
    assert head.startswith("capstone.py: you wrote 2 of its 4 code lines (50%)")
    assert set(rule) == {"-"}
    assert [line for line in body if line.startswith(MINE)] == [f"{MINE}     y = x * 2",
                                                                  f"{MINE}     return y"]
    assert "  def f(x):" in body and "      # YOUR CODE HERE" in body


def test_marked_module_of_a_learners_folder_agrees_with_the_table(tmp_path):
    course, mine = tmp_path / "course", tmp_path / "mine"
    course.mkdir()
    mine.mkdir()
    _notebook(course / "12_x.ipynb", "%%mygrad capstone f\n" + TEMPLATE,
              "%%mygrad capstone g\ndef g():\n    return 1\n")
    _notebook(mine / "12_x.ipynb", "%%mygrad capstone f\n" + WRITTEN,
              "%%mygrad capstone g\ndef g():\n    return 1\n", "print('not a library cell')")
    modules = learner_modules([mine], course)
    assert list(modules) == ["capstone"]
    text = marked_module("capstone", folder=mine, course=course)
    (row,) = learner_table([mine], course)
    assert (row.learner, row.total) == (2, 6)
    assert text.startswith("capstone.py: you wrote 2 of its 6 code lines (33%)")
    assert sum(line.startswith(MINE) for line in text.splitlines()) == row.learner
    assert "  def g():" in text.splitlines()       # a given section is listed, unmarked


def test_an_untouched_copy_marks_nothing_and_a_missing_module_says_so(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    _notebook(course / "12_x.ipynb", "%%mygrad capstone f\n" + TEMPLATE)
    text = marked_module("capstone", folder=course, course=course)
    assert "you wrote 0 of its 3 code lines" in text
    assert not any(line.startswith(MINE) for line in text.splitlines()[2:])
    assert "write no %%mygrad higher cells yet" in marked_module("higher", folder=course, course=course)


def test_an_unknown_module_raises_naming_the_modules(tmp_path):
    with pytest.raises(LibraryError, match="mygrad has no module 'capstones'.*capstone"):
        marked_module("capstones", folder=tmp_path, course=tmp_path)


def test_chapter_12s_closing_page_shows_the_marked_capstone():
    """The key's closing page prints the marked module; on the key, the marked lines are exactly
    the solution regions of the capstone cells."""
    nb = nbformat.read(ROOT / "solutions" / "12_capstone.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and 'marked_module("capstone")' in c.source)
    out = "".join(o.get("text", "") for o in cell.outputs)
    modules = learner_modules([ROOT / "solutions"], ROOT / "course")
    assert out.rstrip("\n") == format_marked("capstone", modules["capstone"])
    marked = [line for line in out.splitlines() if line.startswith(MINE)]
    assert marked and any("np.log1p(2 * np.sinh" in line for line in marked)
    assert not any("def log_cosh" in line or "class BakeryLoss" in line for line in marked)
