"""Hints of chapters 02, 03 and 05 name the cause of a realistic mistake, not a formula to copy
and not "read the traceback".

Each mistake is made in the key's cell, the chapter's check runs on it, and the failure's
message must name what went wrong (and the other exercises keep their points, which
``test_isolation_ch02_ch05`` asserts for every mistake there).
"""
from __future__ import annotations

import pytest

from autograd_lab.course.exercises import check

from .test_isolation_ch02_06 import ch03_notebook
from .test_isolation_ch02_ch05 import CH05_CHECKS, CLONE_MISTAKES, ch05_notebook

GENERIC = "Read the traceback"

# (exercise, replacements, words the message must contain)
CH05_HINTS = [
    # Softmax saves its input: the hint names the saved tensor, it does not hand out the formula
    ("ch05-softmax", [("ctx.save_for_backward(y)", "ctx.save_for_backward(x)")],
     "needs the output y = softmax(x)"),
    # Softmax's backward sums g * y without keepdims (a (2, 5) input: numpy cannot broadcast)
    ("ch05-softmax", [("(g * y).sum(axis=ctx.axis, keepdims=True)", "(g * y).sum(axis=ctx.axis)")],
     "must keep that axis (keepdims=True)"),
    # Softmax's forward sums without keepdims
    ("ch05-softmax", [("e / e.sum(axis=axis, keepdims=True)", "e / e.sum(axis=axis)")],
     "keepdims=True"),
    # unbroadcast sums the size-1 axes without keepdims
    ("ch05-unbroadcast", [("out.sum(axis=axes, keepdims=True)", "out.sum(axis=axes)")],
     "without keepdims=True"),
    # unbroadcast forgets the leading axes
    ("ch05-unbroadcast", [("grad.sum(axis=tuple(range(lead))) if lead > 0 else grad", "grad")],
     "lost some axes"),
    # LogSoftmax's backward sums grad_output without keepdims
    ("ch05-log-softmax", [("grad_output.sum(axis=ctx.axis, keepdims=True)",
                           "grad_output.sum(axis=ctx.axis)")], "keepdims=True"),
    # Mean's backward spreads without putting the averaged axes back
    ("ch05-mean-backward", [("g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))",
                             "g = grad_output")], "size 1"),
    # Index and Scatter: three causes, three hints
    ("ch05-index-function", [("np.add.at(out, key, g.data)", "out[key] = g.data")],
     "read more than once"),
    ("ch05-index-function", [("return Scatter.apply(grad_output, ctx.x_shape, ctx.key), None",
                              "return grad_output, None")], "shape of the elements read"),
    ("ch05-index-function", [("out = np.zeros(shape, dtype=g.data.dtype)",
                              "out = np.ones(shape, dtype=g.data.dtype)")], "never read"),
    # matmul: the added axis kept, a vector made a column, the result rebuilt from .data
    ("ch05-matmul-vectors", [("    return out.reshape(shape) if out.shape != shape else out",
                              "    return out")], "was not dropped again"),
    ("ch05-matmul-vectors", [("a.reshape(1, -1) if a.ndim == 1", "a.reshape(-1, 1) if a.ndim == 1")],
     "1-D left operand is a row"),
    ("ch05-matmul-vectors", [("    return out.reshape(shape) if out.shape != shape else out",
                              "    return Variable(out.data.reshape(shape))")],
     "built from .data outside the graph"),
    # _kept_shape forgets axis=None, and tuples of axes
    ("ch05-sum-backward", [("    if axis is None:\n        return (1,) * len(shape)\n", "")],
     "axis=None sums over every axis"),
    ("ch05-sum-backward", [("axes = axis if isinstance(axis, tuple) else (axis,)",
                            "axes = (axis,)")], "axis may be a tuple"),
    # Sum's forward keeps nothing on ctx: backward is told what forward must keep
    ("ch05-sum-backward", [("        ctx.x_shape, ctx.axis = x.shape, axis\n"
                            "        return Variable(x.data.sum(",
                            "        return Variable(x.data.sum(")], "did not keep on ctx"),
]


@pytest.mark.parametrize("exercise,replacements,words", CH05_HINTS,
                         ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(CH05_HINTS)])
def test_chapter_05_hints_name_the_cause(exercise, replacements, words):
    namespace = ch05_notebook(exercise, replacements)
    with pytest.raises(AssertionError) as info:
        CH05_CHECKS[exercise](namespace)
    message = str(info.value)
    assert message.startswith(f"Exercise {exercise} failed") and words in message, message
    assert GENERIC not in message, message


def test_the_softmax_hint_for_a_saved_input_does_not_hand_out_the_formula():
    namespace = ch05_notebook("ch05-softmax", [("ctx.save_for_backward(y)",
                                                "ctx.save_for_backward(x)")])
    with pytest.raises(AssertionError) as info:
        CH05_CHECKS["ch05-softmax"](namespace)
    hint = str(info.value).split("hint:", 1)[1]
    assert "input" in hint and "output" in hint and "(g * y).sum" not in hint, hint


def test_a_broken_unbroadcast_is_named_by_the_unbroadcast_function_check(capsys):
    namespace = ch05_notebook("ch05-unbroadcast", [("out.sum(axis=axes, keepdims=True)",
                                                    "out.sum(axis=axes)")])
    check.ch05_unbroadcast_function(namespace["Unbroadcast"], namespace["sum_to"])
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "exercise ch05-unbroadcast fails" in notes[0], notes




@pytest.mark.parametrize("old,new,words", CLONE_MISTAKES, ids=[w for _, _, w in CLONE_MISTAKES])
def test_chapter_03_clone_hints_name_the_cause(old, new, words):
    namespace = ch03_notebook("ch03-clone-function", [(old, new)])
    with pytest.raises(AssertionError) as info:
        check.ch03_clone_function(namespace["Clone"], hidden=True)
    message = str(info.value)
    assert message.startswith("Exercise ch03-clone-function failed") and words in message, message
