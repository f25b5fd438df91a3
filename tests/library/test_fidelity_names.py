"""Names a PyTorch user reaches for that autograd_lab lacked (issue 44, "Missing names"): Module
hooks, gradient hooks and backward's options, and the operations; each compared with PyTorch
(values and gradients, float64) and checked by gradcheck where it is differentiable."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.errors import BackwardError

from .._oracle import assert_case_gradchecks, assert_case_matches_torch, needs_torch, torch

RNG = np.random.default_rng(4444)
X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
W = np.arange(6.0).reshape(2, 3) / 7
BIAS = np.array([0.1, -0.2])


def _np(v):
    return None if v is None else np.asarray(v.tolist())


def _linear(m):
    lin = m.nn.Linear(3, 2, dtype=m.float64)
    with m.no_grad():
        lin.weight.copy_(m.tensor(W, dtype=m.float64))
        lin.bias.copy_(m.tensor(BIAS, dtype=m.float64))
    return lin


# ---------------------------------------------------------------- Module hooks
def _hooked_program(m):
    lin = _linear(m)
    log = []
    handles = [
        lin.register_forward_pre_hook(lambda mod, args: (args[0] * 2,)),
        lin.register_forward_hook(lambda mod, args, out: out + 1),
        lin.register_full_backward_hook(
            lambda mod, gi, go: log.append(("backward", [_np(g) for g in gi], [_np(g) for g in go]))),
        lin.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,)),
    ]
    x = m.tensor(X, dtype=m.float64, requires_grad=True)
    y = lin(x)
    (y * y).sum().backward()
    log.append(("grads", _np(x.grad), _np(lin.weight.grad), _np(lin.bias.grad)))
    for h in handles:
        h.remove()
    log.append(("after remove", _np(lin(x))))
    return _np(y), log


def _assert_same(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for u, v in zip(a, b):
            _assert_same(u, v)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    else:
        assert a == b


@needs_torch
def test_module_forward_pre_forward_and_full_backward_hooks_match_torch():
    _assert_same(_hooked_program(al), _hooked_program(torch))


@needs_torch
def test_full_backward_hook_replaces_grad_input_and_sees_none_for_other_arguments():
    def program(m):
        class Scale(m.nn.Module):
            def forward(self, x, k, y):
                return x * k + y.sum(), x * y
        mod = Scale()
        seen = []
        mod.register_full_backward_hook(lambda md, gi, go: (seen.append([g is None for g in gi]),
                                                            (gi[0] * 10, None, gi[2]))[1])
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        y = m.tensor(X[::-1].copy(), dtype=m.float64)
        a, b = mod(x, 2.0, y)
        (a.sum() + (b * b).sum()).backward()
        return seen, _np(x.grad), _np(y.grad) if y.grad is not None else None
    _assert_same(program(al), program(torch))


@needs_torch
def test_full_backward_hook_runs_when_no_input_requires_grad():
    def program(m):
        lin = _linear(m)
        seen = []
        lin.register_full_backward_hook(lambda md, gi, go: seen.append((list(gi), _np(go[0]))))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            lin(m.tensor(X, dtype=m.float64)).sum().backward()
        return seen, _np(lin.weight.grad)
    _assert_same(program(al), program(torch))


@needs_torch
def test_forward_hooks_with_kwargs_prepend_and_handle_as_context():
    def program(m):
        lin = _linear(m)
        order = []
        lin.register_forward_hook(lambda md, a, out: order.append("first"))
        lin.register_forward_hook(lambda md, a, out: order.append("prepended"), prepend=True)
        lin.register_forward_pre_hook(lambda md, a, kw: ((a[0] + 1,), kw), with_kwargs=True)
        with lin.register_forward_hook(lambda md, a, kw, out: out * 0, with_kwargs=True):
            zero = _np(lin(m.tensor(X, dtype=m.float64)))
        out = _np(lin(m.tensor(X, dtype=m.float64)))
        return order, zero, out
    _assert_same(program(al), program(torch))


def test_a_hook_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        al.nn.Linear(2, 2).register_forward_hook(3)


# ---------------------------------------------------------------- hooks and options of backward
@needs_torch
def test_post_accumulate_grad_hook_matches_torch():
    def program(m):
        w = m.tensor([3.0, 4.0], dtype=m.float64, requires_grad=True)
        seen = []
        h = w.register_post_accumulate_grad_hook(lambda t: seen.append(_np(t.grad)))
        (w * w).sum().backward()
        (w * 3).sum().backward()
        h.remove()
        (w * 3).sum().backward()
        return seen, _np(w.grad)
    _assert_same(program(al), program(torch))
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(BackwardError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(BackwardError, match="doesn't require gradient"):
        al.tensor([1.0]).register_post_accumulate_grad_hook(print)


@needs_torch
def test_backward_inputs_fills_only_those_grads():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([3.0, 4.0], dtype=m.float64, requires_grad=True)
        u = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        z = (y * w).sum()
        z.backward(inputs=[x, u], retain_graph=True)
        first = (_np(x.grad), w.grad, u.grad)
        z.backward(inputs=x, retain_graph=True)
        m.autograd.backward(z, inputs=[w, y])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # y.grad was filled: no warning about a non-leaf's .grad
            return first, _np(x.grad), _np(w.grad), _np(y.grad)
    _assert_same(program(al), program(torch))


def test_backward_inputs_refuses_empty_and_no_grad_inputs():
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(BackwardError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(BackwardError, match="does not require grad"):
        (x * 2).sum().backward(inputs=[al.tensor([1.0])])


@needs_torch
def test_grad_materialize_grads_gives_zeros_for_unused_inputs():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        u = m.tensor([[1.0]], dtype=m.float64, requires_grad=True)
        gx, gu = m.autograd.grad((x * x).sum(), [x, u], materialize_grads=True)
        return _np(gx), _np(gu), gu.shape == (1, 1)
    _assert_same(program(al), program(torch))
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="allow_unused"):
        al.grad(x * 2, x, materialize_grads=True, allow_unused=False)


# ---------------------------------------------------------------- operations against PyTorch
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
C = RNG.standard_normal((3, 4))
POS = np.abs(A) + 0.5
ROW = RNG.standard_normal(4)
CUBE = RNG.standard_normal((2, 3, 4))
SQ = RNG.standard_normal((4, 4))
LONG = RNG.standard_normal((2, 7))
REPEATS = np.array([[1.0, 3.0, 1.0, 2.0, 3.0, 0.5], [2.0, 2.0, 5.0, 5.0, -1.0, 0.0]])


def _t(m, v):
    return m.tensor(v, dtype=m.float64)


def _w(m, shape):
    return _t(m, np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape))


# name: (function of (lib, F, *inputs), inputs, gradgradcheck too?); every input requires grad
CASES = {
    "narrow": (lambda m, F, x: x.narrow(1, 1, 2) * _w(m, (3, 2)), [A], True),
    "narrow_negative_start": (lambda m, F, x: m.narrow(x, 0, -2, 2), [A], True),
    "select": (lambda m, F, x: x.select(1, -1), [A], True),
    "select_fn": (lambda m, F, x: m.select(x, 0, 1) * _w(m, (3, 4)), [CUBE], True),
    "unbind": (lambda m, F, x: m.stack([p * (i + 1) for i, p in enumerate(x.unbind(1))], 0), [A], True),
    "unbind_fn": (lambda m, F, x: m.unbind(x)[1] * 3, [CUBE], True),
    "diagonal": (lambda m, F, x: x.diagonal(), [SQ], True),
    "diagonal_offset": (lambda m, F, x: m.diagonal(x, 1), [A], True),
    "diagonal_below": (lambda m, F, x: x.diagonal(offset=-1), [A], True),
    "diagonal_dims": (lambda m, F, x: m.diagonal(x, 0, 2, 1), [CUBE], True),
    "as_strided": (lambda m, F, x: m.as_strided(x, (2, 2), (1, 2), 1), [A], True),
    "as_strided_overlap": (lambda m, F, x: x.as_strided((3, 3), (2, 1)) * _w(m, (3, 3)), [A], True),
    "unfold": (lambda m, F, x: x.unfold(1, 3, 2), [LONG], True),
    "unfold_overlap": (lambda m, F, x: x.unfold(1, 3, 1) * _w(m, (2, 5, 3)), [LONG], True),
    "unfold_dim0": (lambda m, F, x: x.unfold(0, 2, 1), [A], True),
    "add_alpha": (lambda m, F, a, b: m.add(a, b, alpha=2.5), [A, B], True),
    "add_alpha_method_broadcast": (lambda m, F, a, b: a.add(b, alpha=-0.5), [A, ROW], True),
    "sub_alpha": (lambda m, F, a, b: m.sub(a, b, alpha=3), [A, B], True),
    "add_alpha_inplace": (lambda m, F, a, b: (a * 1).add_(b, alpha=2.0), [A, B], True),
    "sub_alpha_inplace": (lambda m, F, a, b: (a * 1).sub_(b, alpha=0.5), [A, ROW], True),
    "lerp_scalar": (lambda m, F, a, b: m.lerp(a, b, 0.3), [A, B], True),
    "lerp_tensor": (lambda m, F, a, b, w: a.lerp(b, w), [A, B, C], True),
    "lerp_inplace": (lambda m, F, a, b: (a * 1).lerp_(b, 0.75), [A, B], True),
    "addcmul": (lambda m, F, x, a, b: m.addcmul(x, a, b, value=0.5), [A, B, C], True),
    "addcmul_method": (lambda m, F, x, a, b: x.addcmul(a, b), [A, ROW, C], True),
    "addcmul_inplace": (lambda m, F, x, a, b: (x * 1).addcmul_(a, b, value=2), [A, B, C], True),
    "addcdiv": (lambda m, F, x, a, b: m.addcdiv(x, a, b, value=-2), [A, B, POS], True),
    "atan2": (lambda m, F, a, b: m.atan2(a, b), [A, B], True),
    "atan2_method_broadcast": (lambda m, F, a, b: a.atan2(b), [A, ROW], True),
    "hypot": (lambda m, F, a, b: m.hypot(a, b), [A, B], True),
    "hypot_method": (lambda m, F, a, b: a.hypot(b), [A, ROW], True),
    "div_trunc": (lambda m, F, a, b: m.div(a * 3, b, rounding_mode="trunc"), [A, POS], False),
    "div_floor": (lambda m, F, a, b: a.div(b, rounding_mode="floor") * 1, [A * 3, B], False),
    "div_none": (lambda m, F, a, b: m.div(a, b, rounding_mode=None), [A, POS], True),
    "median_all": (lambda m, F, x: x.median(), [A], True),
    "median_all_ties": (lambda m, F, x: m.median(x), [REPEATS], True),
    "median_dim": (lambda m, F, x: x.median(1).values, [A], True),
    "median_dim_keepdim": (lambda m, F, x: m.median(x, 0, keepdim=True)[0], [A], True),
    "median_even": (lambda m, F, x: x.median(dim=1).values, [SQ], True),
    "kthvalue": (lambda m, F, x: x.kthvalue(2).values, [A], True),
    "kthvalue_dim0_keepdim": (lambda m, F, x: m.kthvalue(x, 3, 0, True)[0], [A], True),
    "mode": (lambda m, F, x: m.mode(x, 1).values, [REPEATS], True),
    "cummax": (lambda m, F, x: x.cummax(1).values, [A], True),
    "cummin_dim0": (lambda m, F, x: m.cummin(x, 0)[0], [A], True),
    "cummax_ties": (lambda m, F, x: m.cummax(x, 1).values, [REPEATS], True),
    "var_mean": (lambda m, F, x: m.stack(m.var_mean(x, 1), 0), [A], True),
    "var_mean_all_unbiased_false": (lambda m, F, x: m.stack(m.var_mean(x, unbiased=False), 0), [A], True),
    "std_mean": (lambda m, F, x: m.cat(m.std_mean(x, dim=0, keepdim=True), 0), [A], True),
    "std_mean_correction": (lambda m, F, x: m.stack(m.std_mean(x, (0, 1), correction=0), 0), [A], True),
}

IMG = RNG.standard_normal((2, 3, 7, 6))
SIG = RNG.standard_normal((2, 3, 9))
K1 = RNG.standard_normal((4, 3, 3))
K1G = RNG.standard_normal((4, 1, 2))
SPREAD = np.array([[-4.0, -3.5, -2.0, -0.7, 0.3, 0.9], [1.5, 2.5, 4.0, 5.5, 6.5, 25.0]])
CASES.update({
    "hardtanh": (lambda m, F, x: F.hardtanh(x), [SPREAD], True),
    "hardtanh_bounds": (lambda m, F, x: F.hardtanh(x, -2.5, 3.0), [SPREAD], True),
    "relu6": (lambda m, F, x: F.relu6(x), [SPREAD], True),
    "hardsigmoid": (lambda m, F, x: F.hardsigmoid(x), [SPREAD], False),
    "mish": (lambda m, F, x: F.mish(x), [SPREAD], True),
    "mish_module": (lambda m, F, x: m.nn.Mish()(x), [A], True),
    "activation_modules": (lambda m, F, x: m.nn.Hardtanh(-0.5, 2.0)(x) + m.nn.ReLU6()(x) + m.nn.Hardsigmoid()(x),
                           [SPREAD], False),
    "conv1d": (lambda m, F, x, w: F.conv1d(x, w), [SIG, K1], False),
    "conv1d_bias_stride_pad": (lambda m, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [SIG, K1, ROW], False),
    "conv1d_dilation_same": (lambda m, F, x, w: F.conv1d(x, w, padding="same", dilation=2), [SIG, K1], False),
    "conv1d_groups": (lambda m, F, x, w: F.conv1d(x, w[:3], groups=3), [SIG, K1G], False),
    "conv1d_unbatched": (lambda m, F, x, w: F.conv1d(x[0], w), [SIG, K1], False),
    "avg_pool2d_ceil": (lambda m, F, x: F.avg_pool2d(x, 2, ceil_mode=True), [IMG], True),
    "avg_pool2d_ceil_pad": (lambda m, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [IMG], True),
    "avg_pool2d_exclude_pad": (lambda m, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                               [IMG], True),
    "avg_pool2d_divisor": (lambda m, F, x: F.avg_pool2d(x, (2, 3), (1, 2), divisor_override=4), [IMG], True),
    "avg_pool2d_module": (lambda m, F, x: m.nn.AvgPool2d(3, 2, 1, count_include_pad=False)(x), [IMG], True),
    "max_pool2d_dilation": (lambda m, F, x: F.max_pool2d(x, 2, dilation=2), [IMG], True),
    "max_pool2d_dilation_pad_ceil": (lambda m, F, x: F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True),
                                     [IMG], True),
    "max_pool2d_dilation_pair": (lambda m, F, x: F.max_pool2d(x, (2, 3), 1, dilation=(2, 1)), [IMG], True),
    "pad_negative": (lambda m, F, x: F.pad(x, (-1, 2, 1, -2)), [A], True),
    "pad_negative_value": (lambda m, F, x: F.pad(x, (1, -2), value=0.5), [IMG], True),
    "pad_crop_only": (lambda m, F, x: F.pad(x, (-1, -1, -1, 0)), [IMG], True),
})



# ties: the function has no derivative there; PyTorch's choice of gradient is matched above
TIED = {"cummax_ties", "median_all_ties", "mode"}


@pytest.mark.parametrize("name", sorted(set(CASES) - TIED))
def test_gradcheck(name):
    fn, inputs, twice = CASES[name]
    assert_case_gradchecks(al, fn, inputs, twice)


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, inputs, _ = CASES[name]
    assert_case_matches_torch(al, fn, inputs)


@needs_torch
def test_index_results_match_torch():
    for name, fn in {
        "median": lambda m, x: x.median(1),
        "kthvalue": lambda m, x: m.kthvalue(x, 2, 0),
        "mode": lambda m, x: x.mode(),
        "cummax": lambda m, x: x.cummax(1),
        "cummin": lambda m, x: m.cummin(x, 0),
    }.items():
        data = REPEATS if name in ("mode", "cummax", "cummin") else A
        ours, theirs = fn(al, al.tensor(data)), fn(torch, torch.tensor(data))
        assert type(ours).__name__ == type(theirs).__name__ == name
        np.testing.assert_array_equal(ours.indices.data, theirs.indices.numpy())


@needs_torch
def test_integer_and_bool_operations_match_torch():
    a, b = np.array([7, -7, 5, 0, -3]), np.array([2, 2, -2, 3, 5])
    for fn in (lambda m, x, y: x & y, lambda m, x, y: x | y, lambda m, x, y: x ^ y, lambda m, x, y: ~x,
               lambda m, x, y: m.bitwise_and(x, 6), lambda m, x, y: 3 | y, lambda m, x, y: m.eq(x, y),
               lambda m, x, y: m.ne(x, 7), lambda m, x, y: ~(x > 0) ^ (y > 0),
               lambda m, x, y: m.div(x, y, rounding_mode="trunc"), lambda m, x, y: x.div(y, rounding_mode="floor"),
               lambda m, x, y: m.div(x, 2, rounding_mode="trunc"), lambda m, x, y: m.add(x, y, alpha=3),
               lambda m, x, y: m.count_nonzero(x * (y > 0)), lambda m, x, y: m.count_nonzero(m.stack([x, y]), dim=1)):
        ours, theirs = fn(al, al.tensor(a), al.tensor(b)), fn(torch, torch.tensor(a), torch.tensor(b))
        np.testing.assert_array_equal(ours.data, theirs.numpy())
        assert ours.dtype == theirs.numpy().dtype
    with pytest.raises(TypeError, match="bool and integer"):
        al.tensor([1.0]) & al.tensor([1.0])
    with pytest.raises(RuntimeError, match="alpha must not be a floating"):
        al.add(al.tensor([1]), al.tensor([2]), alpha=0.5)
    with pytest.raises(ValueError, match="rounding_mode"):
        al.div(al.tensor([1.0]), 2.0, rounding_mode="round")


@needs_torch
def test_view_functions_alias_and_refuse_like_torch():
    x = al.tensor(A.copy())
    x.narrow(1, 0, 2)[0, 0] = 100.0
    x.select(0, 2)[1] = -5.0
    x.unbind(1)[3][0] = 7.0
    t = torch.tensor(A.copy())
    t.narrow(1, 0, 2)[0, 0] = 100.0
    t.select(0, 2)[1] = -5.0
    t.unbind(1)[3][0] = 7.0
    np.testing.assert_array_equal(x.data, t.numpy())
    for bad in (lambda m, v: v.narrow(1, 3, 2), lambda m, v: v.select(0, 3), lambda m, v: v.unfold(1, 5, 1),
                lambda m, v: v.as_strided((4, 4), (4, 1))):
        with pytest.raises((IndexError, RuntimeError)):
            bad(torch, torch.tensor(A))
        with pytest.raises((IndexError, ValueError, al.ShapeError)):
            bad(al, al.tensor(A))


@needs_torch
def test_conv1d_module_matches_torch():
    def program(m):
        m.manual_seed(0)
        conv = m.nn.Conv1d(3, 4, 3, stride=1, padding="same", dtype=m.float64)
        with m.no_grad():
            conv.weight.copy_(_t(m, K1))
            conv.bias.copy_(_t(m, ROW))
        x = m.tensor(SIG, dtype=m.float64, requires_grad=True)
        y = conv(x)
        (y * y).sum().backward()
        return _np(y), _np(x.grad), _np(conv.weight.grad), _np(conv.bias.grad), tuple(conv.weight.shape)
    _assert_same(program(al), program(torch))


@needs_torch
@pytest.mark.parametrize("options", [{}, {"lr_decay": 0.1, "weight_decay": 0.05},
                                     {"initial_accumulator_value": 0.5, "eps": 1e-6, "maximize": True}])
def test_adagrad_matches_torch(options):
    def program(m):
        w = m.tensor(A, dtype=m.float64, requires_grad=True)
        opt = m.optim.Adagrad([w], lr=0.1, **options)
        for _ in range(4):
            opt.zero_grad()
            ((w - 1.0) ** 2 * m.tensor(B, dtype=m.float64)).sum().backward()
            opt.step()
        return _np(w.detach())
    _assert_same(program(al), program(torch))


@needs_torch
def test_diagonal_is_a_view_that_in_place_writes_go_through():
    def program(m):
        x = m.tensor(A, dtype=m.float64, requires_grad=True)
        b = x * 1
        b.diagonal(1).mul_(10)
        b.diagonal(offset=-1).add_(b.diagonal()[:2].detach())
        c = m.zeros(2, 3, 3, dtype=m.float64)
        c.diagonal(0, 1, 2).fill_(1.0)
        (b * b).sum().backward()
        return _np(b), _np(x.grad), _np(c)
    _assert_same(program(al), program(torch))
