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

from autograd_lab.course.exercises import check

from ._checker_helpers import assert_only_its_own_points, assert_the_key_passes, bound, with_mistake

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
    assert_the_key_passes(bound(CH06_CHECKS, ch06_notebook(None, [])), capsys)


@pytest.mark.parametrize("broken,replacements", CH06_BREAKS,
                         ids=[f"{b}-{i}" for i, (b, _) in enumerate(CH06_BREAKS)])
def test_one_broken_exercise_of_chapter_06_costs_only_its_own_points(broken, replacements,
                                                                     capsys):
    assert_only_its_own_points(bound(CH06_CHECKS, ch06_notebook(broken, replacements)), broken, capsys)


def test_version_check_names_the_failing_inplace_exercise_in_one_line(capsys):
    """A mul_ that forgets the version bump: the version check still passes a correct
    save_for_backward/saved_tensors, and says in one line which exercise fails."""
    replacements = INPLACE_MISTAKES[0][0]
    namespace = ch06_notebook("ch06-inplace-ops", replacements)
    check.ch06_version_check(namespace["mygrad"])
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1                      # the product's case (zero_ is not broken)
    assert "exercise ch06-inplace-ops fails" in notes[0] and "not to 1" in notes[0]


# -- chapter 03 --------------------------------------------------------------------------------
CH03 = "03_function.ipynb"


def ch03_cells() -> list[tuple[str | None, str]]:
    """The %%mygrad cells of chapter 03 and the FixedReLU cell, in order: (exercise id or None,
    source without the %%mygrad line)."""
    from .test_exercises_ch06 import solution_cells
    cells = []
    for cell in solution_cells(CH03):
        source = "".join(cell["source"])
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if source.startswith("%%mygrad function"):
            cells.append((grade_id.removesuffix("-code") or None, source.split("\n", 1)[1]))
        elif grade_id == "ch03-find-the-bug-code":
            cells.append(("ch03-find-the-bug", source))
    return cells


def ch03_notebook(broken: str | None, replacements: list[tuple[str, str]]) -> dict[str, Any]:
    """What the chapter 03 notebook holds when exercise ``broken`` has the mistake
    ``replacements``: the course's Variable, then the chapter's cells, run in one namespace."""
    from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
    from autograd_lab.course.learner.loader import build_package
    pkg = build_package({"variable": REFERENCE_ROOT / PACKAGE / "variable.py"})
    namespace = dict(vars(pkg.variable))
    for exercise, source in ch03_cells():
        if exercise is not None and exercise == broken:
            source = with_mistake(source, replacements, exercise)
        exec(source, namespace)  # noqa: S102 - the key's cells, one of them made wrong
    return namespace


CH03_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "ch03-context": lambda ns: check.ch03_context(ns["Context"], hidden=True),
    "ch03-own-apply": lambda ns: check.ch03_own_apply(ns["Function"], hidden=True),
    "ch03-sum-to": lambda ns: check.ch03_sum_to(ns["as_variable"], ns["SumTo"],
                                                ns["BroadcastTo"], ns["sum_to"], hidden=True),
    "ch03-neg-function": lambda ns: check.ch03_neg_function(ns["Neg"], hidden=True),
    "ch03-exp-function": lambda ns: check.ch03_exp_function(ns["Exp"], hidden=True),
    "ch03-reductions": lambda ns: check.ch03_reductions(ns["Sum"], ns["Mean"], hidden=True),
    "ch03-mul-function": lambda ns: check.ch03_mul_function(ns["Mul"], hidden=True),
    "ch03-relu-function": lambda ns: check.ch03_relu_function(ns["ReLU"], hidden=True),
    "ch03-find-the-bug": lambda ns: check.ch03_find_the_bug(ns["FixedReLU"], hidden=True),
}

