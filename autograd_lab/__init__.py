"""autograd_lab: a PyTorch-style automatic differentiation library, built in a course.

>>> import autograd_lab as al
>>> w = al.tensor(2.0, requires_grad=True)
>>> loss = (w * 3 + 1) ** 2
>>> loss.backward()
>>> w.grad
Variable(42.)
"""
from .engine import backward, grad
from .errors import AutogradLabError, BackwardError, GradcheckError, LegacyFunctionError, ShapeError
from .dtypes import (bool, complex64, complex128, device, double, float, float16, float32,  # noqa: A004
                     float64, half, int, int8, int16, int32, int64, long, short, uint8)
from .factories import (Generator, arange, empty, eye, from_numpy, full, full_like, linspace, manual_seed,
                        ones, ones_like, rand, randn, randn_like, tensor, zeros, zeros_like)
from .function import Function, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .ops import (abs, acos, add, amax, amin, argmax, argmin, asin, atan, broadcast_to, cat,  # noqa: A004
                  ceil, clamp, clone, concatenate, cos, cosh, div, exp, expm1, flatten, floor, gather,
                  index_add, index_select, isfinite, isinf, isnan, log, log1p, log2, log10, matmul, max,
                  maximum, mean, min, minimum, mm, mul, neg, norm, permute, pow, reciprocal, relu,
                  reshape, round, rsqrt, sigmoid, sign, sin, sinh, sort, sqrt, square, squeeze, stack,
                  std, sub, sum, sum_to, t, tan, tanh, transpose, trunc, unsqueeze, var, where)
from .ops import (bmm, chunk, cumprod, cumsum, dot, einsum, erf, flip, floor_divide, fmod, logsumexp,  # noqa: A004
                  masked_fill, movedim, nan_to_num, nonzero, outer, prod, remainder, repeat, roll, scatter,
                  scatter_add, split, swapaxes, tile, topk, tril, triu)
from .ops import (addcdiv, addcmul, as_strided, atan2, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
                  count_nonzero, cummax, cummin, diagonal, eq, ge, gt, hypot, kthvalue, le, lerp, logical_not,
                  lt, median, mode, narrow, ne, select, std_mean, unbind, var_mean)
from .variable import Variable

Tensor = Variable  # PyTorch's name for the same thing since 0.4

__version__ = "0.1.0"

# Higher layers load on first use (al.nn, al.functional, …): `import autograd_lab` stays fast and
# compiles no numba kernel.
_LAZY_SUBMODULES = ("functional", "nn", "optim", "data", "viz", "train", "kernels", "autograd")
# Capture is a layer over the core that nothing of the eager path needs: it loads when used.
_LAZY_NAMES = {"capture": "replay", "CapturedStep": "replay", "CaptureError": "replay"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(f".{_LAZY_NAMES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'autograd_lab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | set(_LAZY_NAMES))
