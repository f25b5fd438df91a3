"""The checkers of chapter 05 (chapter 06 has tests/course/test_exercises_ch06.py).

Each checker must pass a correct solution (with and without hidden cases) and fail typical
wrong ones with a message that names the exercise and gives a useful hint.
"""
from __future__ import annotations


import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises import check

from ._checker_helpers import (SEEDS, assert_all_passed, assert_calls_own_checker,
                              assert_has_heading_and_solution, failure, graded_cells,
                              solution_cells)


# -- chapter 05: correct solutions ----------------------------------------------------------
def unbroadcast(grad, shape):
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    out = grad.sum(axis=tuple(range(lead))) if lead > 0 else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and out.shape[i] != 1)
    out = out.sum(axis=axes, keepdims=True) if axes else out
    if out.shape != shape:
        raise ValueError(f"cannot sum {grad.shape} down to {shape}")
    return out


def make_sum(backward_rule):
    class SumFunction(al.Function):
        @staticmethod
        def forward(ctx, x, axis=None, keepdims=False):
            ctx.x_shape, ctx.axis, ctx.keepdims = x.shape, axis, keepdims
            return al.Variable(x.data.sum(axis=axis, keepdims=keepdims))

        @staticmethod
        def backward(ctx, grad_output):
            return backward_rule(ctx, grad_output.data), None, None
    return SumFunction


def _sum_right(ctx, g):
    if not ctx.keepdims and ctx.axis is not None:
        g = np.expand_dims(g, ctx.axis)
    return np.broadcast_to(g, ctx.x_shape).copy()


def make_matmul(rule):
    class MatMul(al.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return al.Variable(a.data @ b.data)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return rule(a.data, b.data, grad_output.data)
    return MatMul


def make_softmax(stable=True, rule="right", in_place=False):
    class Softmax(al.Function):
        @staticmethod
        def forward(ctx, x, axis=-1):
            if in_place:
                x.data -= x.data.max(axis=axis, keepdims=True)
                z = x.data
            else:
                z = x.data - x.data.max(axis=axis, keepdims=True) if stable else x.data
            e = np.exp(z)
            y = al.Variable(e / e.sum(axis=axis, keepdims=True))
            ctx.axis = axis
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            y, = ctx.saved_tensors
            g = grad_output
            if rule == "diagonal":
                return g * y * (1 - y), None
            if rule == "identity":
                return g, None
            return y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)), None
    return Softmax


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch05_correct_solutions_pass(seed, hidden, capsys):
    check.ch05_unbroadcast(unbroadcast, seed=seed, hidden=hidden)
    check.ch05_sum_backward(make_sum(_sum_right), seed=seed, hidden=hidden)
    check.ch05_matmul_backward(make_matmul(lambda a, b, g: (g @ b.T, a.T @ g)),
                               seed=seed, hidden=hidden)
    check.ch05_softmax(make_softmax(), seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 4, hidden)


def test_ch05_variable_based_solutions_pass(capsys):
    """Backward written with Variable operations (not numpy) is just as correct."""
    check.ch05_matmul_backward(make_matmul(lambda a, b, g: (al.tensor(g) @ al.tensor(b).T,
                                                            al.tensor(a).T @ al.tensor(g))))
    assert "passed" in capsys.readouterr().out


def test_ch05_unbroadcast_matches_library_sum_to():
    rng = np.random.default_rng(5)
    for small, big in [((3,), (4, 3)), ((4, 1), (4, 3)), ((3, 1), (2, 3, 4)), ((), (2, 2))]:
        g = rng.normal(size=big)
        np.testing.assert_allclose(unbroadcast(g, small), al.sum_to(al.tensor(g), small).data)


def _leading_only(grad, shape):
    lead = grad.ndim - len(shape)
    return grad.sum(axis=tuple(range(lead))) if lead > 0 else grad


def _no_keepdims(grad, shape):
    out = _leading_only(grad, shape)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and out.shape[i] != 1)
    return out.sum(axis=axes) if axes else out


def _mean_instead(grad, shape):
    lead = grad.ndim - len(shape)
    out = grad.mean(axis=tuple(range(lead))) if lead > 0 else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and out.shape[i] != 1)
    return out.mean(axis=axes, keepdims=True) if axes else out


def _in_place_grad(grad, shape):
    grad *= 1.0 + 0 * grad.sum()  # harmless value, but writes into the caller's array
    grad[...] = grad + 1
    return unbroadcast(grad - 1, shape)


def _no_error(grad, shape):
    try:
        return unbroadcast(grad, shape)
    except ValueError:
        return grad


