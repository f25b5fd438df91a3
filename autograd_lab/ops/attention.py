"""Attention's weights: ``softmax(q @ k^T * scale + mask)`` along the keys, on the fused masked
row-softmax kernel (``kernels/attention.py``), and the masks that PyTorch's
``scaled_dot_product_attention`` accepts.

A fully masked row (a query whose every key is masked, by a bool mask, by ``-inf`` in a float
mask, or by ``is_causal`` when there are more queries than keys) gets weight zero on every key, so
its output is zero and no NaN reaches the forward or the backward: PyTorch 2.13's
``scaled_dot_product_attention`` defines it so too.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..grad_mode import is_grad_enabled
from ..primitives import sum_to, sum_to_array
from ..variable import Variable
from ._util import wrap
from .activation import K, float_data
from .linalg import matmul
from .shape import transpose


class MaskedSoftmax(Function):
    """y = softmax(x * scale + add) over the last dim, masked keys at 0;
    grad_x = scale * y * (g - sum(g * y)),  grad_add = y * (g - sum(g * y)) summed to add's shape"""

    @staticmethod
    def forward(ctx, x, add, keep, causal, scale):
        rows = x.data.reshape(-1, x.shape[-1])
        a = None if add is None else _mask_rows(add.data, x.shape)
        k = None if keep is None else _mask_rows(keep, x.shape)
        y = wrap(K.masked_softmax_fwd(rows, a, k, causal, scale).reshape(x.shape))
        ctx.scale, ctx.add_shape = scale, None if add is None else add.shape
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        need_x, need_add = ctx.needs_input_grad[:2]
        if is_grad_enabled():  # differentiable path (create_graph=True)
            t = y * (grad - (grad * y).sum(axis=-1, keepdims=True))
            return t * ctx.scale, sum_to(t, ctx.add_shape) if need_add else None, None, None, None
        g = grad.data.astype(y.dtype, copy=False).reshape(-1, y.shape[-1])
        y2 = y.data.reshape(-1, y.shape[-1])
        if need_add:
            t = K.masked_softmax_bwd(y2, g, 1.0).reshape(y.shape)
            return (t * ctx.scale if need_x else None), sum_to_array(t, ctx.add_shape), None, None, None
        return K.masked_softmax_bwd(y2, g, ctx.scale).reshape(y.shape), None, None, None, None


def _mask_rows(mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A mask that broadcasts to the scores' ``shape``, as the kernel's repeating 2-d rows: the
    last two dims alone when the mask is the same for every (batch, head), else in full."""
    m = np.asarray(mask)
    cols = shape[-1]
    if m.ndim < 2:
        return np.broadcast_to(m.reshape(1, -1), (1, cols))
    if all(d == 1 for d in m.shape[:-2]):
        rows = m.reshape(m.shape[-2], m.shape[-1])
        return np.broadcast_to(rows, (rows.shape[0], cols))
    return np.broadcast_to(m, shape).reshape(-1, cols)


def _check_mask(mask: Any, scores_shape: tuple[int, ...], dtype: np.dtype) -> tuple[Any, Any]:
    """(add, keep) from an ``attn_mask``: a float mask (added) or a bool mask (True = takes part)."""
    data = mask.data if isinstance(mask, Variable) else np.asarray(mask)
    if data.dtype != np.bool_ and data.dtype.kind != "f":
        raise TypeError(f"scaled_dot_product_attention: attn_mask must be bool (True = take part) or "
                        f"float (added to the scores), got dtype {data.dtype}; compare first, e.g. "
                        f"mask != 0, or convert with mask.to(query.dtype)")
    try:
        fits = np.broadcast_shapes(data.shape, scores_shape) == tuple(scores_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"scaled_dot_product_attention: attn_mask of shape {data.shape} does not "
                         f"broadcast to the attention scores' shape {scores_shape} (..., L, S); "
                         f"give it shape (L, S) or one that broadcasts to (..., L, S)")
    if data.dtype == np.bool_:
        return None, data
    add = mask if isinstance(mask, Variable) else Variable(data)
    return (add.to(dtype) if add.dtype != dtype else add), None


def _check_qkv(q: Variable, k: Variable, v: Variable) -> None:
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ShapeError(f"scaled_dot_product_attention: query, key and value must be at least 2-d "
                         f"(..., L, E), (..., S, E), (..., S, Ev); got shapes {q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(f"scaled_dot_product_attention: query and key must share their last dim E; "
                         f"got query {q.shape} and key {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention: key and value must have the same number of "
                         f"keys S (dim -2); got key {k.shape} and value {v.shape}")


def _repeat_heads(q: Variable, k: Variable, v: Variable) -> tuple[Variable, Variable]:
    """enable_gqa: each of key's and value's heads serves ``Hq // Hk`` query heads (dim -3)."""
    from .indexing import index_select

    if q.ndim < 3 or k.ndim < 3 or v.ndim < 3:
        raise ShapeError("scaled_dot_product_attention: enable_gqa needs inputs with a heads dim "
                         f"(..., H, L, E); got shapes {q.shape}, {k.shape}, {v.shape}")
    hq, hk = q.shape[-3], k.shape[-3]
    if hk == 0 or hq % hk or v.shape[-3] != hk:
        raise ShapeError(f"scaled_dot_product_attention: with enable_gqa the query's heads ({hq}) must "
                         f"be a multiple of the key's and value's heads (key {hk}, value {v.shape[-3]})")
    if hq == hk:
        return k, v
    idx = np.repeat(np.arange(hk), hq // hk)
    return index_select(k, k.ndim - 3, idx), index_select(v, v.ndim - 3, idx)


def attention_weights(query: Variable, key: Variable, value: Variable, attn_mask: Any = None,
                      is_causal: bool = False, scale: float | None = None,
                      enable_gqa: bool = False) -> tuple[Variable, Variable]:
    """(weights, value): softmax(query @ key^T * scale + mask) of shape (..., L, S), and the value
    the weights multiply (its heads repeated under ``enable_gqa``). ``is_causal`` lets query ``i``
    see keys ``0..i`` (the top-left aligned lower triangle, as PyTorch); like PyTorch's documented
    rule, it refuses an ``attn_mask`` beside it (ValueError)."""
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: an explicit attn_mask should not be set when "
                         "is_causal=True; fold the causal triangle into the mask instead, e.g. "
                         "attn_mask=mask & al.ones(L, S, dtype=bool).tril()")
    _check_qkv(query, key, value)
    if enable_gqa:
        key, value = _repeat_heads(query, key, value)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if query.dtype.kind != "f" or key.dtype != query.dtype or value.dtype != query.dtype:
        raise TypeError(f"scaled_dot_product_attention: query, key and value must have one floating "
                        f"dtype; got {query.dtype}, {key.dtype}, {value.dtype}")
    scores = matmul(query, transpose(key, -2, -1))
    add = keep = None
    if attn_mask is not None:
        add, keep = _check_mask(attn_mask, scores.shape, scores.dtype)
    causal = scores.shape[-2] if is_causal else 0
    if not scores.size:
        return wrap(np.zeros(scores.shape, dtype=float_data(scores).dtype)), value
    return MaskedSoftmax.apply(scores, add, keep, causal, scale), value
