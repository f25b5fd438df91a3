"""Grad modes and in-place operations with version counters."""
import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.errors import BackwardError

from .._oracle import needs_torch, to_torch, torch


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
            _ = 1 / 0
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


# Which operand a product or a quotient keeps for backward decides whether changing it in place
# afterwards is an error. As in PyTorch, each keeps only what a gradient reads: a * b and a @ b
# keep b for a's gradient and a for b's; a / b keeps b for either, a for b's.
# (case, operand changed in place, expected outcome), on h = w * 1 (requires grad) and c (does not)
SAVED_CASES = [
    ("h * 2.0", "h", "runs"),
    ("h * c", "h", "runs"),
    ("h * c", "c", "raises"),
    ("c * h", "h", "runs"),
    ("h * h", "h", "raises"),
    ("h / c", "h", "runs"),
    ("h / c", "c", "raises"),
    ("c / h", "h", "raises"),
    ("c / h", "c", "raises"),
    ("h / 2.0", "h", "runs"),
    ("2.0 / h", "h", "raises"),  # a quotient keeps its divisor (PyTorch: see below)
    ("h @ c", "h", "runs"),
    ("h @ c", "c", "raises"),
    ("c @ h", "h", "runs"),
    ("h @ h", "h", "raises"),
]
# PyTorch computes number / h as reciprocal(h) * number, whose backward reads the reciprocal it
# saved, not h; here it is one division, which keeps h (and rounds once, not twice).
NOT_LIKE_PYTORCH = {"2.0 / h"}


def _torch_tensor(data, requires_grad=False):
    """al.tensor's signature, for PyTorch (float64, as the cases' numbers are)."""
    return to_torch(data, requires_grad)


def _saved_case(lib, make, expr, changed):
    w = make([1.0, 2.0, 4.0], requires_grad=True)
    h = w * 1
    c = make([0.5, 2.0, 3.0])
    y = eval(expr, {}, {"h": h, "c": c})
    {"h": h, "c": c}[changed].add_(1)
    try:
        y.sum().backward()
    except RuntimeError:
        return "raises", None
    return "runs", np.asarray(w.grad.detach().numpy() if lib is torch else w.grad.data)


@pytest.mark.parametrize("expr, changed, expected", SAVED_CASES)
def test_products_keep_only_what_their_gradients_read(expr, changed, expected):
    outcome, grad = _saved_case(al, al.tensor, expr, changed)
    assert outcome == expected
    if outcome == "runs":  # the gradient uses the operand as it was kept, not as changed
        c = np.array([0.5, 2.0, 3.0])
        wants = {"h * 2.0": 2.0, "h * c": c, "c * h": c, "h / c": 1 / c, "h / 2.0": 0.5,
                 "h @ c": c, "c @ h": c}[expr]
        np.testing.assert_allclose(grad, np.broadcast_to(wants, (3,)))


@needs_torch
@pytest.mark.parametrize("expr, changed, expected", [c for c in SAVED_CASES if c[0] not in NOT_LIKE_PYTORCH])
def test_products_keep_what_pytorch_keeps(expr, changed, expected):
    ours = _saved_case(al, al.tensor, expr, changed)
    theirs = _saved_case(torch, _torch_tensor, expr, changed)
    assert ours[0] == theirs[0] == expected
    if ours[0] == "runs":
        np.testing.assert_allclose(ours[1], theirs[1])


# Linear keeps x for W's gradient and W for x's: a weight stepped between forward and backward is
# harmless in a first layer (its input needs no gradient), an error in a later one.
# (input, weight, value changed in place, expected): x needs no gradient, h does; W is a
# parameter, c a constant weight
LINEAR_CASES = [("x", "W", "W", "runs"), ("h", "W", "W", "raises"), ("h", "W", "h", "raises"),
                ("h", "c", "h", "runs"), ("h", "c", "c", "raises")]


def _linear_case(lib, make, inp, weight, changed):
    values = {"W": make(np.arange(6.0).reshape(2, 3) / 6, requires_grad=True),
              "c": make(np.ones((2, 3))),
              "x": make(np.linspace(-1, 1, 12).reshape(4, 3)),
              "h": make(np.linspace(1, 2, 12).reshape(4, 3), requires_grad=True) * 1}
    y = lib.nn.functional.linear(values[inp], values[weight])
    with lib.no_grad():
        values[changed].sub_(0.5)
    try:
        y.sum().backward()
    except RuntimeError:
        return "raises"
    return "runs"


@pytest.mark.parametrize("inp, weight, changed, expected", LINEAR_CASES)
def test_linear_keeps_only_what_its_gradients_read(inp, weight, changed, expected):
    assert _linear_case(al, al.tensor, inp, weight, changed) == expected


@needs_torch
@pytest.mark.parametrize("inp, weight, changed, expected", LINEAR_CASES)
def test_linear_keeps_what_pytorch_keeps(inp, weight, changed, expected):
    assert _linear_case(torch, _torch_tensor, inp, weight, changed) == expected
