"""Lowercase functional forms of the neural-network operations, named as in torch.nn.functional.

>>> import numpy as np, autograd_lab as al
>>> import autograd_lab.functional as F
>>> logits = al.tensor(np.array([[2.0, 0.5, -1.0]]), requires_grad=True)
>>> loss = F.cross_entropy(logits, np.array([0]))
>>> loss.backward()
>>> round(float(loss.item()), 4)
0.2413

Arguments are Variables (numpy arrays are accepted and wrapped); ``dim=`` may also be spelled
``axis=``.  relu/sigmoid/tanh/softmax/log_softmax/cross_entropy/mse_loss/linear/dropout support
second derivatives; conv2d and max_pool2d do not (their backward passes are numba kernels).
"""
from __future__ import annotations

import warnings
from builtins import max as builtins_max
from builtins import min as builtins_min
from typing import Any, Sequence

import numpy as np

from .errors import ArgumentError, ShapeError
from .factories import Generator, default_generator
from .grad_mode import is_grad_enabled
from .ops.activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, softmax_axis
from .ops.conv import Conv2d, MaxPool2d
from .ops import pooling as _pooling
from .ops.extra import Pad
from .ops.hard import hardsigmoid, hardtanh, mish, relu6  # noqa: F401  (PyTorch's names)
from .ops.loss import (BCEWithLogits, BinaryCrossEntropy, CrossEntropy, MSELoss, check_reduction,
                       class_targets, reduce_loss)
from .ops.nn import Dropout, Linear
from .variable import Variable

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "mse_loss",
           "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "linear", "conv2d", "max_pool2d", "dropout", "gelu", "silu", "softplus", "elu",
           "leaky_relu", "layer_norm", "one_hot", "pad", "normalize", "l1_loss", "smooth_l1_loss",
           "huber_loss", "embedding", "kl_div", "batch_norm", "avg_pool2d",
           "scaled_dot_product_attention"]
__all__ += ["conv1d", "hardtanh", "relu6", "hardsigmoid", "mish"]


def _var(x: Any, name: str = "input") -> Variable:
    if isinstance(x, Variable):
        return x
    try:
        return Variable(x)
    except Exception as exc:  # pragma: no cover - depends on what came
        raise TypeError(f"{name} must be a Variable or array-like, got {type(x).__name__}") from exc


def _loss_weight(weight: Any, fn: str) -> Variable | None:
    """A loss's ``weight``: a constant. One that requires grad is refused, as PyTorch refuses it."""
    if weight is None:
        return None
    w = _var(weight, "weight")
    if w.requires_grad and is_grad_enabled():
        raise ArgumentError(
            f"{fn} is not differentiable with respect to its argument 'weight', so the weight cannot "
            "require grad. Pass weight.detach(), or multiply the unreduced loss by the weight "
            f"yourself ({fn}(..., reduction='none') * weight) to learn it."
        )
    return w


def relu(input: Variable) -> Variable:
    """max(input, 0), elementwise (fused numba kernels forward and backward)."""
    return ReLU.apply(_var(input))


def sigmoid(input: Variable) -> Variable:
    """1 / (1 + exp(-input)), elementwise."""
    return Sigmoid.apply(_var(input))


def tanh(input: Variable) -> Variable:
    """tanh(input), elementwise."""
    return Tanh.apply(_var(input))


def softmax(input: Variable, dim: int | None = None, *, axis: int | None = None) -> Variable:
    """exp(x) / exp(x).sum(dim), stable for any logits.  ``F.softmax(x, dim=-1)``."""
    x = _var(input)
    return Softmax.apply(x, softmax_axis(x, dim, axis, "softmax"))


def log_softmax(input: Variable, dim: int | None = None, *, axis: int | None = None) -> Variable:
    """x - logsumexp(x, dim): log-probabilities, never log(softmax) (which underflows)."""
    x = _var(input)
    return LogSoftmax.apply(x, softmax_axis(x, dim, axis, "log_softmax"))


