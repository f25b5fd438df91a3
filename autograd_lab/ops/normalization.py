"""Layer normalisation as one Function (the module is not named ``norm``: ``ops.norm`` is the
norm of reduce.py): one node instead of the nine of its formula written with
Variable operations, and a backward that reuses the forward's normalised input.
"""
from __future__ import annotations

import numpy as np

from ..function import Function
from ..grad_mode import is_grad_enabled
from ._util import wrap


class LayerNorm(Function):
    """y = (x - mean) / sqrt(var + eps) * w + b over the last dims (biased var);
    grad_x = r * (gh - mean(gh) - xh * mean(gh * xh)) with xh the normalised x, r = 1/sqrt(var + eps),
    gh = g * w;  grad_w = sum(g * xh),  grad_b = sum(g) over the leading dims"""

    @staticmethod
    def forward(ctx, x, weight, bias, ndim, eps):
        axes = tuple(range(x.ndim - ndim, x.ndim))
        d = x.data
        centred = d - d.mean(axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
        xh = centred * rstd
        y = xh if weight is None else xh * weight.data
        if bias is not None:
            y = y + bias.data
        ctx.axes, ctx.eps, ctx.lead = axes, eps, tuple(range(x.ndim - ndim))
        ctx.xh, ctx.rstd = xh, rstd  # arrays: the ordinary backward's
        ctx.save_for_backward(x, weight)  # Variables: the differentiable backward's (create_graph)
        return wrap(y)

    @staticmethod
    def backward(ctx, grad):
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if is_grad_enabled():
            return _backward_recorded(ctx, grad, need_x, need_w, need_b)
        x, weight = ctx.saved_tensors
        g, axes, xh = grad.data, ctx.axes, ctx.xh
        gx = gw = gb = None
        if need_x:
            gh = g if weight is None else g * weight.data
            gx = ctx.rstd * (gh - gh.mean(axis=axes, keepdims=True)
                             - xh * (gh * xh).mean(axis=axes, keepdims=True))
        if need_w:
            gw = (g * xh).sum(axis=ctx.lead) if ctx.lead else g * xh
        if need_b:
            gb = g.sum(axis=ctx.lead) if ctx.lead else g
        return gx, gw, gb, None, None


def _backward_recorded(ctx, grad, need_x, need_w, need_b):
    """The same gradients written with Variable operations, so they can be differentiated again."""
    x, weight = ctx.saved_tensors
    axes = ctx.axes
    centred = x - x.mean(axis=axes, keepdims=True)
    rstd = ((centred * centred).mean(axis=axes, keepdims=True) + ctx.eps) ** -0.5
    xh = centred * rstd
    gh = grad if weight is None else grad * weight
    gx = rstd * (gh - gh.mean(axis=axes, keepdims=True) - xh * (gh * xh).mean(axis=axes, keepdims=True)) \
        if need_x else None
    gw = (grad * xh).sum(axis=ctx.lead) if need_w and ctx.lead else (grad * xh if need_w else None)
    gb = grad.sum(axis=ctx.lead) if need_b and ctx.lead else (grad if need_b else None)
    return gx, gw, gb, None, None
