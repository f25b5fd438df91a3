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
from .factories import (Generator, arange, full, linspace, manual_seed, ones, ones_like, rand, randn,
                        tensor, zeros, zeros_like)
from .function import Function, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .ops import (abs, argmax, broadcast_to, cat, clamp, concatenate, exp, flatten, log, matmul,  # noqa: A004
                  max, maximum, mean, min, permute, relu, reshape, sigmoid, sqrt, squeeze, stack, sum,
                  sum_to, tanh, transpose, unsqueeze, where)
from .variable import Variable

Tensor = Variable  # PyTorch's name for the same thing since 0.4

__version__ = "0.1.0"

# Higher layers load on first use (al.nn, al.functional, …): `import autograd_lab` stays fast and
# compiles no numba kernel.
_LAZY_SUBMODULES = ("functional", "nn", "optim", "data", "viz", "train", "kernels", "exercises")


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'autograd_lab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