def cross_entropy(input: Variable, target: Any, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Variable:
    """Cross-entropy of logits ``input`` (N, C) [or (C,), or (N, C, d1, ...)] with integer class
    ``target`` (N,) [or (), or (N, d1, ...)]: log_softmax + negative log-likelihood in one kernel.

    reduction: 'mean' (default), 'sum' or 'none' (one loss per target). ``weight`` (one per
    class), ``ignore_index`` and ``label_smoothing`` as in PyTorch (these go through
    log_softmax and nll_loss)."""
    x = _var(input)
    check_reduction(reduction)
    if x.ndim == 0:
        raise ShapeError("cross_entropy: input must hold class scores of shape (N, C) or (C,), "
                         "got a 0-d Variable")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    t = np.asarray(target.data if isinstance(target, Variable) else target)
    if t.dtype.kind == "f":
        return _cross_entropy_probabilities(x, target, weight, reduction, float(label_smoothing))
    if weight is not None or label_smoothing or (t.dtype.kind in "iu" and (t == ignore_index).any()):
        return _cross_entropy_options(x, t, weight, ignore_index, reduction, float(label_smoothing))
    # the targets go in as they came (a Variable stays one, so a captured step reads new ones);
    # CrossEntropy.forward checks them
    return CrossEntropy.apply(x, target, reduction)


def _cross_entropy_probabilities(x: Variable, target: Any, weight: Any, reduction: str,
                                 smoothing: float) -> Variable:
    """cross_entropy with class probabilities as targets (a floating target shaped like the
    input): -sum over classes of weight_c * target_c * log_softmax(x)_c per sample, the target
    first mixed with the uniform one by ``label_smoothing``; 'mean' divides by the number of
    samples (not by the weights), as PyTorch does."""
    t = _var(target, "target")
    if t.shape != x.shape:
        raise ShapeError(f"cross_entropy: a floating target holds class probabilities and must have the "
                         f"input's shape {x.shape}, got {t.shape}. For integer class indices pass an integer "
                         "target (e.g. target.long()).")
    dim = 1 if x.ndim > 1 else 0
    classes = x.shape[dim]
    if smoothing:
        t = t * (1 - smoothing) + smoothing / classes
    terms = log_softmax(x, dim) * t
    if weight is not None:
        w = _var(weight, "weight")
        terms = terms * w.reshape((classes,) + (1,) * (x.ndim - 1 - dim))
    per_sample = -terms.sum(axis=dim)
    if reduction == "none":
        return per_sample
    total = per_sample.sum()
    return total / float(builtins_max(per_sample.data.size, 1)) if reduction == "mean" else total


def _cross_entropy_options(x: Variable, t: np.ndarray, weight: Any, ignore_index: int, reduction: str,
                           smoothing: float) -> Variable:
    """cross_entropy with class weights, ignored targets or label smoothing, PyTorch's formula:
    (1 - s) * nll + s / C * (the sum over classes of -weight_c * log p_c, per target, reduced as
    nll is: a weighted mean divides by the weights of the targets not ignored)."""
    from .ops.elementwise import select

    dim = 1 if x.ndim > 1 else 0
    logp = log_softmax(x, dim)
    nll = nll_loss(logp, t, weight, ignore_index, reduction)
    if not smoothing:
        return nll
    classes = x.shape[dim]
    w = None if weight is None else np.asarray(weight.data if isinstance(weight, Variable) else weight,
                                               dtype=x.dtype)
    per_class = logp if w is None else logp * Variable(w.reshape((classes,) + (1,) * (x.ndim - 1 - dim)))
    keep = t != ignore_index
    smooth = select(keep, -per_class.sum(axis=dim))
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        picked = np.where(keep, t, 0)
        total = float(keep.sum()) if w is None else float((w[picked] * keep).sum())
        smooth = smooth.sum() / total
    return nll * (1 - smoothing) + smooth * (smoothing / classes)


def mse_loss(input: Variable, target: Any, reduction: str = "mean") -> Variable:
    """Mean squared error ((input - target)**2).mean(); 'sum' and 'none' as in PyTorch."""
    check_reduction(reduction)
    x, t = _pair_loss(input, target, "mse_loss")
    return MSELoss.apply(x, t, reduction)


def _same_shape(x: Variable, t: Variable, name: str) -> None:
    if x.shape != t.shape:
        raise ShapeError(f"{name}: target of shape {t.shape} must have the input's shape {x.shape}")


def binary_cross_entropy_with_logits(input: Variable, target: Any, weight: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Variable:
    """Binary cross-entropy of raw scores (logits) and targets in [0, 1], computed stably
    (never log(sigmoid(x))). ``pos_weight`` weighs the positive class (broadcast over the last axis)."""
    x, t = _var(input), _var(target, "target")
    check_reduction(reduction)
    _same_shape(x, t, "binary_cross_entropy_with_logits")
    pw = None if pos_weight is None else _var(pos_weight, "pos_weight")
    loss = BCEWithLogits.apply(x, t.to(x.dtype), pw)
    return reduce_loss(loss, reduction, _loss_weight(weight, "binary_cross_entropy_with_logits"))


def binary_cross_entropy(input: Variable, target: Any, weight: Any = None, reduction: str = "mean") -> Variable:
    """Binary cross-entropy of probabilities ``input`` in [0, 1] and targets in [0, 1]."""
    x, t = _var(input), _var(target, "target")
    check_reduction(reduction)
    _same_shape(x, t, "binary_cross_entropy")
    loss = BinaryCrossEntropy.apply(x, t.to(x.dtype))
    return reduce_loss(loss, reduction, _loss_weight(weight, "binary_cross_entropy"))


def nll_loss(input: Variable, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Variable:
    """Negative log-likelihood of log-probabilities ``input`` (N, C) [or (C,), or (N, C, d1, ...)]
    at integer class ``target``: -input[n, target[n]], weighted by ``weight[target[n]]``; 'mean'
    divides by the sum of those weights (targets equal to ``ignore_index`` count for nothing)."""
    x = _var(input)
    check_reduction(reduction)
    _loss_weight(weight, "nll_loss")
    if x.ndim == 0:
        raise ShapeError("nll_loss: input must hold log-probabilities of shape (N, C) or (C,)")
    t = np.asarray(target.data if isinstance(target, Variable) else target)
    keep = t != ignore_index
    t_ok = np.where(keep, t, 0)
    class_targets(x.shape, t_ok)  # checks dtype, shape and range
    if x.ndim == 1:
        rows, flat_t, flat_keep = x.reshape(1, -1), t_ok.reshape(1), keep.reshape(1)
    else:
        rows = x.permute(0, *range(2, x.ndim), 1).reshape(-1, x.shape[1]) if x.ndim > 2 else x
        flat_t, flat_keep = t_ok.reshape(-1), keep.reshape(-1)
    w = np.ones(x.shape[-1] if x.ndim == 1 else x.shape[1], dtype=x.dtype) if weight is None else \
        np.asarray(weight.data if isinstance(weight, Variable) else weight, dtype=x.dtype)
    wn = (w[flat_t] * flat_keep).astype(x.dtype)
    picked = rows[np.arange(flat_t.size), flat_t]
    if not flat_keep.all():
        # an ignored target may point at a -inf log-probability: select it away before weighting,
        # so that -inf * 0 = nan never reaches the loss or its gradient
        from .ops.elementwise import where
        picked = where(Variable(flat_keep), picked, Variable(np.zeros((), dtype=x.dtype)))
    losses = -picked * Variable(wn)
    if reduction == "none":
        return losses.reshape(t.shape)
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / float(wn.sum())


def linear(input: Variable, weight: Variable, bias: Variable | None = None) -> Variable:
    """input @ weight.T + bias, with weight of shape (out_features, in_features)."""
    x, w = _var(input), _var(weight, "weight")
    b = None if bias is None else _var(bias, "bias")
    if w.ndim != 2 or x.ndim == 0 or x.shape[-1] != w.shape[1]:
        raise ShapeError(f"linear: input of shape {x.shape} needs weight of shape "
                         f"(out_features, {x.shape[-1] if x.ndim else '?'}), got weight of shape "
                         f"{w.shape}; the weight's second dimension must equal the input's last")
    if b is not None and b.shape != (w.shape[0],):
        raise ShapeError(f"linear: bias must have shape ({w.shape[0]},), got {b.shape}")
    return Linear.apply(x, w, b)


def _pair(value: Any, name: str, op: str, low: int) -> tuple[int, int]:
    """An int or a pair of ints, each at least ``low``, as a pair."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or any(not isinstance(v, (int, np.integer)) or v < low for v in pair):
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, each at least {low}; got {value!r}")
    return int(pair[0]), int(pair[1])


def _dilate(w: Variable, dh: int, dw: int) -> Variable:
    """The kernel w (C_out, C_in, kh, kw) with dh - 1 rows and dw - 1 columns of zeros between its
    taps: a dilated convolution is an ordinary one with this sparser, larger kernel."""
    from .ops.shape import stack

    o, c, kh, kw = w.shape
    if dh > 1:
        zeros = Variable(np.zeros((o, c, kh, kw), dtype=w.dtype))
        w = stack([w] + [zeros] * (dh - 1), dim=3).reshape(o, c, kh * dh, kw)[:, :, :(kh - 1) * dh + 1]
        kh = (kh - 1) * dh + 1
    if dw > 1:
        zeros = Variable(np.zeros((o, c, kh, kw), dtype=w.dtype))
        w = stack([w] + [zeros] * (dw - 1), dim=4).reshape(o, c, kh, kw * dw)[:, :, :, :(kw - 1) * dw + 1]
    return w


def conv2d(input: Variable, weight: Variable, bias: Variable | None = None,
           stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] | str = 0,
           dilation: int | tuple[int, int] = 1, groups: int = 1) -> Variable:
    """2-d convolution (cross-correlation, as in PyTorch) of input (N, C_in, H, W) with weight
    (C_out, C_in / groups, kh, kw); output (N, C_out, H_out, W_out).  ``dilation`` spaces the
    kernel's taps (computed as an ordinary convolution with zeros between them, so it costs as
    much as the dilated kernel's full size); ``groups`` splits the channels into that many
    independent convolutions.  Not twice differentiable."""
    x, w = _var(input), _var(weight, "weight")
    b = None if bias is None else _var(bias, "bias")
    if not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    dh, dw = _pair(dilation, "dilation", "conv2d", 1)
    if x.ndim != 4 or w.ndim != 4 or x.shape[1] != w.shape[1] * groups:
        if groups == 1:
            raise ShapeError(f"conv2d: expected input (N, C_in, H, W) and weight (C_out, C_in, kh, kw) "
                             f"with the same C_in, got input {x.shape} and weight {w.shape}")
        raise ShapeError(f"conv2d: expected input (N, C_in, H, W) and weight (C_out, C_in / groups, kh, kw) "
                         f"with groups={groups}, got input {x.shape} and weight {w.shape}: the input needs "
                         f"{w.shape[1] * groups if w.ndim == 4 else '?'} channels")
    if w.shape[0] % groups:
        raise ShapeError(f"conv2d: the number of output channels ({w.shape[0]}) must be divisible by "
                         f"groups ({groups})")
    if b is not None and b.shape != (w.shape[0],):
        raise ShapeError(f"conv2d: bias must have shape ({w.shape[0]},), got {b.shape}")
    if isinstance(padding, str):
        x, padding = _string_padding(x, w, padding, stride, (dh, dw))
    if dh > 1 or dw > 1:
        w = _dilate(w, dh, dw)
    if groups > 1:
        from .ops.shape import concatenate

        ci, co = x.shape[1] // groups, w.shape[0] // groups
        return concatenate([conv2d(x[:, g * ci:(g + 1) * ci], w[g * co:(g + 1) * co],
                                   None if b is None else b[g * co:(g + 1) * co], stride, padding)
                            for g in range(groups)], dim=1)
    try:
        return Conv2d.apply(x, w, b, stride, padding)
    except ValueError as exc:
        if isinstance(exc, ShapeError):
            raise
        raise ShapeError(f"conv2d: {exc}") from None


def _string_padding(x: Variable, w: Variable, padding: str, stride: Any, dilation: tuple[int, int]) -> tuple:
    """conv2d's ``padding='valid'`` (none) or ``'same'`` (the output as large as the input, stride
    1 only): the total d * (k - 1) split with the extra one on the right, as PyTorch does."""
    if padding == "valid":
        return x, 0
    if padding != "same":
        raise ValueError(f"conv2d: invalid padding string {padding!r}, should be one of 'valid' or 'same'")
    if _pair(stride, "stride", "conv2d", 1) != (1, 1):
        raise ValueError("conv2d: padding='same' is not supported for strided convolutions; pass stride=1 "
                         "or a number for padding.")
    totals = [d * (k - 1) for d, k in zip(dilation, w.shape[2:])]
    if all(t % 2 == 0 for t in totals):
        return x, (totals[0] // 2, totals[1] // 2)
    (th, tw) = totals
    return pad(x, (tw // 2, tw - tw // 2, th // 2, th - th // 2)), 0


def conv1d(input: Variable, weight: Variable, bias: Variable | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Variable:
    """1-d convolution of input (N, C_in, L) (or (C_in, L)) with weight (C_out, C_in / groups, k):
    conv2d over a height of 1."""
    x, w = _var(input), _var(weight, "weight")
    if x.ndim == 2:
        return conv1d(x[None], w, bias, stride, padding, dilation, groups)[0]
    if x.ndim != 3 or w.ndim != 3:
        raise ShapeError(f"conv1d: expected input (N, C_in, L) and weight (C_out, C_in / groups, k), got "
                         f"input {x.shape} and weight {w.shape}")
    out = conv2d(x[:, :, None], w[:, :, None], bias, (1, _single(stride)),
                 padding if isinstance(padding, str) else (0, _single(padding)), (1, _single(dilation)), groups)
    return out[:, :, 0]


def _single(v: Any) -> int:
    return int(v[0]) if isinstance(v, (tuple, list)) else int(v)


def max_pool2d(input: Variable, kernel_size: int | tuple[int, int],
               stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0,
               dilation: int | tuple[int, int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Variable:
    """Maximum over kernel_size windows of input (N, C, H, W), moved by stride (default:
    kernel_size).  ``padding`` adds -inf on each side (at most half the kernel); ``ceil_mode``
    rounds the output size up, keeping a last, partial window when it starts inside the input or
    its left padding, as PyTorch does; ``dilation`` spaces the window's taps (then computed by
    reading each window's elements, and twice differentiable).  Not twice differentiable otherwise."""
    x = _var(input)
    if return_indices:
        raise NotImplementedError("max_pool2d(return_indices=True) is not supported by autograd_lab; "
                                  "take x.argmax over an unfolded window instead.")
    if dilation != 1 and _pair(dilation, "dilation", "max_pool2d", 1) != (1, 1):
        return _pooling.max_pool2d_dilated(x, kernel_size, stride, padding, dilation, ceil_mode)
    if padding != 0 or ceil_mode:
        kh, kw = _pair(kernel_size, "kernel_size", "max_pool2d", 1)
        sh, sw = (kh, kw) if stride is None else _pair(stride, "stride", "max_pool2d", 1)
        ph, pw = _pair(padding, "padding", "max_pool2d", 0)
        if ph > kh // 2 or pw > kw // 2:
            raise ValueError(f"max_pool2d: pad should be at most half of effective kernel size, got "
                             f"padding {(ph, pw)} for kernel {(kh, kw)}")
        if x.ndim != 4:
            raise ShapeError(f"max_pool2d: input must be (N, C, H, W), got shape {x.shape}")
        extra = []
        for size, k, s, p in ((x.shape[2], kh, sh, ph), (x.shape[3], kw, sw, pw)):
            span = size + 2 * p - k
            if span < 0:
                raise ShapeError(f"max_pool2d: kernel {(kh, kw)} is larger than the padded input "
                                 f"{(x.shape[2] + 2 * ph, x.shape[3] + 2 * pw)}")
            out = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (out - 1) * s >= size + p:
                out -= 1  # the last window would start in the right padding
            extra.append(builtins_max(0, (out - 1) * s + k - (size + 2 * p)))
        x = pad(x, (pw, pw + extra[1], ph, ph + extra[0]), value=-np.inf)
        kernel_size, stride = (kh, kw), (sh, sw)
    try:
        return MaxPool2d.apply(x, kernel_size, stride)
    except ValueError as exc:
        if isinstance(exc, ShapeError):
            raise
        raise ShapeError(f"max_pool2d: {exc}") from None


def dropout(input: Variable, p: float = 0.5, training: bool = True, *,
            generator: Generator | np.random.Generator | None = None, seed: int | None = None) -> Variable:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only).

    With ``training=False`` (or p=0) the input is returned unchanged.  Reproducible with
    ``seed=`` or a ``generator=`` (an ``al.Generator`` or a numpy Generator)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _var(input)
    if not training or p == 0.0:
        return x
    if seed is not None and generator is not None:
        raise TypeError("pass either seed= or generator=, not both")
    if seed is not None:
        rng = np.random.default_rng(seed)
    elif isinstance(generator, np.random.Generator):
        rng = generator
    else:
        rng = (generator or default_generator).numpy
    return Dropout.apply(x, float(p), rng)


def scaled_dot_product_attention(query: Variable, key: Variable, value: Variable, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False, *, generator: Generator | None = None) -> Variable:
    """softmax(query @ key^T * scale + mask) @ value, with query (..., L, E), key (..., S, E),
    value (..., S, Ev); ``scale`` defaults to 1/sqrt(E).

    ``attn_mask`` broadcasts to (..., L, S): a bool mask says which keys take part (True), a float
    mask is added to the scores. ``is_causal=True`` lets query i see keys 0..i only (then
    ``attn_mask`` must be None, as in PyTorch: a ValueError says so). A query whose every key is masked gets zero weights,
    hence a zero output and zero gradients, as in PyTorch (no NaN). ``dropout_p`` drops weights
    (as ``dropout``; pass ``dropout_p=0`` when evaluating). ``enable_gqa`` shares each key/value
    head among a group of query heads (dim -3). The softmax is one fused numba kernel."""
    from .ops.attention import attention_weights
    from .ops.linalg import matmul

    weights, value = attention_weights(_var(query, "query"), _var(key, "key"), _var(value, "value"),
                                       attn_mask, bool(is_causal), scale, bool(enable_gqa))
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, generator=generator)
    return matmul(weights, value)


