"""Weight initialisation, in place and seeded (PyTorch's ``torch.nn.init`` names).

PyTorch's layers start from ``kaiming_uniform_(w, a=sqrt(5))``, which works out to
U(-1/sqrt(fan_in), 1/sqrt(fan_in)); their bias uses the same bound.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..factories import Generator, numpy_rng
from ..grad_mode import no_grad
from ..variable import Variable


def _calculate_fan_in_and_fan_out(shape: tuple[int, ...]) -> tuple[int, int]:
    """fan_in = inputs feeding one output unit; for a conv weight (out, in, kh, kw) it is in*kh*kw."""
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need a weight with at least 2 dimensions; got shape {shape}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through ``nonlinearity``."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"unsupported nonlinearity '{nonlinearity}'; use linear, sigmoid, tanh, relu or leaky_relu")


def uniform_(tensor: Variable, a: float = 0.0, b: float = 1.0, *, seed: int | None = None,
             generator: Generator | None = None) -> Variable:
    """Fill with samples from U(a, b), in place."""
    rng = numpy_rng(seed, generator)
    with no_grad():
        tensor.data[...] = rng.uniform(a, b, size=tensor.shape)
    return tensor


def normal_(tensor: Variable, mean: float = 0.0, std: float = 1.0, *, seed: int | None = None,
            generator: Generator | None = None) -> Variable:
    """Fill with samples from N(mean, std^2), in place."""
    rng = numpy_rng(seed, generator)
    with no_grad():
        tensor.data[...] = rng.normal(mean, std, size=tensor.shape)
    return tensor


def zeros_(tensor: Variable) -> Variable:
    """Fill with zeros, in place."""
    tensor.data[...] = 0
    return tensor


def ones_(tensor: Variable) -> Variable:
    """Fill with ones, in place."""
    tensor.data[...] = 1
    return tensor


def kaiming_uniform_(tensor: Variable, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     *, seed: int | None = None, generator: Generator | None = None) -> Variable:
    """He initialisation: U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor.shape)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out'; got {mode!r}")
    fan = fan_in if mode == "fan_in" else fan_out
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, seed=seed, generator=generator)


def constant_(tensor: Variable, val: float) -> Variable:
    """Fill with ``val``, in place."""
    with no_grad():
        tensor.data[...] = val
    return tensor


def eye_(tensor: Variable) -> Variable:
    """The identity matrix, in place (2-d only)."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_ needs a 2-d Variable; got shape {tensor.shape}")
    with no_grad():
        rows, cols = tensor.shape
        tensor.data[...] = np.eye(rows, cols)
    return tensor


def xavier_uniform_(tensor: Variable, gain: float = 1.0, *, seed: int | None = None,
                    generator: Generator | None = None) -> Variable:
    """Glorot initialisation: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, seed=seed, generator=generator)


def xavier_normal_(tensor: Variable, gain: float = 1.0, *, seed: int | None = None,
                   generator: Generator | None = None) -> Variable:
    """Glorot initialisation: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor.shape)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), seed=seed, generator=generator)


def kaiming_normal_(tensor: Variable, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    *, seed: int | None = None, generator: Generator | None = None) -> Variable:
    """He initialisation: N(0, std^2) with std = gain / sqrt(fan)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor.shape)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out'; got {mode!r}")
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), seed=seed, generator=generator)


def trunc_normal_(tensor: Variable, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  *, seed: int | None = None, generator: Generator | None = None) -> Variable:
    """N(mean, std^2) with values outside [a, b] drawn again, in place."""
    rng = numpy_rng(seed, generator)
    out = rng.normal(mean, std, size=tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, size=int(bad.sum()))
        bad = (out < a) | (out > b)
    with no_grad():
        tensor.data[...] = out
    return tensor


def default_init_(weight: Variable, bias: Variable | None, rng: Any) -> None:
    """PyTorch's Linear/Conv reset_parameters: both from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    fan_in, _ = _calculate_fan_in_and_fan_out(weight.shape)
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    weight.data[...] = rng.uniform(-bound, bound, size=weight.shape)
    if bias is not None:
        bias.data[...] = rng.uniform(-bound, bound, size=bias.shape)
