"""Optimizers and StepLR: hand-computed steps, step-by-step agreement with PyTorch, errors."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.optim import SGD, Adam, StepLR

from .._oracle import require_torch


def param(values, dtype=np.float64):
    return al.Variable(np.array(values, dtype=dtype), requires_grad=True)


def run(opt_cls, grads, p0=1.0, **kw):
    """Apply ``opt_cls`` to one scalar parameter with the given gradient sequence; return the values."""
    p = param([p0])
    opt = opt_cls([p], **kw)
    out = []
    for g in grads:
        p.grad = np.array([g], dtype=np.float64)
        opt.step()
        out.append(float(p.data[0]))
    return out


# ---- hand-computed numbers (run without PyTorch) --------------------------------------------------
def test_sgd_plain_step():
    # p = 1 - 0.1 * 2
    assert run(SGD, [2.0], lr=0.1) == pytest.approx([0.8])


def test_sgd_momentum_by_hand():
    # b1 = 1, p = 0.9; b2 = 0.9 + 1 = 1.9, p = 0.71; b3 = 1.71 + 1 = 2.71, p = 0.439
    assert run(SGD, [1, 1, 1], lr=0.1, momentum=0.9) == pytest.approx([0.9, 0.71, 0.439])


def test_sgd_nesterov_by_hand():
    # b1 = 1, d = 1 + 0.9 = 1.9, p = 0.81; b2 = 1.9, d = 1 + 1.71 = 2.71, p = 0.539
    assert run(SGD, [1, 1], lr=0.1, momentum=0.9, nesterov=True) == pytest.approx([0.81, 0.539])


def test_sgd_dampening_skips_first_step():
    # b1 = g = 1 (no dampening on the first step), p = 0.9; b2 = 0.9 + 0.5 = 1.4, p = 0.76
    assert run(SGD, [1, 1], lr=0.1, momentum=0.9, dampening=0.5) == pytest.approx([0.9, 0.76])


def test_sgd_weight_decay_by_hand():
    # g = 0 + 0.5 p: p = 1 - 0.05 = 0.95, then 0.95 - 0.0475 = 0.9025
    assert run(SGD, [0, 0], lr=0.1, weight_decay=0.5) == pytest.approx([0.95, 0.9025])


def test_adam_by_hand():
    # step 1: m_hat = g, v_hat = g^2, so p moves by lr * g / (|g| + eps) = 0.1 * (1 - 1e-8)
    # step 2 (g = 3): m = 0.39, v = 0.009999; m_hat = 2.052632, sqrt(v_hat) = 2.236515 -> p = 0.808222
    assert run(Adam, [1.0, 3.0], lr=0.1) == pytest.approx([0.900000001, 0.8082218895], abs=1e-10)


def test_adam_weight_decay_by_hand():
    # g = 0.5 p: step 1 moves by lr * 0.5 / (0.5 + eps); step 2: g = 0.45, m = 0.09, v = 0.00045225
    assert run(Adam, [0.0, 0.0], lr=0.1, weight_decay=0.5) == pytest.approx([0.900000002, 0.8004122318],
                                                                             abs=1e-10)


def test_adam_state_counts_steps():
    p = param([1.0, 2.0])
    opt = Adam([p])
    for _ in range(3):
        p.grad = np.ones(2)
        opt.step()
    assert opt.state[p]["step"] == 3
    np.testing.assert_allclose(opt.state[p]["exp_avg"], 1 - 0.9 ** 3)


def test_step_skips_parameters_without_grad():
    a, b = param([1.0]), param([1.0])
    opt = SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = np.array([1.0])
    opt.step()
    assert a.data[0] == 0.5 and b.data[0] == 1.0
    assert b not in opt.state


def test_step_bumps_version_and_keeps_array():
    p = param([1.0])
    data = p.data
    v = p._version
    p.grad = np.array([1.0])
    SGD([p], lr=0.1).step()
    assert p._version == v + 1
    assert p.data is data  # updated in place


def test_minimises_a_quadratic():
    target = np.array([3.0, -1.0])
    for opt_cls, kw in ((SGD, dict(lr=0.1, momentum=0.9)), (Adam, dict(lr=0.1))):
        x = param([0.0, 0.0])
        opt = opt_cls([x], **kw)
        for _ in range(300):
            opt.zero_grad()
            ((x - target) ** 2).sum().backward()
            opt.step()
        np.testing.assert_allclose(x.data, target, atol=1e-3)


def test_float32_parameters_stay_float32():
    p = param([1.0, 2.0], dtype=np.float32)
    for opt in (SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1), Adam([p], weight_decay=0.1)):
        (p * p).sum().backward()
        opt.step()
        assert p.dtype == np.float32


def _train_sgd(monkeypatch, params, grads, kernel, **kw):
    """SGD over ``params`` with the gradient sequence ``grads``, the momentum kernel on or off;
    returns how many updates the kernel made."""
    import autograd_lab.optim as optim
    made = []
    optim_kernel = optim.sgd_momentum_

    def counted(*args):
        done = kernel and optim_kernel(*args)
        made.append(done)
        return done

    with monkeypatch.context() as patch:
        patch.setattr(optim, "sgd_momentum_", counted)
        opt = SGD(params, **kw)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = g
            opt.step()
    return sum(made)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_momentum_kernel_updates_exactly_as_numpy(dtype, monkeypatch):
    # the training notebooks' stored numbers were computed by the numpy update
    rng = np.random.default_rng(3)
    shapes = [(128, 64), (128,), (10, 128), (10,), ()]
    start = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[np.asarray(rng.standard_normal(s).astype(dtype)) for s in shapes] for _ in range(5)]
    fast, plain = ([param(w.copy(), dtype) for w in start] for _ in range(2))
    versions = [p._version for p in fast]
    made = _train_sgd(monkeypatch, fast, grads, kernel=True, lr=0.05, momentum=0.9)
    assert _train_sgd(monkeypatch, plain, grads, kernel=False, lr=0.05, momentum=0.9) == 0
    assert made == 4 * len(shapes)  # every step after the first, which makes the buffers
    for a, b in zip(fast, plain):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a.data, b.data)
    assert [p._version for p in fast] == [v + 5 for v in versions]


def test_sgd_momentum_kernel_leaves_other_updates_to_numpy(monkeypatch):
    rng = np.random.default_rng(4)
    grads = [[rng.standard_normal((3, 2))] for _ in range(3)]
    for kw in (dict(lr=0.1, momentum=0.9, dampening=0.5), dict(lr=0.1, momentum=0.9, nesterov=True),
               dict(lr=0.1, momentum=0.9, weight_decay=0.01), dict(lr=np.float64(0.1), momentum=0.9)):
        p = param(np.ones((3, 2)))
        assert _train_sgd(monkeypatch, [p], grads, kernel=True, **kw) == 0, kw
    p, q = param(np.ones((3, 2))), param(np.ones((3, 2)))
    fortran = [[np.asfortranarray(g) for g in step] for step in grads]  # a gradient the kernel refuses
    assert _train_sgd(monkeypatch, [p], fortran, kernel=True, lr=0.1, momentum=0.9) == 0
    _train_sgd(monkeypatch, [q], grads, kernel=False, lr=0.1, momentum=0.9)
    np.testing.assert_array_equal(p.data, q.data)


# ---- groups, zero_grad, state_dict -----------------------------------------------------------------
def test_param_groups_take_defaults_and_own_values():
    a, b = param([1.0]), param([1.0])
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    a.grad, b.grad = np.array([1.0]), np.array([1.0])
    opt.step()
    assert a.data[0] == pytest.approx(0.9) and b.data[0] == pytest.approx(0.5)


def test_zero_grad_to_none_or_zeros():
    p = param([1.0, 2.0])
    opt = SGD([p], lr=0.1)
    (p * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.data, [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None


def test_optimizer_state_dict_round_trip():
    p = param([1.0, 2.0])
    opt = SGD([p], lr=0.1, momentum=0.9)
    p.grad = np.array([1.0, 1.0])
    opt.step()
    saved = opt.state_dict()
    q = param(p.data.copy())
    opt2 = SGD([q], lr=0.5, momentum=0.9)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.1
    for o, v in ((opt, p), (opt2, q)):
        v.grad = np.array([1.0, 1.0])
        o.step()
    np.testing.assert_array_equal(p.data, q.data)


@pytest.mark.parametrize("make, message", [
    (lambda: SGD([], lr=0.1), "empty parameter list"),
    (lambda: SGD([np.ones(2)], lr=0.1), "can only optimize Variables"),
    (lambda: SGD(param([1.0]), lr=0.1), "single Variable"),
    (lambda: SGD([param([1.0])]), "required optimization parameter lr"),
    (lambda: SGD([param([1.0])], lr=-1.0), "Invalid learning rate"),
    (lambda: SGD([param([1.0])], lr=0.1, nesterov=True), "Nesterov"),
    (lambda: Adam([param([1.0])], betas=(0.9, 1.0)), "betas"),
    (lambda: SGD([{"params": [param([1.0])], "lrr": 0.1}], lr=0.1), "unknown option 'lrr'"),
])
def test_bad_arguments_raise_clear_errors(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make()


def test_same_parameter_twice_is_rejected():
    p = param([1.0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def test_non_leaf_is_rejected():
    p = param([1.0])
    with pytest.raises(ValueError, match="non-leaf"):
        SGD([p * 2], lr=0.1)


def test_steplr_by_hand():
    p = param([1.0])
    opt = SGD([p], lr=1.0)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [1.0, 0.5, 0.5, 0.25, 0.25]


# ---- step by step against PyTorch ------------------------------------------------------------------
SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1),
]
ADAM_CONFIGS = [
    dict(),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.003, weight_decay=0.05),
]


@pytest.mark.parametrize("name, kw", [("SGD", c) for c in SGD_CONFIGS] + [("Adam", c) for c in ADAM_CONFIGS])
def test_matches_pytorch_step_by_step(name, kw):
    torch = require_torch()
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(4)
    ours = [param(w0.copy()), param(b0.copy())]
    theirs = [torch.tensor(w0.copy(), requires_grad=True), torch.tensor(b0.copy(), requires_grad=True)]
    opt = {"SGD": SGD, "Adam": Adam}[name](ours, **kw)
    topt = getattr(torch.optim, name)(theirs, **kw)
    for _ in range(6):
        grads = [rng.standard_normal(w0.shape), rng.standard_normal(b0.shape)]
        for p, t, g in zip(ours, theirs, grads):
            p.grad = g.copy()
            t.grad = torch.tensor(g.copy())
        opt.step()
        topt.step()
        for p, t in zip(ours, theirs):
            np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_param_groups_and_steplr_match_pytorch():
    torch = require_torch()
    rng = np.random.default_rng(1)
    a0, b0 = rng.standard_normal(5), rng.standard_normal(2)
    a, b = param(a0.copy()), param(b0.copy())
    ta, tb = torch.tensor(a0.copy(), requires_grad=True), torch.tensor(b0.copy(), requires_grad=True)
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.3, "momentum": 0.5}], lr=0.1, momentum=0.9)
    topt = torch.optim.SGD([{"params": [ta]}, {"params": [tb], "lr": 0.3, "momentum": 0.5}], lr=0.1, momentum=0.9)
    sched, tsched = StepLR(opt, 2, gamma=0.3), torch.optim.lr_scheduler.StepLR(topt, 2, gamma=0.3)
    for _ in range(5):
        for p, t in ((a, ta), (b, tb)):
            g = rng.standard_normal(p.shape)
            p.grad, t.grad = g.copy(), torch.tensor(g)
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-15)
    np.testing.assert_allclose(a.data, ta.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.data, tb.detach().numpy(), rtol=1e-12)
