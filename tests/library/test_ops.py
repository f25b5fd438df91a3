"""Every built-in op: value vs numpy, gradient vs gradcheck and vs PyTorch (float64) when installed."""
import numpy as np
import pytest
from hypothesis import given, settings

import autograd_lab as al
from autograd_lab.errors import ShapeError

from .._oracle import needs_torch, to_torch, torch
from ..strategies import broadcastable_pair

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
P = rng.uniform(0.5, 2.0, (3, 4))          # positive, for log/sqrt/pow

# name: (our fn, numpy fn, torch fn, inputs)
UNARY = {
    "neg": (lambda x: -x, lambda x: -x, lambda x: -x, A),
    "exp": (lambda x: x.exp(), np.exp, lambda x: x.exp(), A),
    "log": (lambda x: x.log(), np.log, lambda x: x.log(), P),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, lambda x: x.sqrt(), P),
    "abs": (lambda x: abs(x), np.abs, lambda x: x.abs(), A),
    "relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0), lambda x: x.relu(), A),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), lambda x: x.sigmoid(), A),
    "tanh": (lambda x: x.tanh(), np.tanh, lambda x: x.tanh(), A),
    "clamp": (lambda x: x.clamp(min=-0.5, max=0.7), lambda x: np.clip(x, -0.5, 0.7),
              lambda x: x.clamp(min=-0.5, max=0.7), A),
    "pow_scalar": (lambda x: x ** 3, lambda x: x ** 3, lambda x: x ** 3, A),
    "pow_frac": (lambda x: x ** 0.5, lambda x: x ** 0.5, lambda x: x ** 0.5, P),
    "rpow": (lambda x: 2.0 ** x, lambda x: 2.0 ** x, lambda x: 2.0 ** x, A),
    "sum_all": (lambda x: x.sum(), np.sum, lambda x: x.sum(), A),
    "sum_axis0": (lambda x: x.sum(axis=0), lambda x: x.sum(axis=0), lambda x: x.sum(dim=0), A),
    "sum_dim_keep": (lambda x: x.sum(dim=1, keepdim=True), lambda x: x.sum(axis=1, keepdims=True),
                     lambda x: x.sum(dim=1, keepdim=True), A),
    "sum_tuple": (lambda x: x.sum(axis=(0, 1)), lambda x: x.sum(axis=(0, 1)),
                  lambda x: x.sum(dim=(0, 1)), A),
    "mean_axis": (lambda x: x.mean(axis=1), lambda x: x.mean(axis=1), lambda x: x.mean(dim=1), A),
    "max_all": (lambda x: x.max(), np.max, lambda x: x.max(), A),
    "max_axis": (lambda x: x.max(axis=0), lambda x: x.max(axis=0), lambda x: x.amax(dim=0), A),
    "max_keep": (lambda x: x.max(axis=1, keepdims=True), lambda x: x.max(axis=1, keepdims=True),
                 lambda x: x.amax(dim=1, keepdim=True), A),
    "reshape": (lambda x: x.reshape(2, 6), lambda x: x.reshape(2, 6), lambda x: x.reshape(2, 6), A),
    "transpose": (lambda x: x.transpose(0, 1), lambda x: x.T, lambda x: x.transpose(0, 1), A),
    "T": (lambda x: x.T, lambda x: x.T, lambda x: x.T, A),
    "index_int": (lambda x: x[1], lambda x: x[1], lambda x: x[1], A),
    "index_slice": (lambda x: x[1:, ::2], lambda x: x[1:, ::2], lambda x: x[1:, ::2], A),
    "index_array": (lambda x: x[[0, 2, 0]], lambda x: x[[0, 2, 0]], lambda x: x[[0, 2, 0]], A),
    "index_mask": (lambda x: x[x > 0], lambda x: x[x > 0], lambda x: x[x > 0], A),
}

