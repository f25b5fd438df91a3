"""What attention needs: F.scaled_dot_product_attention and its fused masked-softmax kernel,
nn.MultiheadAttention, layer_norm/LayerNorm, gelu/GELU, embedding/Embedding, triu/tril/masked_fill.
Values and gradients against PyTorch in float64 (where installed), gradcheck, the kernel against
its numpy reference, and MultiheadAttention's state_dict in both directions."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as alF
import autograd_lab.nn as alnn
from autograd_lab.errors import ShapeError
from autograd_lab.kernels import attention as KA

from .._oracle import needs_torch, require_torch, torch

RNG = np.random.default_rng(45)
Q, K, V = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal((2, 3, 6, 5)), RNG.standard_normal((2, 3, 6, 7))
KEEP = RNG.random((4, 6)) > 0.4
KEEP[:, 0] = True
KEEP_HOLE = KEEP.copy()
KEEP_HOLE[2] = False  # query 2 sees no key
KEEP_BATCH = RNG.random((2, 1, 4, 6)) > 0.3
ADD = RNG.standard_normal((2, 1, 4, 6))
ADD_HOLE = np.where(KEEP_HOLE, 0.0, -np.inf)


def _m(module, mask):
    """A numpy mask as the module's tensor."""
    return mask if module is al else torch.tensor(mask)


# name: (function of (module, F, q, k, v), inputs)
SDPA = {
    "plain": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [Q, K, V]),
    "causal": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [Q, K, V]),
    "causal_square": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                      [Q, K[:, :, :4], V[:, :, :4]]),
    "causal_more_queries": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                            [K, Q, V[:, :, :4]]),
    "bool_mask": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=_m(m, KEEP)), [Q, K, V]),
    "bool_mask_per_batch": (lambda m, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=_m(m, KEEP_BATCH)), [Q, K, V]),
    "float_mask": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=_m(m, ADD)), [Q, K, V]),
    "scale": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=_m(m, KEEP), scale=0.3),
              [Q, K, V]),
    "fully_masked_bool": (lambda m, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=_m(m, KEEP_HOLE)), [Q, K, V]),
    "fully_masked_float": (lambda m, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=_m(m, ADD_HOLE)), [Q, K, V]),
    "unbatched_2d": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     [Q[0, 0], K[0, 0], V[0, 0]]),
    "gqa": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
            [RNG.standard_normal((2, 4, 3, 5)), K[:, :2], V[:, :2]]),
}


def _run(fn, module, F, arrays):
    if module is al:
        xs = [al.tensor(a, requires_grad=True) for a in arrays]
    else:
        xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(module, F, *xs)
    g = np.random.default_rng(1).standard_normal(tuple(out.shape))
    out.backward(al.tensor(g) if module is al else torch.tensor(g))
    data = out.data if module is al else out.detach().numpy()
    grads = [x.grad.data if module is al else x.grad.numpy() for x in xs]
    return data, grads


@needs_torch
@pytest.mark.parametrize("name", sorted(SDPA))
def test_sdpa_values_and_gradients_match_pytorch(name):
    fn, arrays = SDPA[name]
    out, grads = _run(fn, al, alF, arrays)
    t_out, t_grads = _run(fn, torch, torch.nn.functional, arrays)
    np.testing.assert_allclose(out, t_out, rtol=1e-10, atol=1e-12)
    for g, tg in zip(grads, t_grads):
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)
    assert not np.isnan(out).any() and not any(np.isnan(g).any() for g in grads)


@pytest.mark.parametrize("name", ["plain", "causal_more_queries", "bool_mask", "float_mask", "fully_masked_bool", "gqa"])
def test_sdpa_gradcheck(name):
    fn, arrays = SDPA[name]
    assert al.gradcheck(lambda *xs: fn(al, alF, *xs), [al.tensor(a, requires_grad=True) for a in arrays])


def test_sdpa_gradgradcheck_through_the_recorded_backward():
    q, k, v = (al.tensor(a[0, :1], requires_grad=True) for a in (Q, K, V))
    assert al.gradgradcheck(lambda q, k, v: alF.scaled_dot_product_attention(q, k, v, attn_mask=KEEP), [q, k, v])


