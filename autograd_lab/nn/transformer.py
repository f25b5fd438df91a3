"""Attention layers: ``MultiheadAttention``, with PyTorch's arguments, parameter names and
state_dict keys, so a PyTorch state_dict loads into it.

>>> import numpy as np, autograd_lab as al, autograd_lab.nn as nn
>>> mha = nn.MultiheadAttention(8, 2, batch_first=True, seed=0)
>>> x = al.randn(3, 5, 8, seed=1, dtype=np.float32)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape
((3, 5, 8), (3, 5, 5))
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from ..dtypes import check_device
from ..errors import ShapeError
from ..factories import Generator, numpy_rng
from ..ops.attention import attention_weights
from ..ops.linalg import matmul
from ..variable import Variable
from .init import default_init_
from .layers import Linear
from .module import Module, Parameter


class MultiheadAttention(Module):
    """Attention from ``num_heads`` heads of size ``embed_dim // num_heads``, then ``out_proj``.

    Parameters as PyTorch's: ``in_proj_weight`` (3E, E) stacking the query, key and value
    projections (or ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` when ``kdim`` or
    ``vdim`` differ from ``embed_dim``), ``in_proj_bias`` (3E), ``out_proj.weight`` and
    ``out_proj.bias``; initialised as PyTorch does (Xavier-uniform projections, zero biases).

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)`` as PyTorch: the
    masks' True entries are the keys that may NOT be attended to (float masks are added), and
    ``is_causal`` is a hint that ``attn_mask`` is the causal mask (it needs the mask); without a
    ``key_padding_mask`` the causal triangle is then used in place of the mask, as PyTorch does.

    A query whose every key is masked: with ``need_weights=False`` its attention is zero (no NaN),
    as PyTorch's; with ``need_weights=True`` PyTorch returns NaN weights and outputs there, and
    this layer raises a ValueError naming the fix instead. ``add_bias_kv`` and ``add_zero_attn``
    are not supported (NotImplementedError).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None, *, seed: int | None = None, generator: Generator | None = None) -> None:
        super().__init__()
        check_device(device)
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be a positive multiple "
                             f"of num_heads ({num_heads})")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported "
                                      "by autograd_lab; leave them False")
        dtype = np.dtype(np.float32 if dtype is None else dtype)
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = self.embed_dim // self.num_heads
        self.kdim = self.embed_dim if kdim is None else int(kdim)
        self.vdim = self.embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.add_zero_attn, self.bias_k, self.bias_v = False, None, None
        rng = numpy_rng(seed, generator)
        e = self.embed_dim
        self.in_proj_weight: Parameter | None
        self.q_proj_weight: Parameter | None
        self.k_proj_weight: Parameter | None
        self.v_proj_weight: Parameter | None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_xavier((3 * e, e), rng, dtype))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(_xavier((e, e), rng, dtype))
            self.k_proj_weight = Parameter(_xavier((e, self.kdim), rng, dtype))
            self.v_proj_weight = Parameter(_xavier((e, self.vdim), rng, dtype))
        self.in_proj_bias = Parameter(np.zeros(3 * e, dtype=dtype)) if bias else None
        self.out_proj = Linear(e, e, bias=bias, dtype=dtype, seed=0)
        default_init_(self.out_proj.weight, None, rng)  # drawn from this layer's generator too
        if self.out_proj.bias is not None:
            self.out_proj.bias.data[...] = 0

    def forward(self, query: Variable, key: Variable, value: Variable, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Variable, Variable | None]:
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal=True is a hint that attn_mask is the causal "
                             "mask, so it needs attn_mask; pass e.g. attn_mask=al.ones(L, L, dtype=bool)"
                             ".triu(1) (True = may not attend)")
        unbatched = query.ndim == 2
        q, k, v = (_batch_major(t, self.batch_first, unbatched) for t in (query, key, value))
        n, length, _ = q.shape
        s = k.shape[1]
        q, k, v = self._project(q, k, v)
        heads = [_split_heads(t, self.num_heads) for t in (q, k, v)]
        if is_causal and key_padding_mask is None:  # trust the hint, as PyTorch does: the kernel's
            mask = None                             # own triangle, no mask array to read
            _merged_mask(attn_mask, None, n, self.num_heads, length, s, q.dtype, unbatched)  # its checks
        else:
            mask = _merged_mask(attn_mask, key_padding_mask, n, self.num_heads, length, s, q.dtype, unbatched)
        weights, _ = attention_weights(heads[0], heads[1], heads[2], mask, is_causal and mask is None)
        if need_weights and mask is not None and (weights.data.sum(axis=-1) == 0).any():
            raise ValueError("MultiheadAttention: a query has every key masked; PyTorch gives NaN weights and "
                             "outputs there when need_weights=True. Unmask at least one key per query, or "
                             "pass need_weights=False for zero attention in that row (as PyTorch does)")
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout)
        out = matmul(weights, heads[2]).transpose(1, 2).reshape((n, length, self.embed_dim))
        out = self.out_proj(out)
        out = out[0] if unbatched else (out if self.batch_first else out.transpose(0, 1))
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(axis=1)
        return out, (weights[0] if unbatched else weights)

    def _project(self, q: Variable, k: Variable, v: Variable) -> tuple[Variable, Variable, Variable]:
        e, b, w = self.embed_dim, self.in_proj_bias, self.in_proj_weight
        if w is not None and q is k and k is v:  # self-attention: one product
            qkv = F.linear(q, w, b)
            return qkv[..., :e], qkv[..., e:2 * e], qkv[..., 2 * e:]
        ws: tuple[Variable, Variable, Variable]
        if w is not None:
            ws = (w[:e], w[e:2 * e], w[2 * e:])
        else:  # kdim or vdim differ from embed_dim: __init__ made the three
            qw, kw, vw = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
            assert qw is not None and kw is not None and vw is not None
            ws = (qw, kw, vw)
        bs: tuple[Any, Any, Any] = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        return F.linear(q, ws[0], bs[0]), F.linear(k, ws[1], bs[1]), F.linear(v, ws[2], bs[2])


def _xavier(shape: tuple[int, int], rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
    bound = math.sqrt(6.0 / (shape[0] + shape[1]))
    return rng.uniform(-bound, bound, size=shape).astype(dtype)


def _batch_major(x: Any, batch_first: bool, unbatched: bool) -> Variable:
    """x as (N, L, E)."""
    x = x if isinstance(x, Variable) else Variable(x)
    if x.ndim != (2 if unbatched else 3):
        raise ShapeError(f"MultiheadAttention: query, key and value must all be 3-d (batched) or all 2-d "
                         f"(unbatched); got a {x.ndim}-d input of shape {x.shape}")
    if unbatched:
        return x.unsqueeze(0)
    return x if batch_first else x.transpose(0, 1)


def _split_heads(x: Variable, heads: int) -> Variable:
    """(N, L, E) -> (N, heads, L, E // heads)."""
    n, length, e = x.shape
    return x.reshape((n, length, heads, e // heads)).transpose(1, 2)


def _additive(mask: Any, dtype: np.dtype, name: str) -> np.ndarray | Variable:
    """PyTorch's mask convention: bool True = may not attend (-inf), float = added."""
    data = mask.data if isinstance(mask, Variable) else np.asarray(mask)
    if data.dtype == np.bool_:
        return np.where(data, -np.inf, 0.0).astype(dtype)
    if data.dtype.kind != "f":
        raise TypeError(f"MultiheadAttention: only bool and floating types of {name} are supported, "
                        f"got dtype {data.dtype}")
    return mask if isinstance(mask, Variable) and mask.requires_grad else data.astype(dtype, copy=False)


def _merged_mask(attn_mask: Any, key_padding_mask: Any, n: int, heads: int, length: int, s: int,
                 dtype: np.dtype, unbatched: bool) -> Any:
    """attn_mask ((L, S) or (N * heads, L, S)) plus key_padding_mask ((N, S)), as one float mask
    broadcasting to (N, heads, L, S); None when neither is given."""
    merged: Any = None
    if attn_mask is not None:
        a = _additive(attn_mask, dtype, "attn_mask")
        if a.shape == (length, s):
            merged = a
        elif a.ndim == 3 and a.shape == (n * heads, length, s):
            merged = a.reshape((n, heads, length, s))
        else:
            raise ShapeError(f"MultiheadAttention: attn_mask must have shape ({length}, {s}) or "
                             f"({n * heads}, {length}, {s}) (batch * heads, L, S); got {tuple(a.shape)}")
    if key_padding_mask is not None:
        p = _additive(key_padding_mask, dtype, "key_padding_mask")
        want = (s,) if unbatched else (n, s)
        if tuple(p.shape) != want:
            raise ShapeError(f"MultiheadAttention: key_padding_mask must have shape {want} (batch, S); "
                             f"got {tuple(p.shape)}")
        p = p.reshape((n, 1, 1, s))
        merged = p if merged is None else merged + p
    return merged
