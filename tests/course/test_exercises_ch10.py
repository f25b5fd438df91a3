"""Chapter 10 on the learner's library: the MaxPool exercise as a Function of ``mygrad``, and the
loader's check of ``mygrad/conv.py`` (the key's module passes it; typical mistakes fail it)."""
from __future__ import annotations

import types
from collections.abc import Iterator

import numpy as np
import pytest

from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package
from autograd_lab.course.exercises import ch10
from .._oracle import require_torch


@pytest.fixture(scope="module")
def mygrad() -> Iterator[types.ModuleType]:
    """The key's ``mygrad`` up to chapter 10 (conv.py included)."""
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 10
             and (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
    assert "conv" in files
    yield build_package(files, REFERENCE_ROOT / PACKAGE)
    _forget_package()


def test_the_key_conv_module_passes_its_loader_check(mygrad):
    ch10.mygrad_conv(mygrad)


def test_the_layers_are_reachable_from_mygrad_nn(mygrad):
    assert mygrad.nn.Conv2d is mygrad.conv.Conv2d
    assert mygrad.nn.MaxPool2d is mygrad.conv.MaxPool2d and mygrad.nn.Flatten is mygrad.conv.Flatten
    assert repr(mygrad.conv.Conv2d(1, 4, 3, padding=1)) == "Conv2d(1, 4, kernel_size=3, stride=1, padding=1)"


def test_conv2d_matches_pytorch_where_installed(mygrad):
    torch = require_torch()
    rng = np.random.default_rng(3)
    x, w, b = rng.normal(size=(2, 3, 7, 6)), rng.normal(size=(5, 3, 3, 2)), rng.normal(size=5)
    g = rng.normal(size=(2, 5, 4, 4))
    mine = [mygrad.Variable(a.copy(), requires_grad=True) for a in (x, w, b)]
    out = mygrad.conv.conv2d(*mine, stride=2, padding=1)
    out.backward(mygrad.Variable(g))
    ref = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ref_out = torch.nn.functional.conv2d(*ref, stride=2, padding=1)
    ref_out.backward(torch.tensor(g))
    np.testing.assert_allclose(out.data, ref_out.detach().numpy(), atol=1e-10)
    for p, q in zip(mine, ref):
        np.testing.assert_allclose(p.grad.data, q.grad.numpy(), atol=1e-10)


def test_conv2d_backward_refuses_create_graph(mygrad):
    x = mygrad.Variable(np.ones((1, 1, 4, 4)), requires_grad=True)
    w = mygrad.Variable(np.ones((1, 1, 3, 3)), requires_grad=True)
    y = mygrad.conv.conv2d(x, w).sum()
    with pytest.raises(RuntimeError, match="create_graph"):
        y.backward(create_graph=True)


def test_bad_shapes_raise_value_error(mygrad):
    with pytest.raises(ValueError, match="same C_in"):
        mygrad.conv.conv2d(mygrad.Variable(np.ones((1, 2, 4, 4))), mygrad.Variable(np.ones((1, 3, 3, 3))))


def _maxpool(mygrad, mistake):
    """A MaxPool of mygrad: correct, or with the tie mistake (gradient to every maximum)."""
    key = mygrad.conv.MaxPool
    if mistake is None:
        return key

    class TieMaxPool(mygrad.Function):
        @staticmethod
        def forward(ctx, x, k):
            y = key.forward(ctx, x, k)
            ctx.x, ctx.y = x.data, y.data
            return y

        @staticmethod
        def backward(ctx, grad_output):
            k = ctx.k
            up = lambda a: a.repeat(k, axis=2).repeat(k, axis=3)          # noqa: E731
            n, c, ho, wo = ctx.y.shape
            grad = np.zeros(ctx.x.shape)
            x = ctx.x[:, :, :ho * k, :wo * k]
            grad[:, :, :ho * k, :wo * k] = (x == up(ctx.y)) * up(grad_output.data)
            return mygrad.Variable(grad), None
    return TieMaxPool


def test_maxpool_on_mygrad_passes_with_mygrads_variable(mygrad):
    ch10.ch10_max_pool(_maxpool(mygrad, None), Variable=mygrad.Variable)
    ch10.ch10_max_pool(_maxpool(mygrad, None), Variable=mygrad.Variable, seed=11, hidden=True)


def test_maxpool_on_mygrad_with_the_tie_mistake_gets_the_tie_hint(mygrad):
    with pytest.raises(AssertionError) as info:
        ch10.ch10_max_pool(_maxpool(mygrad, "ties"), Variable=mygrad.Variable)
    assert "counted twice" in str(info.value), str(info.value)


def test_a_conv_layer_ignoring_manual_seed_fails_the_module_check(mygrad, monkeypatch):
    """Weights drawn from numpy's global generator are not reproducible with manual_seed."""
    def unseeded(shape, bound, dtype=np.float32):
        return np.random.uniform(-bound, bound, size=shape).astype(dtype)
    monkeypatch.setattr(mygrad.conv, "init_uniform", unseeded)
    with pytest.raises(AssertionError) as info:
        ch10.mygrad_conv(mygrad)
    assert "mygrad.nn's init_uniform" in str(info.value), str(info.value)


def test_conv2d_draws_its_weights_with_init_uniform(mygrad):
    """Conv2d's weights are init_uniform's draws, weight then bias: the stream Linear uses."""
    mygrad.manual_seed(4)
    layer = mygrad.conv.Conv2d(2, 3, 3)
    mygrad.manual_seed(4)
    bound = 1 / np.sqrt(2 * 3 * 3)
    weight = mygrad.nn.init_uniform((3, 2, 3, 3), bound)
    bias = mygrad.nn.init_uniform((3,), bound)
    assert np.array_equal(layer.weight.data, weight) and np.array_equal(layer.bias.data, bias)
    rng = np.random.default_rng(4)
    assert np.array_equal(weight, rng.uniform(-bound, bound, size=(3, 2, 3, 3)).astype(np.float32))