@needs_torch
def test_sdpa_float_mask_that_requires_grad_gets_pytorchs_gradient():
    def run(module, F):
        xs = [(al.tensor if module is al else torch.tensor)(a, requires_grad=True) for a in (Q, K, V, ADD)]
        F.scaled_dot_product_attention(*xs[:3], attn_mask=xs[3]).sum().backward()
        return xs[3].grad.data if module is al else xs[3].grad.numpy()

    np.testing.assert_allclose(run(al, alF), run(torch, torch.nn.functional), rtol=1e-10, atol=1e-12)


def test_sdpa_fully_masked_query_gives_zero_output_and_gradients():
    q, k, v = (al.tensor(a, requires_grad=True) for a in (Q, K, V))
    out = alF.scaled_dot_product_attention(q, k, v, attn_mask=KEEP_HOLE)
    out.sum().backward()
    assert (out.data[:, :, 2] == 0).all() and (q.grad.data[:, :, 2] == 0).all()
    assert np.isfinite(k.grad.data).all() and np.isfinite(v.grad.data).all()


def test_sdpa_dropout_is_reproducible_and_p1_drops_everything():
    q, k, v = (al.tensor(a) for a in (Q, K, V))
    runs = [alF.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=al.Generator().manual_seed(3))
            for _ in range(2)]
    np.testing.assert_array_equal(runs[0].data, runs[1].data)
    assert not np.allclose(runs[0].data, alF.scaled_dot_product_attention(q, k, v).data)
    assert (alF.scaled_dot_product_attention(q, k, v, dropout_p=1.0).data == 0).all()


@pytest.mark.parametrize("kwargs, error, words", [
    ({"attn_mask": KEEP, "is_causal": True}, ValueError, "is_causal"),
    ({"attn_mask": KEEP.astype(np.int64)}, TypeError, "bool"),
    ({"attn_mask": KEEP[:, :3]}, ShapeError, "broadcast"),
    ({"attn_mask": np.ones((3, 1, 4, 6), dtype=bool)}, ShapeError, "broadcast"),
])
def test_sdpa_misuse_raises_a_typed_error_with_the_fix(kwargs, error, words):
    with pytest.raises(error, match=words):
        alF.scaled_dot_product_attention(al.tensor(Q), al.tensor(K), al.tensor(V), **kwargs)


def test_sdpa_refuses_mismatched_feature_dims():
    with pytest.raises(ShapeError, match="last dim E"):
        alF.scaled_dot_product_attention(al.tensor(Q), al.tensor(K[..., :3]), al.tensor(V))


# ---------------------------------------------------------------- the kernel
KERNEL_CASES = {
    "plain": {},
    "scaled": {"scale": 0.25},
    "add": {"add": RNG.standard_normal((4, 6))},
    "keep_with_empty_row": {"keep": KEEP_HOLE},
    "causal": {"causal": 4},
    "all": {"add": RNG.standard_normal((1, 6)), "keep": KEEP_HOLE, "causal": 4, "scale": 0.5},
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(KERNEL_CASES))
def test_masked_softmax_kernel_matches_its_numpy_reference(name, dtype):
    kw = dict(KERNEL_CASES[name])
    if "add" in kw:
        kw["add"] = kw["add"].astype(dtype)
    x = RNG.standard_normal((12, 6)).astype(dtype)
    g = RNG.standard_normal((12, 6)).astype(dtype)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    y = KA.masked_softmax_fwd(x, **kw)
    np.testing.assert_allclose(y, KA.masked_softmax_fwd_ref(x, **kw), **tol)
    scale = kw.get("scale", 1.0)
    np.testing.assert_allclose(KA.masked_softmax_bwd(y, g, scale), KA.masked_softmax_bwd_ref(y, g, scale), **tol)


@pytest.mark.parametrize("mode", [False, True])
def test_masked_softmax_kernel_serial_and_parallel_agree(mode):
    from autograd_lab import kernels

    x = RNG.standard_normal((64, 40))
    keep = RNG.random((8, 40)) > 0.5
    previous = kernels.set_parallel(mode)
    try:
        y = KA.masked_softmax_fwd(x, keep=keep, causal=8, scale=0.7)
        dx = KA.masked_softmax_bwd(y, x, 0.7)
    finally:
        kernels.set_parallel(previous)
    np.testing.assert_allclose(y, KA.masked_softmax_fwd_ref(x, keep=keep, causal=8, scale=0.7), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dx, KA.masked_softmax_bwd_ref(y, x, 0.7), rtol=1e-12, atol=1e-14)