# ---------------------------------------------------------------- more activations
def gelu(input: Variable, approximate: str = "none") -> Variable:
    """x * Phi(x), Phi the standard normal CDF (``approximate='tanh'``: PyTorch's tanh formula)."""
    from .ops.extra import gelu as exact_gelu

    x = _var(input)
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * float(np.sqrt(2 / np.pi))
        return x * 0.5 * (Tanh.apply(inner) + 1)
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return exact_gelu(x)


def silu(input: Variable) -> Variable:
    """x * sigmoid(x) (also called swish)."""
    x = _var(input)
    return x * Sigmoid.apply(x)


def softplus(input: Variable, beta: float = 1.0, threshold: float = 20.0) -> Variable:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch)."""
    from .ops.elementwise import exp, where
    from .ops.unary import log1p

    x = _var(input)
    bx = x * beta
    big = bx.data > threshold
    # the branch not taken is kept from overflowing; a NaN is not "big" and keeps its NaN gradient
    smooth = log1p(exp(where(big, threshold, bx))) / beta
    return where(big, x, smooth)


def elu(input: Variable, alpha: float = 1.0) -> Variable:
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    from .ops.elementwise import clamp, where
    from .ops.unary import expm1

    x = _var(input)
    return where(x.data > 0, x, expm1(clamp(x, max=0.0)) * alpha)


def leaky_relu(input: Variable, negative_slope: float = 0.01) -> Variable:
    """x for x > 0, negative_slope * x otherwise."""
    from .ops.activation import LeakyReLU

    return LeakyReLU.apply(_var(input), float(negative_slope))


# ---------------------------------------------------------------- normalisation, encoding, padding
def layer_norm(input: Variable, normalized_shape: Any, weight: Variable | None = None,
               bias: Variable | None = None, eps: float = 1e-5) -> Variable:
    """(x - mean) / sqrt(var + eps) over the last ``len(normalized_shape)`` dims (biased variance),
    then ``* weight + bias``; one Function with its own backward (``ops/normalization.py``)."""
    x = _var(input)
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ShapeError(f"layer_norm: normalized_shape {list(shape)} must be the last dims of the input, "
                         f"whose shape is {x.shape}.")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise ShapeError(f"layer_norm: {name} must have the normalized_shape {list(shape)}, got "
                             f"shape {tuple(p.shape)}")
    from .ops.normalization import LayerNorm

    return LayerNorm.apply(x, weight, bias, len(shape), float(eps))


def normalize(input: Variable, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Variable:
    """x / max(||x||_p, eps) along ``dim``."""
    from .ops.elementwise import clamp

    x = _var(input)
    return x / clamp(x.norm(p, dim=dim, keepdim=True), min=eps)


def one_hot(tensor: Any, num_classes: int = -1) -> Variable:
    """Integer class indices -> int64 rows of zeros with a one at the index (a new last dim)."""
    t = np.asarray(tensor.data if isinstance(tensor, Variable) else tensor)
    if t.dtype.kind not in "iu":
        raise TypeError(f"one_hot is only applicable to index tensor of integer dtype, got {t.dtype}")
    if t.size and t.min() < 0:
        raise ValueError("Class values must be non-negative.")
    n = int(t.max()) + 1 if num_classes == -1 and t.size else int(num_classes)
    if num_classes == -1 and not t.size:
        raise ValueError("Can not infer total number of classes from empty tensor.")
    if t.size and t.max() >= n:
        raise ValueError(f"Class values must be smaller than num_classes ({n}); got {int(t.max())}.")
    return Variable((t[..., None] == np.arange(n)).astype(np.int64))


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input: Variable, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Variable:
    """Pad the last dims: ``pad = (left, right)`` for the last dim, then ``(top, bottom)`` for the
    one before, and so on (PyTorch's order), with non-negative widths.  ``mode`` is 'constant'
    (``value``, default 0), 'reflect' (mirror without repeating the edge), 'replicate' (repeat the
    edge) or 'circular' (wrap around); the last three read the input, so its gradient collects
    from every copy."""
    x = _var(input)
    if mode != "constant" and mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular'; got {mode!r}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"pad: the padding length must be even and at most twice the number of dims "
                         f"({x.ndim}); got {len(pad)}")
    if any(p < 0 for p in pad):  # a negative width crops that side first (PyTorch's order)
        x, pad = _crop_negative_widths(x, pad)
        if not any(pad):
            return x * 1 if x.requires_grad else x.clone()
    widths = [(0, 0)] * x.ndim
    for k in range(len(pad) // 2):
        widths[x.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    if mode == "constant":
        return Pad.apply(x, tuple(widths), 0.0 if value is None else value)
    if value not in (None, 0, 0.0):
        raise ValueError(f"pad: value= is only used by mode='constant'; got value={value} with mode={mode!r}")
    return _pad_by_reading(x, widths, mode, len(pad) // 2)


def _crop_negative_widths(x: Variable, pad: tuple[int, ...]) -> tuple[Variable, tuple[int, ...]]:
    """pad's first step when a width is negative: crop those sides (a slice of ``x``), and return
    the widths still to pad, the negative ones now 0."""
    crop = [slice(None)] * x.ndim
    for k in range(len(pad) // 2):
        n, lo, hi = x.shape[x.ndim - 1 - k], -builtins_min(pad[2 * k], 0), -builtins_min(pad[2 * k + 1], 0)
        if lo + hi > n:
            raise ShapeError(f"pad: the negative widths {pad[2 * k:2 * k + 2]} crop more than the "
                             f"{n} entries of dim {x.ndim - 1 - k}")
        crop[x.ndim - 1 - k] = slice(lo, n - hi)
    return x[tuple(crop)], tuple(builtins_max(p, 0) for p in pad)


def _pad_by_reading(x: Variable, widths: list[tuple[int, int]], mode: str, padded: int) -> Variable:
    """pad's 'reflect', 'replicate' and 'circular' modes: each padded dim in turn is an
    ``index_select`` of the input's own entries (numpy's pad of the positions says which), so the
    gradient collects from every copy."""
    if x.ndim not in (padded + 1, padded + 2):
        raise NotImplementedError(f"pad: mode {mode!r} pads the last {padded} dims of a batched "
                                  f"({padded + 2}-d) or unbatched ({padded + 1}-d) input; got a "
                                  f"{x.ndim}-d input")
    from .ops.indexing import index_select

    for d, (left, right) in enumerate(widths):
        if not left and not right:
            continue
        n = x.shape[d]
        limit = n - 1 if mode == "reflect" else n
        if mode != "replicate" and builtins_max(left, right) > limit:
            raise ValueError(f"pad: {mode} padding of ({left}, {right}) on a dim of size {n} needs each "
                             f"width at most {limit}")
        if n == 0:
            raise ValueError(f"pad: mode {mode!r} cannot pad an empty dim")
        idx = np.pad(np.arange(n), (left, right), mode=_PAD_MODES[mode])  # type: ignore[call-overload]
        x = index_select(x, d, idx)
    return x


def embedding(input: Any, weight: Variable, padding_idx: int | None = None) -> Variable:
    """Rows of ``weight`` at the integer indices ``input``; the gradient adds up into the rows
    (repeated indices add). The row ``padding_idx`` (if given) is looked up as usual but gets no
    gradient, as in PyTorch. One Function (``ops/embedding.py``); a Variable ``input`` stays an
    input of the graph, so ``al.capture`` replays a step with new indices."""
    from .ops.embedding import Embedding

    idx = input if isinstance(input, Variable) else Variable(np.asarray(input))
    if idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {idx.dtype}")
    n = weight.shape[0]
    if idx.data.size and (idx.data.min() < -n or idx.data.max() >= n):
        raise IndexError(f"embedding: index out of range: the table has {n} rows, got indices from "
                         f"{idx.data.min()} to {idx.data.max()}")
    if padding_idx is not None:
        if not -n <= int(padding_idx) < n:
            raise ValueError(f"embedding: padding_idx must be within the {n} rows of weight (-{n} to {n - 1}); "
                             f"got {padding_idx}")
        padding_idx = int(padding_idx) % n
    if idx.data.size and idx.data.min() < 0:
        idx = Variable(idx.data % n)  # PyTorch refuses negative indices; numpy's meaning is kept here
    return Embedding.apply(weight, idx, padding_idx)


# ---------------------------------------------------------------- more losses
def _pair_loss(input: Any, target: Any, name: str) -> tuple[Variable, Variable]:
    """Input and target of an elementwise loss. Shapes that differ are broadcast against each
    other, with PyTorch's warning (e.g. (N, 1) against (N,) gives an (N, N) loss, usually a bug)."""
    x, t = _var(input), _var(target, "target")
    if x.shape != t.shape:
        warnings.warn(f"{name}: using a target size ({t.shape}) that is different to the input size "
                      f"({x.shape}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)
        try:
            shape = np.broadcast_shapes(x.shape, t.shape)
        except ValueError:
            raise ShapeError(f"{name}: the input's shape {x.shape} and the target's shape {t.shape} cannot "
                             "be broadcast against each other; give them the same shape.") from None
        x, t = (v if v.shape == shape else v.expand(shape) for v in (x, t))
    return x, t


def l1_loss(input: Variable, target: Any, reduction: str = "mean") -> Variable:
    """Mean (or sum) of |input - target|."""
    check_reduction(reduction)
    x, t = _pair_loss(input, target, "l1_loss")
    return reduce_loss((x - t).abs(), reduction)


def huber_loss(input: Variable, target: Any, reduction: str = "mean", delta: float = 1.0) -> Variable:
    """0.5 d**2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target)."""
    from .ops.elementwise import where

    check_reduction(reduction)
    x, t = _pair_loss(input, target, "huber_loss")
    d = x - t
    a = d.abs()
    big = a.data >= delta  # as in smooth_l1_loss: NaN keeps a NaN gradient, inf a finite one
    small = where(big, 0.0, d)
    return reduce_loss(where(big, (a - 0.5 * delta) * delta, small * small * 0.5), reduction)


def smooth_l1_loss(input: Variable, target: Any, reduction: str = "mean", beta: float = 1.0) -> Variable:
    """0.5 d**2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (huber_loss / beta)."""
    from .ops.elementwise import where

    check_reduction(reduction)
    x, t = _pair_loss(input, target, "smooth_l1_loss")
    d = x - t
    a = d.abs()
    if beta == 0:
        return reduce_loss(a, reduction)
    big = a.data >= beta  # a NaN is not big: it takes the square's branch and keeps a NaN gradient
    small = where(big, 0.0, d)  # the branch not taken stays finite: an infinite d keeps gradient ±1
    return reduce_loss(where(big, a - 0.5 * beta, small * small * (0.5 / beta)), reduction)


def kl_div(input: Variable, target: Any, reduction: str = "mean", log_target: bool = False) -> Variable:
    """KL divergence with ``input`` as log-probabilities: target * (log(target) - input) pointwise
    (0 where target is 0); ``log_target=True`` when target holds log-probabilities too.
    'batchmean' divides the sum by the batch size (the mathematically right mean)."""
    from .ops.elementwise import select

    x, t = _var(input), _var(target, "target")
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"reduction must be one of ('mean', 'sum', 'none', 'batchmean'), got {reduction!r}")
    if log_target:
        loss = t.exp() * (t - x)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = select(t.data > 0, t * (t.log() - x))
    if reduction == "batchmean":
        return loss.sum() / float(x.shape[0] if x.ndim else 1)
    return reduce_loss(loss, reduction)


