"""Checks isolate in chapters 02 and 05: one broken exercise costs only its own points.

As in ``test_isolation_ch02_06``: the key's exercise cells run in one namespace with exactly one
exercise replaced by a realistic mistake; the broken exercise's checker must fail (the mistake is
real) and every other checker of the chapter must pass. Any ``note:`` line a check prints must
name the broken exercise.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from autograd_lab.exercises import check

from ._checker_helpers import solution_cells

CH02 = "02_variable_graph.ipynb"


def _code_cells(notebook: str) -> dict[str, str]:
    """exercise id -> the key's solution cell (without a ``%%mygrad`` first line)."""
    cells = {}
    for cell in solution_cells(notebook):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("-code"):
            source = "".join(cell["source"])
            if source.startswith("%%"):
                source = source.split("\n", 1)[1]
            cells[grade_id.removesuffix("-code")] = source
    return cells


def ch02_notebook(broken: str | None, replacements: list[tuple[str, str]]) -> dict[str, Any]:
    """The chapter 02 notebook's globals when exercise ``broken`` has the mistake
    ``replacements`` and the others are the key's."""
    namespace: dict[str, Any] = {"np": np}
    for exercise, source in _code_cells(CH02).items():
        if exercise == broken:
            for old, new in replacements:
                assert old in source, (exercise, old)
                source = source.replace(old, new)
        exec(source, namespace)  # noqa: S102 - the key's cells, one of them made wrong
    return namespace


CH02_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "ch02-variable-class": lambda ns: check.ch02_variable_class(ns["Variable"], hidden=True),
    "ch02-propagation-rule": lambda ns: check.ch02_propagation_rule(ns["output_requires_grad"],
                                                                    hidden=True),
    "ch02-hand-gradients": lambda ns: check.ch02_hand_gradients(ns["hand_gradients"],
                                                                hidden=True),
    "ch02-find-leaves": lambda ns: check.ch02_find_leaves(ns["find_leaves"], hidden=True),
}

# (exercise, replacements, words the failure's message must contain)
CH02_MISTAKES = [
    # integers kept as integers
    ("ch02-variable-class", [("            data = data.astype(np.float64)\n",
                              "            pass\n")], "integer data was not turned into floats"),
    # is_leaf frozen in __init__
    ("ch02-variable-class", [("        self.grad_fn = None\n",
                              "        self.grad_fn = None\n        self._leaf = True\n"),
                             ("        return self.grad_fn is None\n", "        return self._leaf\n")],
     "is_leaf did not change"),
    # ndim counts the rows
    ("ch02-variable-class", [("        return self.data.ndim\n", "        return len(self.data)\n")],
     "counted the rows"),
    # dtype as a string
    ("ch02-variable-class", [("        return self.data.dtype\n",
                              "        return str(self.data.dtype)\n")], "string"),
    # numpy() hands out a copy
    ("ch02-variable-class", [('copy)."""\n        ### BEGIN SOLUTION\n        return self.data\n',
                              'copy)."""\n        ### BEGIN SOLUTION\n        return self.data.copy()\n')],
     "made a copy"),
    # len() counts every element
    ("ch02-variable-class", [("        return len(self.data)\n", "        return self.data.size\n")],
     "counted every element"),
    # all instead of any
    ("ch02-propagation-rule", [("any(", "all(")], "any(...)"),
    # grad mode ignored
    ("ch02-propagation-rule", [("bool(grad_enabled) and ", "")], "grad_enabled is False"),
    # numbers and arrays crash
    ("ch02-propagation-rule", [('getattr(a, "requires_grad", False)', "a.requires_grad")],
     "getattr"),
    # only the path through l3
    ("ch02-hand-gradients", [("d_l1 = d_l2 * 1 + d_l3 * w3", "d_l1 = d_l3 * w3")], "two Variables"),
    # the mean's 1/4 forgotten
    ("ch02-hand-gradients", [("d_l4 = np.full((2, 2), 1 / 4)", "d_l4 = np.ones((2, 2))")],
     "1/4"),
    # w1's four contributions not summed
    ("ch02-hand-gradients", [('"w1": float((d_l1 * inp).sum())', '"w1": float(d_l1[0, 0])')],
     "all 4"),
    # no seen set: a shared leaf listed twice
    ("ch02-find-leaves", [("if child is None or id(child) in seen:", "if child is None:")],
     "more than once"),
    # a leaf asked about itself
    ("ch02-find-leaves", [("return [var] if var.requires_grad else []", "return []")],
     "[var] itself"),
    # only the first level of the graph
    ("ch02-find-leaves", [("                stack.append(child)\n", "                pass\n")],
     "not the right ones"),
]


def test_the_key_passes_every_check_of_chapter_02(capsys):
    namespace = ch02_notebook(None, [])
    for run in CH02_CHECKS.values():
        run(namespace)
    out = capsys.readouterr().out
    assert out.count("passed (with hidden cases).") == len(CH02_CHECKS)
    assert "note:" not in out


@pytest.mark.parametrize("broken,replacements,words", CH02_MISTAKES,
                         ids=[f"{b}-{i}" for i, (b, _, _) in enumerate(CH02_MISTAKES)])
def test_one_broken_exercise_of_chapter_02_costs_only_its_own_points(broken, replacements,
                                                                     words, capsys):
    namespace = ch02_notebook(broken, replacements)
    with pytest.raises(AssertionError) as info:
        CH02_CHECKS[broken](namespace)
    message = str(info.value)
    assert message.startswith(f"Exercise {broken} failed") and words in message, message
    for exercise, run in CH02_CHECKS.items():
        if exercise != broken:
            run(namespace)                     # full points: no AssertionError
    for note in (line for line in capsys.readouterr().out.splitlines()
                 if line.startswith("note:")):
        assert broken in note, note


def test_every_exercise_of_chapter_02_is_broken_at_least_three_ways():
    counts = {exercise: 0 for exercise in CH02_CHECKS}
    for exercise, _, _ in CH02_MISTAKES:
        counts[exercise] += 1
    assert min(counts.values()) >= 3, counts