def test_masked_softmax_kernel_refuses_a_mask_whose_rows_do_not_repeat():
    with pytest.raises(ValueError, match="divides"):
        KA.masked_softmax_fwd(np.zeros((6, 4)), keep=np.ones((4, 4), dtype=bool))
    with pytest.raises(ValueError, match="causal"):
        KA.masked_softmax_fwd(np.zeros((6, 4)), causal=4)


# ---------------------------------------------------------------- MultiheadAttention
def _pair_of_mha(batch_first=True, **kwargs):
    """A PyTorch MultiheadAttention and ours holding its weights (loaded from its state_dict)."""
    torch = require_torch()
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=torch.float64, **kwargs)
    ours = alnn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=np.float64, seed=0, **kwargs)
    result = ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    return ours, theirs


X, Y = RNG.standard_normal((3, 5, 8)), RNG.standard_normal((3, 4, 8))
KPM = np.array([[False, True, False, False], [False, False, True, True], [False] * 4])
AM = RNG.random((5, 4)) < 0.3
AM[:, 0] = False
AM3 = RNG.random((6, 5, 4)) < 0.2
AM3[..., 0] = False  # with KPM, every query keeps a key
MHA = {
    "plain": {},
    "key_padding_mask": {"key_padding_mask": KPM},
    "float_key_padding_mask": {"key_padding_mask": np.where(KPM, -1.5, 0.0)},
    "attn_mask": {"attn_mask": AM},
    "attn_mask_3d_and_padding": {"attn_mask": AM3, "key_padding_mask": KPM},
    "per_head_weights": {"attn_mask": AM, "average_attn_weights": False},
    "no_weights": {"attn_mask": AM, "need_weights": False},
    "causal_hint": {"attn_mask": np.triu(np.ones((5, 4), dtype=bool), 1), "is_causal": True},
}


