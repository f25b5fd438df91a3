"""The checkers of chapters 09 and 10.

Each checker must pass correct solutions (several seeds, hidden on and off) and fail typical
wrong ones with a message that names the exercise and gives a useful hint.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises import check

from ._checker_helpers import SEEDS, assert_all_passed, failure
from .._oracle import require_torch


# -- chapter 09: correct solutions ----------------------------------------------------------
def log_softmax(x):
    z = x - x.data.max(axis=-1, keepdims=True)
    return z - z.exp().sum(axis=-1, keepdims=True).log()


def log_softmax_variable_max(x):
    z = x - x.max(axis=-1, keepdims=True)
    return z - z.exp().sum(axis=-1, keepdims=True).log()


def cross_entropy(logits, targets):
    return -log_softmax(logits)[np.arange(logits.shape[0]), targets].mean()


def cross_entropy_onehot(logits, targets):
    onehot = al.tensor(np.eye(logits.shape[1])[targets])
    return -(log_softmax(logits) * onehot).sum(axis=1).mean()


def batches(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    n = len(x)
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start:start + batch_size]
        yield x[idx], y[idx]


def train_step(model, loss_fn, optimizer, x, y):
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch09_correct_solutions_pass(seed, hidden, capsys):
    check.ch09_log_softmax(log_softmax, seed=seed, hidden=hidden)
    check.ch09_log_softmax(log_softmax_variable_max, seed=seed, hidden=hidden)
    check.ch09_cross_entropy(cross_entropy, seed=seed, hidden=hidden)
    check.ch09_cross_entropy(cross_entropy_onehot, seed=seed, hidden=hidden)
    check.ch09_batches(batches, seed=seed, hidden=hidden)
    check.ch09_train_step(train_step, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 6, hidden)


def test_ch09_the_library_passes_its_own_checks(capsys):
    """The library's functions are correct solutions too (the checks agree with PyTorch's
    definitions as the library implements them)."""
    import autograd_lab.functional as F
    check.ch09_log_softmax(lambda x: F.log_softmax(x, dim=-1), hidden=True)
    check.ch09_cross_entropy(F.cross_entropy, hidden=True)
    assert_all_passed(capsys.readouterr().out, 2, hidden=True)


def test_ch09_cross_entropy_agrees_with_torch():
    torch = require_torch()
    rng = np.random.default_rng(0)
    data, t = 1000 * rng.normal(size=(5, 4)), rng.integers(0, 4, size=5)
    x = al.tensor(data, requires_grad=True)
    loss = cross_entropy(x, t)
    loss.backward()
    tx = torch.tensor(data, requires_grad=True)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(t))
    tl.backward()
    np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), atol=1e-12)


# -- chapter 09: wrong solutions --------------------------------------------------------------
def naive_log_softmax(x):
    return x - x.exp().sum(axis=-1, keepdims=True).log()


@pytest.mark.parametrize("wrong,words", [
    (naive_log_softmax, "Subtract each row's maximum"),
    (lambda x: al.tensor(np.asarray(log_softmax(al.tensor(x.data)).data)), "did not return a "
     "Variable that requires grad"),
    (lambda x: x - x.data.max(axis=-1, keepdims=True), "without subtracting"),
    (lambda x: log_softmax(x).exp(), "probabilities"),
    (lambda x: (x - x.data.max(axis=0, keepdims=True)) - (x - x.data.max(axis=0, keepdims=True)
                                                           ).exp().sum(axis=0, keepdims=True).log(),
     "axis 0"),
    (lambda x: None, "None"),
])
def test_ch09_log_softmax_rejects_typical_mistakes(wrong, words):
    with np.errstate(all="ignore"):
        msg = failure(check.ch09_log_softmax, wrong)
    assert "ch09-log-softmax" in msg and words in msg


def naive_cross_entropy(logits, targets):
    p = logits.exp() / logits.exp().sum(axis=1, keepdims=True)
    return -p[np.arange(logits.shape[0]), targets].log().mean()


@pytest.mark.parametrize("wrong,words", [
    (lambda lg, t: -log_softmax(lg)[np.arange(lg.shape[0]), t].sum(), "summed over the batch"),
    (lambda lg, t: log_softmax(lg)[np.arange(lg.shape[0]), t].mean(), "sign is wrong"),
    (lambda lg, t: -log_softmax(lg).mean(), "pick only each sample's target"),
    (lambda lg, t: -log_softmax(lg)[np.arange(lg.shape[0]), t], "one number"),
    (naive_cross_entropy, "inf or nan"),
])
def test_ch09_cross_entropy_rejects_typical_mistakes(wrong, words):
    with np.errstate(all="ignore"):
        msg = failure(check.ch09_cross_entropy, wrong)
    assert "ch09-cross-entropy" in msg and words in msg


def test_ch09_cross_entropy_reports_unfinished_log_softmax():
    def needs_log_softmax(logits, targets):
        raise NotImplementedError("Exercise ch09-log-softmax: write your code here")
    with pytest.raises(NotImplementedError, match="uses exercise ch09-log-softmax"):
        check.ch09_cross_entropy(needs_log_softmax)


def _no_last(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    yield from batches(x, y, batch_size, shuffle, seed, drop_last=True)


def _always_drop_never(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    yield from batches(x, y, batch_size, shuffle, seed, drop_last=False)


def _separate_shuffles(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    rng = np.random.default_rng(seed)
    ix = rng.permutation(len(x)) if shuffle else np.arange(len(x))
    iy = rng.permutation(len(y)) if shuffle else np.arange(len(y))
    stop = len(x) - len(x) % batch_size if drop_last else len(x)
    for s in range(0, stop, batch_size):
        yield x[ix[s:s + batch_size]], y[iy[s:s + batch_size]]


def _unseeded(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    yield from batches(x, y, batch_size, shuffle, None if not shuffle else
                       int(np.random.default_rng().integers(1 << 30)), drop_last)


def _ignores_seed(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    yield from batches(x, y, batch_size, shuffle, 0, drop_last)


def _with_replacement(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    n = len(x)
    order = np.random.default_rng(seed).integers(0, n, size=n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for s in range(0, stop, batch_size):
        yield x[order[s:s + batch_size]], y[order[s:s + batch_size]]


def _in_place(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    if shuffle:
        perm = np.random.default_rng(seed).permutation(len(x))
        x[...] = x[perm]
        y[...] = y[perm]
    yield from batches(x, y, batch_size, False, None, drop_last)


def _empty_tail(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    n = len(x)
    if drop_last or shuffle:
        yield from batches(x, y, batch_size, shuffle, seed, drop_last)
        return
    for s in range(0, n // batch_size * batch_size + batch_size, batch_size):
        yield x[s:s + batch_size], y[s:s + batch_size]


@pytest.mark.parametrize("wrong,words", [
    (_no_last, "last one"),
    (_always_drop_never, "drop_last should skip"),
    (_separate_shuffles, "do not belong together"),
    (_unseeded, "same seed gave a different order"),
    (_ignores_seed, "different seeds gave the same order"),
    (_with_replacement, "exactly once"),
    (_in_place, "changed the x or y"),
    (_empty_tail, "no empty batch"),
    (lambda x, y, batch_size, shuffle=False, seed=None, drop_last=False:
     batches(x, y, batch_size, drop_last=drop_last), "still came in order"),
])
def test_ch09_batches_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch09_batches, wrong)
    assert "ch09-batches" in msg and words in msg


def _no_zero_grad(model, loss_fn, optimizer, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def _step_first(model, loss_fn, optimizer, x, y):
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    optimizer.step()
    loss.backward()
    return loss.item()


def _returns_variable(model, loss_fn, optimizer, x, y):
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def _loss_after(model, loss_fn, optimizer, x, y):
    train_step(model, loss_fn, optimizer, x, y)
    with al.no_grad():
        return loss_fn(model(x), y).item()


@pytest.mark.parametrize("wrong,words", [
    (_no_zero_grad, "zero_grad() every step"),
    (_step_first, "did not change the parameters"),
    (_returns_variable, "Python float"),
    (_loss_after, "before the update"),
    (lambda *args: None, "returned None"),
])
def test_ch09_train_step_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch09_train_step, wrong)
    assert "ch09-train-step" in msg and words in msg


# -- chapter 10: correct solutions ----------------------------------------------------------
def output_size(n, k, stride=1, padding=0):
    return (n + 2 * padding - k) // stride + 1


def conv2d_forward_loops(x, weight, bias, stride=1, padding=0):
    n, c, h, w = x.shape
    co, _, kh, kw = weight.shape
    ho, wo = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    out = np.empty((n, co, ho, wo))
    for b in range(n):
        for o in range(co):
            for i in range(ho):
                for j in range(wo):
                    win = xp[b, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
                    out[b, o, i, j] = (win * weight[o]).sum() + (0.0 if bias is None else bias[o])
    return out


def conv2d_forward_im2col(x, weight, bias, stride=1, padding=0):
    from autograd_lab.kernels.conv import im2col_ref
    n = x.shape[0]
    co, _, kh, kw = weight.shape
    ho = output_size(x.shape[2], kh, stride, padding)
    wo = output_size(x.shape[3], kw, stride, padding)
    cols = im2col_ref(x, (kh, kw), stride, padding)
    y = (weight.reshape(co, -1) @ cols).reshape(co, n, ho, wo).transpose(1, 0, 2, 3)
    return y if bias is None else y + bias[None, :, None, None]


def conv2d_backward(grad, x, weight, stride=1, padding=0):
    n, c, h, w = x.shape
    co, _, kh, kw = weight.shape
    ho, wo = grad.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(weight)
    for di in range(kh):
        for dj in range(kw):
            rows, cols = slice(di, di + stride * ho, stride), slice(dj, dj + stride * wo, stride)
            dw[:, :, di, dj] = np.einsum("noij,ncij->oc", grad, xp[:, :, rows, cols])
            dxp[:, :, rows, cols] += np.einsum("noij,oc->ncij", grad, weight[:, :, di, dj])
    return dxp[:, :, padding:padding + h, padding:padding + w], dw, grad.sum(axis=(0, 2, 3))


def conv2d_backward_library(grad, x, weight, stride=1, padding=0):
    import autograd_lab.functional as F
    xv, wv = al.tensor(x, requires_grad=True), al.tensor(weight, requires_grad=True)
    bv = al.zeros(weight.shape[0], dtype=np.float64, requires_grad=True)
    F.conv2d(xv, wv, bv, stride=stride, padding=padding).backward(al.tensor(grad))
    return xv.grad, wv.grad, bv.grad


def make_maxpool(route="argmax"):
    class MaxPool(al.Function):
        @staticmethod
        def forward(ctx, x, k):
            n, c, h, w = x.shape
            ho, wo = h // k, w // k
            blocks = x.data[:, :, :ho * k, :wo * k].reshape(n, c, ho, k, wo, k)
            blocks = blocks.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, ho, wo, k * k)
            ctx.blocks, ctx.k, ctx.x_shape = blocks, k, x.shape
            return al.Variable(blocks.max(axis=-1))

        @staticmethod
        def backward(ctx, grad_output):
            n, c, h, w = ctx.x_shape
            k, blocks = ctx.k, ctx.blocks
            ho, wo = blocks.shape[2:4]
            g = grad_output.data[..., None]
            if route == "argmax":
                d = np.zeros_like(blocks)
                np.put_along_axis(d, blocks.argmax(axis=-1)[..., None], g, axis=-1)
            elif route == "mask":
                d = (blocks == blocks.max(axis=-1, keepdims=True)) * g
            elif route == "last":
                arg = k * k - 1 - blocks[..., ::-1].argmax(axis=-1)
                d = np.zeros_like(blocks)
                np.put_along_axis(d, arg[..., None], g, axis=-1)
            else:  # spread evenly over the window
                d = np.broadcast_to(g / (k * k), blocks.shape)
            dx = np.zeros(ctx.x_shape)
            dx[:, :, :ho * k, :wo * k] = d.reshape(n, c, ho, wo, k, k).transpose(
                0, 1, 2, 4, 3, 5).reshape(n, c, ho * k, wo * k)
            return dx, None
    return MaxPool


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch10_correct_solutions_pass(seed, hidden, capsys):
    check.ch10_output_size(output_size, seed=seed, hidden=hidden)
    check.ch10_conv2d_forward(conv2d_forward_loops, seed=seed, hidden=hidden)
    check.ch10_conv2d_forward(conv2d_forward_im2col, seed=seed, hidden=hidden)
    check.ch10_conv2d_backward(conv2d_backward, seed=seed, hidden=hidden)
    check.ch10_conv2d_backward(conv2d_backward_library, seed=seed, hidden=hidden)
    check.ch10_max_pool(make_maxpool(), seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 6, hidden)


def test_ch10_forward_reference_agrees_with_torch():
    torch = require_torch()
    rng = np.random.default_rng(1)
    x, w, b = rng.normal(size=(2, 3, 7, 6)), rng.normal(size=(4, 3, 3, 2)), rng.normal(size=4)
    ours = conv2d_forward_loops(x, w, b, stride=2, padding=1)
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                        stride=2, padding=1).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


# -- chapter 10: wrong solutions --------------------------------------------------------------
@pytest.mark.parametrize("wrong,words", [
    (lambda n, k, stride=1, padding=0: (n + 2 * padding - k) // stride, "forgot the + 1"),
    (lambda n, k, stride=1, padding=0: (n + padding - k) // stride + 1, "BOTH sides"),
    (lambda n, k, stride=1, padding=0: (n - k) // stride + 1, "left out the padding"),
    (lambda n, k, stride=1, padding=0: n + 2 * padding - k + 1, "ignored the stride"),
    (lambda n, k, stride=1, padding=0: (n + 2 * padding - k) / stride + 1, "int"),
])
def test_ch10_output_size_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch10_output_size, wrong)
    assert "ch10-output-size" in msg and words in msg


@pytest.mark.parametrize("wrong,words", [
    (lambda x, w, b, stride=1, padding=0: conv2d_forward_loops(x, w[:, :, ::-1, ::-1], b,
                                                               stride, padding), "flipped"),
    (lambda x, w, b, stride=1, padding=0: conv2d_forward_loops(x, w, 0 * b, stride, padding),
     "bias"),
    (lambda x, w, b, stride=1, padding=0: conv2d_forward_loops(x, w, b, 1, padding), "shape"),
])
def test_ch10_conv2d_forward_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch10_conv2d_forward, wrong)
    assert "ch10-conv2d-forward" in msg and words in msg


def _padded_dx(grad, x, weight, stride=1, padding=0):
    dx, dw, db = conv2d_backward(grad, x, weight, stride, padding)
    return np.pad(dx, ((0, 0), (0, 0), (padding, padding), (padding, padding))), dw, db


def _assigned_dx(grad, x, weight, stride=1, padding=0):
    n, c, h, w = x.shape
    co, _, kh, kw = weight.shape
    ho, wo = grad.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    dxp = np.zeros_like(xp)
    for di in range(kh):
        for dj in range(kw):
            rows, cols = slice(di, di + stride * ho, stride), slice(dj, dj + stride * wo, stride)
            dxp[:, :, rows, cols] = np.einsum("noij,oc->ncij", grad, weight[:, :, di, dj])
    _, dw, db = conv2d_backward(grad, x, weight, stride, padding)
    return dxp[:, :, padding:padding + h, padding:padding + w], dw, db


@pytest.mark.parametrize("wrong,words", [
    (lambda g, x, w, stride=1, padding=0: conv2d_backward(g, x, w, stride, padding)[:2]
     + (g.mean(axis=(0, 2, 3)),), "do not average"),
    (lambda g, x, w, stride=1, padding=0: (conv2d_backward(g, x, w, stride, padding)[0],
                                           conv2d_backward(g, x, w, stride, padding)[1][:, :, ::-1, ::-1],
                                           g.sum(axis=(0, 2, 3))), "flipped"),
    (_padded_dx, "cut the padding off"),
    (_assigned_dx, "add with +="),
    (lambda g, x, w, stride=1, padding=0: conv2d_backward(g, x, w, stride, padding)[:2],
     "three arrays"),
])
def test_ch10_conv2d_backward_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch10_conv2d_backward, wrong)
    assert "ch10-conv2d-backward" in msg and words in msg


@pytest.mark.parametrize("route,words", [
    ("mask", "counted twice"),
    ("last", "first maximum"),
    ("spread", "position of its window's maximum"),
])
def test_ch10_max_pool_rejects_typical_mistakes(route, words):
    msg = failure(check.ch10_max_pool, make_maxpool(route))
    assert "ch10-max-pool" in msg and words in msg


def test_ch10_max_pool_rejects_padding_instead_of_dropping():
    class Ceil(al.Function):
        @staticmethod
        def forward(ctx, x, k):
            h, w = x.shape[2:]
            pad = ((0, 0), (0, 0), (0, -h % k), (0, -w % k))
            xp = al.Variable(np.pad(x.data, pad, constant_values=-np.inf))
            return make_maxpool().forward(ctx, xp, k)

        @staticmethod
        def backward(ctx, g):
            return make_maxpool().backward(ctx, g)
    msg = failure(check.ch10_max_pool, Ceil)
    assert "ch10-max-pool" in msg and "left out" in msg


# -- the causes the feedback survey found misnamed ------------------------------------
def _log_softmax_axis0_row_shift(x):
    """The row maximum (as the chapter says) but the sum down each column."""
    z = x - x.data.max(axis=-1, keepdims=True)
    return z - z.exp().sum(axis=0, keepdims=True).log()


def _log_softmax_global_max(x):
    z = x - x.data.max()
    return z - z.exp().sum(axis=-1, keepdims=True).log()


@pytest.mark.parametrize("wrong,cause,not_said", [
    (_log_softmax_axis0_row_shift, "normalised along axis 0", "Subtract each row's maximum"),
    (_log_softmax_global_max, "one maximum for the whole batch", "Subtract each row's maximum first"),
])
def test_ch09_log_softmax_names_the_cause(wrong, cause, not_said):
    with np.errstate(all="ignore"):
        msg = failure(check.ch09_log_softmax, wrong)
    assert "ch09-log-softmax" in msg and cause in msg and not_said not in msg


def test_ch09_log_softmax_row_maximum_still_passes(capsys):
    check.ch09_log_softmax(log_softmax, hidden=True)
    assert "passed (with hidden cases)" in capsys.readouterr().out


# -- chapter 10: the forward's index-order mistakes and bias=None, each named -----------------
def _conv_always_bias(x, weight, bias, stride=1, padding=0):
    out = conv2d_forward_loops(x, weight, np.zeros(weight.shape[0]), stride, padding)
    return out + bias[None, :, None, None]          # fails on bias=None


def _conv_bias_none_as_zero_shape(x, weight, bias, stride=1, padding=0):
    b = np.ones(weight.shape[0]) if bias is None else bias   # adds 1 where nothing is given
    return conv2d_forward_loops(x, weight, b, stride, padding)


@pytest.mark.parametrize("wrong,words", [
    (lambda x, w, b, stride=1, padding=0: conv2d_forward_loops(x, w.transpose(0, 1, 3, 2), b,
                                                               stride, padding),
     "kernel's rows and columns are swapped"),
    (lambda x, w, b, stride=1, padding=0: conv2d_forward_loops(x, w, b, stride, padding
                                                               ).transpose(0, 1, 3, 2),
     "output's rows and columns are swapped"),
    (_conv_always_bias, "bias may be None"),
    (_conv_bias_none_as_zero_shape, "add nothing"),
])
def test_ch10_conv2d_forward_names_the_cause(wrong, words):
    msg = failure(check.ch10_conv2d_forward, wrong)
    assert "ch10-conv2d-forward" in msg and words in msg
    assert "out[n, o, i, j] = bias[o] + sum" not in msg       # not the generic formula

