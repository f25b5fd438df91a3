"""Pooling with PyTorch's full set of options: ``avg_pool2d`` with ``ceil_mode``,
``count_include_pad`` and ``divisor_override``, and ``max_pool2d`` with ``dilation``.

Both read each window through strided slices (average) or a map of flat positions (maximum,
``views.Take``), so their gradients are written with differentiable ops.
"""
from __future__ import annotations

from builtins import max as builtins_max
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..variable import Variable
from ._util import variable_arg, wrap
from .extra import Pad
from .reduce import max as reduce_max
from .views import Take


def pair(value: Any, name: str, op: str, low: int) -> tuple[int, int]:
    """An int or a pair of ints, each at least ``low``, as a pair."""
    p = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(p) != 2 or any(not isinstance(v, (int, np.integer)) or v < low for v in p):
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, each at least {low}; got {value!r}")
    return int(p[0]), int(p[1])


def out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool, op: str) -> int:
    """PyTorch's pooling output length: a last window that would start in the right padding is
    dropped in ceil mode."""
    span = size + 2 * p - d * (k - 1) - 1
    if span < 0:
        raise ShapeError(f"{op}: the (dilated) kernel {d * (k - 1) + 1} is larger than the padded input "
                         f"{size + 2 * p}")
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _divisors(size: int, k: int, s: int, p: int, out: int, include_pad: bool) -> np.ndarray:
    """Per output position along one axis: the window's length within the padded input, or
    within the input itself (``include_pad=False``)."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    if include_pad:
        return (end - start).astype(np.float64)
    return (np.minimum(end, size) - np.maximum(start, 0)).astype(np.float64)


def avg_pool2d(x: Variable, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Variable:
    """Means of (kh, kw) windows of an (N, C, H, W) or (C, H, W) input."""
    x = variable_arg(x, "avg_pool2d")
    if x.ndim == 3:
        return avg_pool2d(x[None], kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override)[0]
    if x.ndim != 4:
        raise ShapeError(f"avg_pool2d: input must be (N, C, H, W) or (C, H, W), got shape {x.shape}")
    kh, kw = pair(kernel_size, "kernel_size", "avg_pool2d", 1)
    sh, sw = (kh, kw) if stride is None or stride == [] else pair(stride, "stride", "avg_pool2d", 1)
    ph, pw = pair(padding, "padding", "avg_pool2d", 0)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError(f"avg_pool2d: pad should be at most half of effective kernel size, got padding "
                         f"{(ph, pw)} for kernel {(kh, kw)}")
    if divisor_override is not None and divisor_override == 0:
        raise ValueError("avg_pool2d: divisor must be not zero")
    h, w = x.shape[2], x.shape[3]
    oh = out_size(h, kh, sh, ph, 1, ceil_mode, "avg_pool2d")
    ow = out_size(w, kw, sw, pw, 1, ceil_mode, "avg_pool2d")
    right_h = builtins_max(ph, (oh - 1) * sh + kh - h - ph)
    right_w = builtins_max(pw, (ow - 1) * sw + kw - w - pw)
    if ph or pw or right_h or right_w:
        x = Pad.apply(x, ((0, 0), (0, 0), (ph, right_h), (pw, right_w)), 0.0)
    total: Variable | None = None
    for i in range(kh):
        for j in range(kw):
            part = x[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            total = part if total is None else total + part
    assert total is not None  # the kernel has at least one element
    if divisor_override is not None:
        return total / float(divisor_override)
    div = np.outer(_divisors(h, kh, sh, ph, oh, count_include_pad), _divisors(w, kw, sw, pw, ow, count_include_pad))
    return total / wrap(div.astype(x.dtype))


def max_pool2d_dilated(x: Variable, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                       ceil_mode: bool) -> Variable:
    """Maximum over dilated windows: each window's elements are read by position (-inf in the
    padding) and the first maximum of each window is taken, as PyTorch's scan does."""
    x = variable_arg(x, "max_pool2d")
    if x.ndim == 3:
        return max_pool2d_dilated(x[None], kernel_size, stride, padding, dilation, ceil_mode)[0]
    if x.ndim != 4:
        raise ShapeError(f"max_pool2d: input must be (N, C, H, W) or (C, H, W), got shape {x.shape}")
    kh, kw = pair(kernel_size, "kernel_size", "max_pool2d", 1)
    sh, sw = (kh, kw) if stride is None or stride == [] else pair(stride, "stride", "max_pool2d", 1)
    ph, pw = pair(padding, "padding", "max_pool2d", 0)
    dh, dw = pair(dilation, "dilation", "max_pool2d", 1)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError(f"max_pool2d: pad should be at most half of effective kernel size, got "
                         f"padding {(ph, pw)} for kernel {(kh, kw)}")
    n, c, h, w = x.shape
    oh = out_size(h, kh, sh, ph, dh, ceil_mode, "max_pool2d")
    ow = out_size(w, kw, sw, pw, dw, ceil_mode, "max_pool2d")
    bottom = builtins_max(ph, (oh - 1) * sh + dh * (kh - 1) + 1 - h - ph)
    right = builtins_max(pw, (ow - 1) * sw + dw * (kw - 1) + 1 - w - pw)
    padded = Pad.apply(x, ((0, 0), (0, 0), (ph, bottom), (pw, right)), -np.inf)
    H, W = padded.shape[2], padded.shape[3]
    rows = (np.arange(oh) * sh)[:, None] + np.arange(kh) * dh  # (oh, kh)
    cols = (np.arange(ow) * sw)[:, None] + np.arange(kw) * dw  # (ow, kw)
    within = rows[:, None, :, None] * W + cols[None, :, None, :]  # (oh, ow, kh, kw)
    planes = (np.arange(n * c) * H * W).reshape(n, c, 1, 1, 1)
    positions = planes + within.reshape(1, 1, oh, ow, kh * kw)
    return reduce_max(Take.apply(padded, positions), dim=-1).values
