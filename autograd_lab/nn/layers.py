"""Layers and losses: small Modules around the functions in ``autograd_lab.functional``.

>>> import autograd_lab.nn as nn
>>> nn.Sequential(nn.Linear(64, 128, seed=0), nn.ReLU(), nn.Linear(128, 10, seed=1))
Sequential(
  (0): Linear(in_features=64, out_features=128, bias=True)
  (1): ReLU()
  (2): Linear(in_features=128, out_features=10, bias=True)
)
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterator

import numpy as np

from .. import functional as F
from ..factories import Generator, numpy_rng
from ..ops.shape import flatten
from ..variable import Variable
from .init import default_init_
from .module import Module, Parameter


def _pair(value: Any, name: str) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and v >= 0 for v in pair):
        raise ValueError(f"{name} must be a non-negative int or a pair of them; got {value!r}")
    return int(pair[0]), int(pair[1])


class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features).

    Initialised like PyTorch: weight and bias from U(-1/sqrt(in_features), 1/sqrt(in_features)),
    drawn from ``generator`` (or a fresh one seeded with ``seed``, or the default generator
    that ``al.manual_seed`` seeds)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, dtype: Any = np.float32,
                 seed: int | None = None, generator: Generator | None = None) -> None:
        super().__init__()
        if in_features < 1 or out_features < 1:
            raise ValueError(f"Linear needs positive sizes; got in_features={in_features}, "
                             f"out_features={out_features}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = Parameter(np.empty((out_features, in_features), dtype=dtype))
        self.bias = Parameter(np.empty(out_features, dtype=dtype)) if bias else None
        default_init_(self.weight, self.bias, numpy_rng(seed, generator))

    def forward(self, x: Variable) -> Variable:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution (cross-correlation, as in PyTorch) over inputs of shape (N, C, H, W).

    weight has shape (out_channels, in_channels / groups, kh, kw); initialised like PyTorch with
    fan_in = in_channels / groups * kh * kw."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True, *,
                 dtype: Any = np.float32, seed: int | None = None, generator: Generator | None = None) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        if self.groups < 1 or self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                             f"both be divisible by groups ({groups})")
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = _pair(padding, "padding")
        self.dilation = _pair(dilation, "dilation")
        shape = (out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = Parameter(np.empty(shape, dtype=dtype))
        self.bias = Parameter(np.empty(out_channels, dtype=dtype)) if bias else None
        default_init_(self.weight, self.bias, numpy_rng(seed, generator))

    def forward(self, x: Variable) -> Variable:
        return F.conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class MaxPool2d(Module):
    """Maximum over each kernel_size window (stride defaults to kernel_size); ``padding`` adds
    -inf around the input, ``ceil_mode`` keeps a last partial window."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, bool(ceil_mode)

    def forward(self, x: Variable) -> Variable:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, ceil_mode=self.ceil_mode)

    def extra_repr(self) -> str:
        text = f"kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != 0:
            text += f", padding={self.padding}"
        if self.ceil_mode:
            text += ", ceil_mode=True"
        return text


class ReLU(Module):
    """max(x, 0), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return F.relu(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return F.sigmoid(x)


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return F.tanh(x)


class Flatten(Module):
    """Merge dimensions start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Variable) -> Variable:
        return flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """During training, zero each element with probability p and scale the rest by 1/(1-p);
    in eval mode pass the input through unchanged."""

    def __init__(self, p: float = 0.5, *, seed: int | None = None, generator: Generator | None = None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = float(p)
        self._generator = generator if generator is not None else (Generator(seed) if seed is not None else None)

    def forward(self, x: Variable) -> Variable:
        return F.dropout(x, self.p, self.training, generator=self._generator)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Run modules one after another: ``Sequential(a, b)(x) == b(a(x))``."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], (dict, OrderedDict)):
            for name, m in modules[0].items():
                self.add_module(str(name), m)
        else:
            for i, m in enumerate(modules):
                if not isinstance(m, Module):
                    raise TypeError(f"Sequential takes Modules; argument {i} is a {type(m).__name__}. "
                                    "Wrap functions in a Module (e.g. nn.ReLU() instead of F.relu).")
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, idx: int | slice) -> Module:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return Sequential(*mods[idx])
        return mods[idx]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self._modules)), module)
        return self


class CrossEntropyLoss(Module):
    """Softmax cross-entropy between logits (N, C) and integer class targets (N,)."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Variable, target: Any) -> Variable:
        return F.cross_entropy(input, target, reduction=self.reduction)


class MSELoss(Module):
    """Mean (or sum) of squared differences."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Variable, target: Any) -> Variable:
        return F.mse_loss(input, target, reduction=self.reduction)