# the mistakes of the three newer exercises, with the words their hints must contain
CH03_NEW_MISTAKES = [
    # the saved tensors kept on the class: every node shares the last one's
    ("ch03-context", [("        self._saved = tensors\n", "        Context._saved = tensors\n"),
                      ("        self._saved = ()\n", ""),
                      ("    function = None ", "    _saved = ()\n    function = None ")],
     "stored on the class or in a global"),
    # release() empties instead of freeing: a second backward would silently see nothing
    ("ch03-context", [("        self._saved = None\n        ### END SOLUTION\n\n    def __repr__",
                       "        self._saved = ()\n        ### END SOLUTION\n\n    def __repr__")],
     "Free them in a way saved_tensors can tell apart"),
    # saved_tensors gives a list
    ("ch03-context", [("        return tuple(self._saved)", "        return list(self._saved)")],
     "as a tuple"),
    # a new node without _saved: saved_tensors of Add's node crashes
    ("ch03-context", [("        self._saved = ()\n", "")], "set what it reads in __init__"),
    # a correct node under another name: chapter 06 reads _saved (a contract, checked here)
    ("ch03-context", [("self._saved", "self._tensors")], "chapter 06 adds version checks"),
    # BroadcastTo's backward passes the gradient through: the wrong shape
    ("ch03-sum-to", [("        return SumTo.apply(grad_output, ctx.x_shape), None",
                      "        return grad_output, None")], "sum grad_output back down"),
    # BroadcastTo returns numpy's read-only view
    ("ch03-sum-to", [("np.broadcast_to(x.data, shape).copy()", "np.broadcast_to(x.data, shape)")],
     "read-only view"),
    # SumTo's backward passes the gradient through
    ("ch03-sum-to", [("        return BroadcastTo.apply(grad_output, ctx.g_shape), None",
                      "        return grad_output, None")], "repeats grad_output"),
    # as_variable wraps a Variable again
    ("ch03-sum-to", [("    return x if isinstance(x, Variable) else Variable(x)",
                      "    return Variable(x)")], "cut it off from its graph"),
    # Neg's backward passes grad_output through
    ("ch03-neg-function", [("        return -grad_output", "        return grad_output")],
     "negate it"),
    # Neg's backward returns the local derivative alone
    ("ch03-neg-function", [("        return -grad_output",
                            "        return Variable(-np.ones(ctx.shape))"),
                           ("        return Variable(-x.data)",
                            "        ctx.shape = x.shape\n        return Variable(-x.data)")],
     "the local derivative alone"),
    # Neg's forward negates x in place
    ("ch03-neg-function", [("        return Variable(-x.data)",
                            "        x.data *= -1\n        return Variable(x.data.copy())")],
     "changed its input"),
    # Exp's backward multiplies by the input
    ("ch03-exp-function", [("        y = Variable(np.exp(x.data))\n        ctx.save_for_backward(y)",
                            "        y = Variable(np.exp(x.data))\n        ctx.save_for_backward(x)")],
     "multiplied grad_output by the input x"),
    # Exp's backward forgets grad_output
    ("ch03-exp-function", [("        return grad_output * y", "        return y")],
     "multiply it by grad_output"),
    # Exp's backward passes grad_output through
    ("ch03-exp-function", [("        return grad_output * y", "        return grad_output")],
     "passed grad_output through unchanged"),
    # Exp's backward returns numpy's array: right numbers, but chapter 11 cannot differentiate it
    ("ch03-exp-function", [("        return grad_output * y", "        return (grad_output * y).data")],
     "chapter 11 differentiates backward"),
    # Mul's backward returns numpy arrays (the learners' case: not caught before)
    ("ch03-mul-function", [("sum_to(grad_output * b, a.shape), sum_to(grad_output * a, b.shape)",
                            "sum_to(grad_output * b, a.shape).data, sum_to(grad_output * a, b.shape).data")],
     "not a Variable"),
    # Exp changes its input
    ("ch03-exp-function", [("        y = Variable(np.exp(x.data))",
                            "        y = Variable(np.exp(x.data, out=x.data))")],
     "changed its input"),
    # Sum's backward returns grad_output as it is: a single number for a whole tensor
    ("ch03-reductions", [("        return BroadcastTo.apply(grad_output, ctx.x_shape)\n",
                          "        return grad_output\n")], "has the shape of its input"),
    # Mean's backward forgets to divide
    ("ch03-reductions", [("grad_output * Variable(1.0 / n)", "grad_output")],
     "That is Sum's gradient"),
    # Mean divides by the length of the first axis
    ("ch03-reductions", [("n = max(int(np.prod(ctx.x_shape)), 1)", "n = ctx.x_shape[0]")],
     "not the length of the first axis"),
]

