"""Optimizers: SGD (with momentum) and Adam."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .grad_mode import *  # noqa: F401,F403
from .kernels import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
__all__ = ['Adam', 'Optimizer', 'SGD']


# --- section: Optimizer ---
class Optimizer:
    """Holds the parameters to update (a list) and, per parameter, what the rule remembers."""

    def __init__(self, params, lr):
        if isinstance(params, Variable):
            raise TypeError("an optimizer takes an iterable of parameters, such as "
                            "model.parameters() or [w, b]; got a single Variable: wrap it in "
                            "a list.")
        self.params = list(params)          # a generator can be walked only once
        if not self.params:
            raise ValueError("optimizer got an empty parameter list; pass model.parameters() "
                             "of a model that has parameters.")
        if not lr >= 0:
            raise ValueError(f"Invalid learning rate: {lr}; it must be a number >= 0.")
        self.lr = lr
        self.state = [{} for _ in self.params]   # state[i] belongs to params[i]

    def zero_grad(self):
        """Set every parameter's gradient to None (PyTorch 2's default)."""
        for p in self.params:
            p.grad = None

    def step(self):
        raise NotImplementedError(f"{type(self).__name__} defines no step().")


# --- section: SGD ---
class SGD(Optimizer):
    """SGD with PyTorch's rule: g += wd * p; b = g (first step) or mu * b + g; p -= lr * b."""

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, lr)
        if momentum < 0 or weight_decay < 0:
            raise ValueError(f"momentum and weight_decay must be >= 0, got {momentum} and "
                             f"{weight_decay}.")
        if nesterov and momentum <= 0:
            raise ValueError("Nesterov momentum requires a momentum > 0, e.g. momentum=0.9.")
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov

    def step(self):
        with no_grad():
            for p, state in zip(self.params, self.state):
                if p.grad is None:
                    continue
                d = p.grad.data
                if self.weight_decay != 0:
                    d = d + self.weight_decay * p.data
                if self.momentum != 0:
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = d.copy()
                    else:
                        buf *= self.momentum
                        buf += d
                    d = d + self.momentum * buf if self.nesterov else buf
                p.data -= self.lr * d


# --- section: Adam ---
class Adam(Optimizer):
    """Adam with PyTorch's bias correction: m, v running averages of g and g*g;
    p -= lr / (1 - b1**t) * m / (sqrt(v) / sqrt(1 - b2**t) + eps)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr)
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"Adam's betas must lie in [0, 1), got {betas}.")
        self.betas, self.eps, self.weight_decay = tuple(betas), eps, weight_decay

    def step(self):
        beta1, beta2 = self.betas
        with no_grad():
            for p, state in zip(self.params, self.state):
                if p.grad is None:
                    continue
                g = p.grad.data
                if self.weight_decay != 0:
                    g = g + self.weight_decay * p.data
                if not state:
                    state.update(step=0, exp_avg=np.zeros_like(p.data),
                                 exp_avg_sq=np.zeros_like(p.data))
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m += (1 - beta1) * (g - m)
                v *= beta2
                v += (1 - beta2) * g * g
                step_size = self.lr / (1 - beta1 ** t)
                denom = np.sqrt(v) / np.sqrt(1 - beta2 ** t) + self.eps
                p.data -= step_size * m / denom
