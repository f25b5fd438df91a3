"""Losses: cross_entropy (integer class targets, fused log-softmax + NLL kernel) and mse_loss."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernels as K
from ..errors import ArgumentError, ShapeError
from ..function import Function
from ..grad_mode import is_grad_enabled
from ..variable import Variable
from ._util import wrap
from .activation import Sigmoid, Softmax, float_data

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(reduction: str) -> str:
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    return reduction


def class_targets(logits_shape: tuple[int, ...], target: Any, check_range: bool = True) -> np.ndarray:
    """Validate integer class targets against logits of shape (N, C, d1, ...) or (C,): their dtype,
    their shape and (unless ``check_range=False``) that each is a class index."""
    t = np.asarray(target.data if isinstance(target, Variable) else target)
    if t.dtype.kind not in "iu":
        if t.dtype.kind == "f" and t.shape == logits_shape:
            raise TypeError("cross_entropy here takes integer class indices as target, not class "
                            "probabilities; pass target.argmax(dim=1) if your targets are one-hot")
        raise TypeError(f"target must hold integer class indices, got dtype {t.dtype}; "
                        "convert with target.astype(np.int64)")
    expected = logits_shape[:1] + logits_shape[2:] if len(logits_shape) >= 2 else ()
    if t.shape != expected:
        raise ShapeError(f"cross_entropy: input of shape {logits_shape} needs a target of shape "
                         f"{expected} (one class index per row), got target of shape {t.shape}")
    classes = logits_shape[1] if len(logits_shape) >= 2 else logits_shape[0]
    if check_range and t.size and (t.min() < 0 or t.max() >= classes):
        raise ValueError(f"cross_entropy: target values must be class indices in [0, {classes}) for "
                         f"input with {classes} classes, got values from {t.min()} to {t.max()}")
    return t


def _rows(x: np.ndarray) -> np.ndarray:
    """(N, C, d1, ...) -> (N*d1*..., C);  (C,) -> (1, C)."""
    if x.ndim == 1:
        return x.reshape(1, -1)
    if x.ndim == 2:
        return x
    return np.ascontiguousarray(np.moveaxis(x, 1, -1)).reshape(-1, x.shape[1])


def _unrows(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if len(shape) <= 2:
        return g.reshape(shape)
    moved = (shape[0],) + shape[2:] + (shape[1],)
    return np.moveaxis(g.reshape(moved), -1, 1)


class CrossEntropy(Function):
    """loss_n = logsumexp(x_n) - x_n[t_n], reduced by mean / sum / none;
    grad_x = g_n * (softmax(x_n) - onehot(t_n))"""

    @staticmethod
    def forward(ctx, x, target, reduction):
        ctx.save_for_backward(x)
        return wrap(cross_entropy_arrays(ctx, float_data(x), target, reduction))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if is_grad_enabled():  # differentiable: softmax(x) - onehot, scaled by grad
            n = ctx.target.size
            onehot = np.zeros(x.shape, dtype=x.dtype)
            rows_view = _rows(onehot)
            rows_view[np.arange(n), ctx.target] = 1
            onehot = _unrows(rows_view, x.shape)
            dim = 1 if x.ndim > 1 else 0
            g = grad * _scale(ctx)
            if ctx.reduction == "none":
                g = g.reshape(x.shape[:1] + (1,) + x.shape[2:]) if x.ndim > 1 else g.reshape((1,))
            return g * (Softmax.apply(x, dim) - Variable(onehot)), None, None
        return cross_entropy_grad_arrays(ctx, grad.data, float_data(x)), None, None


def cross_entropy_arrays(ctx, data, target, reduction):
    """The loss on arrays (``data`` float32 or float64); keeps on ctx what the gradient reads."""
    rows = _rows(data)
    # checked here, not in the caller, so that every caller of the array form checks; the range costs two
    # passes over the targets, so it is checked only when a loss came out NaN (the kernel
    # gives NaN for a target that is not a class index, and reads nothing out of range)
    target = class_targets(data.shape, target, check_range=False)
    t = np.ascontiguousarray(target.reshape(-1), dtype=np.int64)  # as the kernels take it, once
    loss, stats = K.cross_entropy_fwd(rows, t, check=False)
    ctx.stats, ctx.target, ctx.reduction = stats, t, reduction
    if reduction == "none":
        if np.isnan(loss).any():
            class_targets(data.shape, target)  # raises if a target was out of range
        return loss.reshape(target.shape)
    total = loss.sum(dtype=np.float64)
    if total != total:  # NaN: a bad target, or NaN in the logits
        class_targets(data.shape, target)
    if reduction == "mean":
        total = total / loss.size if loss.size else np.nan
    return np.asarray(total, dtype=data.dtype)


def _scale(ctx) -> float:
    n = ctx.target.size
    return 1.0 / n if ctx.reduction == "mean" and n else 1.0  # an empty batch has no gradient to scale


def cross_entropy_grad_arrays(ctx, grad, data):
    """The gradient on arrays, ``data`` as the loss took it (the logits, in a float dtype)."""
    gl, scale = grad.astype(data.dtype, copy=False), _scale(ctx)
    gl = gl.reshape(-1) * scale if ctx.reduction == "none" else gl * scale
    rows = np.ascontiguousarray(_rows(data))  # as the forward's kernel took them
    return _unrows(K.cross_entropy_bwd(rows, ctx.target, ctx.stats, gl, check=False), data.shape)


class MSELoss(Function):
    """loss = mean((x - t)**2) (or sum, or none);  grad_x = 2 (x - t) g / N,  grad_t = -grad_x"""

    @staticmethod
    def forward(ctx, x, target, reduction):
        ctx.save_for_backward(x, target)
        ctx.reduction = reduction
        d = x.data - target.data
        sq = d * d
        if reduction == "none":
            return wrap(sq)
        return wrap(np.asarray(sq.mean() if reduction == "mean" else sq.sum(), dtype=sq.dtype))

    @staticmethod
    def backward(ctx, grad):
        x, target = ctx.saved_tensors
        scale = 2.0 / max(x.data.size, 1) if ctx.reduction == "mean" else 2.0
        gx = (x - target) * (grad * scale)
        return (gx if ctx.needs_input_grad[0] else None,
                -gx if ctx.needs_input_grad[1] else None, None)


class BCEWithLogits(Function):
    """loss = (1 - t) x + L softplus(-x), L = 1 + (pos_weight - 1) t  (stable for any logit x);
    grad_x = L sigmoid(x) - pos_weight t,  grad_t = (pos_weight - 1) softplus(-x) - x"""

    @staticmethod
    def forward(ctx, x, t, pos_weight):
        xd, td = x.data, t.data
        pw = 1.0 if pos_weight is None else pos_weight.data
        sp = np.log1p(np.exp(-np.abs(xd))) + np.maximum(-xd, 0)  # softplus(-x) without overflow
        ctx.save_for_backward(x, t, pos_weight)
        ctx.sp = sp
        return wrap(((1 - td) * xd + (1 + (pw - 1) * td) * sp).astype(xd.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        x, t, pos_weight = ctx.saved_tensors
        pw = 1.0 if pos_weight is None else pos_weight
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = grad * ((1 + (pw - 1) * t) * Sigmoid.apply(x) - pw * t)
        if ctx.needs_input_grad[1] and pos_weight is None:  # -x alone: 0 * softplus(inf) would be NaN
            gt = grad * -x
        elif ctx.needs_input_grad[1]:
            gt = grad * ((pw - 1) * wrap(ctx.sp.astype(x.dtype, copy=False)) - x)
        return gx, gt, None


class BinaryCrossEntropy(Function):
    """loss = -(t log(x) + (1 - t) log(1 - x)), each log clamped at -100 as in PyTorch;
    grad_x = (x - t) / max(x (1 - x), 1e-12)"""

    @staticmethod
    def forward(ctx, x, t):
        xd, td = x.data, t.data
        if xd.size and (xd.min() < 0 or xd.max() > 1):
            raise ArgumentError("binary_cross_entropy: all elements of input should be between 0 and 1 "
                                "(probabilities); for raw scores use binary_cross_entropy_with_logits")
        with np.errstate(divide="ignore"):
            log_x, log_1mx = np.maximum(np.log(xd), -100), np.maximum(np.log1p(-xd), -100)
        ctx.save_for_backward(x, t)
        ctx.logs = (log_x, log_1mx)
        return wrap((-(td * log_x + (1 - td) * log_1mx)).astype(xd.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:
            denom = wrap(np.maximum(x.data * (1 - x.data), 1e-12).astype(x.dtype, copy=False))
            gx = grad * (x - t) / denom
        if ctx.needs_input_grad[1]:
            log_x, log_1mx = ctx.logs
            gt = grad * wrap((log_1mx - log_x).astype(x.dtype, copy=False))
        return gx, gt


def reduce_loss(loss: Variable, reduction: str, weight: Variable | None = None) -> Variable:
    """Apply an elementwise ``weight`` and the ``reduction`` ('mean', 'sum' or 'none')."""
    if weight is not None:  # the loss keeps its input's dtype, whatever the weight's (PyTorch)
        loss = loss * (weight.to(loss.dtype) if weight.dtype.kind == "f" else weight)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()
