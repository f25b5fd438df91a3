"""Chapter 13's checkers on the learner's library: the key's attention.py passes every exercise
(visible and hidden cases), and each realistic mistake fails with the hint that names its cause."""
from __future__ import annotations

import types
from collections.abc import Iterator

import numpy as np
import pytest

from autograd_lab.course.exercises import ch13
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package


@pytest.fixture(scope="module")
def mygrad() -> Iterator[types.ModuleType]:
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES
             if (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
    assert "attention" in files, "the key's attention.py is not exported"
    yield build_package(files, REFERENCE_ROOT / PACKAGE)
    _forget_package()


def fails_with(check, *args, hint: str, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        check(*args, **kwargs)
    message = str(info.value)
    assert hint in message, message
    return message


def function(mygrad, name, forward, backward):
    return type(name, (mygrad.Function,), {"forward": staticmethod(forward),
                                           "backward": staticmethod(backward)})


def test_the_key_passes_every_exercise(mygrad):
    att = mygrad.attention
    for seed, hidden in ((0, False), (11, True)):
        ch13.ch13_embedding(att.Embedding, seed=seed, hidden=hidden, pkg=mygrad)
        ch13.ch13_layer_norm(att.LayerNormFunction, seed=seed, hidden=hidden, pkg=mygrad)
        ch13.ch13_attention(att.attend, seed=seed, hidden=hidden, pkg=mygrad)
        ch13.ch13_heads(att.split_heads, att.merge_heads, seed=seed, hidden=hidden, pkg=mygrad)
    ch13.mygrad_attention(mygrad)


# -- ch13-embedding ---------------------------------------------------------------------------
def embedding(mygrad, scatter):
    def forward(ctx, weight, idx):
        ctx.idx, ctx.shape = idx, weight.shape
        return mygrad.Variable(weight.data[idx])

    def backward(ctx, grad_output):
        return mygrad.Variable(scatter(ctx.shape, ctx.idx, grad_output.data)), None
    return function(mygrad, "Embedding", forward, backward)


def _assigned(shape, idx, g):
    out = np.zeros(shape)
    out[idx] = g
    return out


def _buffered(shape, idx, g):
    out = np.zeros(shape)
    out[idx] += g
    return out


def _counted(shape, idx, g):
    out = np.zeros(shape)
    np.add.at(out, idx, np.ones_like(g))
    return out


@pytest.mark.parametrize("scatter", [_assigned, _buffered], ids=["assign", "buffered +="])
def test_an_embedding_backward_that_does_not_add_repeats_is_told_to_use_add_at(mygrad, scatter):
    fails_with(ch13.ch13_embedding, embedding(mygrad, scatter), pkg=mygrad, hint="np.add.at")


def test_an_embedding_backward_that_counts_instead_of_using_grad_output(mygrad):
    fails_with(ch13.ch13_embedding, embedding(mygrad, _counted), pkg=mygrad,
               hint="grad_output, not 1")


def test_an_embedding_backward_of_the_positions_shape_is_told_the_table_shape(mygrad):
    fails_with(ch13.ch13_embedding, embedding(mygrad, lambda shape, idx, g: g), pkg=mygrad,
               hint="one row per token id")


# -- ch13-layer-norm --------------------------------------------------------------------------
def layer_norm(mygrad, *, ddof=0, eps_outside=False, axis=-1, simple_backward=False,
               unsummed_params=False):
    Variable = mygrad.Variable

    def forward(ctx, x, weight, bias, eps=1e-5):
        mu = x.data.mean(axis=axis, keepdims=True)
        var = x.data.var(axis=axis, keepdims=True, ddof=ddof)
        rstd = 1 / (np.sqrt(var) + eps) if eps_outside else 1 / np.sqrt(var + eps)
        ctx.x_hat, ctx.rstd, ctx.w = (x.data - mu) * rstd, rstd, weight.data
        return Variable(ctx.x_hat * weight.data + bias.data)

    def backward(ctx, grad_output):
        g, x_hat = grad_output.data, ctx.x_hat
        rows = tuple(range(g.ndim - 1))
        gh = g * ctx.w
        if simple_backward:
            gx = ctx.rstd * gh
        else:
            gx = ctx.rstd * (gh - gh.mean(-1, keepdims=True)
                             - x_hat * (gh * x_hat).mean(-1, keepdims=True))
        if unsummed_params:
            return Variable(gx), Variable(g * x_hat), Variable(g), None
        return Variable(gx), Variable((g * x_hat).sum(rows)), Variable(g.sum(rows)), None
    return function(mygrad, "LayerNormFunction", forward, backward)


@pytest.mark.parametrize("mistake, hint", [
    ({"ddof": 1}, "biased"),
    ({"axis": None}, "over the last axis only"),
    ({"eps_outside": True}, "eps goes inside the square root"),
    ({"simple_backward": True}, "The mean and the variance depend on x too"),
    ({"unsummed_params": True}, "add up over all the leading axes"),
])
def test_each_layer_norm_mistake_gets_its_hint(mygrad, mistake, hint):
    fails_with(ch13.ch13_layer_norm, layer_norm(mygrad, **mistake), pkg=mygrad, hint=hint)


def test_the_test_layer_norm_without_mistakes_passes(mygrad):
    ch13.ch13_layer_norm(layer_norm(mygrad), pkg=mygrad, seed=11, hidden=True)


# -- ch13-attention ---------------------------------------------------------------------------
def attention(mygrad, *, scale=None, axis=-1, mask_after=False, upper=False):
    Variable, bmm = mygrad.Variable, mygrad.attention.bmm

    def attend(q, k, v, causal=False):
        d = q.shape[-1]
        scores = bmm(q, k.transpose(-1, -2)) * (1 / np.sqrt(d) if scale is None else scale(d))
        n = scores.shape[-1]
        allowed = np.triu(np.ones((n, n), bool)) if upper else np.tril(np.ones((n, n), bool))
        if causal and not mask_after:
            scores = scores + Variable(np.where(allowed, 0.0, -np.inf))
        weights = mygrad.Softmax.apply(scores, axis)
        if causal and mask_after:
            weights = weights * Variable(allowed.astype(float))
        return bmm(weights, v), weights
    return attend


def test_the_test_attention_without_mistakes_passes(mygrad):
    ch13.ch13_attention(attention(mygrad), pkg=mygrad, seed=11, hidden=True)


@pytest.mark.parametrize("mistake, hint", [
    ({"scale": lambda d: 1 / d}, "not by 1/d"),
    ({"scale": lambda d: 1.0}, "not by 1/d and not by nothing"),
    ({"axis": -2}, "softmax over the last axis"),
    ({"mask_after": True}, "Mask before the softmax"),
    ({"upper": True}, "lower triangle"),
])
def test_each_attention_mistake_gets_its_hint(mygrad, mistake, hint):
    fails_with(ch13.ch13_attention, attention(mygrad, **mistake), pkg=mygrad, hint=hint)


def test_attention_returning_only_the_output_is_told_to_return_the_weights(mygrad):
    key = mygrad.attention.attend
    fails_with(ch13.ch13_attention, lambda q, k, v, causal=False: key(q, k, v, causal)[0],
               pkg=mygrad, hint="return out, weights")


# -- ch13-heads -------------------------------------------------------------------------------
def test_splitting_without_the_transpose_mixes_tokens(mygrad):
    def split(x, n):
        b, t, d = x.shape
        return x.reshape(b, n, t, d // n)
    fails_with(ch13.ch13_heads, split, mygrad.attention.merge_heads, pkg=mygrad,
               hint="Split the feature axis first")


def test_splitting_the_features_the_wrong_way_round(mygrad):
    def split(x, n):
        b, t, d = x.shape
        return mygrad.Transpose.apply(x.reshape(b, t, d // n, n), (0, 3, 1, 2))
    fails_with(ch13.ch13_heads, split, mygrad.attention.merge_heads, pkg=mygrad,
               hint="Split the feature axis first")


def test_merging_without_the_transpose_interleaves_tokens(mygrad):
    def merge(x):
        b, h, t, d = x.shape
        return x.reshape(b, t, h * d)
    fails_with(ch13.ch13_heads, mygrad.attention.split_heads, merge, pkg=mygrad,
               hint="merge_heads undoes split_heads")


def test_splitting_with_numpy_cuts_the_graph(mygrad):
    def split(x, n):
        b, t, d = x.shape
        return mygrad.Variable(x.data.reshape(b, t, n, d // n).transpose(0, 2, 1, 3))
    fails_with(ch13.ch13_heads, split, mygrad.attention.merge_heads, pkg=mygrad,
               hint="Build split_heads from recorded operations")


def test_a_check_without_the_package_says_how_to_call_it(mygrad):
    fails_with(ch13.ch13_heads, mygrad.attention.split_heads, mygrad.attention.merge_heads,
               hint="pkg=mygrad")


def test_the_learner_writes_at_least_40_percent_of_attention_py():
    from autograd_lab.course.learner.ownership import key_table
    from ._checker_helpers import ROOT
    row = next(r for r in key_table([ROOT / "solutions"]) if r.module == "attention")
    assert row.share >= 0.40, f"attention.py: {row.learner} of {row.total} code lines are the learner's"
