"""The everyday PyTorch operations issue 33 found missing: values and gradients against PyTorch
(where installed) and against central differences (gradcheck, and gradgradcheck where the op is
built from differentiable ops)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as alF
import autograd_lab.nn as alnn
from autograd_lab.errors import BackwardError, ShapeError

from .._oracle import assert_case_gradchecks, assert_case_matches_torch, needs_torch, torch

RNG = np.random.default_rng(33)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
POS = np.abs(A) + 0.5
V = RNG.standard_normal(4)
W = RNG.standard_normal(4)
CUBE = RNG.standard_normal((2, 3, 4))
CUBE2 = RNG.standard_normal((2, 4, 5))
WITH_ZERO = np.array([[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]])

# name: (function of (lib, F, *inputs), inputs, gradgradcheck too?)
CASES = {
    "prod_all": (lambda m, F, x: x.prod(), [WITH_ZERO[:1]], False),
    "prod_dim": (lambda m, F, x: x.prod(1), [A], False),
    "prod_dim_with_zeros": (lambda m, F, x: m.prod(x, 1, keepdim=True), [WITH_ZERO], False),
    "cumsum": (lambda m, F, x: x.cumsum(1), [A], True),
    "cumsum_dim0": (lambda m, F, x: m.cumsum(x, dim=0), [A], True),
    "cumprod": (lambda m, F, x: x.cumprod(1), [A], True),
    "cumprod_with_zeros": (lambda m, F, x: m.cumprod(x, 1), [WITH_ZERO], False),
    "logsumexp": (lambda m, F, x: x.logsumexp(1), [A], True),
    "logsumexp_keepdim": (lambda m, F, x: m.logsumexp(x, 0, keepdim=True), [A], True),
    "remainder": (lambda m, F, a, b: a % b, [A * 3, POS], False),
    "remainder_scalar": (lambda m, F, a: a % 0.7, [A * 3], False),
    "fmod": (lambda m, F, a, b: m.fmod(a, b), [A * 3, POS], False),
    "masked_fill": (lambda m, F, x: x.masked_fill(x > 0, 0.5), [A], True),
    "flip": (lambda m, F, x: x.flip(0) * m.tensor(B, dtype=m.float64), [A], True),
    "flip_two_dims": (lambda m, F, x: m.flip(x, (0, 1)) * m.tensor(B, dtype=m.float64), [A], True),
    "roll": (lambda m, F, x: x.roll(1, 1) * m.tensor(B, dtype=m.float64), [A], True),
    "roll_flat": (lambda m, F, x: m.roll(x, 5) * m.tensor(B, dtype=m.float64), [A], True),
    "repeat": (lambda m, F, x: x.repeat(2, 1, 3) * m.arange(72.0, dtype=m.float64).reshape(2, 3, 12), [A], True),
    "tile": (lambda m, F, x: m.tile(x, (2,)) * m.arange(24.0, dtype=m.float64).reshape(3, 8), [A], True),
    "movedim": (lambda m, F, x: m.movedim(x, 0, 2) * m.arange(24.0, dtype=m.float64).reshape(3, 4, 2), [CUBE], True),
    "swapaxes": (lambda m, F, x: x.swapaxes(0, 2) * m.arange(24.0, dtype=m.float64).reshape(4, 3, 2), [CUBE], True),
    "split": (lambda m, F, x: m.cat([p * (i + 1) for i, p in enumerate(x.split(3, 1))], 1), [A], True),
    "split_sizes": (lambda m, F, x: m.cat([p * (i + 1) for i, p in enumerate(x.split([1, 3], 1))], 1), [A], True),
    "chunk": (lambda m, F, x: m.cat([p * (i + 1) for i, p in enumerate(x.chunk(3, 0))], 0), [A], True),
    "tril": (lambda m, F, x: x.tril() * m.tensor(B, dtype=m.float64), [A], True),
    "triu_offset": (lambda m, F, x: m.triu(x, 1) * m.tensor(B, dtype=m.float64), [A], True),
    "tril_negative": (lambda m, F, x: m.tril(x, -1) * m.tensor(B, dtype=m.float64), [A], True),
    "einsum_matmul": (lambda m, F, a, b: m.einsum("ij,kj->ik", a, b), [A, B], True),
    "einsum_batched": (lambda m, F, a, b: m.einsum("bij,bjk->bik", a, b), [CUBE, CUBE2], True),
    "einsum_sum_out": (lambda m, F, a, b: m.einsum("ij,j->i", a, b), [A, V], True),
    "einsum_only_one_has": (lambda m, F, a, b: m.einsum("ij,k->ik", a, b), [A, V[:2]], True),
    "einsum_implicit": (lambda m, F, a, b: m.einsum("ij,jk", a, b), [A, B.T], True),
    "bmm": (lambda m, F, a, b: m.bmm(a, b), [CUBE, CUBE2], True),
    "dot": (lambda m, F, a, b: m.dot(a, b), [V, W], True),
    "outer": (lambda m, F, a, b: m.outer(a, b), [V, W], True),
    "erf": (lambda m, F, x: m.erf(x), [A], True),
    "softmax_method": (lambda m, F, x: x.softmax(1) * m.tensor(B, dtype=m.float64), [A], True),
    "log_softmax_method": (lambda m, F, x: x.log_softmax(dim=0) * m.tensor(B, dtype=m.float64), [A], True),
    "minimum": (lambda m, F, a, b: m.minimum(a, b), [A, B], False),
    "amax_tuple": (lambda m, F, x: x.amax(dim=(0, 2)), [CUBE], False),
    "amin": (lambda m, F, x: x.amin(1), [A], False),
    "gelu": (lambda m, F, x: F.gelu(x), [A], True),
    "gelu_tanh": (lambda m, F, x: F.gelu(x, approximate="tanh"), [A], True),
    "silu": (lambda m, F, x: F.silu(x), [A], True),
    "softplus": (lambda m, F, x: F.softplus(x), [A * 10], True),
    "softplus_beta": (lambda m, F, x: F.softplus(x, beta=2.0, threshold=3.0), [A * 3], True),
    "elu": (lambda m, F, x: F.elu(x, alpha=0.7), [A], True),
    "leaky_relu": (lambda m, F, x: F.leaky_relu(x, 0.2), [A], False),
    "layer_norm": (lambda m, F, x: F.layer_norm(x, (4,)) * m.tensor(B, dtype=m.float64), [A], True),
    "layer_norm_affine": (lambda m, F, x, w, b: F.layer_norm(x, [4], w, b) * m.tensor(B, dtype=m.float64),
                          [A, V, W], True),
    "normalize": (lambda m, F, x: F.normalize(x, dim=1), [A], True),
    "pad": (lambda m, F, x: F.pad(x, (1, 2, 0, 1), value=0.5) * m.arange(28.0, dtype=m.float64).reshape(4, 7),
            [A], True),
    "l1_loss": (lambda m, F, a, b: F.l1_loss(a, b), [A, B], False),
    "smooth_l1_loss": (lambda m, F, a, b: F.smooth_l1_loss(a, b, beta=0.5), [A, B], False),
    "huber_loss": (lambda m, F, a, b: F.huber_loss(a, b, reduction="sum", delta=0.8), [A, B], False),
    "exp_": (lambda m, F, x: (x * 1).exp_(), [A], True),
    "sigmoid_": (lambda m, F, x: (x * 1).sigmoid_(), [A], True),
    "tanh_": (lambda m, F, x: (x * 1).tanh_(), [A], True),
    "neg_": (lambda m, F, x: (x * 1).neg_(), [A], True),
    "abs_": (lambda m, F, x: (x * 1).abs_(), [A], False),
    "sqrt_": (lambda m, F, x: (x * 1).sqrt_(), [POS], True),
    "masked_fill_": (lambda m, F, x: (x * 1).masked_fill_(x < 0, -1.0), [A], True),
    "topk": (lambda m, F, x: x.topk(2, dim=1).values, [A], True),
    "topk_smallest": (lambda m, F, x: m.topk(x, 2, 0, largest=False)[0], [A], True),
    "scatter": (lambda m, F, x, s: x.scatter(1, m.tensor([[2, 0], [1, 3], [0, 1]]), s), [A, B[:, :2]], True),
    "scatter_value": (lambda m, F, x: m.scatter(x, 0, m.tensor([[2, 0, 1, 1]]), value=0.5), [A], True),
    "scatter_add": (lambda m, F, x, s: x.scatter_add(0, m.tensor([[2, 0, 2, 1], [2, 2, 0, 0]]), s), [A, B[:2]],
                    True),
}


IMG = RNG.standard_normal((2, 3, 5, 6))
PROBS = np.abs(RNG.standard_normal((3, 4))) + 0.1
PROBS /= PROBS.sum(1, keepdims=True)
CASES.update({
    "kl_div_batchmean": (lambda m, F, x: F.kl_div(x.log_softmax(1), m.tensor(PROBS, dtype=m.float64),
                                                  reduction="batchmean"), [A], True),
    "kl_div_log_target": (lambda m, F, x: F.kl_div(x, m.tensor(np.log(PROBS), dtype=m.float64), reduction="sum",
                                                   log_target=True), [A], True),
    "batch_norm_training": (lambda m, F, x: F.batch_norm(x, None, None, training=True), [IMG], True),
    "batch_norm_affine": (lambda m, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                          [IMG, V[:3], W[:3]], True),
    "avg_pool2d": (lambda m, F, x: F.avg_pool2d(x, 2), [IMG], True),
    "avg_pool2d_stride_pad": (lambda m, F, x: F.avg_pool2d(x, 3, stride=2, padding=1), [IMG], True),
})



@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, inputs, twice = CASES[name]
    assert_case_gradchecks(al, fn, inputs, twice)


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, inputs, _ = CASES[name]
    assert_case_matches_torch(al, fn, inputs, same_dtype=False, same_missing=False)


def test_floor_divide_values_and_no_gradient():
    a, b = al.tensor([7.0, -7.0, 5.5]), al.tensor([2.0, 2.0, -2.0])
    np.testing.assert_array_equal((a // b).data, [3.0, -4.0, -3.0])
    np.testing.assert_array_equal((al.tensor([7, -7]) // 2).data, [3, -4])
    with pytest.raises(NotImplementedError, match="floor_divide"):
        al.tensor([1.0], requires_grad=True) // 2
    if torch is not None:
        np.testing.assert_array_equal((torch.tensor([7.0, -7.0, 5.5]) // torch.tensor([2.0, 2.0, -2.0])).numpy(),
                                      [3.0, -4.0, -3.0])


def test_isnan_isinf_isfinite_and_nan_to_num():
    x = al.tensor([1.0, np.nan, np.inf, -np.inf], requires_grad=True)
    assert x.isnan().tolist() == [False, True, False, False]
    assert al.isinf(x).tolist() == [False, False, True, True]
    assert x.isfinite().tolist() == [True, False, False, False]
    y = x.nan_to_num(posinf=9.0)
    np.testing.assert_array_equal(y.data, [1.0, 0.0, 9.0, np.finfo(np.float64).min])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 0.0, 0.0, 0.0])


def test_scatter_src_larger_than_index_gets_zero_gradient_where_unread():
    x = al.tensor(A, requires_grad=True)
    src = al.tensor(B, requires_grad=True)
    assert al.gradcheck(lambda a, b: a.scatter_add(1, al.tensor([[0], [3], [1]]), b), [x, src])


def test_nonzero():
    x = al.tensor([[0.0, 1.5], [2.0, 0.0]])
    np.testing.assert_array_equal(x.nonzero().data, [[0, 1], [1, 0]])
    rows, cols = al.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    if torch is not None:
        np.testing.assert_array_equal(torch.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero().numpy(), [[0, 1], [1, 0]])


def test_size_numel_and_contiguous():
    x = al.ones(2, 3)
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-2) == 2
    assert x.size == 6 and x.numel() == 6  # numpy's meaning stays
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(2)
    assert x.contiguous() is x


def test_one_hot():
    np.testing.assert_array_equal(alF.one_hot(al.tensor([0, 2, 1])).data, np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert alF.one_hot(al.tensor([1]), num_classes=4).shape == (1, 4)
    with pytest.raises(ValueError, match="smaller than num_classes"):
        alF.one_hot(al.tensor([5]), 3)
    with pytest.raises(TypeError, match="integer"):
        alF.one_hot(al.tensor([1.0]))


def test_split_pieces_are_views_and_chunk_counts_as_pytorch():
    x = al.arange(10.0)
    assert [p.shape[0] for p in x.chunk(4)] == [3, 3, 3, 1]
    assert [p.shape[0] for p in x.chunk(6)] == [2, 2, 2, 2, 2]
    assert [p.shape[0] for p in x.split(4)] == [4, 4, 2]
    with pytest.raises(ValueError, match="sum exactly"):
        x.split([3, 3])
    if torch is not None:
        assert [p.shape[0] for p in torch.arange(10.0).chunk(4)] == [3, 3, 3, 1]
        assert [p.shape[0] for p in torch.arange(10.0).chunk(6)] == [2, 2, 2, 2, 2]


def test_clear_errors_of_new_ops():
    with pytest.raises(ShapeError, match="bmm"):
        al.bmm(al.ones(2, 3), al.ones(2, 3))
    with pytest.raises(ShapeError, match="dot"):
        al.dot(al.ones(2), al.ones(3))
    with pytest.raises(TypeError, match="boolean masks"):
        al.ones(2).masked_fill(al.tensor([1, 0]), 0.0)
    with pytest.raises(NotImplementedError, match="'...'"):
        al.einsum("...ij->...ji", al.ones(2, 2))
    with pytest.raises(ValueError, match="'constant', 'reflect', 'replicate' or 'circular'"):
        alF.pad(al.ones(2, 2), (1, 1), mode="mirror")
    with pytest.raises(ShapeError, match="at least 2"):
        al.tril(al.ones(3))


def test_prod_double_backward_without_zeros_and_refused_with_them():
    x = al.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = al.grad(x.prod(), [x], create_graph=True)
    np.testing.assert_array_equal(g.data, [6.0, 3.0, 2.0])
    (gg,) = al.grad(g.sum(), [x])  # d/dx_i of sum_j prod_{k != j} x_k
    np.testing.assert_allclose(gg.data, [5.0, 4.0, 3.0])
    z = al.tensor([0.0, 2.0, 3.0], requires_grad=True)
    (g,) = al.grad(z.prod(), [z], create_graph=True)
    np.testing.assert_array_equal(g.data, [6.0, 0.0, 0.0])
    with pytest.raises(BackwardError, match="once_differentiable"):
        al.grad(g.sum(), [z])


# ---------------------------------------------------------------- modules and the scheduler
@needs_torch
def test_modules_match_torch():
    x = RNG.standard_normal((3, 4))
    targets = np.array([0, 3, 1])
    cases = [
        (alnn.LayerNorm(4, dtype=np.float64), torch.nn.LayerNorm(4, dtype=torch.float64)),
        (alnn.GELU(), torch.nn.GELU()),
        (alnn.LeakyReLU(0.1), torch.nn.LeakyReLU(0.1)),
        (alnn.Identity(), torch.nn.Identity()),
        (alnn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
        (alnn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)),
    ]
    for mine, theirs in cases:
        a = al.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        (mine(a) * al.tensor(B)).sum().backward()
        (theirs(t) * torch.tensor(B)).sum().backward()
        np.testing.assert_allclose(a.grad.data, t.grad.numpy(), rtol=1e-7, atol=1e-10, err_msg=type(mine).__name__)
    losses = [
        (alnn.NLLLoss(), torch.nn.NLLLoss(), lambda m, v: m.tensor(v).log_softmax(1), targets),
        (alnn.L1Loss(), torch.nn.L1Loss(), lambda m, v: m.tensor(v), B),
        (alnn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss(), lambda m, v: m.tensor(v), (B > 0) * 1.0),
        (alnn.BCELoss(), torch.nn.BCELoss(), lambda m, v: m.tensor(v).sigmoid(), (B > 0) * 1.0),
    ]
    for mine, theirs, prep, target in losses:
        np.testing.assert_allclose(mine(prep(al, x), al.tensor(target)).item(),
                                   theirs(prep(torch, x), torch.tensor(target)).item(), rtol=1e-7,
                                   err_msg=type(mine).__name__)


def test_module_list_and_dict_register_parameters():
    layers = alnn.ModuleList([alnn.Linear(2, 3, seed=0), alnn.Linear(3, 1, seed=1)])
    layers.append(alnn.LayerNorm(1))
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    heads = alnn.ModuleDict({"a": alnn.Linear(2, 2, seed=0)})
    heads["b"] = alnn.Identity()
    assert list(heads) == ["a", "b"] and len(list(heads.parameters())) == 2
    emb = alnn.Embedding(5, 3, seed=0)
    out = emb(al.tensor([[0, 4], [1, 1]]))
    assert out.shape == (2, 2, 3)
    out.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.data[:, 0], [1.0, 2.0, 0.0, 0.0, 1.0])


def test_lr_scheduler_namespace():
    from autograd_lab.optim.lr_scheduler import StepLR

    p = alnn.Parameter(np.zeros(1))
    opt = al.optim.SGD([p], lr=1.0)
    sched = al.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    assert isinstance(sched, StepLR)
    lrs = []
    for _ in range(4):
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [1.0, 0.5, 0.5, 0.25]


def test_gradcheck_perturbs_a_non_contiguous_input():
    b = al.tensor(B.T, requires_grad=True)  # a transposed (non-contiguous) array
    assert not b.data.flags.c_contiguous
    assert al.gradcheck(lambda v: v * al.tensor(A.T), [b])


@needs_torch
@pytest.mark.parametrize("make", [
    lambda m, ps: m.optim.SGD(ps, lr=0.1, momentum=0.9, maximize=True),
    lambda m, ps: m.optim.SGD(ps, lr=0.1, weight_decay=0.1, maximize=True),
    lambda m, ps: m.optim.Adam(ps, lr=0.05, amsgrad=True),
    lambda m, ps: m.optim.Adam(ps, lr=0.05, amsgrad=True, maximize=True, weight_decay=0.1),
    lambda m, ps: m.optim.AdamW(ps, lr=0.05, amsgrad=True),
], ids=["sgd_maximize_momentum", "sgd_maximize_decay", "adam_amsgrad", "adam_amsgrad_maximize", "adamw_amsgrad"])
def test_optimizer_options_follow_torch_step_by_step(make):
    start = RNG.standard_normal(5)
    mine = alnn.Parameter(start.copy())
    theirs = torch.nn.Parameter(torch.tensor(start.copy()))
    opt_a, opt_t = make(al, [mine]), make(torch, [theirs])
    for step in range(6):
        scale = np.cos(step)  # gradients that change sign, so the amsgrad maximum matters
        for p, opt in ((mine, opt_a), (theirs, opt_t)):
            opt.zero_grad()
            ((p * p).sum() * float(scale) + (p ** 3).sum() * 0.1).backward()
            opt.step()
        np.testing.assert_allclose(mine.data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_jacobian_vectorize_gives_the_same_values():
    from autograd_lab.autograd.functional import jacobian

    x = al.tensor(A[0])
    f = lambda v: (v * v).cumsum(0)  # noqa: E731
    np.testing.assert_allclose(jacobian(f, x, vectorize=True).data, jacobian(f, x).data)


@needs_torch
@pytest.mark.parametrize("kwargs", [
    dict(weight=[0.5, 2.0, 1.0, 1.5]),
    dict(ignore_index=1),
    dict(label_smoothing=0.2),
    dict(weight=[0.5, 2.0, 1.0, 1.5], ignore_index=3, label_smoothing=0.1),
    dict(weight=[0.5, 2.0, 1.0, 1.5], label_smoothing=0.3, reduction="sum"),
    dict(ignore_index=0, label_smoothing=0.3, reduction="none"),
], ids=["weight", "ignore_index", "label_smoothing", "all_three", "sum", "none"])
def test_cross_entropy_options_match_torch(kwargs):
    x = RNG.standard_normal((5, 4))
    target = np.array([0, 1, 3, 1, 2])
    results = []
    for m, F in ((al, alF), (torch, torch.nn.functional)):
        kw = dict(kwargs)
        if "weight" in kw:
            kw["weight"] = m.tensor(kw["weight"], dtype=m.float64)
        xv = m.tensor(x, dtype=m.float64, requires_grad=True)
        loss = F.cross_entropy(xv, m.tensor(target), **kw)
        (loss * m.tensor(np.linspace(1, 2, loss.numel()).reshape(tuple(loss.shape)), dtype=m.float64)).sum().backward()
        to_np = (lambda v: v.detach().numpy()) if m is torch else (lambda v: v.data)
        results.append((to_np(loss), to_np(xv.grad)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9, atol=1e-12)


@needs_torch
def test_cosine_annealing_follows_torch():
    p, q = alnn.Parameter(np.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    mine = al.optim.lr_scheduler.CosineAnnealingLR(al.optim.SGD([p], lr=0.5), T_max=7, eta_min=0.01)
    opt = torch.optim.SGD([q], lr=0.5)
    theirs = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.01)
    for _ in range(7):
        opt.step()
        mine.step()
        theirs.step()
        np.testing.assert_allclose(mine.get_last_lr(), theirs.get_last_lr(), rtol=1e-12)


@needs_torch
def test_batch_norm_modules_follow_torch_in_training_and_evaluation():
    for mine, theirs, shape in ((alnn.BatchNorm2d(3, dtype=np.float64), torch.nn.BatchNorm2d(3, dtype=torch.float64),
                                 (4, 3, 2, 2)),
                                (alnn.BatchNorm1d(3, momentum=0.3, dtype=np.float64),
                                 torch.nn.BatchNorm1d(3, momentum=0.3, dtype=torch.float64), (5, 3))):
        for step in range(3):
            x = RNG.standard_normal(shape) * (step + 1)
            a, t = al.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            (mine(a) * al.tensor(np.arange(a.size).reshape(shape))).sum().backward()
            (theirs(t) * torch.arange(t.numel(), dtype=torch.float64).reshape(shape)).sum().backward()
            np.testing.assert_allclose(a.grad.data, t.grad.numpy(), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(mine.running_mean, theirs.running_mean.numpy(), rtol=1e-12)
            np.testing.assert_allclose(mine.running_var, theirs.running_var.numpy(), rtol=1e-12)
        mine.eval()
        theirs.eval()
        x = RNG.standard_normal(shape)
        np.testing.assert_allclose(mine(al.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10)
