"""Programs PyTorch runs that autograd_lab refused (issue 44, "We refuse where PyTorch runs"):
each now runs, with PyTorch's values and gradients (float64), and passes gradcheck where it is
differentiable."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as alF

from .._oracle import assert_case_gradchecks, assert_case_matches_torch, needs_torch, torch

RNG = np.random.default_rng(44)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
LO = RNG.standard_normal((3, 4)) - 0.5
HI = LO + np.abs(RNG.standard_normal((3, 4))) + 0.2
ROW = RNG.standard_normal(4)


def _t(m, v):
    return m.tensor(v, dtype=m.float64)


# name: (function of (lib, F, *inputs), inputs, gradgradcheck too?); every input requires grad
CASES = {
    "clamp_tensor_bounds": (lambda m, F, x, lo, hi: m.clamp(x, lo, hi), [A, LO, HI], True),
    "clamp_tensor_min": (lambda m, F, x, lo: x.clamp(min=lo), [A, LO], True),
    "clamp_tensor_max_broadcast": (lambda m, F, x, hi: x.clamp(max=hi), [A, ROW], True),
    "clamp_constant_bounds": (lambda m, F, x: m.clamp(x, _t(m, LO), _t(m, HI)), [A], True),
    "clamp_crossed_bounds": (lambda m, F, x, lo, hi: m.clamp(x, lo, hi), [A, HI, LO], True),
}

IMG = RNG.standard_normal((2, 3, 6, 5))
KER = RNG.standard_normal((4, 3, 2, 3))
CASES.update({
    "conv2d_padding_same": (lambda m, F, x, w: F.conv2d(x, w, padding="same"), [IMG, KER], False),
    "conv2d_padding_same_dilation": (lambda m, F, x, w: F.conv2d(x, w, padding="same", dilation=(2, 1)),
                                     [IMG, KER], False),
    "conv2d_padding_valid": (lambda m, F, x, w: F.conv2d(x, w, padding="valid"), [IMG, KER], False),
})

S = np.array(1.7)
NEG = np.array(-0.6)
CASES.update({
    "sum_dim_0d": (lambda m, F, x: x.sum(0), [S], True),
    "sum_dim_keepdim_0d": (lambda m, F, x: m.sum(x, dim=-1, keepdim=True) * 3, [S], True),
    "sum_dims_0d": (lambda m, F, x: x.sum((0,)), [S], True),
    "mean_dim_0d": (lambda m, F, x: x.mean(0), [S], True),
    "norm_dim_0d": (lambda m, F, x: x.norm(dim=0), [NEG], True),
    "norm_p1_dim_0d": (lambda m, F, x: x.norm(p=1, dim=0), [NEG], False),
    "var_dim_0d_population": (lambda m, F, x: x.var(0, unbiased=False) + x, [S], True),
    "amax_dim_0d": (lambda m, F, x: x.amax(0), [S], True),
    "amin_dim_0d": (lambda m, F, x: m.amin(x, -1, True), [S], True),
    "logsumexp_dim_0d": (lambda m, F, x: x.logsumexp(0), [S], True),
    "sign_0d": (lambda m, F, x: x.sign() * x, [NEG], True),
    "abs_0d": (lambda m, F, x: x.abs() * x, [NEG], True),
    "norm_negative_p": (lambda m, F, x: x.norm(p=-1.5), [A], True),
    "norm_negative_p_dim": (lambda m, F, x: m.norm(x, -1, dim=1), [A], True),
    "amax_keeps_zero_size_dim": (lambda m, F, x: x.reshape(3, 4, 1)[:, :, :0].amax(1), [A], False),
    "amin_keeps_zero_size_dims": (lambda m, F, x: m.amin(x[:0], dim=1, keepdim=True), [A], False),
})

WITH_ZEROS = np.array([[1.5, 0.0, -2.0, 0.7], [0.5, 3.0, 0.0, 0.0]])
CASES.update({
    "cumprod_with_zeros_twice": (lambda m, F, x: m.cumprod(x, 1), [WITH_ZEROS], True),
    "cumprod_with_zeros_dim0_twice": (lambda m, F, x: x.cumprod(0), [WITH_ZEROS], True),
})


PROBS = np.abs(RNG.standard_normal((3, 4))) + 0.1
PROBS /= PROBS.sum(1, keepdims=True)
IMG_PROBS = np.abs(RNG.standard_normal((2, 4, 3))) + 0.1
IMG_PROBS /= IMG_PROBS.sum(1, keepdims=True)
CASES.update({
    "cross_entropy_probabilities": (lambda m, F, x, t: F.cross_entropy(x, t), [A, PROBS], True),
    "cross_entropy_probabilities_sum_weight": (
        lambda m, F, x, t: F.cross_entropy(x, t, weight=_t(m, ROW ** 2), reduction="sum"), [A, PROBS], True),
    "cross_entropy_probabilities_smoothing_none": (
        lambda m, F, x, t: F.cross_entropy(x, t, label_smoothing=0.2, reduction="none"), [A, PROBS], True),
    "cross_entropy_probabilities_spatial": (lambda m, F, x, t: F.cross_entropy(x, t), [IMG_PROBS * 3, IMG_PROBS],
                                            True),
    "cross_entropy_probabilities_unbatched": (lambda m, F, x, t: F.cross_entropy(x, t, weight=_t(m, ROW ** 2)),
                                              [A[0], PROBS[0]], True),
})



@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, inputs, twice = CASES[name]
    assert_case_gradchecks(al, fn, inputs, twice)


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, inputs, _ = CASES[name]
    assert_case_matches_torch(al, fn, inputs)


@needs_torch
def test_clamp_ties_and_equal_bounds_route_the_gradient_as_torch():
    x, lo, hi = [0.0, 1.0, -1.0, 2.0, 0.5], [0.0, 0.0, 0.5, 0.5, 0.5], [1.0, 1.0, 0.5, 0.5, 0.5]
    grads = []
    for m in (al, torch):
        vs = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in (x, lo, hi)]
        m.clamp(*vs).sum().backward()
        grads.append([np.asarray(v.grad.tolist()) for v in vs])
    for g, tg in zip(*grads):
        np.testing.assert_array_equal(g, tg)


def test_conv2d_padding_strings_refused_as_torch_does():
    x, w = al.tensor(IMG), al.tensor(KER)
    with pytest.raises(ValueError, match="strided"):
        alF.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(ValueError, match="'valid' or 'same'"):
        alF.conv2d(x, w, padding="full")


@needs_torch
def test_norm_p0_counts_nonzeros_and_leaves_no_gradient():
    data = np.array([[1.5, 0.0, -2.0], [0.0, 0.0, 3.0]])
    for dim in (None, 1, (0, 1)):
        ours = al.tensor(data, requires_grad=True)
        theirs = torch.tensor(data, requires_grad=True)
        a, b = ours.norm(p=0, dim=dim), theirs.norm(p=0, dim=dim)
        np.testing.assert_array_equal(a.data, b.detach().numpy())
        a.sum().backward()
        b.sum().backward()
        assert ours.grad is None and theirs.grad is None


@needs_torch
def test_reductions_of_a_0d_variable_match_torch_without_gradient():
    for fn in (lambda m, x: x.var(0), lambda m, x: x.std(dim=0), lambda m, x: m.sum(m.tensor(3), 0),
               lambda m, x: x.norm(p=0, dim=0), lambda m, x: (x * np.nan).sign(), lambda m, x: (x * -0.0).sign()):
        with np.errstate(all="ignore"):
            ours = fn(al, al.tensor(1.5))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns that var has no degrees of freedom
            theirs = fn(torch, torch.tensor(1.5, dtype=torch.float64))
        np.testing.assert_array_equal(ours.data, theirs.detach().numpy())
        assert ours.shape == tuple(theirs.shape) and ours.dtype == theirs.detach().numpy().dtype


def test_amax_over_a_zero_size_dim_still_refuses():
    with pytest.raises(ValueError, match="size 0"):
        al.zeros(0, 3).amax(0)


def _program_on_both(program):
    """``program(m)`` run on autograd_lab and PyTorch; the results (nested, numbers or tensors)."""
    out = []
    for m in (al, torch):
        out.append(program(m))
    return out


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()), rtol=1e-12, atol=1e-14)


@needs_torch
def test_inplace_through_an_expand_that_adds_only_size_one_dims():
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        b = x * 1
        b.expand(1, 3).mul_(2)
        col = m.tensor([[1.0], [2.0], [3.0]], dtype=m.float64) * 1
        col.expand(1, 3, 1)[0].add_(5)
        (b * b).sum().backward()
        return b, col, x.grad
    _same(*_program_on_both(program))
    with pytest.raises(RuntimeError, match="single memory location"):
        al.tensor([1.0, 2.0]).expand(2, 2).mul_(2)


@needs_torch
def test_requires_grad_true_again_on_a_non_leaf():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = (x * 2).requires_grad_()
        y.requires_grad_(True).sum().backward()
        return x.grad
    _same(*_program_on_both(program))
    y = al.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(al.BackwardError, match="leaf"):
        y.requires_grad_(False)
    with pytest.raises(al.BackwardError, match="leaf"):
        y.requires_grad = True


@needs_torch
@pytest.mark.parametrize("make", [lambda m, x: x ** 2, lambda m, x: x.pow(3), lambda m, x: m.pow(x, -1.5)])
def test_pow_with_a_number_exponent_lets_its_output_change_in_place(make):
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = make(m, x)
        y.mul_(2)
        y.sum().backward()
        return y, x.grad
    _same(*_program_on_both(program))


@needs_torch
@pytest.mark.parametrize("make", [lambda m, x: 2 ** x, lambda m, x: x ** (x * 0 + 2)])
def test_pow_with_a_variable_exponent_still_saves_its_output(make):
    for m, error in ((al, al.BackwardError), (torch, RuntimeError)):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = make(m, x)
        y.add_(1)
        with pytest.raises(error, match="modified by an inplace operation"):
            y.sum().backward()


@needs_torch
def test_cumprod_second_derivative_with_zeros_matches_torch():
    def program(m):
        x = m.tensor(WITH_ZEROS, dtype=m.float64, requires_grad=True)
        w = m.tensor(np.linspace(0.5, 1.5, 8).reshape(2, 4), dtype=m.float64)
        (g,) = m.autograd.grad((m.cumprod(x, 1) * w).sum(), x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)
        return g, h
    _same(*_program_on_both(program))


@needs_torch
@pytest.mark.parametrize("momentum", [None, 0.3])
def test_batchnorm_momentum_none_keeps_the_cumulative_average(momentum):
    batches = [RNG.standard_normal((4, 3, 2)) for _ in range(3)]

    def program(m):
        bn = m.nn.BatchNorm1d(3, momentum=momentum, dtype=m.float64)
        outs = [bn(m.tensor(b, dtype=m.float64)) for b in batches]
        bn.eval()
        outs.append(bn(m.tensor(batches[0], dtype=m.float64)))
        return outs, m.tensor(np.asarray(bn.running_mean)), m.tensor(np.asarray(bn.running_var))
    _same(*_program_on_both(program))
    bn = al.nn.BatchNorm2d(2, momentum=None)
    bn(al.randn(3, 2, 2, 2))
    assert int(bn.num_batches_tracked) == 1 and "num_batches_tracked" in bn.state_dict()


@needs_torch
@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("shapes", [((3, 1), (3,)), ((4,), (2, 1)), ((2, 3), (3,))])
def test_elementwise_losses_broadcast_their_targets_with_torchs_warning(loss, shapes):
    x_data, t_data = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])

    def program(m):
        x = m.tensor(x_data, dtype=m.float64, requires_grad=True)
        t = m.tensor(t_data, dtype=m.float64, requires_grad=True)
        F = alF if m is al else torch.nn.functional
        with pytest.warns(UserWarning, match="target size"):
            out = getattr(F, loss)(x, t, reduction="sum" if loss == "l1_loss" else "mean")
        out.backward()
        return out, x.grad, t.grad
    _same(*_program_on_both(program))


def test_elementwise_loss_refuses_targets_that_do_not_broadcast():
    with pytest.warns(UserWarning), pytest.raises(al.ShapeError, match="cannot be broadcast"):
        alF.mse_loss(al.zeros(3, 2), al.zeros(3))

