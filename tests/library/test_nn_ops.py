"""Neural-network ops (autograd_lab.functional): values vs numpy, gradients vs gradcheck (float64)
and vs PyTorch (float64) when installed, double backward where promised, clear errors otherwise."""
import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab.errors import BackwardError, ShapeError

from .._oracle import needs_torch, to_torch, torch

rng = np.random.default_rng(7)


def var(*shape, scale=1.0):
    return al.Variable(rng.standard_normal(shape) * scale, requires_grad=True)


def softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ------------------------------------------------------------------ values vs numpy
def test_activation_values_and_dtype():
    for dtype in (np.float32, np.float64):
        x = al.Variable(rng.standard_normal((4, 5)).astype(dtype))
        np.testing.assert_allclose(F.relu(x).data, np.maximum(x.data, 0))
        np.testing.assert_allclose(F.sigmoid(x).data, 1 / (1 + np.exp(-x.data)), rtol=1e-6)
        np.testing.assert_allclose(F.tanh(x).data, np.tanh(x.data), rtol=1e-6)
        assert F.relu(x).dtype == F.sigmoid(x).dtype == F.tanh(x).dtype == dtype


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_softmax_and_log_softmax_values_along_any_dim(dim):
    x = var(3, 4, 5, scale=3.0)
    np.testing.assert_allclose(F.softmax(x, dim=dim).data, softmax_np(x.data, dim), rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(x, axis=dim).data, np.log(softmax_np(x.data, dim)),
                               rtol=1e-10, atol=1e-12)


def test_softmax_needs_a_dim():
    with pytest.raises(TypeError, match="needs dim="):
        F.softmax(var(2, 3))
    with pytest.raises(TypeError, match="either axis= or dim="):
        F.log_softmax(var(2, 3), dim=1, axis=1)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_values(reduction):
    x, t = var(6, 4, scale=2.0), rng.integers(0, 4, 6)
    per = -np.log(softmax_np(x.data, 1))[np.arange(6), t]
    want = {"mean": per.mean(), "sum": per.sum(), "none": per}[reduction]
    np.testing.assert_allclose(F.cross_entropy(x, t, reduction=reduction).data, want, rtol=1e-12)


def test_cross_entropy_huge_logits_are_stable_in_float32_and_float64():
    for dtype in (np.float32, np.float64):
        x = al.Variable(np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]], dtype=dtype), requires_grad=True)
        loss = F.cross_entropy(x, np.array([1, 2]))
        loss.backward()
        assert np.isfinite(loss.item()) and np.all(np.isfinite(x.grad.data))
        np.testing.assert_allclose(loss.item(), (2e4 + np.log(3)) / 2, rtol=1e-6)