BINARY = {
    "add": (lambda a, b: a + b, np.add, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, np.subtract, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, np.multiply, lambda a, b: a * b),
    "div": (lambda a, b: a / (b * b + 1), lambda a, b: a / (b * b + 1), lambda a, b: a / (b * b + 1)),
    "pow_tensor": (lambda a, b: (a * a + 1) ** b, lambda a, b: (a * a + 1) ** b, lambda a, b: (a * a + 1) ** b),
    "maximum": (lambda a, b: al.maximum(a, b), np.maximum, lambda a, b: torch.maximum(a, b)),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_value_and_gradcheck(name):
    ours, ref, _, data = UNARY[name]
    x = al.Variable(data.copy(), requires_grad=True)
    np.testing.assert_allclose(ours(x).data, ref(data), rtol=1e-12, atol=1e-12)
    assert al.gradcheck(lambda v: ours(v), (x,))


@needs_torch
@pytest.mark.parametrize("name", UNARY)
def test_unary_gradient_matches_torch(name):
    ours, _, theirs, data = UNARY[name]
    x = al.Variable(data.copy(), requires_grad=True)
    tx = to_torch(data)
    y, ty = ours(x), theirs(tx)
    seed = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(al.Variable(seed))
    ty.backward(torch.tensor(seed))
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1))])
def test_binary_broadcast_value_and_gradcheck(name, shapes):
    ours, ref, _ = BINARY[name]
    r = np.random.default_rng(2)
    a, b = r.standard_normal(shapes[0]), r.standard_normal(shapes[1])
    x, y = al.Variable(a, requires_grad=True), al.Variable(b, requires_grad=True)
    out = ours(x, y)
    np.testing.assert_allclose(out.data, ref(a, b), rtol=1e-12)
    assert al.gradcheck(ours, (x, y))
    out.sum().backward()
    assert x.grad.shape == a.shape and y.grad.shape == b.shape  # un-broadcast


@needs_torch
@pytest.mark.parametrize("name", BINARY)
def test_binary_gradient_matches_torch(name):
    ours, _, theirs = BINARY[name]
    r = np.random.default_rng(3)
    a, b = r.standard_normal((2, 3, 4)), r.standard_normal((3, 1))
    x, y = al.Variable(a, requires_grad=True), al.Variable(b, requires_grad=True)
    tx, ty = to_torch(a), to_torch(b)
    ours(x, y).sum().backward()
    theirs(tx, ty).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y.grad.data, ty.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", [lambda p, c: p * c, lambda p, c: c * p, lambda p, c: p / c,
                                lambda p, c: c / p, lambda p, c: p * 3.0, lambda p, c: 3.0 / p])
def test_products_keeping_one_operand_are_twice_differentiable(op):
    """Mul and Div keep only the operands their gradients read; with a constant operand (a
    Variable that does not require grad, or a number) the kept one must still be enough for
    the second derivative."""
    r = np.random.default_rng(5)
    x = al.Variable(r.uniform(0.5, 2.0, (3, 2)), requires_grad=True)
    c = al.Variable(r.uniform(0.5, 2.0, (2,)))
    assert al.gradcheck(lambda p: op(p, c), (x,))
    assert al.gradgradcheck(lambda p: op(p, c) ** 2, (x,))


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                   ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((5, 1, 3, 4), (2, 4, 2))])
def test_matmul_shapes_values_gradcheck(sa, sb):
    r = np.random.default_rng(4)
    a, b = r.standard_normal(sa), r.standard_normal(sb)
    x, y = al.Variable(a, requires_grad=True), al.Variable(b, requires_grad=True)
    np.testing.assert_allclose((x @ y).data, a @ b, rtol=1e-12)
    assert al.gradcheck(lambda p, q: p @ q, (x, y))
    assert al.gradgradcheck(lambda p, q: p @ q, (x, y))
    # one operand a constant: the product keeps only the other, and the gradients still check
    assert al.gradcheck(lambda p: p @ al.Variable(b), (x,))
    assert al.gradgradcheck(lambda p: (p @ al.Variable(b)) ** 2, (x,))
    assert al.gradgradcheck(lambda q: (al.Variable(a) @ q) ** 2, (y,))