CH03_BREAKS = [(exercise, replacements) for exercise, replacements, _ in CH03_NEW_MISTAKES] + [
    # apply reads grad mode after switching it off: it never records (the case)
    ("ch03-own-apply", [("        enabled = GradMode.enabled\n        GradMode.enabled = False",
                         "        GradMode.enabled = False\n        enabled = GradMode.enabled")]),
    # apply forgets to restore grad mode
    ("ch03-own-apply", [("        finally:\n            GradMode.enabled = enabled\n",
                         "        finally:\n            pass\n")]),
    # apply returns forward's raw output and never records
    ("ch03-own-apply", [("        return output\n", "        return cls.forward(cls.Node(), *inputs)\n")]),
    # a recursive Mul: forward multiplies Variables (the case)
    ("ch03-mul-function", [("        return Variable(a.data * b.data)", "        return a * b")]),
    # Mul forgets to save its inputs
    ("ch03-mul-function", [("        ctx.save_for_backward(a, b)\n", "")]),
    # Mul swaps the gradients
    ("ch03-mul-function", [("sum_to(grad_output * b, a.shape), sum_to(grad_output * a, b.shape)",
                            "sum_to(grad_output * a, a.shape), sum_to(grad_output * b, b.shape)")]),
    # ReLU passes the gradient at 0
    ("ch03-relu-function", [("(x.data > 0)", "(x.data >= 0)")]),
    # ReLU's mask as float64 (float32 input, float64 gradient: the case)
    ("ch03-relu-function", [("Variable((x.data > 0).astype(grad_output.dtype))",
                             "Variable(x.data > 0)")]),
    # ReLU zeroes grad_output itself
    ("ch03-relu-function", [("        return grad_output * Variable((x.data > 0).astype("
                             "grad_output.dtype))",
                             "        grad_output.data[x.data <= 0] = 0\n        return grad_output")]),
    # the bug left in
    ("ch03-find-the-bug", [("grad_input[input_ < 0] = 0", "grad_input[input < 0] = 0")]),
    # FixedReLU changes grad_output in place (the case)
    ("ch03-find-the-bug", [("        grad_input = grad_output.clone()\n",
                            "        grad_input = grad_output\n")]),
    # the mask taken from the output of clone, not from the input
    ("ch03-find-the-bug", [("grad_input[input_ < 0] = 0", "grad_input[grad_input < 0] = 0")]),
]


OWN_APPLY_BREAKS = [r for e, r in CH03_BREAKS if e == "ch03-own-apply"]


def test_the_key_passes_every_check_of_chapter_03(capsys):
    assert_the_key_passes(bound(CH03_CHECKS, ch03_notebook(None, [])), capsys)


@pytest.mark.parametrize("broken,replacements", CH03_BREAKS,
                         ids=[f"{b}-{i}" for i, (b, _) in enumerate(CH03_BREAKS)])
def test_one_broken_exercise_of_chapter_03_costs_only_its_own_points(broken, replacements,
                                                                     capsys):
    assert_only_its_own_points(bound(CH03_CHECKS, ch03_notebook(broken, replacements)), broken, capsys,
                               errors=(AssertionError, NotImplementedError))


def test_an_apply_that_never_records_is_named_once_by_the_other_checks(capsys):
    namespace = ch03_notebook("ch03-own-apply", OWN_APPLY_BREAKS[0])
    for exercise in ("ch03-mul-function", "ch03-relu-function", "ch03-find-the-bug"):
        CH03_CHECKS[exercise](namespace)
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 3 and all("exercise ch03-own-apply fails" in n for n in notes)


def test_chapter_03_checks_record_even_if_an_earlier_apply_left_grad_mode_off(capsys):
    """An apply that never restores grad mode, run before the checks, leaves it off; the
    checks of Mul, ReLU and FixedReLU still pass the key's pieces, and put the mode back."""
    namespace = ch03_notebook("ch03-own-apply", OWN_APPLY_BREAKS[1])
    namespace["Mul"].apply(namespace["Variable"]([1.0]), namespace["Variable"]([2.0]))
    assert namespace["GradMode"].enabled is False
    for exercise in ("ch03-mul-function", "ch03-relu-function", "ch03-find-the-bug"):
        CH03_CHECKS[exercise](namespace)
    assert namespace["GradMode"].enabled is False


# -- chapter 04 --------------------------------------------------------------------------------
def _ch04() -> Any:
    from . import test_exercises_ch04 as t4
    return t4