class Identity(Module):
    """Returns its input unchanged (a placeholder layer); arguments are accepted and ignored."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class GELU(Module):
    """x * Phi(x); ``approximate='tanh'`` for PyTorch's tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Variable) -> Variable:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Variable) -> Variable:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Softmax(Module):
    """softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Variable) -> Variable:
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log_softmax along ``dim``."""

    def forward(self, x: Variable) -> Variable:
        return F.log_softmax(x, self.dim)


class LayerNorm(Module):
    """Normalise over the last dims (``normalized_shape``), then scale and shift by learnable
    ``weight`` (ones) and ``bias`` (zeros) when ``elementwise_affine``."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, *, dtype: Any = np.float32) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape, self.eps = tuple(int(s) for s in shape), float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(self.normalized_shape, dtype=dtype)) if elementwise_affine and bias else None

    def forward(self, x: Variable) -> Variable:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A table of ``num_embeddings`` rows of size ``embedding_dim`` (drawn from N(0, 1)), looked up
    by integer index.  The row ``padding_idx`` (if given) starts at zero and is never trained."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, *,
                 dtype: Any = np.float32, seed: int | None = None, generator: Generator | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None:
            if not -self.num_embeddings <= int(padding_idx) < self.num_embeddings:
                raise ValueError(f"Embedding: padding_idx must be within num_embeddings "
                                 f"(-{num_embeddings} to {self.num_embeddings - 1}); got {padding_idx}")
            padding_idx = int(padding_idx) % self.num_embeddings
        self.padding_idx = padding_idx
        rng = numpy_rng(seed, generator)
        table = np.asarray(rng.standard_normal((num_embeddings, embedding_dim)), dtype=dtype)
        if padding_idx is not None:
            table[padding_idx] = 0
        self.weight = Parameter(table)

    def forward(self, idx: Any) -> Variable:
        return F.embedding(idx, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else text + f", padding_idx={self.padding_idx}"


class ModuleList(Module):
    """A list of Modules whose parameters the parent sees (a plain list hides them)."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        for m in modules or ():
            self.append(m)

    def append(self, module: Module) -> "ModuleList":
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules; got a {type(module).__name__}")
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Any) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx: int | slice) -> Any:
        mods = list(self._modules.values())
        return ModuleList(mods[idx]) if isinstance(idx, slice) else mods[idx]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleList has no forward: iterate over it and call each module")


class ModuleDict(Module):
    """A dict of Modules whose parameters the parent sees."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        for name, m in dict(modules or {}).items():
            self[name] = m

    def __setitem__(self, name: str, module: Module) -> None:
        self.add_module(str(name), module)

    def __getitem__(self, name: str) -> Module:
        return self._modules[name]

    def __contains__(self, name: str) -> bool:
        return name in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Any:
        return self._modules.keys()

    def values(self) -> Any:
        return self._modules.values()

    def items(self) -> Any:
        return self._modules.items()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleDict has no forward: pick a module by name and call it")


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction


class L1Loss(_Loss):
    """Mean (or sum) of absolute differences."""

    def forward(self, input: Variable, target: Any) -> Variable:
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities (N, C) at integer class targets (N,)."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Variable, target: Any) -> Variable:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities."""

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Variable, target: Any) -> Variable:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(BCELoss):
    """Binary cross-entropy of logits (the sigmoid is fused in, so it does not overflow)."""

    def forward(self, input: Variable, target: Any) -> Variable:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction)


class _BatchNorm(Module):
    """Normalise each channel by batch statistics in training and by running ones in evaluation."""

    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, *, dtype: Any = np.float32) -> None:
        super().__init__()
        self.num_features, self.eps = int(num_features), float(eps)
        self.momentum = None if momentum is None else float(momentum)  # None: the cumulative average
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        self.weight = Parameter(np.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype=dtype)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", np.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", np.array(0, dtype=np.int64))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x: Variable) -> Variable:
        if x.ndim not in self._dims:
            raise ValueError(f"{type(self).__name__}: expected a {' or '.join(map(str, self._dims))}-d input, "
                             f"got shape {x.shape}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked += 1  # in place: the buffer stays the array state_dict() holds
            if self.momentum is None:  # the running statistics are the average over every batch so far
                momentum = 1.0 / float(self.num_batches_tracked)
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=self.training or not self.track_running_stats,
                            momentum=momentum, eps=self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs."""

    _dims = (4,)