@needs_torch
def test_batched_matmul_matches_torch():
    r = np.random.default_rng(5)
    a, b = r.standard_normal((5, 1, 3, 4)), r.standard_normal((2, 4, 2))
    x, y = al.Variable(a, requires_grad=True), al.Variable(b, requires_grad=True)
    tx, ty = to_torch(a), to_torch(b)
    (x @ y).sum().backward()
    (tx @ ty).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(y.grad.data, ty.grad.numpy(), rtol=1e-10)


def test_concatenate_and_stack():
    a = al.randn(2, 3, seed=0, requires_grad=True)
    b = al.randn(4, 3, seed=1, requires_grad=True)
    np.testing.assert_array_equal(al.cat([a, b]).data, np.concatenate([a.data, b.data]))
    assert al.gradcheck(lambda p, q: al.concatenate([p, q], axis=0) * al.arange(18.0).reshape(6, 3), (a, b))
    c = al.randn(2, 3, seed=2, requires_grad=True)
    np.testing.assert_array_equal(al.stack([a, c], dim=1).data, np.stack([a.data, c.data], axis=1))
    assert al.gradcheck(lambda p, q: al.stack([p, q], axis=1) ** 2, (a, c))
    with pytest.raises(ShapeError):
        al.stack([a, b])


def test_max_ties_share_gradient_like_torch():
    x = al.tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.data, [0, 0.5, 0.5])


def test_broadcast_and_matmul_errors_name_both_shapes():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)"):
        al.ones(2, 3) + al.ones(4)
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4, 5\).*not aligned"):
        al.ones(2, 3) @ al.ones(4, 5)
    with pytest.raises(ShapeError, match="number of elements"):
        al.ones(6).reshape(4, 2)
    with pytest.raises(ShapeError, match="out of range"):
        al.ones(2, 2).sum(axis=2)


def test_second_derivatives_of_elementwise_ops():
    for fn in (lambda x: x.exp(), lambda x: x.sigmoid(), lambda x: x.tanh(), lambda x: (x * x + 1).log(),
               lambda x: (x * x + 1).sqrt(), lambda x: x ** 3, lambda x: 1 / (x * x + 1),
               lambda x: (x @ x.T).sum(axis=1), lambda x: x.max(axis=0), lambda x: x[1:] * x[:-1]):
        assert al.gradgradcheck(fn, (al.randn(3, 3, seed=7, requires_grad=True),))


@settings(max_examples=40, deadline=None)
@given(broadcastable_pair())
def test_property_broadcast_gradients_sum_back(pair):
    a, b = pair
    x, y = al.Variable(a, requires_grad=True), al.Variable(b, requires_grad=True)
    (x * y).sum().backward()
    # d/dx sum(x*y) = y broadcast to the output and summed back to x's shape
    out_shape = np.broadcast_shapes(a.shape, b.shape)
    expect_x = np.broadcast_to(b, out_shape)
    expect_y = np.broadcast_to(a, out_shape)
    lead_x = len(out_shape) - a.ndim
    ex = expect_x.sum(axis=tuple(range(lead_x))) if lead_x else expect_x
    ex = ex.sum(axis=tuple(i for i, s in enumerate(a.shape) if s == 1), keepdims=True) if a.ndim else ex
    lead_y = len(out_shape) - b.ndim
    ey = expect_y.sum(axis=tuple(range(lead_y))) if lead_y else expect_y
    ey = ey.sum(axis=tuple(i for i, s in enumerate(b.shape) if s == 1), keepdims=True) if b.ndim else ey
    np.testing.assert_allclose(x.grad.data, np.reshape(ex, a.shape), atol=1e-9)
    np.testing.assert_allclose(y.grad.data, np.reshape(ey, b.shape), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(broadcastable_pair(max_dims=2))
def test_property_gradcheck_on_random_broadcasts(pair):
    a, b = pair
    x, y = al.Variable(a, requires_grad=True), al.Variable(b, requires_grad=True)
    assert al.gradcheck(lambda p, q: (p - q) * p.tanh() + q.sigmoid(), (x, y))
