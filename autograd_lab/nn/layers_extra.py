"""More layers with PyTorch's names: Conv1d, AvgPool2d and the activations Hardtanh, ReLU6,
Hardsigmoid, Mish (Modules around ``autograd_lab.functional``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F
from ..factories import Generator, numpy_rng
from ..variable import Variable
from .init import default_init_
from .module import Module, Parameter


def _one(value: Any, name: str) -> int:
    v = value[0] if isinstance(value, (tuple, list)) and len(value) == 1 else value
    if not isinstance(v, (int, np.integer)) or v < 0:
        raise ValueError(f"{name} must be a non-negative int (or a 1-tuple of one); got {value!r}")
    return int(v)


class Conv1d(Module):
    """1-D convolution over inputs of shape (N, C, L); weight (out_channels, in_channels / groups,
    kernel_size), initialised like PyTorch with fan_in = in_channels / groups * kernel_size."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True, *,
                 dtype: Any = np.float32, seed: int | None = None, generator: Generator | None = None) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        if self.groups < 1 or self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"Conv1d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                             f"both be divisible by groups ({groups})")
        self.kernel_size = (_one(kernel_size, "kernel_size"),)
        self.stride = (_one(stride, "stride"),)
        self.padding = padding if isinstance(padding, str) else (_one(padding, "padding"),)
        self.dilation = (_one(dilation, "dilation"),)
        shape = (out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = Parameter(np.empty(shape, dtype=dtype))
        self.bias = Parameter(np.empty(out_channels, dtype=dtype)) if bias else None
        default_init_(self.weight, self.bias, numpy_rng(seed, generator))

    def forward(self, x: Variable) -> Variable:
        padding = self.padding if isinstance(self.padding, str) else self.padding[0]
        return F.conv1d(x, self.weight, self.bias, self.stride[0], padding, self.dilation[0], self.groups)

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,):
            text += f", padding={self.padding}"
        if self.dilation != (1,):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + (", bias=False" if self.bias is None else "")


class AvgPool2d(Module):
    """Mean over each kernel_size window (stride defaults to kernel_size), with avg_pool2d's options."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, bool(ceil_mode)
        self.count_include_pad, self.divisor_override = bool(count_include_pad), divisor_override

    def forward(self, x: Variable) -> Variable:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Hardtanh(Module):
    """x limited to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0) -> None:
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Variable) -> Variable:
        return F.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class ReLU6(Module):
    """min(max(x, 0), 6)."""

    def forward(self, x: Variable) -> Variable:
        return F.relu6(x)


class Hardsigmoid(Module):
    """0 below -3, 1 above 3, x / 6 + 1/2 between."""

    def forward(self, x: Variable) -> Variable:
        return F.hardsigmoid(x)


class Mish(Module):
    """x * tanh(softplus(x))."""

    def forward(self, x: Variable) -> Variable:
        return F.mish(x)