def _mha_run(layer, module, q, kv, kwargs):
    make = al.tensor if module is al else torch.tensor
    xq, xkv = make(q, requires_grad=True), make(kv, requires_grad=True)
    kw = {k: (make(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    out, weights = layer(xq, xkv, xkv, **kw)
    (out * make(np.cos(np.arange(out.numel() if module is torch else out.size)).reshape(out.shape))).sum().backward()
    arrays = [out, weights, xq.grad, xkv.grad] + [p.grad for p in layer.parameters()]
    return [None if a is None else (a.data if module is al else a.detach().numpy()) for a in arrays]


@needs_torch
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("name", sorted(MHA))
def test_multihead_attention_matches_pytorch(name, batch_first):
    ours, theirs = _pair_of_mha(batch_first)
    q, kv = (X, Y) if batch_first else (X.transpose(1, 0, 2).copy(), Y.transpose(1, 0, 2).copy())
    for a, b in zip(_mha_run(ours, al, q, kv, MHA[name]), _mha_run(theirs, torch, q, kv, MHA[name])):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@needs_torch
def test_multihead_attention_self_attention_unbatched_and_other_kdim():
    ours, theirs = _pair_of_mha()
    for a, b in zip(_mha_run(ours, al, X[0], X[0], {}), _mha_run(theirs, torch, X[0], X[0], {})):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    ours, theirs = _pair_of_mha(kdim=3, vdim=3)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    kv = RNG.standard_normal((3, 4, 3))
    for a, b in zip(_mha_run(ours, al, X, kv, {}), _mha_run(theirs, torch, X, kv, {})):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@needs_torch
def test_multihead_attention_state_dict_round_trip_with_pytorch():
    ours = alnn.MultiheadAttention(8, 2, batch_first=True, dtype=np.float64, seed=3)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.tensor(np.asarray(v.data if hasattr(v, "data") else v))
                            for k, v in ours.state_dict().items()})
    out = ours(al.tensor(X), al.tensor(X), al.tensor(X))[0].data
    t_out = theirs(torch.tensor(X), torch.tensor(X), torch.tensor(X))[0].detach().numpy()
    np.testing.assert_allclose(out, t_out, rtol=1e-10, atol=1e-12)


@needs_torch
def test_multihead_attention_fully_masked_query_is_zero_without_weights_and_refused_with_them():
    ours, theirs = _pair_of_mha()
    kpm = np.array([[True] * 4, [False] * 4, [False] * 4])
    out, _ = ours(al.tensor(X), al.tensor(Y), al.tensor(Y), key_padding_mask=kpm, need_weights=False)
    t_out, _ = theirs(torch.tensor(X), torch.tensor(Y), torch.tensor(Y), key_padding_mask=torch.tensor(kpm),
                      need_weights=False)
    np.testing.assert_allclose(out.data, t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="need_weights=False"):
        ours(al.tensor(X), al.tensor(Y), al.tensor(Y), key_padding_mask=kpm)


def test_multihead_attention_gradcheck_with_masks():
    layer = alnn.MultiheadAttention(4, 2, batch_first=True, dtype=np.float64, seed=1)
    kpm = np.array([[False, True, False], [False, False, False]])
    am = np.triu(np.ones((3, 3), dtype=bool), 1)
    q, kv = (al.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(2))
    assert al.gradcheck(lambda q, kv: layer(q, kv, kv, key_padding_mask=kpm, attn_mask=am)[0], [q, kv])
    assert al.gradcheck(lambda q: layer(q, q, q, attn_mask=am, is_causal=True, need_weights=False)[0], [q])


@pytest.mark.parametrize("kwargs, error, words", [
    ({"is_causal": True}, ValueError, "needs attn_mask"),
    ({"attn_mask": np.zeros((4, 4), dtype=bool)}, ShapeError, r"\(5, 4\)"),
    ({"key_padding_mask": np.zeros((3, 5), dtype=bool)}, ShapeError, r"\(3, 4\)"),
    ({"key_padding_mask": np.zeros((3, 4), dtype=np.int64)}, TypeError, "bool and floating"),
])
def test_multihead_attention_misuse_raises_a_typed_error(kwargs, error, words):
    layer = alnn.MultiheadAttention(8, 2, batch_first=True, seed=0)
    with pytest.raises(error, match=words):
        layer(al.tensor(X.astype(np.float32)), al.tensor(Y.astype(np.float32)), al.tensor(Y.astype(np.float32)),
              **kwargs)
    with pytest.raises(ValueError, match="multiple"):
        alnn.MultiheadAttention(8, 3)


# ---------------------------------------------------------------- norms, activations, lookups, masks
CUBE = RNG.standard_normal((2, 3, 4))
LN_W, LN_B = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
# name: (function of (module, F, *inputs), inputs)
OPS = {
    "layer_norm_affine": (lambda m, F, x, w, b: F.layer_norm(x, (3, 4), w, b, eps=1e-3), [CUBE, LN_W, LN_B]),
    "layer_norm_last_dim": (lambda m, F, x, w: F.layer_norm(x, [4], w), [CUBE, LN_W[0]]),
    "layer_norm_plain": (lambda m, F, x: F.layer_norm(x, (4,)), [CUBE]),
    "gelu": (lambda m, F, x: F.gelu(x), [CUBE]),
    "gelu_tanh": (lambda m, F, x: F.gelu(x, approximate="tanh"), [CUBE]),
    "embedding_repeats": (lambda m, F, w: F.embedding(_m(m, np.array([[0, 2, 2], [1, 0, 2]])), w),
                          [RNG.standard_normal((4, 3))]),
    "embedding_padding": (lambda m, F, w: F.embedding(_m(m, np.array([[0, 2, 2], [1, 0, 2]])), w, padding_idx=2),
                          [RNG.standard_normal((4, 3))]),
    "triu": (lambda m, F, x: m.triu(x, 1), [CUBE]),
    "tril": (lambda m, F, x: m.tril(x, -1), [CUBE]),
    "masked_fill": (lambda m, F, x: x.masked_fill(_m(m, np.tril(np.ones((3, 4), dtype=bool))), -2.0), [CUBE]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_attention_needs_match_pytorch(name):
    fn, arrays = OPS[name]
    out, grads = _run(fn, al, alF, arrays)
    t_out, t_grads = _run(fn, torch, torch.nn.functional, arrays)
    np.testing.assert_allclose(out, t_out, rtol=1e-10, atol=1e-12)
    for g, tg in zip(grads, t_grads):
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(set(OPS) - {"embedding_padding"}))  # padding: no gradient by design
def test_ops_attention_needs_gradcheck(name):
    fn, arrays = OPS[name]
    assert al.gradcheck(lambda *xs: fn(al, alF, *xs), [al.tensor(a, requires_grad=True) for a in arrays])


def test_layer_norm_gradgradcheck():
    x, w, b = (al.tensor(a, requires_grad=True) for a in (CUBE, LN_W, LN_B))
    assert al.gradgradcheck(lambda x, w, b: alF.layer_norm(x, (3, 4), w, b), [x, w, b])


def test_layer_norm_refuses_a_weight_of_another_shape():
    with pytest.raises(ShapeError, match="normalized_shape"):
        alF.layer_norm(al.tensor(CUBE), (3, 4), al.tensor(LN_W[0]))


@needs_torch
def test_layers_load_pytorch_state_dicts_and_print_alike():
    torch.manual_seed(0)
    pairs = [(alnn.LayerNorm(4, bias=False, dtype=np.float64), torch.nn.LayerNorm(4, bias=False, dtype=torch.float64)),
             (alnn.LayerNorm((3, 4), eps=1e-3, dtype=np.float64), torch.nn.LayerNorm((3, 4), eps=1e-3, dtype=torch.float64)),
             (alnn.Embedding(5, 4, padding_idx=1, dtype=np.float64), torch.nn.Embedding(5, 4, padding_idx=1, dtype=torch.float64)),
             (alnn.GELU("tanh"), torch.nn.GELU("tanh"))]
    idx = np.array([[0, 1, 4], [3, 3, 2]])
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        with torch.no_grad():
            for p in theirs.parameters():
                p.uniform_(-1, 1)
        ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        x = idx if isinstance(ours, alnn.Embedding) else RNG.standard_normal((2, 3, 4))
        np.testing.assert_allclose(ours(al.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_and_gelu_kernels_match_their_numpy_references(dtype):
    from autograd_lab.kernels import special

    x = (RNG.standard_normal((7, 9)) * 3).astype(dtype)
    g = RNG.standard_normal((7, 9)).astype(dtype)
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-14, "atol": 1e-15}
    np.testing.assert_allclose(special.erf(x), special.erf_ref(x), **tol)
    np.testing.assert_allclose(special.gelu_fwd(x), special.gelu_fwd_ref(x), **tol)
    np.testing.assert_allclose(special.gelu_bwd(x, g), special.gelu_bwd_ref(x, g), **tol)
    assert special.gelu_bwd(np.zeros(1, dtype), np.full(1, np.inf, dtype))[0] == np.inf  # not inf * 0


@needs_torch
def test_the_transformer_step_benchmark_trains_both_libraries_alike():
    """benchmarks.transformer_step times only steps that give PyTorch's losses: its check runs."""
    transformer_step = pytest.importorskip("benchmarks.transformer_step")
    steps = transformer_step.build(transformer_step.batches())  # raises when the losses differ
    assert set(steps) == {"PyTorch eager", "autograd_lab recorded", "autograd_lab captured"}
    assert np.isfinite(steps["autograd_lab captured"](0))


def test_embedding_kernel_matches_its_numpy_reference():
    from autograd_lab.kernels import embedding

    idx = np.array([3, 0, 3, 1, 3, 0])
    g = RNG.standard_normal((6, 5))
    np.testing.assert_allclose(embedding.embedding_bwd(idx, g, 4), embedding.embedding_bwd_ref(idx, g, 4), rtol=1e-14)
    np.testing.assert_allclose(embedding.embedding_bwd(idx, g, 4, 3), embedding.embedding_bwd_ref(idx, g, 4, 3),
                               rtol=1e-14)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        embedding.embedding_bwd(idx, g, 3)


def test_a_captured_step_looks_up_each_new_batch_of_indices():
    """The indices are an input of the embedding's Function, so a replay reads the new ones."""
    table = al.tensor(RNG.standard_normal((5, 3)), requires_grad=True)
    step = al.capture(lambda idx: (alF.embedding(idx, table, padding_idx=4) ** 2).sum())
    for tokens in ([[0, 1, 1]], [[2, 4, 3]]):
        table.grad = None
        loss = step(al.tensor(np.array(tokens)))
        want = (table.data[np.array(tokens)] ** 2).sum()
        np.testing.assert_allclose(loss.data, want, rtol=1e-14)
        grad = np.zeros((5, 3))
        np.add.at(grad, np.array(tokens).ravel(), 2 * table.data[np.array(tokens).ravel()])
        grad[4] = 0
        np.testing.assert_allclose(table.grad.data, grad, rtol=1e-14)
    assert step.captures == 1
