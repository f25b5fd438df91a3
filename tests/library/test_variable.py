"""Variable: data, dtype, metadata, conversions, repr, factories."""
import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.errors import BackwardError, ShapeError


def test_data_is_numpy_and_dtype_is_kept():
    x = al.Variable(np.array([1, 2], dtype=np.float32))
    assert isinstance(x.data, np.ndarray)
    assert x.dtype == np.float32
    assert (x * 2.5).dtype == np.float32      # a Python scalar does not upcast
    assert (2.5 + x).dtype == np.float32
    assert (x / 3).dtype == np.float32
    assert (x ** 2).dtype == np.float32


def test_metadata():
    x = al.randn(2, 3, seed=0, requires_grad=True)
    assert x.shape == (2, 3) and x.ndim == 2 and x.is_leaf and x.grad is None and x.grad_fn is None
    assert x.T.shape == (3, 2)
    y = x * 2
    assert not y.is_leaf and y.requires_grad and type(y.grad_fn).__name__ == "MulBackward"


def test_item_numpy_clone_detach():
    x = al.tensor([[3.0]], requires_grad=True)
    assert x.item() == 3.0
    with pytest.raises(BackwardError, match="detach"):
        x.numpy()
    d = x.detach()
    assert d.is_leaf and not d.requires_grad and np.shares_memory(d.data, x.data)
    c = x.clone()
    assert not np.shares_memory(c.data, x.data) and c.grad_fn is not None
    with pytest.raises(ShapeError, match="exactly one element"):
        al.zeros(3).item()


def test_repr_shows_grad_fn_and_requires_grad():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "Variable([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "Variable([2., 4.], grad_fn=<MulBackward>)"
    assert "dtype=float32" in repr(al.tensor([1.0], dtype=np.float32))


def test_requires_grad_only_for_floats_and_leaves():
    with pytest.raises(TypeError, match="floating point"):
        al.tensor([1, 2], requires_grad=True)
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(BackwardError, match="leaf"):
        (x * 2).requires_grad = False
    y = al.tensor([1.0]).requires_grad_()
    assert y.requires_grad


def test_factories():
    assert al.zeros(2, 3).shape == (2, 3) and al.ones((2,)).data.tolist() == [1.0, 1.0]
    assert al.zeros_like(al.ones(4)).data.sum() == 0 and al.ones_like(np.zeros(2)).data.sum() == 2
    np.testing.assert_array_equal(al.randn(3, seed=5).data, al.randn(3, seed=5).data)
    g = al.Generator(1)
    a, b = al.randn(2, generator=g), al.randn(2, generator=g)
    assert not np.array_equal(a.data, b.data)
    np.testing.assert_array_equal(al.randn(2, generator=al.Generator(1)).data, a.data)
    assert al.arange(5).data.tolist() == [0, 1, 2, 3, 4]
    assert al.arange(1, 3, 0.5).data.tolist() == [1.0, 1.5, 2.0, 2.5]
    assert al.linspace(0, 1, 5).data.tolist() == [0, 0.25, 0.5, 0.75, 1.0]
    assert al.randn(2, dtype=np.float32, seed=0).dtype == np.float32


def test_ndarray_on_the_left_defers_to_variable():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    y = np.array([3.0, 4.0]) * x
    assert isinstance(y, al.Variable) and y.requires_grad


def test_comparisons_give_variables_without_grad():
    x = al.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    m = x > 0
    assert isinstance(m, al.Variable) and m.dtype == bool and not m.requires_grad
    assert m.data.tolist() == [False, False, True]
    assert (x == x).data.all()


def test_grad_setter_checks_shape():
    x = al.zeros(3, requires_grad=True)
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        x.grad = np.zeros(2)


def test_import_is_light():
    import subprocess
    import sys
    code = "import sys, autograd_lab; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", "importing autograd_lab must not import (or compile) numba"


@pytest.mark.parametrize("bad", ["abc", [[1.0, 2.0], [3.0]], {"a": 1}, None])
def test_non_numeric_data_is_refused_with_a_clear_error(bad):
    with pytest.raises(TypeError, match="must be numbers"):
        al.tensor(bad)
