"""Optimizers (SGD, Adam) and a step learning-rate schedule, with PyTorch's update rules.

An optimizer holds ``param_groups`` (a list of dicts: ``params`` plus hyper-parameters)
and per-parameter ``state``. ``step()`` changes each parameter's numpy data in place
from its ``.grad``; nothing is recorded in the graph.

>>> from autograd_lab.nn import Parameter
>>> from autograd_lab.optim import SGD
>>> w = Parameter([1.0])
>>> opt = SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.data
array([0.8])
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from .kernels.optim import sgd_momentum_
from .variable import Variable

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "StepLR", "CosineAnnealingLR", "OneCycleLR"]

_REQUIRED = object()  # marks a hyper-parameter that has no default (SGD's lr)


class Optimizer:
    """Base class: keeps parameter groups and state; subclasses define ``step``."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[Variable, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Variable):
            raise TypeError("params should be an iterable of Variables (e.g. model.parameters() or [w, b]); "
                            "got a single Variable. Wrap it in a list: [w].")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list; pass model.parameters() of a model "
                             "that has parameters, or a non-empty list of Variables.")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add parameters with their own hyper-parameters (missing ones come from the defaults)."""
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"a parameter group must be a dict with a 'params' entry; got {group!r}")
        params = group["params"]
        params = [params] if isinstance(params, Variable) else list(params)
        for i, p in enumerate(params):
            if not isinstance(p, Variable):
                raise TypeError(f"optimizer can only optimize Variables, but parameter {i} is a "
                                f"{type(p).__name__}; pass model.parameters() or Variables with requires_grad=True.")
            if not p.is_leaf:
                raise ValueError(f"can't optimize a non-leaf Variable (parameter {i} was computed by "
                                 f"{type(p.grad_fn).__name__}); optimize the leaves it was computed from.")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params) or len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear in more than one parameter group (or twice in one); "
                             "each parameter may be given once.")
        new = {"params": params}
        for key, default in self.defaults.items():
            value = group.get(key, default)
            if value is _REQUIRED:
                raise TypeError(f"parameter group didn't specify a value of required optimization parameter {key}")
            new[key] = value
        for key in group:
            if key not in new:
                raise TypeError(f"unknown option '{key}' in a parameter group; "
                                f"{type(self).__name__} accepts {sorted(self.defaults)}")
        self.param_groups.append(new)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient before the next backward (which would add to it)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.data[...] = 0

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """State and hyper-parameters, with parameters referred to by their position."""
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        state = {index[id(p)]: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
                 for p, s in self.state.items()}
        groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [index[id(p)] for p in g["params"]]}
                  for g in self.param_groups]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict has a different number of parameter groups or parameters "
                             "than this optimizer; build the optimizer over the same parameters first.")
        params = [p for g in self.param_groups for p in g["params"]]
        for saved, group in zip(groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {params[i]: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
                      for i, s in state_dict["state"].items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _check(name: str, value: float, low: float = 0.0) -> None:
    if not value >= low:
        raise ValueError(f"Invalid {name} value: {value}; it must be >= {low}.")


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, dampening, weight decay and Nesterov.

    Per parameter, with g its gradient (PyTorch's rule)::

        g = g + weight_decay * p
        b = g (first step)  or  b = momentum * b + (1 - dampening) * g
        g = g + momentum * b  if nesterov  else  b          (only when momentum != 0)
        p = p - lr * g
    """

    def __init__(self, params: Iterable[Any], lr: float = _REQUIRED, momentum: float = 0.0,  # type: ignore
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False) -> None:
        if lr is not _REQUIRED:
            _check("learning rate", lr)
        _check("momentum", momentum)
        _check("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum > 0 and zero dampening; "
                             f"got momentum={momentum}, dampening={dampening}.")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=bool(maximize)))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group.get("maximize", False)
            plain = wd == 0 and dampening == 0 and not nesterov and not maximize  # the kernel's update
            for p in group["params"]:
                if p._grad is None:
                    continue
                d_p = p._grad._data
                if maximize:  # ascend: the gradient's opposite, before weight decay (PyTorch's order)
                    d_p = -d_p
                if wd != 0:
                    d_p = d_p + wd * p._data
                if momentum != 0:
                    state = self.state.get(p)
                    if state is None:
                        buf = np.array(d_p, dtype=p._data.dtype, copy=True)
                        self.state[p] = {"momentum_buffer": buf}
                    else:
                        buf = state["momentum_buffer"]
                        if plain and sgd_momentum_(p._data, buf, d_p, lr, momentum):
                            p._bump_version()  # the kernel did this branch and the update below
                            continue
                        buf *= momentum
                        if dampening == 0:
                            buf += d_p
                        else:
                            buf += (1 - dampening) * d_p
                    d_p = d_p + momentum * buf if nesterov else buf
                p._data -= lr * d_p
                p._bump_version()
        return loss


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's bias correction and L2 weight decay added to the gradient::

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
    """

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon", eps)
        _check("weight_decay", weight_decay)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid betas {betas}: each must be in [0, 1).")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=bool(amsgrad), maximize=bool(maximize)))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                g = p._grad._data
                if group.get("maximize", False):
                    g = -g
                if wd != 0 and self._decoupled:  # AdamW: shrink the weights, leave the gradient alone
                    p._data *= 1 - lr * wd
                elif wd != 0:
                    g = g + wd * p._data
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = {"step": 0, "exp_avg": np.zeros_like(p._data),
                                             "exp_avg_sq": np.zeros_like(p._data)}
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m += (1 - beta1) * (g - m)          # lerp towards g, as PyTorch does
                v *= beta2
                v += (1 - beta2) * g * g
                step_size = lr / (1 - beta1 ** t)
                if group.get("amsgrad", False):  # the largest second moment so far (Reddi et al.)
                    v_max = state.setdefault("max_exp_avg_sq", np.zeros_like(p._data))
                    np.maximum(v_max, v, out=v_max)
                    v = v_max
                denom = np.sqrt(v) / math.sqrt(1 - beta2 ** t) + eps
                p._data -= step_size * m / denom
                p._bump_version()
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), PyTorch's ``AdamW``: the weights
    shrink by ``lr * weight_decay`` each step instead of the decay being added to the gradient."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class RMSprop(Optimizer):
    """RMSprop (Hinton), with PyTorch's options::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - m**2) + eps  with m = alpha * m + (1 - alpha) * g   if centered
        avg = sqrt(v) + eps                                                 otherwise
        b = momentum * b + g / avg;  p = p - lr * b     (p = p - lr * g / avg without momentum)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False) -> None:
        for name, value in (("learning rate", lr), ("epsilon", eps), ("momentum", momentum),
                            ("weight_decay", weight_decay), ("alpha", alpha)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered = group["momentum"], group["centered"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                g = p._grad._data
                if wd != 0:
                    g = g + wd * p._data
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = {"step": 0, "square_avg": np.zeros_like(p._data)}
                    if momentum > 0:
                        state["momentum_buffer"] = np.zeros_like(p._data)
                    if centered:
                        state["grad_avg"] = np.zeros_like(p._data)
                state["step"] += 1
                v = state["square_avg"]
                v *= alpha
                v += (1 - alpha) * g * g
                if centered:
                    m = state["grad_avg"]
                    m += (1 - alpha) * (g - m)
                    avg = np.sqrt(v - m * m) + eps
                else:
                    avg = np.sqrt(v) + eps
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf *= momentum
                    buf += g / avg
                    p._data -= lr * buf
                else:
                    p._data -= lr * g / avg
                p._bump_version()
        return loss


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), with PyTorch's options::

        g = g + weight_decay * p                 (g = -g first if maximize)
        clr = lr / (1 + (step - 1) * lr_decay)
        s = s + g * g                            (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False) -> None:
        for name, value in (("learning rate", lr), ("lr_decay", lr_decay), ("weight_decay", weight_decay),
                            ("initial_accumulator_value", initial_accumulator_value), ("epsilon", eps)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize))
        for group in self.param_groups:  # PyTorch makes the state at once
            for p in group["params"]:
                self.state[p] = {"step": 0, "sum": np.full_like(p._data, group["initial_accumulator_value"])}

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                g = -p._grad._data if group["maximize"] else p._grad._data
                if wd != 0:
                    g = g + wd * p._data
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = {"step": 0, "sum": np.full_like(p._data, group["initial_accumulator_value"])}
                state["step"] += 1
                clr = lr / (1 + (state["step"] - 1) * lr_decay)
                state["sum"] += g * g
                p._data -= clr * g / (np.sqrt(state["sum"]) + eps)
                p._bump_version()
        return loss


