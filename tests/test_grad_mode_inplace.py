"""Grad modes and in-place operations with version counters."""
import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.errors import BackwardError


def test_no_grad_context_and_decorator():
    x = al.ones(2, requires_grad=True)
    with al.no_grad():
        assert not al.is_grad_enabled()
        y = x * 2
        with al.enable_grad():
            z = x * 2
    assert al.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @al.no_grad()
    def f(v):
        return v * 2

    @al.no_grad
    def g(v):
        return v * 2

    assert not f(x).requires_grad and not g(x).requires_grad and al.is_grad_enabled()


def test_set_grad_enabled_function_context_and_decorator():
    al.set_grad_enabled(False)
    assert not al.is_grad_enabled()
    al.set_grad_enabled(True)
    with al.set_grad_enabled(False):
        assert not al.is_grad_enabled()
    assert al.is_grad_enabled()

    @al.set_grad_enabled(False)
    def f():
        return al.is_grad_enabled()

    assert al.is_grad_enabled() and f() is False and al.is_grad_enabled()


def test_mode_restored_after_exception():
    with pytest.raises(ZeroDivisionError):
        with al.no_grad():
            1 / 0
    assert al.is_grad_enabled()


def test_requires_grad_propagates():
    a = al.ones(2, requires_grad=True)
    b = al.ones(2)
    assert (a + b).requires_grad and not (b + b).requires_grad


def test_in_place_ops_bump_version():
    x = al.zeros(3)
    v = x._version
    x.add_(1)
    x += 1
    x.mul_(2)
    x.sub_(1)
    x[0] = 5
    x.zero_()
    assert x._version == v + 6


def test_in_place_change_of_saved_tensor_raises_pytorch_message():
    w = al.tensor([1.0, 2.0], requires_grad=True)
    h = w * 2
    y = h.exp()           # saves its output
    z = (h * h).sum()     # saves h
    h.add_(1)
    with pytest.raises(BackwardError, match=r"modified by an inplace operation.*version 1; expected version 0"):
        z.backward()
    with pytest.raises(BackwardError, match=r"output 0 of ExpBackward"):
        y.mul_(2)
        y.sum().backward()


def test_in_place_on_leaf_requiring_grad_raises_unless_no_grad():
    w = al.ones(2, requires_grad=True)
    with pytest.raises(BackwardError, match="leaf Variable that requires grad"):
        w.add_(1)
    with pytest.raises(BackwardError, match="no_grad"):
        w[0] = 3.0
    with al.no_grad():
        w -= 0.5
        w[1] = 7.0
    np.testing.assert_array_equal(w.data, [0.5, 7.0])


def test_in_place_on_non_leaf_is_recorded():
    w = al.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = w * 2
    h.mul_(3)                 # h = 6 w
    h[0] = 0                  # first element no longer depends on w
    h.sum().backward()
    np.testing.assert_array_equal(w.grad.data, [0, 6, 6])


def test_setitem_with_variable_value_gets_gradient():
    x = al.zeros(4)
    v = al.tensor([1.0, 2.0], requires_grad=True)
    x[1:3] = v
    (x * al.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(v.grad.data, [2, 3])


def test_view_shares_version_counter():
    w = al.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = w * 1
    view = h.reshape(2, 2)
    y = (h * h).sum()
    view.add_(1)
    with pytest.raises(BackwardError, match="inplace"):
        y.backward()


def test_detach_shares_data_and_version():
    x = al.ones(2, requires_grad=True)
    h = x * 1
    d = h.detach()
    y = (h * h).sum()
    d.add_(1)
    assert h.data[0] == 2.0
    with pytest.raises(BackwardError, match="inplace"):
        y.backward()
