"""Checkers for chapter 13, attention: an embedding lookup, LayerNorm as a Function, causal
scaled dot-product attention and the heads of multi-head attention, all on the learner's
``mygrad`` (graded cells pass ``pkg=mygrad``).

The references are numpy formulas and ``autograd_lab``'s own ``F.layer_norm`` and
``F.scaled_dot_product_attention`` (the PyTorch-exact library); each exercise's typical mistakes
are computed next to them, so that a wrong answer gets the hint that names its cause.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import functional as F
from autograd_lab import tensor
from ._common import Checker, grad_data
from ._common import library_under_test as _library_of

__all__ = ["ch13_embedding", "ch13_layer_norm", "ch13_attention", "ch13_heads",
           "attention_reference", "mygrad_attention"]


def _require_pkg(ck: Checker, pkg: Any) -> None:
    ck.check(pkg is not None and hasattr(pkg, "Variable"), "no package was given.",
             hint="Call the check as in the graded cell: check.ch13_...(..., pkg=mygrad).")


def _data(ck: Checker, value: Any, what: str) -> np.ndarray:
    if value is None:
        ck.fail(f"the {what} is None.", hint="Did you forget the `return` statement?")
    return np.asarray(getattr(value, "data", value))


def _grad(ck: Checker, v: Any, what: str, hint: str) -> np.ndarray:
    if getattr(v, "grad", None) is None:
        ck.fail(f"{what} got no gradient.", hint=hint)
    return np.asarray(v.grad.data)


# -- ch13-embedding ---------------------------------------------------------------------------
_SCATTER_HINT = ("A token that appears several times in the batch was looked up several times, "
                 "so its row receives the sum of all those gradients. `grad[idx] = g` and even "
                 "`grad[idx] += g` keep only one of them (numpy's fancy-index += is buffered); "
                 "np.add.at(grad, idx, g) adds every one.")
_COUNT_HINT = ("Each looked-up row receives the gradient arriving at its position, "
               "grad_output, not 1: np.add.at(grad, idx, grad_output.data).")
_TABLE_HINT = ("weight's gradient has weight's shape (num_embeddings, dim), one row per token id: "
               "start from zeros of that shape and add each position's gradient into its token's "
               "row; grad_output itself has one row per position.")


def _embedding_mistakes(shape: tuple[int, ...], idx: np.ndarray, g: np.ndarray) -> list:
    assigned = np.zeros(shape)
    assigned[idx] = g
    counted = np.zeros(shape)
    np.add.at(counted, idx, np.ones_like(g))
    return [(assigned, _SCATTER_HINT), (counted, _COUNT_HINT)]


def ch13_embedding(Embedding: type[Any], *, seed: int = 0, hidden: bool = False,
                   pkg: Any = None) -> None:
    """Check ``Embedding.apply(weight, idx)``: the rows ``weight[idx]`` for an int array ``idx``
    of any shape; backward adds each position's gradient into its token's row (repeated tokens
    add up) and gives ``idx`` no gradient."""
    ck = Checker("ch13-embedding", seed=seed, hidden=hidden)
    _require_pkg(ck, pkg)
    rng = ck.rng
    configs = [(5, 3, (2, 4)), (7, 4, (6,))] + ([(3, 2, (3, 5)), (10, 6, (1, 2, 3))] if hidden else [])
    for vocab, dim, idx_shape in configs:
        with ck.case(f"a table ({vocab}, {dim}), indices of shape {idx_shape} with repeats"):
            table = np.round(rng.normal(size=(vocab, dim)), 3)
            idx = rng.integers(0, vocab, size=idx_shape)
            idx.flat[0] = idx.flat[-1]                       # at least one repeated token
            weight = pkg.Variable(table.copy(), requires_grad=True)
            out = ck.call(Embedding.apply, weight, idx)
            ck.close(_data(ck, out, "lookup"), table[idx], atol=1e-12, what="lookup",
                     hint="forward returns Variable(weight.data[idx]): one row per index.")
            g = np.round(rng.uniform(-1, 1, size=idx_shape + (dim,)), 3)
            ck.call(out.backward, pkg.Variable(g), hint=_TABLE_HINT)
            got = _grad(ck, weight, "weight", _TABLE_HINT)
            if got.shape != table.shape:
                ck.fail(f"weight's gradient has shape {got.shape}, expected {table.shape}.",
                        hint=_TABLE_HINT)
            want = np.zeros(table.shape)
            np.add.at(want, idx, g)
            ck.close(got, want, atol=1e-12, what="gradient of weight", hint=_SCATTER_HINT,
                     mistakes=_embedding_mistakes(table.shape, idx, g))
    with ck.case("the same token everywhere: its row gets the sum of every gradient"):
        table = np.round(rng.normal(size=(4, 3)), 3)
        weight = pkg.Variable(table.copy(), requires_grad=True)
        idx = np.full((2, 3), 2)
        out = ck.call(Embedding.apply, weight, idx)
        g = np.round(rng.uniform(-1, 1, size=(2, 3, 3)), 3)
        ck.call(out.backward, pkg.Variable(g), hint=_TABLE_HINT)
        want = np.zeros((4, 3))
        want[2] = g.reshape(-1, 3).sum(axis=0)
        ck.close(_grad(ck, weight, "weight", _TABLE_HINT), want, atol=1e-12,
                 what="gradient of weight", hint=_SCATTER_HINT,
                 mistakes=_embedding_mistakes((4, 3), idx, g))
    ck.done()


# -- ch13-layer-norm --------------------------------------------------------------------------
_VAR_HINT = ("LayerNorm divides by the *biased* standard deviation, as PyTorch's: var = mean((x - "
             "mean)²) over the last axis, dividing by D, not D - 1 (np.var's default ddof=0, not "
             "ddof=1).")
_EPS_HINT = "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (std + eps)."
_AXIS_HINT = ("Normalize each row (each token's features) on its own: mean and variance over the "
              "last axis only, with keepdims=True, not over the whole array or the first axis.")
_BACKWARD_HINT = ("The mean and the variance depend on x too. With x̂ = (x - mean)·rstd and "
                  "ĝ = grad_output·weight: grad_x = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)), means over the "
                  "last axis. Leaving out the last two terms treats mean and rstd as constants.")
_PARAM_HINT = ("weight and bias are shared by every row, so their gradients add up over all the "
               "leading axes: grad_weight = (grad_output·x̂).sum over every axis but the last, "
               "grad_bias = grad_output.sum over the same axes; each has weight's shape (D,).")


def _layer_norm_np(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float, *, ddof: int = 0,
                   eps_outside: bool = False, axis: int | None = -1) -> np.ndarray:
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    denom = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    return (x - mu) / denom * w + b


def _layer_norm_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float,
                          g: np.ndarray) -> tuple[np.ndarray, ...]:
    """Value and the gradients of x, w and b, from autograd_lab's F.layer_norm (float64)."""
    xs, ws, bs = (tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.layer_norm(xs, (x.shape[-1],), ws, bs, eps)
    y.backward(tensor(g))
    return y.data, grad_data(xs), grad_data(ws), grad_data(bs)


def ch13_layer_norm(LayerNormFunction: type[Any], *, seed: int = 0, hidden: bool = False,
                    pkg: Any = None) -> None:
    """Check ``LayerNormFunction.apply(x, weight, bias, eps)``: normalization over the last axis
    with the biased variance and eps inside the root, then ``* weight + bias``; a hand-written
    backward for x, weight and bias (against autograd_lab's F.layer_norm and central
    differences)."""
    ck = Checker("ch13-layer-norm", seed=seed, hidden=hidden)
    _require_pkg(ck, pkg)
    rng = ck.rng
    lib = _library_of(pkg)
    shapes = [(4, 5), (2, 3, 6)] + ([(7, 2), (2, 2, 2, 4)] if hidden else [])
    for shape in shapes:
        with ck.case(f"x of shape {shape}: values and gradients of x, weight and bias"):
            x = np.round(rng.normal(1.0, 2.0, size=shape), 3)
            w = np.round(rng.uniform(0.5, 1.5, size=shape[-1]), 3)
            b = np.round(rng.normal(size=shape[-1]), 3)
            g = np.round(rng.uniform(-1, 1, size=shape), 3)
            want, gx, gw, gb = _layer_norm_reference(x, w, b, 1e-5, g)
            xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
            out = ck.call(LayerNormFunction.apply, xs, ws, bs, 1e-5)
            mistakes = [(_layer_norm_np(x, w, b, 1e-5, ddof=1), _VAR_HINT),
                        (_layer_norm_np(x, w, b, 1e-5, axis=None), _AXIS_HINT),
                        (_layer_norm_np(x, w, b, 1e-5, axis=0), _AXIS_HINT),
                        (_layer_norm_np(x, w, b, 1e-5, eps_outside=True), _EPS_HINT)]
            ck.close(_data(ck, out, "output"), want, atol=1e-9, what="output", hint=_AXIS_HINT,
                     mistakes=mistakes)
            ck.call(out.backward, pkg.Variable(g), hint="backward returns one gradient per input "
                    "(and None for eps), each shaped like its input. " + _PARAM_HINT)
            rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
            ck.close(_grad(ck, xs, "x", _BACKWARD_HINT), gx, atol=1e-8, what="gradient of x",
                     hint=_BACKWARD_HINT, mistakes=[(g * w * rstd, _BACKWARD_HINT)])
            for name, v, want_g in (("weight", ws, gw), ("bias", bs, gb)):
                got = _grad(ck, v, name, _PARAM_HINT)
                ck.check(got.shape == want_g.shape, f"the gradient of {name} has shape "
                         f"{got.shape}, expected {want_g.shape}.", hint=_PARAM_HINT)
                ck.close(got, want_g, atol=1e-8, what=f"gradient of {name}", hint=_PARAM_HINT)
    with ck.case("features that barely vary: eps inside the square root"):
        x = 1.0 + np.round(rng.normal(size=(3, 4)), 3) * 1e-3
        w, b = np.ones(4), np.zeros(4)
        want = _layer_norm_reference(x, w, b, 1e-5, np.ones_like(x))[0]
        out = ck.call(LayerNormFunction.apply, lib.tensor(x), lib.tensor(w), lib.tensor(b), 1e-5)
        ck.close(_data(ck, out, "output"), want, atol=1e-9, what="output", hint=_EPS_HINT,
                 mistakes=[(_layer_norm_np(x, w, b, 1e-5, eps_outside=True), _EPS_HINT)])
    with ck.case("gradcheck: backward agrees with central differences"):
        x = rng.normal(size=(3, 4))
        inputs = (lib.tensor(x, requires_grad=True), lib.tensor(rng.uniform(0.5, 1.5, 4), requires_grad=True),
                  lib.tensor(rng.normal(size=4), requires_grad=True))
        try:
            ok = lib.gradcheck(lambda a, c, d: LayerNormFunction.apply(a, c, d, 1e-5), inputs)
        except AssertionError as err:
            ck.fail(str(err), hint=_BACKWARD_HINT)
        ck.check(ok is True, "the gradient check did not pass.", hint=_BACKWARD_HINT)
    ck.done()


# -- ch13-attention ---------------------------------------------------------------------------
_SCALE_HINT = ("Scale the scores by 1/√d, d = the last axis of q (the size of each query), not "
               "by 1/d and not by nothing: q·k of two random d-vectors has a spread of about √d.")
_AXIS_SOFTMAX_HINT = ("Each query's weights over the keys sum to 1: softmax over the last axis of "
                      "the scores (..., T_q, T_k), not over the queries (axis -2).")
_AFTER_HINT = ("Mask before the softmax: set the scores of future keys to -inf (add a mask of "
               "0 and -inf), so that their exp is exactly 0 and the weights of the rest still "
               "sum to 1. Zeroing weights after the softmax leaves rows that sum to less than 1.")
_TRIANGLE_HINT = ("The causal mask lets query i see keys 0..i: allowed where key ≤ query, the "
                  "lower triangle with the diagonal (np.tril), not the upper one.")


def _softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                        *, scale: float | None = None, axis: int = -1, mask_after: bool = False,
                        upper: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q kᵀ · scale + mask) v and its weights, in numpy; the keywords make the typical
    mistakes (another scale, the softmax's axis, masking after the softmax, the wrong triangle)."""
    d = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(d) if scale is None else scale)
    t_q, t_k = s.shape[-2:]
    allowed = np.triu(np.ones((t_q, t_k), bool)) if upper else np.tril(np.ones((t_q, t_k), bool))
    if causal and not mask_after:
        s = np.where(allowed, s, -np.inf)
    w = _softmax(s, axis)
    if causal and mask_after:
        w = w * allowed
    return w @ v, w