def _ch04_backward_overwriting(sort: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A walk that overwrites a parent's gradient instead of adding (its own bug)."""
    def backward(root):
        grads = {root: 1.0}
        for node in sort(root):
            g = grads[node]
            if not node.parents:
                node.grad += g
            for parent, local in zip(node.parents, node.local_grads):
                grads[parent] = local * g
        return grads
    return backward


def ch04_checks(sort: Callable, backward: Callable, order: Callable | None, pkg: Any,
                ) -> dict[str, Callable[[], None]]:
    t4 = _ch04()
    return {
        "ch04-topological-sort": lambda: check.ch04_topological_sort(sort, hidden=True),
        "ch04-backward": lambda: check.ch04_backward(backward, hidden=True),
        "ch04-reused-node": lambda: check.ch04_reused_node(t4.reused_node_grads, hidden=True),
        "ch04-second-backward": lambda: check.ch04_second_backward(t4.predict_x_grad,
                                                                   hidden=True),
        "ch04-topological-order": lambda: check.ch04_topological_order(
            order or pkg.topological_order, pkg, hidden=True),
        "ch04-engine-backward": lambda: check.ch04_engine_backward(pkg.backward, pkg,
                                                                   hidden=True),
    }


def _ch04_breaks() -> list[tuple[str, str]]:
    return [("ch04-topological-sort", name) for name in (
        "sort_without_visited", "sort_forward_order", "sort_recursive", "sort_breadth_first")] + [
        ("ch04-backward", "overwrite"),
        ("ch04-topological-order", "order_no_visited"),
        ("ch04-topological-order", "order_forward"),
        ("ch04-topological-order", "order_with_constants"),
        ("ch04-engine-backward", "accumulate_without_copy"),
        ("ch04-engine-backward", "no_release")]


ENGINE_MISTAKES = {
    "accumulate_without_copy": (
        "        v.grad = Variable(grad.data.copy()) if not GradMode.enabled else grad",
        "        v.grad = grad"),
    "no_release": ("                node.release()", "                pass"),
}
ORDER_MISTAKES = {
    "order_no_visited": ("            if id(x) not in visited:\n", "            if True:\n"),
    "order_forward": ("    return order[::-1]            # root first, leaves last",
                      "    return order"),
    "order_with_constants": (
        "    return [x for x in v.grad_fn.inputs if isinstance(x, Variable) and x.requires_grad]",
        "    return [x for x in v.grad_fn.inputs if isinstance(x, Variable)]"),
}


@pytest.mark.parametrize("broken,mistake", _ch04_breaks(),
                         ids=[f"{b}-{m}" for b, m in _ch04_breaks()])
def test_one_broken_exercise_of_chapter_04_costs_only_its_own_points(broken, mistake, tmp_path,
                                                                     capsys):
    t4 = _ch04()
    sort, order = t4.topological_sort, None
    change = ENGINE_MISTAKES.get(mistake) or ORDER_MISTAKES.get(mistake)
    pkg = t4.engine_package(tmp_path, change) if change else t4.engine_package()
    if broken == "ch04-topological-sort":
        sort = getattr(t4, mistake)
    backward = (_ch04_backward_overwriting(sort) if broken == "ch04-backward"
                else t4.make_backward(sort))
    assert_only_its_own_points(ch04_checks(sort, backward, order, pkg), broken, capsys)


@pytest.mark.parametrize("exercise,replacements,words", CH03_NEW_MISTAKES,
                         ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(CH03_NEW_MISTAKES)])
def test_the_newer_chapter_03_exercises_name_the_cause(exercise, replacements, words):
    namespace = ch03_notebook(exercise, replacements)
    with pytest.raises(AssertionError) as info:
        CH03_CHECKS[exercise](namespace)
    message = str(info.value)
    assert message.startswith(f"Exercise {exercise} failed") and words in message, message


# -- chapter 05: the elementwise Functions -------------------------------------------------------
def ch05_namespace(broken: str | None, replacements: list[tuple[str, str]]) -> dict[str, Any]:
    """The chapter 05 cells of Sub, Div, Pow and Log (one of them made wrong), run on the
    course's mygrad of chapters 02-04 with the chapter's own sum_to."""
    from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
    from autograd_lab.course.learner.loader import build_package

    from .test_exercises_ch06 import solution_cells
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 5}
    pkg = build_package(files)
    namespace = dict(vars(pkg.ops))
    for cell in solution_cells("05_tensors_broadcasting.ipynb"):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.removesuffix("-code") not in CH05_CHECKS or not grade_id.endswith("-code"):
            continue
        source = "".join(cell["source"]).split("\n", 1)[1]
        if grade_id.removesuffix("-code") == broken:
            source = with_mistake(source, replacements, broken)
        exec(source, namespace)  # noqa: S102 - the key's cells, one of them made wrong
    return namespace


