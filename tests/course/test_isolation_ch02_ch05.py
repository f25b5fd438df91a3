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

from autograd_lab.course.exercises import check

from ._checker_helpers import (assert_only_its_own_points, assert_the_key_passes, bound,
                               solution_cells, with_mistake)


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
            source = with_mistake(source, replacements, exercise)
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
    assert_the_key_passes(bound(CH02_CHECKS, ch02_notebook(None, [])), capsys)


@pytest.mark.parametrize("broken,replacements,words", CH02_MISTAKES,
                         ids=[f"{b}-{i}" for i, (b, _, _) in enumerate(CH02_MISTAKES)])
def test_one_broken_exercise_of_chapter_02_costs_only_its_own_points(broken, replacements,
                                                                     words, capsys):
    assert_only_its_own_points(bound(CH02_CHECKS, ch02_notebook(broken, replacements)), broken, capsys, words)


def test_every_exercise_of_chapter_02_is_broken_at_least_three_ways():
    counts = {exercise: 0 for exercise in CH02_CHECKS}
    for exercise, _, _ in CH02_MISTAKES:
        counts[exercise] += 1
    assert min(counts.values()) >= 3, counts


# -- chapter 05 --------------------------------------------------------------------------------
CH05 = "05_tensors_broadcasting.ipynb"


def ch05_notebook(broken: str | None, replacements: list[tuple[str, str]],
                  earlier: dict[str, list[tuple[str, str]]] | None = None) -> dict[str, Any]:
    """The chapter 05 notebook's globals: the course's mygrad of chapters 02-05, then every
    exercise cell of the chapter (``broken`` made wrong by ``replacements``). ``earlier`` maps
    a module of chapters 02-04 to mistakes made in the course's copy of it, as a learner whose
    earlier exercise fails would have it."""
    from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
    from autograd_lab.course.learner.loader import build_package
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 5}
    if earlier:
        import tempfile
        from pathlib import Path
        folder = Path(tempfile.mkdtemp())
        for module, changes in earlier.items():
            text = files[module].read_text(encoding="utf-8")
            for old, new in changes:
                assert old in text, (module, old)
                text = text.replace(old, new)
            files[module] = folder / f"{module}.py"
            files[module].write_text(text, encoding="utf-8")
    pkg = build_package(files)
    namespace = dict(vars(pkg.ops))
    for exercise, source in _code_cells(CH05).items():
        if exercise == broken:
            source = with_mistake(source, replacements, exercise)
        exec(source, namespace)  # noqa: S102 - the key's cells, one of them made wrong
    return namespace


CH05_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "ch05-reshape-transpose": lambda ns: check.ch05_reshape_transpose(ns["Reshape"],
                                                                      ns["Transpose"], hidden=True),
    "ch05-sum-backward": lambda ns: check.ch05_sum_backward(ns["Sum"], hidden=True),
    "ch05-mean-backward": lambda ns: check.ch05_mean_backward(ns["Mean"], hidden=True),
    "ch05-unbroadcast": lambda ns: check.ch05_unbroadcast(ns["unbroadcast"], hidden=True),
    "ch05-unbroadcast-function": lambda ns: check.ch05_unbroadcast_function(
        ns["Unbroadcast"], ns["sum_to"], hidden=True),
    "ch05-sub-function": lambda ns: check.ch05_sub_function(ns["Sub"], hidden=True),
    "ch05-div-function": lambda ns: check.ch05_div_function(ns["Div"], hidden=True),
    "ch05-pow-function": lambda ns: check.ch05_pow_function(ns["Pow"], hidden=True),
    "ch05-log-function": lambda ns: check.ch05_log_function(ns["Log"], hidden=True),
    "ch05-matmul-backward": lambda ns: check.ch05_matmul_backward(ns["MatMul"], hidden=True),
    "ch05-softmax": lambda ns: check.ch05_softmax(ns["Softmax"], hidden=True),
    "ch05-log-softmax": lambda ns: check.ch05_log_softmax(ns["LogSoftmax"], hidden=True),
    "ch05-index-function": lambda ns: check.ch05_index_function(ns["Index"], ns["Scatter"],
                                                                hidden=True),
    "ch05-matmul-vectors": lambda ns: check.ch05_matmul_vectors(ns["matmul"], hidden=True),
}