class StepLR:
    """Multiply each group's learning rate by ``gamma`` every ``step_size`` calls of ``step()``
    (call it once per epoch, after the optimizer's steps)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"StepLR needs an Optimizer; got {type(optimizer).__name__}")
        if int(step_size) < 1:
            raise ValueError(f"step_size must be a positive number of epochs; got {step_size}")
        self.optimizer, self.step_size, self.gamma = optimizer, int(step_size), float(gamma)
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def step(self) -> None:
        self.last_epoch += 1
        if self.last_epoch % self.step_size == 0:
            for group in self.optimizer.param_groups:
                group["lr"] = group["lr"] * self.gamma
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()`` (one per parameter group)."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class CosineAnnealingLR(StepLR):
    """Each group's learning rate follows half a cosine from its initial value down to
    ``eta_min`` over ``T_max`` calls of ``step()``: eta_min + (lr0 - eta_min) (1 + cos(pi t / T_max)) / 2.

    As in PyTorch, each step applies the recursive form of that curve to the *current* learning
    rate, lr_t = eta_min + (lr_{t-1} - eta_min) (1 + cos(pi t / T_max)) / (1 + cos(pi (t-1) / T_max)),
    so a learning rate changed by hand in ``param_groups`` is annealed from where it was set."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:  # noqa: N803
        super().__init__(optimizer, step_size=1, gamma=1.0)
        if int(T_max) < 1:
            raise ValueError(f"T_max must be a positive number of steps; got {T_max}")
        self.T_max, self.eta_min = int(T_max), float(eta_min)

    def step(self) -> None:
        self.last_epoch += 1
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            if t == 0:
                continue
            if (t - 1 - T) % (2 * T) == 0:  # at the curve's bottom the ratio below is 0 / 0
                group["lr"] = group["lr"] + (base - low) * (1 - math.cos(math.pi / T)) / 2
            else:
                ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                group["lr"] = low + (group["lr"] - low) * ratio
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


