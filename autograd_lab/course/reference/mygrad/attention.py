"""Attention: Embedding, LayerNorm as a Function, causal scaled dot-product attention, multi-head."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .grad_mode import *  # noqa: F401,F403
from .kernels import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .optim import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .higher import *  # noqa: F401,F403
from .capstone import *  # noqa: F401,F403
__all__ = ['BatchMatMul', 'Embedding', 'LayerNormFunction', 'attend', 'bmm', 'merge_heads', 'split_heads']


# --- section: BatchMatMul ---
class BatchMatMul(Function):
    """a @ b for stacks of matrices (..., n, k) @ (..., k, m); backward as MatMul's, per matrix"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return Variable(a.data @ b.data)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return bmm(grad_output, b.transpose(-1, -2)), bmm(a.transpose(-1, -2), grad_output)


def bmm(a, b):
    """a @ b for stacks of matrices, recorded in the graph."""
    return BatchMatMul.apply(as_variable(a), as_variable(b))


# --- section: Embedding ---
class Embedding(Function):
    """out = weight[idx]; the gradient of each looked-up row adds into weight's row"""

    @staticmethod
    def forward(ctx, weight, idx):
        ctx.idx, ctx.shape = idx, weight.shape
        return Variable(weight.data[idx])

    @staticmethod
    def backward(ctx, grad_output):
        grad = np.zeros(ctx.shape, dtype=grad_output.dtype)
        np.add.at(grad, ctx.idx, grad_output.data)       # repeated tokens add up
        return Variable(grad), None


# --- section: LayerNormFunction ---
class LayerNormFunction(Function):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, over the last axis (biased variance)"""

    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        mu = x.data.mean(axis=-1, keepdims=True)
        var = ((x.data - mu) ** 2).mean(axis=-1, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        x_hat = (x.data - mu) * rstd
        ctx.x_hat, ctx.rstd, ctx.weight = x_hat, rstd, weight.data
        return Variable(x_hat * weight.data + bias.data)

    @staticmethod
    def backward(ctx, grad_output):
        g, x_hat = grad_output.data, ctx.x_hat
        rows = tuple(range(g.ndim - 1))                   # every axis but the features
        g_hat = g * ctx.weight
        grad_x = ctx.rstd * (g_hat - g_hat.mean(axis=-1, keepdims=True)
                             - x_hat * (g_hat * x_hat).mean(axis=-1, keepdims=True))
        return Variable(grad_x), Variable((g * x_hat).sum(axis=rows)), Variable(g.sum(axis=rows)), None


# --- section: attend ---
def attend(q, k, v, causal=False):
    """softmax(q @ kᵀ / sqrt(d) + mask) @ v and the weights; causal: query i sees keys 0..i."""
    d = q.shape[-1]
    scores = bmm(q, k.transpose(-1, -2)) * (1.0 / np.sqrt(d))
    if causal:
        n_q, n_k = scores.shape[-2:]
        allowed = np.tril(np.ones((n_q, n_k), dtype=bool))
        scores = scores + Variable(np.where(allowed, 0.0, -np.inf).astype(scores.dtype))
    weights = Softmax.apply(scores, -1)
    return bmm(weights, v), weights


# --- section: heads ---
def split_heads(x, n_heads):
    """(B, T, D) -> (B, H, T, D/H): head h holds features h*D/H ... (h+1)*D/H - 1 of each token."""
    B, T, D = x.shape
    if D % n_heads:
        raise ValueError(f"{D} features do not split into {n_heads} heads; D % n_heads must be 0.")
    return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x):
    """(B, H, T, d) -> (B, T, H*d), the inverse of split_heads."""
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)
