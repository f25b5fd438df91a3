"""Chapter 08's Linear adds its bias by AddBias, whose backward sums the gradient down the batch
with the learner's column_sums kernel of chapter 07 (or numpy's sum, by mygrad.nn.USE_KERNELS);
the loader's check of nn.py (ch08.mygrad_nn) holds both settings."""
from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course.exercises import ch08

from . import _mygrad_key

mygrad = _mygrad_key.mygrad     # the key's mygrad up to chapter 09 (a fixture)


@pytest.fixture
def nn_flag(mygrad):
    before = mygrad.nn.USE_KERNELS
    yield mygrad.nn
    mygrad.nn.USE_KERNELS = before


@pytest.mark.parametrize("use", [True, False])
def test_the_bias_gradient_is_the_column_sums_either_way(mygrad, nn_flag, use, monkeypatch):
    calls = []
    kernel = nn_flag.column_sums
    monkeypatch.setattr(nn_flag, "column_sums", lambda a: calls.append(a.shape) or kernel(a))
    nn_flag.USE_KERNELS = use
    mygrad.manual_seed(0)
    layer = mygrad.nn.Linear(6, 4)
    rng = np.random.default_rng(1)
    x, g = rng.normal(size=(11, 6)).astype(np.float32), rng.normal(size=(11, 4)).astype(np.float32)
    out = layer(mygrad.Variable(x))
    assert type(out.grad_fn).__name__ == "AddBiasBackward"
    out.backward(mygrad.Variable(g))
    np.testing.assert_allclose(layer.bias.grad.data, g.sum(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.weight.grad.data, g.T @ x, rtol=1e-5, atol=1e-5)
    assert calls == ([(11, 4)] if use else [])


def test_the_loader_check_passes_the_key_and_fails_a_backward_without_the_kernel(
        mygrad, nn_flag, monkeypatch, capsys):
    ch08.mygrad_nn(mygrad)
    assert "All 4 cases of mygrad-nn passed." in capsys.readouterr().out

    def numpy_only(ctx, grad_output):
        return grad_output, mygrad.Variable(grad_output.data.sum(axis=0))
    monkeypatch.setattr(nn_flag.AddBias, "backward", staticmethod(numpy_only))
    with pytest.raises(AssertionError) as info:
        ch08.mygrad_nn(mygrad)
    assert "did not call column_sums exactly once" in str(info.value)
    assert "column_sums(g) if USE_KERNELS else column_sums_ref(g)" in str(info.value)


def test_the_loader_check_fails_a_backward_that_ignores_the_flag(mygrad, nn_flag, monkeypatch):
    def kernel_always(ctx, grad_output):
        return grad_output, mygrad.Variable(nn_flag.column_sums(
            np.ascontiguousarray(grad_output.data)))
    monkeypatch.setattr(nn_flag.AddBias, "backward", staticmethod(kernel_always))
    with pytest.raises(AssertionError) as info:
        ch08.mygrad_nn(mygrad)
    assert "reading the flag at every call" in str(info.value)


def test_a_recorded_backward_uses_variable_operations(mygrad):
    """With create_graph (grad mode on in backward) the bias gradient is a recorded sum, so
    a second derivative can flow through it."""
    mygrad.manual_seed(0)
    layer = mygrad.nn.Linear(3, 2)
    x = mygrad.Variable(np.ones((4, 3), dtype=np.float32))
    out = layer(x)
    g = mygrad.Variable(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    with mygrad.enable_grad():
        _, db = mygrad.nn.AddBias.backward(out.grad_fn, g)
    assert db.requires_grad and db.grad_fn is not None
    np.testing.assert_allclose(db.data, np.full(2, 4.0))
