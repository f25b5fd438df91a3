"""Module and Parameter: the containers that hold a network's weights.

A ``Module`` registers what you assign to it: a ``Parameter`` becomes one of its
parameters, another ``Module`` one of its children. Everything else (``parameters()``,
``state_dict()``, ``zero_grad()``, the printout) walks those two dictionaries.

>>> import autograd_lab.nn as nn
>>> class Affine(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = nn.Parameter([2.0])
...         self.b = nn.Parameter([0.5])
...     def forward(self, x):
...         return x * self.w + self.b
>>> [name for name, _ in Affine().named_parameters()]
['w', 'b']
"""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any, Iterator, NamedTuple

import numpy as np

from ..errors import AutogradLabError, ShapeError
from ..variable import Variable
from .hooks import HooksMixin, call_with_hooks


class StateDictError(AutogradLabError, KeyError):
    """A state dict's names do not match the module's parameters (missing or unexpected keys)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


class Parameter(Variable):
    """A Variable that a Module treats as one of its weights; requires grad by default.

    >>> Parameter([1.0, 2.0])
    Parameter containing:
    Variable([1., 2.], requires_grad=True)
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.empty(0, dtype=np.float32)
        if isinstance(data, Variable):
            data = data.data
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict(strict=False)`` could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module(HooksMixin):
    """Base class of layers and models. Subclasses call ``super().__init__()`` first, assign
    Parameters and sub-Modules as attributes, and define ``forward``."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration by attribute assignment ------------------------------------------
    # Parameters and sub-Modules live in the registries (``_parameters``, ``_modules``) that
    # ``parameters()`` and ``state_dict()`` walk; a copy of the reference also sits in the
    # instance ``__dict__`` so that ``self.weight`` is an ordinary (fast) attribute lookup.
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if params is None:
            if isinstance(value, (Parameter, Module)):
                raise AttributeError(
                    f"cannot assign {type(value).__name__} '{name}' before Module.__init__() has run. "
                    f"Call super().__init__() at the top of {type(self).__name__}.__init__."
                )
            object.__setattr__(self, name, value)
            return
        modules, buffers = d["_modules"], d["_buffers"]
        if isinstance(value, Parameter):
            modules.pop(name, None)
            buffers.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
        elif value is None and (name in params or name in modules):
            (params if name in params else modules)[name] = None
        elif name in params or name in modules:
            kind = "nn.Parameter" if name in params else "Module"
            raise TypeError(
                f"cannot assign a {type(value).__name__} to '{name}', which is registered as a {kind} of "
                f"{type(self).__name__}; assign a {kind} or None. To change a parameter's values, update "
                f"them in place under al.no_grad() (self.{name}.data[...] = ...), or delete the attribute first.")
        elif name in buffers:
            buffers[name] = value
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._modules, self._buffers):
            store.pop(name, None)
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (None reserves the name, e.g. a layer without bias)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register a {type(param).__name__} as parameter '{name}'; "
                            "wrap it: nn.Parameter(value).")
        self._parameters[name] = param
        object.__setattr__(self, name, param)

    def register_buffer(self, name: str, value: np.ndarray | Variable | None) -> None:
        """Keep a non-trainable array (saved in the state dict, not returned by parameters())."""
        self._buffers[name] = value
        object.__setattr__(self, name, value)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass; cannot add it as '{name}'.")
        self._modules[name] = module
        object.__setattr__(self, name, module)

    # ---- calling -------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, ...)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._has_hooks():
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # ---- walking the tree ------------------------------------------------------------------
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and all below it, each once, with dotted names ('' for self)."""
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if id(mod) in seen:
                continue
            seen.add(id(mod))
            yield name, mod
            children = [(f"{name}.{n}" if name else n, m) for n, m in mod._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, Parameter) pairs; a parameter shared by two layers comes once."""
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mod_name, mod in mods:
            for name, p in mod._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter once, in registration order: ``named_parameters`` without the names."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self) -> Iterator[tuple[str, Any]]:
        for mod_name, mod in self.named_modules():
            for name, b in mod._buffers.items():
                if b is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    # ---- modes and gradients -----------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Switch this module and all below it to training mode (Dropout active); returns self."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode) expects a bool; got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (Dropout passes inputs through); same as ``train(False)``."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of all parameters (set to None, or fill with zeros)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.data[...] = 0

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def to(self, dtype: Any) -> Module:
        """Convert every parameter (and buffer) to ``dtype`` in place, e.g. ``np.float64`` for gradcheck."""
        dtype = np.dtype(dtype)
        for p in self.parameters():
            p.data = p.data.astype(dtype)
            if p.grad is not None:
                p.grad = p.grad.data.astype(dtype)
        for mod in self.modules():
            for name, b in mod._buffers.items():
                if isinstance(b, np.ndarray) and b.dtype.kind == "f":
                    setattr(mod, name, b.astype(dtype))
        return self

    def double(self) -> Module:
        return self.to(np.float64)

    def float(self) -> Module:
        return self.to(np.float32)

    # ---- saving and loading ------------------------------------------------------------------
    def state_dict(self) -> OrderedDict[str, np.ndarray]:
        """Copies of every parameter and buffer as numpy arrays, keyed by dotted name."""
        out: OrderedDict[str, np.ndarray] = OrderedDict()
        for mod_name, mod in self.named_modules():
            for store in (mod._parameters, mod._buffers):
                for name, value in store.items():
                    if value is not None:
                        key = f"{mod_name}.{name}" if mod_name else name
                        out[key] = np.array(value.data if isinstance(value, Variable) else value, copy=True)
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> IncompatibleKeys:
        """Copy values into the parameters in place (so an optimizer holding them keeps working).

        Names must match exactly when ``strict`` (the default) and shapes always; otherwise a
        ``StateDictError`` or ``ShapeError`` says which entries differ and nothing is changed."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"load_state_dict expects a mapping of names to arrays (e.g. model.state_dict() "
                            f"or np.load('w.npz')); got {type(state_dict).__name__}")
        own = self._state_entries()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict.keys() if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing key(s) {missing}")
            if unexpected:
                parts.append(f"unexpected key(s) {unexpected}")
            raise StateDictError(
                f"Error(s) in loading state_dict for {type(self).__name__}: {'; '.join(parts)}. "
                f"The model expects {list(own)}. Load weights saved from the same architecture, or "
                "pass strict=False to load only the names that match."
            )
        values = {}
        bad = []
        for key, (_, _, current) in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            value = np.asarray(value.data if isinstance(value, Variable) else value)
            cur = np.asarray(current.data if isinstance(current, Variable) else current)
            if value.shape != cur.shape:
                bad.append(f"'{key}': checkpoint has shape {value.shape}, model has {cur.shape}")
            values[key] = value
        if bad:
            raise ShapeError(
                f"size mismatch when loading state_dict into {type(self).__name__}: {'; '.join(bad)}. "
                "Build the model with the same layer sizes as the one that was saved."
            )
        for key, value in values.items():
            mod, name, current = own[key]
            if isinstance(current, Variable):
                current.data[...] = value  # in place, dtype of the model kept
                current._bump_version()
            else:
                setattr(mod, name, np.array(value, dtype=np.asarray(current).dtype))
        return IncompatibleKeys(missing, unexpected)

    def _state_entries(self) -> dict[str, tuple[Module, str, Any]]:
        own = {}
        for mod_name, mod in self.named_modules():
            for store in (mod._parameters, mod._buffers):
                for name, value in store.items():
                    if value is not None:
                        own[f"{mod_name}.{name}" if mod_name else name] = (mod, name, value)
        return own

    def save(self, path: str | os.PathLike) -> None:
        """Write the state dict to a ``.npz`` file (numpy's zip of arrays)."""
        arrays: dict[str, Any] = dict(self.state_dict())
        np.savez(path, **arrays)

    def load(self, path: str | os.PathLike, strict: bool = True) -> IncompatibleKeys:
        """Read weights written by ``save`` (or any ``.npz`` with matching names) into this model."""
        if not os.path.exists(path):
            raise FileNotFoundError(f"no weights file at '{os.fspath(path)}'; save one first with model.save(path).")
        try:
            with np.load(path, allow_pickle=False) as archive:
                state = {k: archive[k] for k in archive.files}
        except (ValueError, OSError) as exc:
            raise ValueError(f"'{os.fspath(path)}' is not a readable .npz weights file ({exc}). "
                             "Write weights with model.save(path).") from None
        return self.load_state_dict(state, strict=strict)

    # ---- printing ------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text between the parentheses of this module's line in ``repr``."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for name, m in self._modules.items():
            lines.append(f"({name}): " + repr(m).replace("\n", "\n  "))
        if not self._modules and len(lines) <= 1:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"