CH05_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "ch05-sub-function": lambda ns: check.ch05_sub_function(ns["Sub"], hidden=True),
    "ch05-div-function": lambda ns: check.ch05_div_function(ns["Div"], hidden=True),
    "ch05-pow-function": lambda ns: check.ch05_pow_function(ns["Pow"], hidden=True),
    "ch05-log-function": lambda ns: check.ch05_log_function(ns["Log"], hidden=True),
    "ch05-mean-backward": lambda ns: check.ch05_mean_backward(ns["Mean"], hidden=True),
    "ch05-log-softmax": lambda ns: check.ch05_log_softmax(ns["LogSoftmax"], hidden=True),
    "ch05-unbroadcast": lambda ns: check.ch05_unbroadcast(ns["unbroadcast"], hidden=True),
    "ch05-sum-backward": lambda ns: check.ch05_sum_backward(ns["Sum"], hidden=True),
    "ch05-matmul-backward": lambda ns: check.ch05_matmul_backward(ns["MatMul"], hidden=True),
    "ch05-softmax": lambda ns: check.ch05_softmax(ns["Softmax"], hidden=True),
    "ch05-unbroadcast-function": lambda ns: check.ch05_unbroadcast_function(
        ns["Unbroadcast"], ns["sum_to"], hidden=True),
    "ch05-reshape-transpose": lambda ns: check.ch05_reshape_transpose(ns["Reshape"],
                                                                      ns["Transpose"], hidden=True),
}

