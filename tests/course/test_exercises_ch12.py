"""Chapter 12 on the learner's library: BakeryLoss as a Function of ``mygrad`` (defaults, the
engine's rule for the number of gradients), train_step with mygrad's Linear and SGD, and the
pinball-loss extension's checker."""
from __future__ import annotations

import types
from collections.abc import Iterator

import numpy as np
import pytest

from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package
from autograd_lab.course.exercises import ch12
from autograd_lab.course.exercises.ch12 import bakery_loss_reference


@pytest.fixture(scope="module")
def mygrad() -> Iterator[types.ModuleType]:
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 10
             and (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
    yield build_package(files, REFERENCE_ROOT / PACKAGE)
    _forget_package()


def make_bakery(mygrad, *, defaults=True, cut=False, only_y=False):
    """BakeryLoss on mygrad as the key writes it (four gradients, whatever apply was given);
    cut to len(ctx.inputs) as the course once taught; or, for the typical mistakes, without
    defaults or with the gradient of y only."""
    Variable = mygrad.Variable

    def forward_body(ctx, y, t, alpha, reduction):
        ctx.save_for_backward(y, t)
        ctx.alpha, ctx.reduction = alpha, reduction
        return Variable(bakery_loss_reference(y.data, t.data, alpha, reduction))

    def backward(ctx, grad_output):
        y, t = ctx.saved_tensors
        r = y.data - t.data
        g = np.where(r < 0, ctx.alpha, 1.0) * np.tanh(r) * grad_output.data
        g = g / r.size if ctx.reduction == "mean" else g
        grads = (Variable(g), Variable(-g), None, None)
        if only_y:
            return Variable(g)
        return grads[:len(ctx.inputs)] if cut else grads

    if defaults:
        def forward(ctx, y, t, alpha=3.0, reduction="mean"):
            return forward_body(ctx, y, t, alpha, reduction)
    else:
        def forward(ctx, y, t, alpha, reduction):
            return forward_body(ctx, y, t, alpha, reduction)
    return type("BakeryLoss", (mygrad.Function,), {"forward": staticmethod(forward),
                                                   "backward": staticmethod(backward)})


@pytest.mark.parametrize("cut", [False, True])
def test_the_key_bakery_loss_on_mygrad_passes(mygrad, cut):
    ch12.ch12_bakery_function(make_bakery(mygrad, cut=cut), pkg=mygrad)
    ch12.ch12_bakery_function(make_bakery(mygrad, cut=cut), pkg=mygrad, seed=11, hidden=True)


def test_a_forward_without_defaults_is_told_to_add_them(mygrad):
    with pytest.raises(AssertionError) as info:
        ch12.ch12_bakery_function(make_bakery(mygrad, defaults=False), pkg=mygrad)
    message = str(info.value)
    assert "apply(y, t) uses the defaults" in message and "Give forward defaults" in message, message


def test_four_gradients_for_two_inputs_are_fine_on_mygrad(mygrad):
    """mygrad's engine drops surplus trailing Nones, as PyTorch's: apply(y, t) with a backward
    returning four gradients works."""
    Loss = make_bakery(mygrad)
    y = mygrad.Variable(np.array([1.0, 5.0]), requires_grad=True)
    t = mygrad.Variable(np.array([2.0, 3.0]), requires_grad=True)
    Loss.apply(y, t).backward()
    want = ch12.bakery_loss_gradient(y.data, t.data)
    np.testing.assert_allclose(y.grad.data, want, rtol=1e-12)
    np.testing.assert_allclose(t.grad.data, -want, rtol=1e-12)


def test_a_missing_gradient_of_t_is_reported_on_mygrad(mygrad):
    """A backward that forgets t's gradient: mygrad's engine names the counts."""
    with pytest.raises(AssertionError) as info:
        ch12.ch12_bakery_function(make_bakery(mygrad, only_y=True), pkg=mygrad)
    message = str(info.value)
    assert "returned 1 gradient(s)" in message and "(grad_y, grad_t, None, None)" in message, \
        message


def test_a_bakery_loss_of_autograd_lab_is_not_a_mygrad_function(mygrad):
    import autograd_lab as al

    class BakeryLoss(al.Function):
        pass
    with pytest.raises(AssertionError) as info:
        ch12.ch12_bakery_function(BakeryLoss, pkg=mygrad)
    assert "mygrad.Function" in str(info.value)


def test_train_step_on_mygrad(mygrad):
    BakeryLoss = make_bakery(mygrad)

    def train_step(model, optimizer, X, t):
        optimizer.zero_grad()
        loss = BakeryLoss.apply(model(X), t, 3.0, "mean")
        loss.backward()
        optimizer.step()
        return loss.item()

    def no_zero_grad(model, optimizer, X, t):
        loss = BakeryLoss.apply(model(X), t, 3.0, "mean")
        loss.backward()
        optimizer.step()
        return loss.item()
    ch12.ch12_train_step(train_step, pkg=mygrad, seed=11, hidden=True)
    with pytest.raises(AssertionError) as info:
        ch12.ch12_train_step(no_zero_grad, pkg=mygrad)
    assert "zero_grad" in str(info.value)


def make_pinball(mygrad, mistake=None):
    Variable = mygrad.Variable

    def forward(ctx, y, t, tau=0.75, reduction="mean"):
        if mistake == "any_reduction" and reduction not in ("mean", "sum", "none"):
            reduction = "mean"
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(reduction)
        ctx.save_for_backward(y, t)
        ctx.tau, ctx.reduction = tau, reduction
        return Variable(ch12.pinball_reference(y.data, t.data, tau, reduction))

    def backward(ctx, grad_output):
        y, t = ctx.saved_tensors
        tau = ctx.tau
        below = y.data < t.data if mistake != "sides" else y.data > t.data
        g = np.where(below, -tau, 1 - tau) * grad_output.data
        if ctx.reduction == "mean" and mistake != "no_mean":
            g = g / y.data.size
        return Variable(g), Variable(-g), None, None
    return type("PinballLoss", (mygrad.Function,), {"forward": staticmethod(forward),
                                                    "backward": staticmethod(backward)})


def test_pinball_checker_passes_a_correct_loss_and_fails_mistakes(mygrad):
    ch12.ch12_pinball(make_pinball(mygrad), pkg=mygrad)
    for mistake in ("sides", "no_mean"):
        with pytest.raises(AssertionError) as info:
            ch12.ch12_pinball(make_pinball(mygrad, mistake), pkg=mygrad)
        assert "gradient of y" in str(info.value), (mistake, str(info.value))


@pytest.mark.parametrize("mistake, failed", [("sides", ["gradients"]), ("no_mean", ["gradients"]),
                                             ("any_reduction", ["values"])])
def test_pinball_scores_its_values_and_gradients_apart(mygrad, mistake, failed):
    """The rubric promises 2 points for the values and 2 for the gradients: a loss whose values
    are right and gradients wrong (or the other way round) earns half."""
    import json

    from autograd_lab.course.exercises._parts import MARKER, PartsFailed
    with pytest.raises(PartsFailed) as info:
        ch12.ch12_pinball(make_pinball(mygrad, mistake), pkg=mygrad)
    last = str(info.value).strip().splitlines()[-1]
    assert last.startswith(MARKER) and json.loads(last[len(MARKER):]) == failed


def test_pinball_reference_is_minimised_by_the_quantile():
    """The reference is the quantile (pinball) loss: its minimiser over a constant forecast is
    the tau-quantile of the data."""
    t = np.random.default_rng(0).normal(size=2001)
    grid = np.linspace(-2, 2, 4001)
    best = grid[np.argmin([ch12.pinball_reference(np.full_like(t, c), t, 0.75) for c in grid])]
    assert abs(best - np.quantile(t, 0.75)) < 2e-3