@pytest.mark.parametrize("wrong,words", [
    (lambda g, s: g, "Nothing was summed"),
    (_leading_only, "where the target has a 1"),
    (_no_keepdims, "keepdims=True"),
    (_mean_instead, "averaged"),
    (_in_place_grad, "changed the grad"),
    (_no_error, "did not raise"),
    (lambda g, s: None, "None"),
])
def test_ch05_unbroadcast_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch05_unbroadcast, wrong)
    assert "ch05-unbroadcast" in msg and words in msg


def test_ch05_unbroadcast_names_shapes_in_error():
    def vague(grad, shape):
        out = unbroadcast(grad, shape) if grad.shape[0] != 3 or shape != (2, 4) else None
        if out is None:
            raise ValueError("bad shape")
        return out
    assert "name both shapes" in failure(check.ch05_unbroadcast, vague).replace(
        "does not name both shapes", "name both shapes")


def _sum_no_expand(ctx, g):
    return np.broadcast_to(g, ctx.x_shape).copy() if np.ndim(g) else np.full(ctx.x_shape, g)


def _sum_square_wrong(ctx, g):  # right on non-square inputs, transposed on square ones
    if not ctx.keepdims and ctx.axis is not None:
        try:
            return np.broadcast_to(g, ctx.x_shape).copy()
        except ValueError:
            g = np.expand_dims(g, ctx.axis)
    return np.broadcast_to(g, ctx.x_shape).copy()


@pytest.mark.parametrize("rule,words", [
    (_sum_no_expand, "np.expand_dims"),
    (_sum_square_wrong, "np.expand_dims"),
    (lambda ctx, g: np.ones(ctx.x_shape), "all ones"),
    (lambda ctx, g: g, "shaped like x"),
])
def test_ch05_sum_backward_rejects_typical_mistakes(rule, words):
    msg = failure(check.ch05_sum_backward, make_sum(rule))
    assert "ch05-sum-backward" in msg and words in msg


def test_ch05_sum_backward_stub_reports_not_done():
    def stub(ctx, g):
        raise NotImplementedError("Exercise ch05-sum-backward: write your code here")
    with pytest.raises(NotImplementedError, match="ch05-sum-backward is not done yet"):
        check.ch05_sum_backward(make_sum(stub))


@pytest.mark.parametrize("rule,words", [
    (lambda a, b, g: (g @ b, a.T @ g), "missing the transpose"),
    (lambda a, b, g: (g @ b.T, g.T @ a), "grad on the right"),
    (lambda a, b, g: ((a.T @ g).T, (g @ b.T).T), "swap"),
    (lambda a, b, g: (b.T @ g.T, a.T @ g), "grad on the left"),
    (lambda a, b, g: (g @ b.T, a @ g), "missing the transpose"),
])
def test_ch05_matmul_backward_rejects_typical_mistakes(rule, words):
    msg = failure(check.ch05_matmul_backward, make_matmul(rule))
    assert "ch05-matmul-backward" in msg and words in msg


def test_ch05_matmul_shape_errors_get_the_shape_hint():
    msg = failure(check.ch05_matmul_backward, make_matmul(lambda a, b, g: (g, g)))
    assert "only grad @ b.T fits" in msg


@pytest.mark.parametrize("kwargs,words", [
    (dict(stable=False), "Subtract the maximum"),
    (dict(rule="diagonal"), "only the diagonal"),
    (dict(rule="identity"), "unchanged"),
    (dict(in_place=True), "changed its input"),
])
def test_ch05_softmax_rejects_typical_mistakes(kwargs, words):
    with np.errstate(all="ignore"):
        msg = failure(check.ch05_softmax, make_softmax(**kwargs))
    assert "ch05-softmax" in msg and words in msg


def test_ch05_softmax_wrong_axis():
    class WrongAxis(al.Function):
        @staticmethod
        def forward(ctx, x, axis=-1):
            return make_softmax().forward(ctx, x, -1)

        @staticmethod
        def backward(ctx, g):
            return make_softmax().backward(ctx, g)
    msg = failure(check.ch05_softmax, WrongAxis)
    assert "wrong axis" in msg


# -- the notebooks use these checkers consistently ------------------------------------------
NOTEBOOKS = {"05_tensors_broadcasting.ipynb": {"ch05-unbroadcast", "ch05-sum-backward",
                                               "ch05-sub-function", "ch05-div-function",
                                               "ch05-pow-function", "ch05-log-function",
                                               "ch05-matmul-backward", "ch05-softmax",
                                               "ch05-mean-backward", "ch05-log-softmax",
                                               "ch05-reshape-transpose", "ch05-unbroadcast-function",
                                               "ch05-index-function", "ch05-matmul-vectors"}}


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_graded_cells_call_their_own_checker(name):
    cells = solution_cells(name)
    graded = graded_cells(cells)
    assert {c["metadata"]["nbgrader"]["grade_id"] for c in graded} == NOTEBOOKS[name]
    for cell in graded:
        assert_calls_own_checker(cell)
        assert_has_heading_and_solution(cell, cells)