CH05_MISTAKES = [
    # Scatter assigns: a position read twice keeps one gradient
    ("ch05-index-function", [("np.add.at(out, key, g.data)", "out[key] = g.data")],
     "read more than once"),
    # the same with +=, which numpy buffers for repeated positions
    ("ch05-index-function", [("np.add.at(out, key, g.data)", "out[key] += g.data")],
     "np.add.at"),
    # Index's backward passes grad_output through: the selection's shape
    ("ch05-index-function", [("return Scatter.apply(grad_output, ctx.x_shape, ctx.key), None",
                              "return grad_output, None")], "shape of the elements read"),
    # Index's backward scatters with numpy and returns the array (right numbers, no Variable)
    ("ch05-index-function", [("return Scatter.apply(grad_output, ctx.x_shape, ctx.key), None",
                              "return Scatter.apply(grad_output, ctx.x_shape, ctx.key).data, None")],
     "not a Variable"),
    # Index forgets to keep x's shape
    ("ch05-index-function", [("        ctx.x_shape, ctx.key = x.shape, key\n",
                              "        ctx.key = key\n")], "keep them on ctx"),
    # Scatter starts from ones
    ("ch05-index-function", [("out = np.zeros(shape, dtype=g.data.dtype)",
                              "out = np.ones(shape, dtype=g.data.dtype)")], "never read"),
    # Scatter's backward returns a single gradient
    ("ch05-index-function", [("return Index.apply(grad_output, ctx.key), None, None",
                              "return Index.apply(grad_output, ctx.key)")],
     "(grad_g, None, None)"),
    # matmul keeps the axis it added for a vector
    ("ch05-matmul-vectors", [("    return out.reshape(shape) if out.shape != shape else out",
                              "    return out")], "was not dropped again"),
    # a 1-D left operand made a column
    ("ch05-matmul-vectors", [("a.reshape(1, -1) if a.ndim == 1", "a.reshape(-1, 1) if a.ndim == 1")],
     "1-D left operand is a row"),
    # the axes dropped on .data: outside the graph
    ("ch05-matmul-vectors", [("    return out.reshape(shape) if out.shape != shape else out",
                              "    return Variable(out.data.reshape(shape))")],
     "not part of the graph"),
    # _kept_shape: axis=None not handled, a tuple not handled, a list returned (Mean uses it too)
    ("ch05-sum-backward", [("    if axis is None:\n        return (1,) * len(shape)\n", "")],
     "every axis becomes 1"),
    ("ch05-sum-backward", [("axes = axis if isinstance(axis, tuple) else (axis,)",
                            "axes = (axis,)")], "may be a tuple"),
    ("ch05-sum-backward", [("    return tuple(kept)", "    return kept")], "Return a tuple"),
    # Sum's forward keeps no shape on ctx
    ("ch05-sum-backward", [("        ctx.x_shape, ctx.axis = x.shape, axis\n"
                            "        return Variable(x.data.sum(",
                            "        return Variable(x.data.sum(")], "on ctx"),
    # Sum's forward ignores keepdims
    ("ch05-sum-backward", [("x.data.sum(axis=axis, keepdims=keepdims)", "x.data.sum(axis=axis)")],
     "keepdims"),
    # MatMul's backward reads nothing saved: forward forgot to save
    ("ch05-matmul-backward", [("        ctx.save_for_backward(a, b)\n        return Variable(a.data @",
                               "        return Variable(a.data @")], "save_for_backward"),
]


def test_the_key_passes_every_check_of_chapter_05(capsys):
    assert_the_key_passes(bound(CH05_CHECKS, ch05_notebook(None, [])), capsys)


@pytest.mark.parametrize("broken,replacements,words", CH05_MISTAKES,
                         ids=[f"{b}-{i}" for i, (b, _, _) in enumerate(CH05_MISTAKES)])
def test_one_broken_exercise_of_chapter_05_costs_only_its_own_points(broken, replacements,
                                                                     words, capsys):
    assert_only_its_own_points(bound(CH05_CHECKS, ch05_notebook(broken, replacements)), broken, capsys, words)


# -- chapter 05 on a learner whose chapter 03 or 04 pieces are broken ---------------------------
EARLIER_MISTAKES = {
    # Neg negates its input in place (Sub's backward negates grad_output)
    "neg-in-place": ("ch03-neg-function", {"function": [(
        "        return Variable(-x.data)",
        "        x.data *= -1\n        return Variable(x.data.copy())")]}),
    # Neg returns its input unchanged
    "neg-forgets-the-sign": ("ch03-neg-function", {"function": [(
        "        return Variable(-x.data)", "        return Variable(x.data.copy())")]}),
    # apply reads grad mode after switching it off: nothing is ever recorded
    "apply-never-records": ("ch03-own-apply", {"function": [(
        "        enabled = GradMode.enabled\n        GradMode.enabled = False",
        "        GradMode.enabled = False\n        enabled = GradMode.enabled")]}),
    # the engine walks the graph leaves first
    "order-not-reversed": ("ch04-topological-order", {"engine": [(
        "    return order[::-1]            # root first, leaves last", "    return order")]}),
}


@pytest.mark.parametrize("mistake", sorted(EARLIER_MISTAKES))
def test_chapter_05_checks_pass_a_correct_piece_whatever_chapters_03_04_hold(mistake, capsys):
    earlier_exercise, earlier = EARLIER_MISTAKES[mistake]
    namespace = ch05_notebook(None, [], earlier=earlier)
    for run in CH05_CHECKS.values():
        run(namespace)                         # full points: no AssertionError
    for note in (line for line in capsys.readouterr().out.splitlines()
                 if line.startswith("note:")):
        assert earlier_exercise in note, note


# -- chapter 03's Clone -----------------------------------------------------------------------
CLONE_MISTAKES = [
    ("Variable(x.data.copy())", "Variable(x.data)", "shares its array with x"),
    ("        return Variable(x.data.copy())", "        return x", "returned x itself"),
    ("        return grad_output\n",
     "        return Variable(np.ones_like(grad_output.data))\n", "local derivative alone"),
    ("        return grad_output\n",
     "        return Variable(np.zeros_like(grad_output.data))\n", "detach"),
]


def _ch03_checks() -> dict[str, Callable[[dict[str, Any]], None]]:
    from .test_isolation_ch02_06 import CH03_CHECKS
    return dict(CH03_CHECKS, **{"ch03-clone-function": lambda ns: check.ch03_clone_function(
        ns["Clone"], hidden=True)})


@pytest.mark.parametrize("old,new,words", CLONE_MISTAKES, ids=[w for _, _, w in CLONE_MISTAKES])
def test_a_broken_clone_costs_only_its_own_points(old, new, words, capsys):
    from .test_isolation_ch02_06 import ch03_notebook
    namespace = ch03_notebook("ch03-clone-function", [(old, new)])
    assert_only_its_own_points(bound(_ch03_checks(), namespace), "ch03-clone-function", capsys, words)
