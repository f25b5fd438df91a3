"""PyTorch's ``torch.autograd`` namespace: ``al.autograd.grad``, ``al.autograd.Function``, …
and ``al.autograd.functional`` (jacobian, hessian, vjp, jvp, hvp, vhp).

>>> import autograd_lab as al
>>> x = al.tensor(2.0, requires_grad=True)
>>> al.autograd.grad(x ** 3, x)
(Variable(12.),)
"""
from .. import function  # torch.autograd.function.once_differentiable's place
from ..engine import backward, grad
from ..function import Function, once_differentiable
from ..grad_mode import enable_grad, no_grad, set_grad_enabled
from ..gradcheck import gradcheck, gradgradcheck
from . import functional

__all__ = ["function", "backward", "grad", "Function", "once_differentiable", "enable_grad", "no_grad",
           "set_grad_enabled", "gradcheck", "gradgradcheck", "functional"]
