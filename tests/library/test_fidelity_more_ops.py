"""The last options issue 33 listed as missing — conv2d's dilation and groups, max_pool2d's
padding and ceil_mode, pad's reflect / replicate / circular modes, Embedding's padding_idx and
OneCycleLR — and nll_loss with an ignored target at a -inf log-probability: values and gradients
against central differences (gradcheck) and against PyTorch where it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as alF
from autograd_lab.errors import ShapeError

from .._oracle import assert_same, needs_torch, torch

RNG = np.random.default_rng(3303)
IMG = RNG.standard_normal((2, 4, 7, 8))
KERNEL = RNG.standard_normal((6, 2, 3, 3))
BIAS = RNG.standard_normal(6)
POOL_IN = RNG.standard_normal((2, 3, 7, 9))

CONV = [dict(groups=2), dict(dilation=2, groups=2), dict(dilation=(2, 3), groups=2, padding=2, stride=2),
        dict(groups=4, dilation=(1, 2))]
POOL = [dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, ceil_mode=True),
        dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True),
        dict(kernel_size=2, ceil_mode=True), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)]
PAD = [("reflect", (2, 3, 5), (2, 1)), ("reflect", (1, 2, 4, 5), (1, 2, 3, 0)),
       ("replicate", (2, 3, 5), (3, 1)), ("replicate", (1, 2, 4, 5), (1, 2, 3, 0)),
       ("circular", (2, 3, 5), (2, 4)), ("circular", (2, 4, 5), (1, 1, 2, 3))]


def _kernel(kw):
    groups = kw.get("groups", 1)
    return KERNEL if groups == 2 else RNG.standard_normal((8, 4 // groups, 3, 2))


def _bias(kw):
    return BIAS if kw.get("groups", 1) == 2 else RNG.standard_normal(8)


def _conv(lib, F, kw):
    weight, bias = _kernel(kw), _bias(kw)
    return lambda x, w, b: F.conv2d(x, w, b, **kw), [IMG[:1, :, :5, :6], weight, bias]


@pytest.mark.parametrize("kw", CONV, ids=str)
def test_conv2d_dilation_and_groups_pass_gradcheck(kw):
    fn, inputs = _conv(al, alF, kw)
    assert al.gradcheck(fn, [al.tensor(a, requires_grad=True) for a in inputs])


@needs_torch
@pytest.mark.parametrize("kw", CONV, ids=str)
def test_conv2d_dilation_and_groups_match_torch(kw):
    weight, bias = _kernel(kw), _bias(kw)
    ours = [al.tensor(a, requires_grad=True) for a in (IMG, weight, bias)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (IMG, weight, bias)]
    y = alF.conv2d(*ours, **kw)
    ty = torch.nn.functional.conv2d(*theirs, **kw)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert_same(y, ty)
    for a, t in zip(ours, theirs):
        assert_same(a.grad, t.grad, rtol=1e-9, atol=1e-10)


def test_conv2d_module_takes_dilation_and_groups():
    conv = al.nn.Conv2d(4, 6, 3, dilation=2, groups=2, seed=0, dtype=np.float64)
    assert conv.weight.shape == (6, 2, 3, 3)
    assert "dilation=(2, 2)" in repr(conv) and "groups=2" in repr(conv)
    y = conv(al.tensor(IMG))
    assert y.shape == (2, 6, 3, 4)
    expected = alF.conv2d(al.tensor(IMG), conv.weight, conv.bias, dilation=2, groups=2)
    np.testing.assert_array_equal(y.data, expected.data)


@pytest.mark.parametrize("call, words", [
    (lambda: alF.conv2d(al.tensor(IMG), al.tensor(KERNEL), groups=3), "groups=3"),
    (lambda: alF.conv2d(al.tensor(IMG), al.tensor(RNG.standard_normal((5, 2, 3, 3))), groups=2), "divisible"),
    (lambda: alF.conv2d(al.tensor(IMG), al.tensor(KERNEL), groups=2, dilation=0), "dilation"),
    (lambda: al.nn.Conv2d(4, 5, 3, groups=2), "divisible by groups"),
])
def test_conv2d_refuses_bad_groups_and_dilation_clearly(call, words):
    with pytest.raises((ShapeError, ValueError), match=words):
        call()


@pytest.mark.parametrize("kw", POOL, ids=str)
def test_max_pool2d_padding_and_ceil_mode_pass_gradcheck(kw):
    x = al.tensor(POOL_IN[:1, :2], requires_grad=True)
    assert al.gradcheck(lambda v: alF.max_pool2d(v, **kw), [x])


@needs_torch
@pytest.mark.parametrize("kw", POOL, ids=str)
def test_max_pool2d_padding_and_ceil_mode_match_torch(kw):
    x, tx = al.tensor(POOL_IN, requires_grad=True), torch.tensor(POOL_IN, requires_grad=True)
    y, ty = alF.max_pool2d(x, **kw), torch.nn.functional.max_pool2d(tx, **kw)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert_same(y, ty)
    assert_same(x.grad, tx.grad)


def test_max_pool2d_ceil_mode_output_sizes_follow_the_rule():
    # 7 rows, kernel 2, stride 2: floor gives 3 windows, ceil 4 (the last one covers row 6 only)
    x = al.tensor(np.arange(7 * 7, dtype=float).reshape(1, 1, 7, 7))
    assert alF.max_pool2d(x, 2).shape == (1, 1, 3, 3)
    y = alF.max_pool2d(x, 2, ceil_mode=True)
    assert y.shape == (1, 1, 4, 4)
    assert y.data[0, 0, 3, 3] == 48.0  # the lone corner element is its own window's maximum
    pool = al.nn.MaxPool2d(2, ceil_mode=True, padding=1)
    assert "ceil_mode=True" in repr(pool) and pool(x).shape == (1, 1, 4, 4)


def test_max_pool2d_refuses_padding_over_half_the_kernel():
    with pytest.raises(ValueError, match="at most half"):
        alF.max_pool2d(al.tensor(POOL_IN), 2, padding=2)


@pytest.mark.parametrize("mode, shape, widths", PAD, ids=str)
def test_pad_modes_pass_gradcheck(mode, shape, widths):
    x = al.tensor(RNG.standard_normal(shape), requires_grad=True)
    assert al.gradcheck(lambda v: alF.pad(v, widths, mode=mode) ** 2, [x])


@needs_torch
@pytest.mark.parametrize("mode, shape, widths", PAD, ids=str)
def test_pad_modes_match_torch(mode, shape, widths):
    data = RNG.standard_normal(shape)
    x, tx = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, ty = alF.pad(x, widths, mode=mode), torch.nn.functional.pad(tx, widths, mode=mode)
    (y ** 3).sum().backward()
    (ty ** 3).sum().backward()
    assert_same(y, ty)
    assert_same(x.grad, tx.grad)


@pytest.mark.parametrize("call, words", [
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 3))), (3, 0), mode="reflect"), "at most 2"),
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 3))), (1, 1), mode="mirror"), "'reflect'"),
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 3))), (1, 1), mode="replicate", value=2.0), "constant"),
    (lambda: alF.pad(al.tensor(np.ones((3, 4))), (1, 1, 1, 1), mode="circular"), "batched"),
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 3))), (1,)), "must be even"),
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 3))), (1,) * 8), "at most twice"),
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 3))), (-2, -2)), "crop more than the 3 entries"),
    (lambda: alF.pad(al.tensor(np.ones((1, 2, 0))), (1, 0), mode="replicate"), "empty dim"),
])
def test_pad_modes_refuse_what_they_cannot_do(call, words):
    with pytest.raises((ValueError, NotImplementedError), match=words):
        call()


def test_embedding_padding_row_is_read_but_never_trained():
    emb = al.nn.Embedding(5, 3, padding_idx=-1, seed=0, dtype=np.float64)
    assert emb.padding_idx == 4 and not emb.weight.data[4].any()
    emb.weight.data[4] = 7.0  # a padding row changed by hand is still looked up as it is
    idx = np.array([[0, 4, 1], [4, 4, 2]])
    out = emb(idx)
    np.testing.assert_array_equal(out.data[0, 1], [7.0, 7.0, 7.0])
    (out * out).sum().backward()
    assert not emb.weight.grad.data[4].any()
    np.testing.assert_allclose(emb.weight.grad.data[0], 2 * emb.weight.data[0])
    with pytest.raises(ValueError, match="padding_idx"):
        al.nn.Embedding(5, 3, padding_idx=5)


@needs_torch
def test_embedding_padding_idx_matches_torch():
    table, idx = RNG.standard_normal((5, 3)), np.array([[0, 2, 1], [2, 2, 4]])
    w, tw = al.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    y = alF.embedding(al.tensor(idx), w, padding_idx=2)
    ty = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=2)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert_same(y, ty)
    assert_same(w.grad, tw.grad)


def _one_cycle_trace(lib, opt, kw, steps):
    p = [lib.tensor([1.0], requires_grad=True), lib.tensor([1.0], requires_grad=True)]
    groups = [{"params": [p[0]]}, {"params": [p[1]]}]
    o = lib.optim.SGD(groups, lr=0.01, momentum=0.9) if opt == "sgd" else lib.optim.Adam(groups, lr=0.01)
    sched = lib.optim.lr_scheduler.OneCycleLR(o, **kw)
    key = "momentum" if opt == "sgd" else "betas"
    trace = []
    for i in range(steps):
        trace.append([(g["lr"], float(np.ravel(g[key])[0])) for g in o.param_groups])
        o.step()
        if i < steps - 1:
            sched.step()
    return np.array(trace), sched


ONE_CYCLE = [dict(max_lr=0.1, total_steps=20),
             dict(max_lr=0.1, epochs=3, steps_per_epoch=7, anneal_strategy="linear", three_phase=True),
             dict(max_lr=[0.1, 0.2], total_steps=15, pct_start=0.5, div_factor=10.0)]


@pytest.mark.parametrize("kw", ONE_CYCLE, ids=str)
def test_one_cycle_shape_of_the_schedule(kw):
    steps = kw.get("total_steps") or kw["epochs"] * kw["steps_per_epoch"]
    trace, sched = _one_cycle_trace(al, "sgd", kw, steps)
    lrs, moms = trace[:, 0, 0], trace[:, 0, 1]
    top = kw["max_lr"][0] if isinstance(kw["max_lr"], list) else kw["max_lr"]
    start = top / kw.get("div_factor", 25.0)
    assert math.isclose(lrs[0], start) and math.isclose(lrs.max(), top, rel_tol=0.1)
    assert lrs[-1] < start / 100  # ends far below where it started
    assert moms[0] == pytest.approx(0.95) and moms[np.argmax(lrs)] == pytest.approx(0.85, abs=0.01)
    sched.step()  # the last step of the schedule
    with pytest.raises(ValueError, match="total_steps"):
        sched.step()


@needs_torch
@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("kw", ONE_CYCLE, ids=str)
def test_one_cycle_follows_torch_step_by_step(kw, opt):
    steps = kw.get("total_steps") or kw["epochs"] * kw["steps_per_epoch"]
    ours, _ = _one_cycle_trace(al, opt, kw, steps)
    theirs, _ = _one_cycle_trace(torch, opt, kw, steps)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_one_cycle_refuses_what_it_cannot_cycle():
    p = al.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="total_steps"):
        al.optim.lr_scheduler.OneCycleLR(al.optim.SGD([p], lr=0.1), max_lr=0.1)
    with pytest.raises(ValueError, match="one per group"):
        al.optim.lr_scheduler.OneCycleLR(al.optim.SGD([p], lr=0.1), max_lr=[0.1, 0.2], total_steps=5)
    assert al.optim.OneCycleLR is al.optim.lr_scheduler.OneCycleLR


def test_nll_loss_ignored_target_at_minus_inf_gives_no_nan():
    logp = np.array([[-np.inf, 0.0], [-1.0, -0.5], [-2.0, -0.25]])
    target = np.array([0, 1, 1])
    for reduction, expected in [("mean", 0.375), ("sum", 0.75)]:
        loss = alF.nll_loss(al.tensor(logp), target, ignore_index=0, reduction=reduction)
        assert loss.item() == expected
    x = al.tensor(logp[:2], requires_grad=True)
    with np.errstate(all="raise"):  # no -inf * 0 is computed on the way
        loss = alF.nll_loss(x, target[:2], ignore_index=0)
    loss.backward()
    np.testing.assert_array_equal(x.grad.data, [[0.0, 0.0], [0.0, -1.0]])
    per_item = alF.nll_loss(al.tensor(logp[:2]), target[:2], ignore_index=0, reduction="none")
    np.testing.assert_array_equal(per_item.data, [0.0, 0.5])


@needs_torch
def test_cross_entropy_ignored_row_with_minus_inf_matches_torch():
    logits = np.array([[-np.inf, 1.0, 2.0], [0.5, -np.inf, 0.1], [1.0, 2.0, 3.0]])
    target = np.array([0, 2, 1])
    x, tx = al.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    loss = alF.cross_entropy(x, target, ignore_index=0)
    tloss = torch.nn.functional.cross_entropy(tx, torch.tensor(target), ignore_index=0)
    loss.backward()
    tloss.backward()
    assert_same(loss, tloss)
    assert_same(x.grad, tx.grad)


def test_expand_is_a_view_that_sees_later_changes_and_refuses_writes():
    x = al.ones(2)
    y = x.expand(3, 2)
    x.add_(1)  # PyTorch's expand shares memory: y shows the change
    np.testing.assert_array_equal(y.data, np.full((3, 2), 2.0))
    assert y._version == x._version
    for write in (lambda: y.add_(1), lambda: y.__setitem__(0, 3.0), lambda: al.broadcast_to(x, (2, 2)).zero_()):
        with pytest.raises(RuntimeError, match="single memory location"):
            write()
    np.testing.assert_array_equal(x.data, [2.0, 2.0])  # nothing was written on the way
    copy = y.clone()
    copy.add_(1)
    np.testing.assert_array_equal(copy.data, np.full((3, 2), 3.0))
    assert al.ones(2, 1).expand(-1, 3).shape == (2, 3)
    assert al.ones(3).expand_as(al.ones(2, 3)).shape == (2, 3)
    with pytest.raises(ShapeError, match="cannot expand"):
        al.ones(2).expand(3)
    with pytest.raises(ShapeError, match="leading"):
        al.ones(2).expand(-1, 2)


def test_expand_gradient_follows_an_in_place_change_of_its_base():
    a = al.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    e = b.expand(3, 2)
    b.mul_(3)  # e sees b's new values, and its history: d/da sum((3a)^2 over 3 rows) = 54 a
    (e * e).sum().backward()
    np.testing.assert_allclose(a.grad.data, 54 * a.data)
    x = al.tensor(RNG.standard_normal((1, 4)), requires_grad=True)
    assert al.gradcheck(lambda v: alF.log_softmax(v.expand(3, 4) * al.tensor([[1.0], [2.0], [3.0]]), 1), [x])


@needs_torch
def test_expand_matches_torch_after_an_in_place_change():
    data = RNG.standard_normal((2, 1))
    a, ta = al.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    b, tb = a * 2, ta * 2
    e, te = b.expand(2, 3), tb.expand(2, 3)
    b.exp_()
    tb.exp_()
    (e.sin() * e).sum().backward()
    (te.sin() * te).sum().backward()
    assert_same(e, te)
    assert_same(a.grad, ta.grad)