def _attention_mistakes(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> list:
    d = q.shape[-1]
    out = [(attention_reference(q, k, v, causal, scale=1 / d)[0], _SCALE_HINT),
           (attention_reference(q, k, v, causal, scale=1.0)[0], _SCALE_HINT),
           (attention_reference(q, k, v, causal, axis=-2)[0], _AXIS_SOFTMAX_HINT)]
    if causal:
        out += [(attention_reference(q, k, v, True, mask_after=True)[0], _AFTER_HINT),
                (attention_reference(q, k, v, True, upper=True)[0], _TRIANGLE_HINT)]
    return out


def _attention_grads(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
                     g: np.ndarray) -> tuple[np.ndarray, ...]:
    qs, ks, vs = (tensor(a, requires_grad=True) for a in (q, k, v))
    F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).backward(tensor(g))
    return grad_data(qs), grad_data(ks), grad_data(vs)


def ch13_attention(attend: Callable[..., Any], *, seed: int = 0, hidden: bool = False,
                   pkg: Any = None) -> None:
    """Check ``attend(q, k, v, causal=False) -> (output, weights)`` on Variables of shape
    (..., T, d): softmax(q kᵀ/√d) v, with future keys given exactly zero weight when ``causal``;
    gradients of q, k and v as autograd_lab's F.scaled_dot_product_attention, never NaN."""
    ck = Checker("ch13-attention", seed=seed, hidden=hidden)
    _require_pkg(ck, pkg)
    rng = ck.rng
    configs = [((5, 4), False), ((2, 5, 4), True), ((2, 3, 6, 8), True)]
    if hidden:
        configs += [((1, 7, 2), True), ((3, 4, 3), False)]
    for shape, causal in configs:
        with ck.case(f"q, k, v of shape {shape}, causal={causal}: output, weights, gradients"):
            q, k, v = (np.round(rng.normal(size=shape), 3) for _ in range(3))
            want, want_w = attention_reference(q, k, v, causal)
            qs, ks, vs = (pkg.Variable(a.copy(), requires_grad=True) for a in (q, k, v))
            result = ck.call(attend, qs, ks, vs, causal=causal)
            ck.check(isinstance(result, tuple) and len(result) == 2, "attend should return "
                     "two things, (output, weights).", received=type(result).__name__,
                     hint="return the output and the softmax weights: return out, weights.")
            out, weights = result
            ck.close(_data(ck, out, "output"), want, atol=1e-9, what="output",
                     hint=_SCALE_HINT, mistakes=_attention_mistakes(q, k, v, causal))
            w = _data(ck, weights, "weights")
            ck.close(w, want_w, atol=1e-9, what="weights", hint=_AXIS_SOFTMAX_HINT)
            if causal:
                ck.check(bool(np.all(np.triu(w, 1) == 0.0)),
                         "a masked (future) position has a weight that is not exactly 0.",
                         hint=_AFTER_HINT)
            g = np.round(rng.uniform(-1, 1, size=want.shape), 3)
            ck.call(out.backward, pkg.Variable(g))
            for name, var, ref in zip("qkv", (qs, ks, vs), _attention_grads(q, k, v, causal, g)):
                got = _grad(ck, var, name, "attend must be built from recorded operations "
                            "(bmm, Softmax, ...) on q, k and v.")
                ck.check(bool(np.all(np.isfinite(got))), f"the gradient of {name} holds NaN or "
                         "inf.", hint=_AFTER_HINT)
                ck.close(got, ref, atol=1e-8, what=f"gradient of {name}", hint=_SCALE_HINT)
    with ck.case("large scores: no overflow, masked weights exactly 0, no NaN"):
        q, k, v = (rng.normal(size=(4, 3)) * 40 for _ in range(3))
        qs = pkg.Variable(q.copy(), requires_grad=True)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            try:
                out, w = attend(qs, pkg.Variable(k), pkg.Variable(v), causal=True)
                out.backward(pkg.Variable(np.ones(out.shape)))
            except FloatingPointError as err:
                ck.fail(f"numpy raised {err}.", hint="Subtract each row's max before exp (your "
                        "Softmax of chapter 05 does) and use -inf (or a very negative number) for "
                        "masked scores: -inf minus a finite max is still -inf, and exp(-inf) = 0.")
        ck.close(_data(ck, out, "output"), attention_reference(q, k, v, True)[0], atol=1e-8,
                 what="output", hint=_AFTER_HINT)
        ck.check(bool(np.all(np.triu(_data(ck, w, "weights"), 1) == 0.0)),
                 "a masked weight is not exactly 0.", hint=_AFTER_HINT)
        ck.check(bool(np.all(np.isfinite(_grad(ck, qs, "q", _AFTER_HINT)))),
                 "the gradient of q holds NaN or inf.", hint=_AFTER_HINT)
    ck.done()