CH05_MISTAKES = [
    ("ch05-sub-function", [("sum_to(-grad_output, ctx.b_shape)", "sum_to(grad_output, ctx.b_shape)")],
     "wrong sign"),
    ("ch05-sub-function", [("sum_to(-grad_output, ctx.b_shape)", "-grad_output")],
     "sum its gradient down to its shape"),
    ("ch05-sub-function", [("return sum_to(grad_output, ctx.a_shape), ",
                            "return sum_to(-grad_output, ctx.a_shape), ")], "d(a - b)/da = +1"),
    ("ch05-div-function", [("-grad_output * a / (b * b)", "-grad_output * a / b")],
     "the square of b is missing"),
    ("ch05-div-function", [("-grad_output * a / (b * b)", "grad_output * a / (b * b)")],
     "wrong sign"),
    ("ch05-div-function", [("sum_to(grad_output / b, a.shape)", "sum_to(grad_output * b, a.shape)")],
     "do not multiply"),
    ("ch05-div-function", [("sum_to(-grad_output * a / (b * b), b.shape)",
                            "-grad_output * a / (b * b)")], "sum its gradient down"),
    ("ch05-pow-function", [("grad_output * ctx.p * x ** (ctx.p - 1)", "grad_output * x ** (ctx.p - 1)")],
     "The factor p is missing"),
    ("ch05-pow-function", [("grad_output * ctx.p * x ** (ctx.p - 1)", "grad_output * ctx.p * x ** ctx.p")],
     "drop by one"),
    ("ch05-pow-function", [("x ** (ctx.p - 1), None", "x ** (ctx.p - 1), grad_output")],
     "return (grad_x, None)"),
    ("ch05-log-function", [("return grad_output / x", "return grad_output * x")], "do not multiply"),
    ("ch05-log-function", [("return grad_output / x", "return 1 / x")], "grad_output is missing"),
    ("ch05-log-function", [("return grad_output / x", "return grad_output * x.log()")],
     "the derivative of log x is"),
    ("ch05-mean-backward", [("g * (1.0 / max(ctx.n, 1))", "g")], "The gradient is Sum's"),
    ("ch05-mean-backward", [("g * (1.0 / max(ctx.n, 1))", "g * ctx.n")], "do not multiply"),
    ("ch05-mean-backward", [("max(int(np.prod(_kept_shape(x.shape, axis))), 1) if x.ndim else 1",
                             "1")], "divided by all"),
    ("ch05-mean-backward", [("x.data.size // max(int(np.prod(_kept_shape(x.shape, axis))), 1) "
                             "if x.ndim else 1", "max(x.data.mean(axis=axis).size, 1)")],
     "number of means"),
    ("ch05-mean-backward", [("g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))",
                             "g = grad_output")], "size 1"),
    ("ch05-mean-backward", [("ctx.x_shape), None, None", "ctx.x_shape)")], "(grad_x, None, None)"),
    ("ch05-log-softmax", [("grad_output.sum(axis=ctx.axis, keepdims=True)", "grad_output")],
     "The sum over the axis is missing"),
    ("ch05-log-softmax", [("grad_output - y.exp() *", "grad_output - y *")],
     "exp of it"),
    ("ch05-log-softmax", [("grad_output.sum(axis=ctx.axis, keepdims=True)",
                           "grad_output.sum(axis=ctx.axis)")], "keepdims=True"),
    ("ch05-log-softmax", [("z = x.data - x.data.max(axis=axis, keepdims=True)", "z = x.data")],
     "subtract the maximum"),
    ("ch05-log-softmax", [("np.log(np.exp(z).sum(axis=axis, keepdims=True))",
                           "np.log(np.exp(z).sum(axis=axis))")], "The sum inside the log lost"),
    ("ch05-log-softmax", [("return grad_output - y.exp() * grad_output.sum(axis=ctx.axis, "
                           "keepdims=True), None",
                           "return y.exp() * grad_output.sum(axis=ctx.axis, keepdims=True) "
                           "- grad_output, None")], "wrong sign"),
    ("ch05-reshape-transpose", [("tuple(np.argsort(ctx.axes))", "ctx.axes")], "same axes as forward"),
    ("ch05-reshape-transpose", [("return Reshape.apply(grad_output, ctx.x_shape), None",
                                 "return grad_output, None")], "move its elements back"),
    ("ch05-reshape-transpose", [("        ctx.x_shape = x.shape\n", "")], "keep it on ctx"),
    ("ch05-reshape-transpose", [("return Transpose.apply(grad_output, inverse), None",
                                 "return Transpose.apply(grad_output, inverse)")], "(grad_x, None)"),
    ("ch05-reshape-transpose", [("inverse = None if ctx.axes is None else tuple(np.argsort(ctx.axes))",
                                 "inverse = None")], "reversed all axes"),
    ("ch05-unbroadcast-function", [("return BroadcastTo.apply(grad_output, ctx.g_shape), None",
                                    "return grad_output, None")], "copying back up"),
    ("ch05-unbroadcast-function", [("        ctx.g_shape = g.shape\n", "")], "keep it on ctx"),
    ("ch05-unbroadcast-function", [("return BroadcastTo.apply(grad_output, ctx.g_shape), None",
                                    "return BroadcastTo.apply(grad_output, ctx.g_shape)")],
     "(grad_g, None)"),
    ("ch05-unbroadcast-function", [("return grad if grad.shape == tuple(shape) else "
                                    "Unbroadcast.apply(grad, tuple(shape))",
                                    "return Variable(unbroadcast(grad.data, tuple(shape)))")],
     "not part of the graph"),
    ("ch05-unbroadcast-function", [("return grad if grad.shape == tuple(shape) else "
                                    "Unbroadcast.apply(grad, tuple(shape))",
                                    "return Unbroadcast.apply(grad, tuple(shape))")],
     "return grad itself"),
    # the chapter's earlier checks, run on the same namespaces: each mistake costs only its own
    ("ch05-unbroadcast", [("out.sum(axis=axes, keepdims=True)", "out.sum(axis=axes)")],
     "without keepdims=True"),
    ("ch05-unbroadcast", [("grad.sum(axis=tuple(range(lead))) if lead > 0 else grad", "grad")],
     "lost some axes"),
    ("ch05-sum-backward", [("g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))",
                            "g = grad_output")], "summed axis was not put back"),
    ("ch05-matmul-backward", [("return grad_output @ b.T, a.T @ grad_output",
                               "return grad_output @ b, a @ grad_output")],
     "missing the transpose"),
    ("ch05-softmax", [("(g * y).sum(axis=ctx.axis, keepdims=True)", "(g * y).sum(axis=ctx.axis)")],
     "keepdims=True"),
    ("ch05-softmax", [("ctx.save_for_backward(y)", "ctx.save_for_backward(x)")],
     "saved in forward"),
]


def test_the_key_passes_the_elementwise_checks_of_chapter_05(capsys):
    assert_the_key_passes(bound(CH05_CHECKS, ch05_namespace(None, [])), capsys)


@pytest.mark.parametrize("broken,replacements,words", CH05_MISTAKES,
                         ids=[f"{b}-{i}" for i, (b, _, _) in enumerate(CH05_MISTAKES)])
def test_one_broken_elementwise_function_costs_only_its_points_and_names_its_cause(
        broken, replacements, words, capsys):
    assert_only_its_own_points(bound(CH05_CHECKS, ch05_namespace(broken, replacements)), broken, capsys,
                               words)