def test_cross_entropy_spatial_and_unbatched_shapes():
    x, t = var(2, 3, 4, 5), rng.integers(0, 3, (2, 4, 5))
    per = -np.log(softmax_np(x.data, 1))
    want = np.take_along_axis(per, t[:, None], 1)[:, 0]
    np.testing.assert_allclose(F.cross_entropy(x, t, reduction="none").data, want, rtol=1e-12)
    x1 = var(5)
    np.testing.assert_allclose(F.cross_entropy(x1, np.array(2)).data,
                               -np.log(softmax_np(x1.data, 0))[2], rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_values(reduction):
    x, t = var(3, 4), rng.standard_normal((3, 4))
    sq = (x.data - t) ** 2
    want = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    np.testing.assert_allclose(F.mse_loss(x, t, reduction=reduction).data, want, rtol=1e-12)


def test_linear_values_with_and_without_bias_and_batch_dims():
    x, w, b = var(5, 3), var(4, 3), var(4)
    np.testing.assert_allclose(F.linear(x, w, b).data, x.data @ w.data.T + b.data, rtol=1e-12)
    np.testing.assert_allclose(F.linear(x, w).data, x.data @ w.data.T, rtol=1e-12)
    x3 = var(2, 5, 3)
    assert F.linear(x3, w, b).shape == (2, 5, 4)
    assert F.linear(var(3), w, b).shape == (4,)


def conv_np(x, w, b, stride, padding):
    from autograd_lab.kernels.conv import conv2d_fwd_ref
    return conv2d_fwd_ref(x, w, b, stride, padding)


def test_conv2d_and_max_pool_values():
    x, w, b = var(2, 3, 7, 6), var(4, 3, 3, 3), var(4)
    np.testing.assert_allclose(F.conv2d(x, w, b, stride=2, padding=1).data,
                               conv_np(x.data, w.data, b.data, 2, 1), rtol=1e-10, atol=1e-12)
    y = F.max_pool2d(x, 2)
    assert y.shape == (2, 3, 3, 3)
    np.testing.assert_allclose(y.data, x.data[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))


def test_dropout_is_seeded_scaled_and_off_in_eval():
    x = al.Variable(np.ones((200, 50)), requires_grad=True)
    y1, y2 = F.dropout(x, 0.3, seed=1), F.dropout(x, 0.3, seed=1)
    np.testing.assert_array_equal(y1.data, y2.data)
    assert set(np.unique(y1.data)) <= {0.0, 1 / 0.7}
    assert abs((y1.data == 0).mean() - 0.3) < 0.02
    y1.sum().backward()
    np.testing.assert_array_equal(x.grad.data, y1.data)  # d/dx of x*mask is the mask
    assert F.dropout(x, 0.3, training=False) is x
    g = al.Generator(5)
    a = F.dropout(x, 0.5, generator=g).data
    b = F.dropout(x, 0.5, generator=al.Generator(5)).data
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(F.dropout(x, 1.0).data, 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


# ------------------------------------------------------------------ gradients: gradcheck
GRADCHECK = {
    "relu": (lambda x: F.relu(x), [(4, 5)]),
    "sigmoid": (lambda x: F.sigmoid(x), [(4, 5)]),
    "tanh": (lambda x: F.tanh(x), [(4, 5)]),
    "softmax": (lambda x: F.softmax(x, dim=1), [(3, 4, 2)]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=0), [(3, 4)]),
    "cross_entropy_mean": (lambda x: F.cross_entropy(x, np.array([0, 2, 1])), [(3, 4)]),
    "cross_entropy_sum": (lambda x: F.cross_entropy(x, np.array([0, 2, 1]), reduction="sum"), [(3, 4)]),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, np.array([0, 2, 1]), reduction="none"), [(3, 4)]),
    "cross_entropy_spatial": (lambda x: F.cross_entropy(x, np.array([[0, 2], [1, 1]])), [(2, 3, 2)]),
    "mse_loss": (lambda x, t: F.mse_loss(x, t), [(3, 4), (3, 4)]),
    "mse_loss_none": (lambda x, t: F.mse_loss(x, t, reduction="none"), [(3, 4), (3, 4)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(5, 3), (4, 3), (4,)]),
    "linear_batched": (lambda x, w: F.linear(x, w), [(2, 5, 3), (4, 3)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1), [(2, 2, 4, 4), (3, 2, 3, 3), (3,)]),
    "conv2d_strided": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(0, 1)), [(1, 2, 5, 4), (2, 2, 2, 3)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(2, 2, 4, 4)]),
    "max_pool2d_overlap": (lambda x: F.max_pool2d(x, 3, stride=1), [(1, 2, 4, 5)]),
    "dropout": (lambda x: F.dropout(x, 0.4, seed=3), [(4, 5)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck(name):
    fn, shapes = GRADCHECK[name]
    inputs = [var(*s) for s in shapes]
    if name == "relu":  # keep away from the kink at 0
        inputs[0].data[np.abs(inputs[0].data) < 0.1] += 0.3
    assert al.gradcheck(fn, tuple(inputs))


# ------------------------------------------------------------------ gradients vs PyTorch
TORCH_CASES = {
    "relu": (lambda x: F.relu(x), lambda x: torch.relu(x), [(4, 5)]),
    "sigmoid": (lambda x: F.sigmoid(x), lambda x: torch.sigmoid(x), [(4, 5)]),
    "tanh": (lambda x: F.tanh(x), lambda x: torch.tanh(x), [(4, 5)]),
    "softmax": (lambda x: F.softmax(x, dim=1), lambda x: torch.softmax(x, dim=1), [(3, 4, 2)]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=-1), lambda x: torch.log_softmax(x, dim=-1), [(3, 4)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, np.array([0, 2, 1])),
                      lambda x: torch.nn.functional.cross_entropy(x, torch.tensor([0, 2, 1])), [(3, 4)]),
    "cross_entropy_none_spatial": (
        lambda x: F.cross_entropy(x, np.array([[0, 2], [1, 1]]), reduction="none"),
        lambda x: torch.nn.functional.cross_entropy(x, torch.tensor([[0, 2], [1, 1]]), reduction="none"),
        [(2, 3, 2)]),
    "mse_loss_sum": (lambda x, t: F.mse_loss(x, t, reduction="sum"),
                     lambda x, t: torch.nn.functional.mse_loss(x, t, reduction="sum"), [(3, 4), (3, 4)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), lambda x, w, b: torch.nn.functional.linear(x, w, b),
               [(5, 3), (4, 3), (4,)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
               lambda x, w, b: torch.nn.functional.conv2d(x, w, b, stride=2, padding=1),
               [(2, 3, 7, 6), (4, 3, 3, 3), (4,)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, (2, 3), stride=(1, 2)),
                   lambda x: torch.nn.functional.max_pool2d(x, (2, 3), stride=(1, 2)), [(2, 3, 6, 7)]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_against_torch(name):
    ours, theirs, shapes = TORCH_CASES[name]
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [al.Variable(a.copy(), requires_grad=True) for a in arrays]
    ts = [to_torch(a) for a in arrays]
    y, yt = ours(*xs), theirs(*ts)
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(y.shape)
    y.backward(al.Variable(g))
    yt.backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ double backward
DOUBLE = {
    "relu": lambda x: F.relu(x),
    "sigmoid": lambda x: F.sigmoid(x),
    "tanh": lambda x: F.tanh(x),
    "softmax": lambda x: F.softmax(x, dim=-1),
    "log_softmax": lambda x: F.log_softmax(x, dim=1),
    "cross_entropy": lambda x: F.cross_entropy(x, np.array([1, 0, 3])),
    "cross_entropy_none": lambda x: F.cross_entropy(x, np.array([1, 0, 3]), reduction="none"),
    "mse_loss": lambda x: F.mse_loss(x, np.ones((3, 4))),
    "linear": lambda x: F.linear(x, al.Variable(np.arange(8.0).reshape(2, 4) / 8, requires_grad=True)),
    "dropout": lambda x: F.dropout(x, 0.5, seed=0) * x,
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_gradgradcheck(name):
    x = var(3, 4)
    if name == "relu":
        x.data[np.abs(x.data) < 0.1] += 0.3
    assert al.gradgradcheck(DOUBLE[name], (x,))


@needs_torch
def test_cross_entropy_hessian_vector_product_matches_torch():
    a, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    t = np.array([2, 0, 1])
    x = al.Variable(a.copy(), requires_grad=True)
    (gx,) = al.grad(F.cross_entropy(x, t), (x,), create_graph=True)
    (hv,) = al.grad((gx * al.Variable(v)).sum(), (x,))
    xt = to_torch(a)
    (gt,) = torch.autograd.grad(torch.nn.functional.cross_entropy(xt, torch.tensor(t)), xt, create_graph=True)
    (hvt,) = torch.autograd.grad((gt * torch.tensor(v)).sum(), xt)
    np.testing.assert_allclose(hv.data, hvt.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: F.conv2d(var(1, 1, 4, 4), var(2, 1, 3, 3)),
    lambda: F.max_pool2d(var(1, 1, 4, 4), 2),
])
def test_once_differentiable_ops_refuse_double_backward(make):
    y = make()
    inputs = [v for v in _leaves(y)]
    grads = al.grad((y * y).sum(), inputs, create_graph=True)
    with pytest.raises(BackwardError, match="once_differentiable"):
        sum(g.sum() for g in grads).backward()


def _leaves(y):
    seen, stack, out = set(), [y.grad_fn], []
    while stack:
        node = stack.pop()
        for nxt, _ in getattr(node, "next_functions", ()):
            if nxt is None or id(nxt) in seen:
                continue
            seen.add(id(nxt))
            if hasattr(nxt, "variable"):
                out.append(nxt.variable)
            else:
                stack.append(nxt)
    return out


# ------------------------------------------------------------------ errors
def test_cross_entropy_of_nan_logits_is_nan_not_an_error():
    """The range of the targets is checked only when a loss is NaN; NaN logits with good targets
    give NaN, as in PyTorch."""
    x = al.tensor([[0.0, np.nan], [1.0, 2.0]], requires_grad=True)
    loss = F.cross_entropy(x, np.array([1, 0]))
    assert np.isnan(loss.item())
    assert np.isnan(F.cross_entropy(x, np.array([1, 0]), reduction="none").data[0])
    loss.backward()
    assert np.isnan(x.grad.data[0]).all() and np.isfinite(x.grad.data[1]).all()


def test_cross_entropy_rejects_bad_targets():
    x = var(3, 4)
    with pytest.raises(ValueError, match=r"class indices in \[0, 4\)"):
        F.cross_entropy(x, np.array([0, 4, 1]))
    for reduction in ("mean", "sum", "none"):
        with pytest.raises(ValueError, match=r"class indices in \[0, 4\)"):
            F.cross_entropy(x, np.array([0, -1, 1]), reduction=reduction)
        with pytest.raises(ValueError, match=r"class indices in \[0, 4\).*from 0 to 7"):
            F.cross_entropy(x.reshape(3, 4, 1), np.array([[0], [7], [1]]), reduction=reduction)
    with pytest.raises(ShapeError, match=r"target of shape \(3,\)"):
        F.cross_entropy(x, np.array([0, 1]))
    with pytest.raises(ShapeError, match="integer class indices"):  # a floating target holds probabilities
        F.cross_entropy(x, np.array([0.0, 1.0, 2.0]))
    one_hot = F.cross_entropy(x, np.eye(4)[:3])  # class probabilities, as in PyTorch
    np.testing.assert_allclose(one_hot.data, F.cross_entropy(x, np.array([0, 1, 2])).data, rtol=1e-12)
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.cross_entropy(x, np.array([0, 1, 2]), reduction="avg")


def test_shape_errors_name_both_shapes():
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(4, 3\)"), pytest.warns(UserWarning, match="target size"):
        F.mse_loss(var(3, 4), var(4, 3))
    with pytest.raises(ShapeError, match=r"\(5, 3\).*\(4, 2\)"):
        F.linear(var(5, 3), var(4, 2))
    with pytest.raises(ShapeError, match=r"bias must have shape \(4,\)"):
        F.linear(var(5, 3), var(4, 3), var(3))
    with pytest.raises(ShapeError, match="same C_in"):
        F.conv2d(var(1, 2, 5, 5), var(3, 1, 3, 3))
    with pytest.raises(ShapeError, match="does not fit"):
        F.conv2d(var(1, 1, 2, 2), var(1, 1, 3, 3))
    with pytest.raises(ShapeError, match="larger than the input"):
        F.max_pool2d(var(1, 1, 2, 2), 3)
    with pytest.raises(ShapeError, match="4-d"):
        F.max_pool2d(var(4, 4), 2)


def test_float32_stays_float32_through_forward_and_backward():
    x = al.Variable(rng.standard_normal((2, 3, 6, 6)).astype(np.float32), requires_grad=True)
    w = al.Variable(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), requires_grad=True)
    y = F.max_pool2d(F.relu(F.conv2d(x, w, padding=1)), 2)
    logits = F.linear(y.reshape((2, -1)), al.Variable(np.ones((5, 36), np.float32), requires_grad=True))
    loss = F.cross_entropy(logits, np.array([1, 4]))
    assert loss.dtype == np.float32
    loss.backward()
    assert x.grad.dtype == w.grad.dtype == np.float32


def test_cross_entropy_of_an_empty_batch_has_an_empty_gradient_like_torch():
    import autograd_lab as al
    import autograd_lab.functional as F
    x = al.Variable(np.zeros((0, 3)), requires_grad=True)
    loss = F.cross_entropy(x, np.zeros(0, dtype=np.int64))
    assert np.isnan(loss.item())            # PyTorch: mean over no rows is nan
    loss.backward()
    assert x.grad.shape == (0, 3)