def batch_norm(input: Variable, running_mean: Any, running_var: Any, weight: Variable | None = None,
               bias: Variable | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Variable:
    """Normalise each channel (dim 1) over the batch and the spatial dims. Training: by the batch's
    mean and biased variance, and the running statistics (numpy arrays or Variables, updated in
    place) move towards the batch's mean and unbiased variance by ``momentum``. Evaluation: by the
    running statistics."""
    x = _var(input)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: input must be (N, C) or (N, C, ...), got shape {x.shape}")
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    rm = None if running_mean is None else (running_mean.data if isinstance(running_mean, Variable) else running_mean)
    rv = None if running_var is None else (running_var.data if isinstance(running_var, Variable) else running_var)
    if not training and (rm is None or rv is None):
        raise ArgumentError(
            "batch_norm: running_mean and running_var must be given in evaluation mode "
            "(training=False), which normalises by them. Pass the running statistics, or "
            "training=True to normalise by the batch's own."
        )
    if training:
        n = x.data.size // x.shape[1]
        if training and n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape}")
        mean = x.mean(axis=axes, keepdims=True)
        centred = x - mean
        var = (centred * centred).mean(axis=axes, keepdims=True)
        if training and rm is not None:
            rm *= 1 - momentum
            rm += momentum * mean.data.reshape(-1)
        if training and rv is not None:
            rv *= 1 - momentum
            rv += momentum * var.data.reshape(-1) * (n / builtins_max(n - 1, 1))
        out = centred / (var + eps) ** 0.5
    else:
        out = (x - Variable(np.asarray(rm, dtype=x.dtype).reshape(shape))) / Variable(
            np.sqrt(np.asarray(rv, dtype=x.dtype) + eps).reshape(shape))
    if weight is not None:
        out = out * _var(weight, "weight").reshape(shape)
    if bias is not None:
        out = out + _var(bias, "bias").reshape(shape)
    return out


def avg_pool2d(input: Variable, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Variable:
    """Means of (kh, kw) windows of an (N, C, H, W) input; zero padding is counted unless
    ``count_include_pad=False``, ``ceil_mode`` keeps a last partial window, ``divisor_override``
    divides every sum by that number instead."""
    return _pooling.avg_pool2d(_var(input), kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override)
