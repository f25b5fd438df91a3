"""The embedding lookup as one Function: rows of a table at integer indices, the gradient added
back into the table (repeated indices add up; the ``padding_idx`` row gets none)."""
from __future__ import annotations

import numpy as np

from ..function import Function
from ..grad_mode import is_grad_enabled
from ..variable import Variable
from ._util import wrap
from .activation import FLOATS, K


class Embedding(Function):
    """y[..., :] = weight[idx[...], :];  grad_weight[r] = sum of g[i] over the i with idx[i] = r
    (none for r = padding_idx)"""

    @staticmethod
    def forward(ctx, weight, idx, padding_idx):
        i = idx.data
        ctx.idx, ctx.num, ctx.skip = i.reshape(-1), weight.shape[0], -1 if padding_idx is None else padding_idx
        return wrap(weight.data[i])

    @staticmethod
    def backward(ctx, grad):
        dim = grad.shape[-1]
        if is_grad_enabled() or grad.dtype not in FLOATS:  # differentiable path (create_graph=True)
            from .indexing import index_add

            g = grad.reshape((-1, dim))
            if ctx.skip >= 0:
                g = g * Variable((ctx.idx != ctx.skip).astype(grad.dtype)[:, None])
            table = Variable(np.zeros((ctx.num, dim), dtype=grad.dtype))
            return index_add(table, 0, ctx.idx, g), None, None
        return K.embedding_bwd(ctx.idx, grad.data.reshape(-1, dim), ctx.num, ctx.skip), None, None