# -- ch13-heads -------------------------------------------------------------------------------
_SPLIT_HINT = ("Split the feature axis first: (B, T, D) → reshape (B, T, H, D/H) → transpose to "
               "(B, H, T, D/H). Reshaping straight to (B, H, T, D/H) mixes features of different "
               "tokens into one head.")
_MERGE_HINT = ("merge_heads undoes split_heads in reverse order: transpose (B, H, T, d) back to "
               "(B, T, H, d), then reshape to (B, T, H·d). Reshaping without the transpose "
               "interleaves the tokens.")


def ch13_heads(split_heads: Callable[..., Any], merge_heads: Callable[..., Any], *, seed: int = 0,
               hidden: bool = False, pkg: Any = None) -> None:
    """Check ``split_heads(x, n_heads)``: (B, T, D) → (B, H, T, D/H), head h holding features
    h·D/H … (h+1)·D/H − 1 of every token, and ``merge_heads(x)``, its inverse; both recorded, so
    gradients flow back through them."""
    ck = Checker("ch13-heads", seed=seed, hidden=hidden)
    _require_pkg(ck, pkg)
    rng = ck.rng
    configs = [(2, 3, 8, 2), (1, 5, 6, 3)] + ([(3, 2, 4, 4), (2, 4, 6, 1)] if hidden else [])
    for b, t, d, h in configs:
        with ck.case(f"x of shape ({b}, {t}, {d}), {h} head{'s' if h > 1 else ''}: split, merge, gradients"):
            x = np.round(rng.normal(size=(b, t, d)), 3)
            want = x.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)
            xs = pkg.Variable(x.copy(), requires_grad=True)
            parts = ck.call(split_heads, xs, h)
            ck.close(_data(ck, parts, "split"), want, atol=0, what="split heads", hint=_SPLIT_HINT,
                     mistakes=[(x.reshape(b, h, t, d // h), _SPLIT_HINT),
                               (x.reshape(b, t, d // h, h).transpose(0, 3, 1, 2), _SPLIT_HINT)])
            y = pkg.Variable(np.round(rng.normal(size=want.shape), 3), requires_grad=True)
            merged = ck.call(merge_heads, y)
            ck.close(_data(ck, merged, "merge"), y.data.transpose(0, 2, 1, 3).reshape(b, t, d),
                     atol=0, what="merged heads", hint=_MERGE_HINT,
                     mistakes=[(y.data.reshape(b, t, d), _MERGE_HINT)])
            back = ck.call(merge_heads, parts)
            ck.close(_data(ck, back, "merge_heads(split_heads(x))"), x, atol=0,
                     what="merge_heads(split_heads(x, H))", hint=_MERGE_HINT)
            ck.check(getattr(parts, "grad_fn", None) is not None, "split_heads' result is not "
                     "in the graph (it has no grad_fn), so no gradient can reach x.",
                     received=parts, hint="Build split_heads from recorded operations: "
                     "x.reshape(...) and x.transpose(...) of mygrad, not numpy on x.data.")
            g = np.round(rng.uniform(-1, 1, size=want.shape), 3)
            ck.call(parts.backward, pkg.Variable(g))
            ck.close(_grad(ck, xs, "x", "Build split_heads from recorded operations: "
                           "x.reshape(...) and x.transpose(...) of mygrad."),
                     g.transpose(0, 2, 1, 3).reshape(b, t, d), atol=0, what="gradient of x",
                     hint=_SPLIT_HINT)
    with ck.case("D not divisible by the number of heads raises ValueError"):
        ck.raises(ValueError, split_heads, pkg.Variable(np.zeros((1, 2, 6))), 4,
                  hint="Check D % n_heads == 0 and raise ValueError naming D and n_heads.")
    ck.done()


# -- the loader's check of the learner's mygrad/attention.py ------------------------------------
def mygrad_attention(pkg: Any) -> None:
    """``mygrad.attention``: Embedding, LayerNormFunction, attend, split_heads/merge_heads."""
    att = pkg.attention
    ch13_embedding(att.Embedding, pkg=pkg)
    ch13_layer_norm(att.LayerNormFunction, pkg=pkg)
    ch13_attention(att.attend, pkg=pkg)
    ch13_heads(att.split_heads, att.merge_heads, pkg=pkg)
