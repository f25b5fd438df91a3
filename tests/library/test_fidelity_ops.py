"""The PyTorch names added for the tutorials: values and gradients against PyTorch (float64),
second derivatives with gradgradcheck, and their error cases."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab.errors import ShapeError

from .._oracle import needs_torch, torch

RNG = np.random.default_rng(7)
X = RNG.uniform(-0.9, 0.9, (3, 4))
POS = RNG.uniform(0.2, 2.0, (3, 4))

UNARY = {  # name: input data (inside the function's domain)
    "sin": X, "cos": X, "tan": X, "sinh": X, "cosh": X, "asin": X, "acos": X, "atan": X,
    "log1p": X, "expm1": X, "log2": POS, "log10": POS, "square": X, "reciprocal": POS,
    "rsqrt": POS,
}


@needs_torch
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_value_and_gradient_match_torch(name):
    data = UNARY[name]
    x = al.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    for ours, theirs in ((getattr(al, name)(x), getattr(torch, name)(t)), (getattr(x, name)(), getattr(t, name)())):
        np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)
    getattr(al, name)(x).sum().backward()
    getattr(torch, name)(t).sum().backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_second_derivative(name):
    x = al.tensor(UNARY[name][:1, :3], requires_grad=True)
    assert al.gradgradcheck(getattr(al, name), (x,))


@needs_torch
@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sign"])
def test_rounding_has_zero_gradient(name):
    data = np.array([-1.5, -0.4, 0.0, 0.5, 2.5, 3.7])
    x, t = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, u = getattr(x, name)(), getattr(t, name)()
    np.testing.assert_array_equal(y.data, u.detach().numpy())
    y.sum().backward()
    u.sum().backward()
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())


REDUCTIONS = [
    ("norm", (), {}), ("norm", (1,), {}), ("norm", (3,), {"dim": 1}), ("norm", (2,), {"dim": 0, "keepdim": True}),
    ("norm", (float("inf"),), {}), ("std", (), {}), ("std", (1,), {}), ("std", (), {"dim": 0, "unbiased": False}),
    ("var", (), {}), ("var", (), {"dim": 1, "keepdim": True}), ("var", (0,), {"correction": 0}),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", REDUCTIONS)
def test_norm_std_var_match_torch(name, args, kwargs):
    data = RNG.standard_normal((3, 4))
    x, t = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, u = getattr(x, name)(*args, **kwargs), getattr(t, name)(*args, **kwargs)
    np.testing.assert_allclose(y.data, u.detach().numpy(), rtol=1e-12)
    (y * al.tensor(np.arange(1.0, 1 + y.data.size).reshape(y.shape))).sum().backward()
    (u * torch.arange(1.0, 1 + u.numel()).reshape(u.shape)).sum().backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-10)


def test_norm_of_zero_has_zero_gradient():
    x = al.zeros(3, requires_grad=True)
    x.norm().backward()
    np.testing.assert_array_equal(x.grad.data, np.zeros(3))


def test_norm_and_var_second_derivatives():
    x = al.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert al.gradgradcheck(lambda v: v.norm(dim=1), (x,))
    assert al.gradgradcheck(lambda v: v.var(dim=0), (x,))


@needs_torch
def test_sort_gather_index_select_index_add_match_torch():
    data = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, -1.0, 4.0, 2.0]])
    w = np.arange(8.0).reshape(2, 4)
    for kw in ({}, {"descending": True}, {"dim": 0}):
        x, t = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        (v, i), (tv, ti) = x.sort(**kw), t.sort(stable=True, **kw)
        np.testing.assert_array_equal(v.data, tv.detach().numpy())
        np.testing.assert_array_equal(i.data, ti.numpy())
        (v * al.tensor(w)).sum().backward()
        (tv * torch.tensor(w)).sum().backward()
        np.testing.assert_array_equal(x.grad.data, t.grad.numpy())
    idx = np.array([[0, 0], [1, 0]])
    x, t = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (x.gather(1, al.tensor(idx)) * 3).sum().backward()
    (t.gather(1, torch.tensor(idx)) * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())
    x, t = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    sel = np.array([3, 0, 3])
    np.testing.assert_array_equal(x.index_select(1, al.tensor(sel)).data,
                                  t.index_select(1, torch.tensor(sel)).detach().numpy())
    src = RNG.standard_normal((2, 3))
    s1, s2 = al.tensor(src, requires_grad=True), torch.tensor(src, requires_grad=True)
    y, u = x * 1, t * 1
    y.index_add_(1, al.tensor(sel), s1, alpha=2.0)
    u.index_add_(1, torch.tensor(sel), s2, alpha=2.0)
    np.testing.assert_allclose(y.data, u.detach().numpy())
    (y * al.tensor(w)).sum().backward()
    (u * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(s1.grad.data, s2.grad.numpy())
    np.testing.assert_allclose(x.grad.data, t.grad.numpy())


def test_index_add_and_gather_errors():
    x = al.zeros(2, 3)
    with pytest.raises(ShapeError, match=r"source must have shape \(2, 2\)"):
        x.index_add(1, al.tensor([0, 1]), al.ones(2, 3))
    with pytest.raises(IndexError, match="out of range"):
        x.index_add(1, al.tensor([0, 5]), al.ones(2, 2))
    with pytest.raises(TypeError, match="integers"):
        x.gather(1, al.tensor([[0.5]]))


@needs_torch
def test_mm_t_expand_as_match_torch():
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 4))
    xa, xb = al.tensor(a, requires_grad=True), al.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    y = xa.t().mm(xb) + al.tensor([1.0, 2.0]).unsqueeze(1).expand_as(al.zeros(2, 4))
    u = ta.t().mm(tb) + torch.tensor([1.0, 2.0]).unsqueeze(1).expand_as(torch.zeros(2, 4))
    np.testing.assert_allclose(y.data, u.detach().numpy())
    (y ** 2).sum().backward()
    (u ** 2).sum().backward()
    np.testing.assert_allclose(xa.grad.data, ta.grad.numpy())
    np.testing.assert_allclose(xb.grad.data, tb.grad.numpy())
    with pytest.raises(ShapeError, match="mm needs two 2-d"):
        al.mm(al.ones(3), al.ones(3, 2))
    with pytest.raises(ShapeError, match="at most 2 dimensions"):
        al.ones(2, 2, 2).t()


def test_comparison_methods():
    a, b = al.tensor([1.0, 2.0, 3.0]), al.tensor([3.0, 2.0, 1.0])
    assert a.eq(b).tolist() == [False, True, False]
    assert a.ne(b).tolist() == [True, False, True]
    assert a.lt(b).tolist() == [True, False, False] and a.ge(b).tolist() == [False, True, True]


def test_factories_dtypes_and_device():
    assert al.float is al.float32 and al.float32 == np.float32 and al.double == np.float64
    assert al.long == np.int64 and al.int64 == np.int64 and al.bool == np.bool_
    assert al.zeros(2, dtype=al.float).dtype == np.float32
    assert al.empty(2, 3).shape == (2, 3)
    np.testing.assert_array_equal(al.eye(2, 3).data, np.eye(2, 3))
    arr = np.arange(3.0)
    v = al.from_numpy(arr)
    arr[0] = 10.0
    assert v.data[0] == 10.0  # shares memory
    with pytest.raises(TypeError, match="numpy.ndarray"):
        al.from_numpy([1.0])
    assert al.tensor([1.0], device="cpu").tolist() == [1.0]
    x = al.ones(2, device=al.device("cpu"))
    assert x.to("cpu") is x and x.to(al.device("cpu"), al.float32).dtype == np.float32
    with pytest.raises(ValueError, match="CPU only"):
        al.zeros(2, device="cuda")


@needs_torch
@pytest.mark.parametrize("make", [
    lambda m, p: m.optim.RMSprop(p, lr=1e-2),
    lambda m, p: m.optim.RMSprop(p, lr=1e-2, momentum=0.9, weight_decay=0.1),
    lambda m, p: m.optim.RMSprop(p, lr=1e-2, centered=True, alpha=0.9),
    lambda m, p: m.optim.AdamW(p, lr=1e-2),
    lambda m, p: m.optim.AdamW(p, lr=1e-2, weight_decay=0.5, betas=(0.8, 0.9)),
])
def test_rmsprop_and_adamw_follow_torch_step_by_step(make):
    start = RNG.standard_normal(5)
    w, tw = al.tensor(start, requires_grad=True), torch.tensor(start, requires_grad=True)
    opt, topt = make(al, [w]), make(torch, [tw])
    for _ in range(20):
        for p, o in ((w, opt), (tw, topt)):
            o.zero_grad()
            ((p - 1) ** 4).sum().backward()
            o.step()
        np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-12)


def test_nn_init_functions():
    import autograd_lab.nn as nn
    w = al.zeros(200, 300)
    nn.init.xavier_uniform_(w, seed=0)
    bound = np.sqrt(6 / 500)
    assert np.abs(w.data).max() <= bound and np.abs(w.data).max() > 0.9 * bound
    nn.init.xavier_normal_(w, seed=0)
    assert abs(w.data.std() - np.sqrt(2 / 500)) < 0.002
    nn.init.kaiming_normal_(w, nonlinearity="relu", seed=0)
    assert abs(w.data.std() - np.sqrt(2 / 300)) < 0.003
    nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5, seed=0)
    assert w.data.min() >= -0.5 and w.data.max() <= 0.5
    nn.init.constant_(w, 0.25)
    assert np.all(w.data == 0.25)
    m = al.zeros(2, 3)
    np.testing.assert_array_equal(nn.init.eye_(m).data, np.eye(2, 3))


def test_setup_context_style_errors_and_defaults():
    class Scale(al.Function):
        @staticmethod
        def forward(x, factor=2.0):
            return x * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.factor = inputs[1]

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None

    x = al.tensor([1.0, 2.0], requires_grad=True)
    Scale.apply(x).sum().backward()  # the default factor reaches setup_context
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])
    with al.no_grad():
        assert Scale.apply(x, 3.0).tolist() == [3.0, 6.0]
    with pytest.raises(TypeError, match="Scale.apply"):
        Scale.apply(x, 1.0, 2.0)


def test_losses_reject_bad_targets():
    with pytest.raises(ShapeError, match="target of shape"):
        F.binary_cross_entropy_with_logits(al.zeros(3), al.zeros(2))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(al.tensor([1.5]), al.tensor([1.0]))
    with pytest.raises(ValueError, match="class indices"):
        F.nll_loss(al.zeros(2, 3), np.array([0, 3]))
