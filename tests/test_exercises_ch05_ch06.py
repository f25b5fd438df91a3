"""The checkers of chapters 05 and 06.

Each checker must pass a correct solution (with and without hidden cases) and fail typical
wrong ones with a message that names the exercise and gives a useful hint.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.exercises import check
from autograd_lab.exercises.ch06 import SNIPPETS, VISIBLE_SNIPPETS, snippet_raises

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


# -- chapter 06 -------------------------------------------------------------------------------
PREDICTIONS = {"a": True, "b": False, "c": True, "d": False, "e": False, "f": True, "g": True,
               "h": False}


def train_step(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad = None
    b.grad = None
    return loss.item()


def train_step_zero_first(w, b, X, y, lr):
    for p in (w, b):
        if p.grad is not None:
            p.grad.zero_()
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w.sub_(lr * w.grad)
        b.sub_(lr * b.grad)
    return float(loss.data)


class VersionedCtx:
    def save_for_backward(self, *tensors):
        self._saved = [(t, None if t is None else t._version) for t in tensors]

    @property
    def saved_tensors(self):
        for t, v in self._saved:
            if t is not None and t._version != v:
                raise RuntimeError(f"modified by an inplace operation: is at version "
                                   f"{t._version}; expected version {v} instead")
        return tuple(t for t, _ in self._saved)


def test_snippet_truth_is_what_the_chapter_teaches():
    assert {name: snippet_raises(code) for name, code in SNIPPETS.items()} == PREDICTIONS
    assert set(VISIBLE_SNIPPETS) < set(SNIPPETS)


def test_snippet_h_gives_a_silently_wrong_gradient():
    ns = {"al": al, "np": np}
    exec(textwrap.dedent(SNIPPETS["h"]), ns)
    assert ns["x"].grad.data.tolist() == [20.0, 4.0]  # 2 * 10, not 2 * 1


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch06_correct_solutions_pass(seed, hidden, capsys):
    check.ch06_predict_raises(dict(PREDICTIONS), seed=seed, hidden=hidden)
    check.ch06_train_step(train_step, seed=seed, hidden=hidden)
    check.ch06_train_step(train_step_zero_first, seed=seed, hidden=hidden)
    check.ch06_version_check(VersionedCtx, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 4, hidden)


def test_ch06_predict_raises_feedback():
    wrong = dict(PREDICTIONS, e=True)
    msg = failure(check.ch06_predict_raises, wrong)
    assert "snippet e raises" in msg and "relu saves its output" in msg
    assert "not True or False" in failure(check.ch06_predict_raises, dict(PREDICTIONS, a="yes"))
    assert "no prediction" in failure(check.ch06_predict_raises, {"a": True})
    assert "not a dict" in failure(check.ch06_predict_raises, [True] * 8)
    hidden_only = dict(PREDICTIONS, h=True)
    check.ch06_predict_raises(hidden_only)  # h is only checked when grading
    assert "snippet h" in failure(check.ch06_predict_raises, hidden_only, hidden=True)


def _inplace_without_no_grad(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    b -= lr * b.grad
    return loss.item()


def _rebinding(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w = w - lr * w.grad
        b = b - lr * b.grad
    return loss.item()


def _no_zeroing(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    return loss.item()


def _uphill(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w += lr * w.grad
        b += lr * b.grad
    w.grad = b.grad = None
    return loss.item()


def _loss_after(w, b, X, y, lr):
    train_step(w, b, X, y, lr)
    return ((X @ w + b - y) ** 2).mean().item()


@pytest.mark.parametrize("wrong,words", [
    (_inplace_without_no_grad, "no_grad"),
    (_rebinding, "Rebinding"),
    (_no_zeroing, "clear them every step"),
    (_uphill, "uphill"),
    (_loss_after, "before the update"),
    (lambda w, b, X, y, lr: None, "returned None"),
])
def test_ch06_train_step_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch06_train_step, wrong)
    assert "ch06-train-step" in msg and words in msg


class _Lazy(VersionedCtx):  # reads the version at unpack time: never raises
    def save_for_backward(self, *tensors):
        self._tensors = tensors

    @property
    def saved_tensors(self):
        self._saved = [(t, None if t is None else t._version) for t in self._tensors]
        return super().saved_tensors


class _AgainstZero(VersionedCtx):
    def save_for_backward(self, *tensors):
        self._saved = [(t, 0) for t in tensors]

    @property
    def saved_tensors(self):
        for t, v in self._saved:
            if t is not None and t._version != v:
                raise RuntimeError(f"at version {t._version}; expected version {v}")
        return tuple(t for t, _ in self._saved)


class _Vague(VersionedCtx):
    @property
    def saved_tensors(self):
        try:
            return super().saved_tensors
        except RuntimeError:
            raise RuntimeError("a saved tensor changed") from None


class _ClassLevel(VersionedCtx):
    store: list = []

    def save_for_backward(self, *tensors):
        type(self).store = [(t, None if t is None else t._version) for t in tensors]
        self._saved = type(self).store

    @property
    def saved_tensors(self):
        self._saved = type(self).store
        return super().saved_tensors


class _Copies(VersionedCtx):
    @property
    def saved_tensors(self):
        return tuple(None if t is None else t.clone() for t in super().saved_tensors)


class _WrongType(VersionedCtx):
    @property
    def saved_tensors(self):
        try:
            return super().saved_tensors
        except RuntimeError as err:
            raise ValueError(str(err)) from None


@pytest.mark.parametrize("cls,words", [
    (_Lazy, "did not raise"),
    (_AgainstZero, "not with 0"),
    (_Vague, "name both versions"),
    (_ClassLevel, "not on the class"),
    (_Copies, "saved objects"),
    (_WrongType, "wrong kind of error"),
])
def test_ch06_version_check_rejects_typical_mistakes(cls, words):
    msg = failure(check.ch06_version_check, cls)
    assert "ch06-version-check" in msg and words in msg


# -- the notebooks use these checkers consistently ------------------------------------------
NOTEBOOKS = {"05_tensors_broadcasting.ipynb": {"ch05-unbroadcast", "ch05-sum-backward",
                                               "ch05-matmul-backward", "ch05-softmax"},
             "06_grad_modes_inplace.ipynb": {"ch06-predict-raises", "ch06-train-step",
                                             "ch06-version-check"}}


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_graded_cells_call_their_own_checker(name):
    cells = solution_cells(name)
    graded = graded_cells(cells)
    assert {c["metadata"]["nbgrader"]["grade_id"] for c in graded} == NOTEBOOKS[name]
    for cell in graded:
        assert_calls_own_checker(cell)
        assert_has_heading_and_solution(cell, cells)


def test_chapter_06_shows_exactly_the_checked_snippets():
    cells = solution_cells("06_grad_modes_inplace.ipynb")
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for name, code in SNIPPETS.items():
        assert f"**Snippet {name}**\n\n```python\n{textwrap.dedent(code).rstrip()}\n```" in text
