"""erf and the exact GELU, forward and backward, elementwise.

numpy has no ``erf``; calling Python's ``math.erf`` once per element (the references below) took
20-30 times as long as these loops on the (256, 128) activations of a small transformer's MLP.
Here each is one compiled loop over the C library's ``erf``, the function ``math.erf`` calls, so
the numbers are the same::

    gelu(x)  = x * Phi(x),  Phi(x) = (1 + erf(x / sqrt(2))) / 2
    gelu'(x) = Phi(x) + x * phi(x),  phi(x) = exp(-x**2 / 2) / sqrt(2 pi)

The backward multiplies ``grad`` by that one factor, as PyTorch does (an infinite ``grad`` at
``x = 0`` stays infinite instead of becoming ``inf * 0``).
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import THRESHOLDS, jit_pair, pick, prange
from .activation import float_array

_SQRT_HALF = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _erf_k(x, out):
    for i in prange(x.shape[0]):
        out[i] = math.erf(x[i])


def _gelu_fwd_k(x, out):
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v * 0.5 * (math.erf(v * _SQRT_HALF) + 1)


def _gelu_bwd_k(x, g, out):
    for i in prange(x.shape[0]):
        v = x[i]
        cdf = (math.erf(v * _SQRT_HALF) + 1) * 0.5
        pdf = math.exp(v * v * -0.5) * _INV_SQRT_2PI
        out[i] = g[i] * (cdf + v * pdf)


_ERF = jit_pair(_erf_k)
_GELU_FWD = jit_pair(_gelu_fwd_k)
_GELU_BWD = jit_pair(_gelu_bwd_k)
_MIN_SIZE = THRESHOLDS["exp"]  # one libm call per element, as sigmoid's exp (_jit.THRESHOLDS)


def _flat(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = float_array(x)
    return x, np.empty_like(x)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of each element of a float32 or float64 array."""
    shape = np.shape(x)
    x, out = _flat(x)
    pick(_ERF, x.size, _MIN_SIZE)(x.reshape(-1), out.reshape(-1))
    return out.reshape(shape)


def gelu_fwd(x: np.ndarray) -> np.ndarray:
    """x * Phi(x), elementwise (the exact GELU)."""
    shape = np.shape(x)
    x, out = _flat(x)
    pick(_GELU_FWD, x.size, _MIN_SIZE)(x.reshape(-1), out.reshape(-1))
    return out.reshape(shape)


def gelu_bwd(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """grad * (Phi(x) + x * phi(x)), with x the forward's input."""
    shape = np.shape(x)
    x, out = _flat(x)
    g = np.ascontiguousarray(grad, dtype=x.dtype)
    if g.shape != x.shape:
        raise ValueError(f"grad must have x's shape {x.shape}, got {g.shape}")
    pick(_GELU_BWD, x.size, _MIN_SIZE)(x.reshape(-1), g.reshape(-1), out.reshape(-1))
    return out.reshape(shape)


# ------------------------------------------------------------------ numpy references
_erf_each = np.frompyfunc(math.erf, 1, 1)


def erf_ref(x: np.ndarray) -> np.ndarray:
    """Reference for erf: Python's math.erf on each element."""
    return np.asarray(_erf_each(x), dtype=x.dtype) if x.size else x.copy()


def gelu_fwd_ref(x: np.ndarray) -> np.ndarray:
    """Reference for gelu_fwd."""
    return x * 0.5 * (erf_ref(x * _SQRT_HALF) + 1)


def gelu_bwd_ref(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Reference for gelu_bwd."""
    return grad * ((erf_ref(x * _SQRT_HALF) + 1) * 0.5 + x * (np.exp(x * x * -0.5) * _INV_SQRT_2PI))