class OneCycleLR:
    """The one-cycle policy (Smith & Topin, 2018), as PyTorch's: each step the learning rate goes
    from max_lr / div_factor up to max_lr over the first ``pct_start`` of ``total_steps``, then
    down to that start / final_div_factor (``three_phase``: back to the start first, then down);
    'cos' or 'linear' between. With ``cycle_momentum`` the momentum (SGD) or beta1 (Adam) moves
    the other way, between max_momentum and base_momentum. Call ``step()`` after each batch."""

    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"OneCycleLR needs an Optimizer; got {type(optimizer).__name__}")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: give total_steps, or both epochs and steps_per_epoch")
            if int(epochs) < 1 or int(steps_per_epoch) < 1:
                raise ValueError(f"OneCycleLR: epochs and steps_per_epoch must be positive; got "
                                 f"{epochs} and {steps_per_epoch}")
            total_steps = int(epochs) * int(steps_per_epoch)
        if int(total_steps) < 1:
            raise ValueError(f"OneCycleLR: total_steps must be a positive int; got {total_steps}")
        if not 0.0 <= float(pct_start) <= 1.0:
            raise ValueError(f"OneCycleLR: pct_start must be between 0 and 1; got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear'; got {anneal_strategy!r}")
        self.optimizer, self.total_steps = optimizer, int(total_steps)
        self.anneal_strategy, self.cycle_momentum = anneal_strategy, bool(cycle_momentum)
        groups = optimizer.param_groups
        max_lrs = self._per_group(max_lr, "max_lr")
        for group, top in zip(groups, max_lrs):
            group["initial_lr"] = top / div_factor
            group["max_lr"] = top
            group["min_lr"] = group["initial_lr"] / final_div_factor
        t, p = self.total_steps, float(pct_start)
        if three_phase:
            self._phases = [(p * t - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (2 * p * t - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (t - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [(p * t - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (t - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if self.cycle_momentum:
            first = groups[0] if groups else {}
            if "momentum" not in first and "betas" not in first:
                raise ValueError("OneCycleLR: the optimizer must have a momentum (SGD, RMSprop) or betas "
                                 "(Adam) to cycle; pass cycle_momentum=False")
            self._use_beta1 = "betas" in first
            for group, low, high in zip(groups, self._per_group(base_momentum, "base_momentum"),
                                        self._per_group(max_momentum, "max_momentum")):
                group["base_momentum"], group["max_momentum"] = low, high
                self._set_momentum(group, high)
        self.base_lrs = [g["initial_lr"] for g in groups]
        self.last_epoch = 0
        self._apply()

    def _per_group(self, value: Any, name: str) -> list[float]:
        n = len(self.optimizer.param_groups)
        if isinstance(value, (list, tuple)):
            if len(value) != n:
                raise ValueError(f"OneCycleLR: expected {n} values of {name}, one per group; got {len(value)}")
            return [float(v) for v in value]
        return [float(value)] * n

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self._use_beta1:
            group["betas"] = (value, group["betas"][1])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _apply(self) -> None:
        step = self.last_epoch
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= end_step or i == len(self._phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    group["lr"] = self._anneal(group[lr_from], group[lr_to], pct)
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_from], group[m_to], pct))
                    break
                start_step = end_step
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def step(self) -> None:
        if self.last_epoch + 1 > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {self.last_epoch + 1} times; the schedule has "
                             f"total_steps={self.total_steps}. Give the number of batches over all epochs.")
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()`` (one per parameter group)."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _scheduler_module() -> Any:
    """``optim.lr_scheduler`` as in PyTorch (``from autograd_lab.optim.lr_scheduler import StepLR``)."""
    import sys
    import types

    module = types.ModuleType(__name__ + ".lr_scheduler", "Learning-rate schedules (PyTorch's torch.optim.lr_scheduler).")
    module.StepLR = StepLR  # type: ignore[attr-defined]
    module.CosineAnnealingLR = CosineAnnealingLR  # type: ignore[attr-defined]
    module.OneCycleLR = OneCycleLR  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return module


lr_scheduler = _scheduler_module()
