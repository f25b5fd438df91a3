"""Module hooks with PyTorch's names: forward-pre, forward and full backward (and backward-pre)
hooks, each registered on one Module and taken off again by the handle it returns.

A full backward hook sees, once per call of the module, the gradients with respect to the
module's positional inputs and outputs. The call is wrapped in two identity Functions: one
over the inputs before ``forward`` and one over the outputs after it. The outputs' node keeps
the gradients that arrive (running the backward-pre hooks, which may replace them); the inputs'
node runs the backward hooks with both tuples and passes on what they return.
"""
from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict
from typing import Any, Callable

from ..errors import BackwardError
from ..function import Function
from ..grad_mode import is_grad_enabled
from ..variable import Variable

_ids = itertools.count()


class HookHandle:
    """Returned by a Module's ``register_*_hook``: ``handle.remove()`` (or leaving a ``with``
    block) takes the hook off again."""

    def __init__(self, hooks: OrderedDict, extra: "set | None" = None) -> None:
        self.hooks_dict = hooks
        self.extra = extra
        self.id = next(_ids)

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)
        if self.extra is not None:
            self.extra.discard(self.id)

    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def add_hook(module: Any, store: str, hook: Callable, prepend: bool = False,
             kwargs_store: str | None = None, with_kwargs: bool = False) -> HookHandle:
    """Put ``hook`` into the module's ordered dict ``store`` (made on first use)."""
    if not callable(hook):
        raise TypeError(f"a hook must be callable; got {type(hook).__name__}. Pass a function "
                        "of the arguments the register_*_hook method names.")
    hooks = module.__dict__.get(store)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, store, hooks)
    extra = None
    if kwargs_store is not None:
        extra = module.__dict__.get(kwargs_store)
        if extra is None:
            extra = set()
            object.__setattr__(module, kwargs_store, extra)
    handle = HookHandle(hooks, extra)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    if with_kwargs and extra is not None:
        extra.add(handle.id)
    return handle


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its hooks: pre-hooks, the backward wrapping, forward,
    forward hooks."""
    d = module.__dict__
    with_kwargs = d.get("_forward_pre_hooks_with_kwargs") or set()
    for hid, hook in list((d.get("_forward_pre_hooks") or {}).items()):
        if hid in with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result!r:.80}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    state = None
    if (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) and is_grad_enabled():
        state = _BackwardState(module, len(args))
        args = state.wrap_inputs(args)
    output = module.forward(*args, **kwargs)
    with_kwargs = d.get("_forward_hooks_with_kwargs") or set()
    for hid, hook in list((d.get("_forward_hooks") or {}).items()):
        result = hook(module, args, kwargs, output) if hid in with_kwargs else hook(module, args, output)
        if result is not None:
            output = result
    if state is not None:
        output = state.wrap_outputs(output)
    return output


class _BackwardState:
    """One call's bookkeeping for the module's backward hooks."""

    def __init__(self, module: Any, n_args: int) -> None:
        self.module = module
        self.n_args = n_args
        self.input_index: list[int] = []
        self.grad_outputs: tuple | None = None

    def wrap_inputs(self, args: tuple) -> tuple:
        index = [i for i, a in enumerate(args) if isinstance(a, Variable) and a.dtype.kind == "f"]
        if not any(args[i].requires_grad for i in index):
            return args  # (when one does, PyTorch gives every floating input a gradient)
        self.input_index = index
        wrapped = _InputsHook.apply(self, *(args[i] for i in index))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        out = list(args)
        for i, w in zip(index, wrapped):
            out[i] = w
        return tuple(out)

    def wrap_outputs(self, output: Any) -> Any:
        single = isinstance(output, Variable)
        outs = (output,) if single else output
        if not isinstance(outs, tuple):
            return output
        index = [i for i, o in enumerate(outs) if isinstance(o, Variable) and o.requires_grad]
        if not index:
            return output
        wrapped = _OutputsHook.apply(self, len(outs), index, *(outs[i] for i in index))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        new = list(outs)
        for i, w in zip(index, wrapped):
            new[i] = w
        return new[0] if single else tuple(new)

    def outputs_arrived(self, grads: tuple) -> tuple:
        """The backward-pre hooks may replace the output gradients; with no input to wait for,
        the backward hooks run now (with None for every input)."""
        for hook in list((self.module.__dict__.get("_backward_pre_hooks") or {}).values()):
            result = hook(self.module, grads)
            if result is not None:
                grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        self.grad_outputs = grads
        hooks = list((self.module.__dict__.get("_backward_hooks") or {}).values())
        if not self.input_index and hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to "
                          "module outputs since no inputs require gradients (grad_input is all None).",
                          UserWarning, stacklevel=2)
            for hook in hooks:
                result = hook(self.module, (None,) * self.n_args, grads)
                if result is not None and any(r is not None for r in result):
                    raise BackwardError(
                        "Backward hook for Modules where no input requires gradient should always "
                        "return None or None for all gradients.")
        return grads

    def inputs_arrived(self, grads: tuple) -> tuple:
        full: list = [None] * self.n_args
        for i, g in zip(self.input_index, grads):
            full[i] = g
        grad_input = tuple(full)
        for hook in list((self.module.__dict__.get("_backward_hooks") or {}).values()):
            result = hook(self.module, grad_input, self.grad_outputs or ())
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != self.n_args:
                raise BackwardError(
                    f"Backward hook returned an invalid number of grad_input, got {len(result)}, but "
                    f"expected {self.n_args} (one per positional input of the module, None where "
                    "there is none).")
            grad_input = result
        return tuple(grad_input[i] for i in self.input_index)


class _InputsHook(Function):
    """Identity on the module's inputs; backward runs the module's full backward hooks."""

    @staticmethod
    def forward(ctx, state, *xs):
        ctx.state = state
        return xs if len(xs) > 1 else xs[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.state.inputs_arrived(grads))


class _OutputsHook(Function):
    """Identity on the module's outputs; backward keeps their gradients for the hooks."""

    @staticmethod
    def forward(ctx, state, n_out, index, *ys):
        ctx.state, ctx.n_out, ctx.index = state, n_out, index
        return ys if len(ys) > 1 else ys[0]

    @staticmethod
    def backward(ctx, *grads):
        full: list = [None] * ctx.n_out
        for i, g in zip(ctx.index, grads):
            full[i] = g
        full_t = ctx.state.outputs_arrived(tuple(full))
        return (None, None, None, *(full_t[i] for i in ctx.index))


class HooksMixin:
    """The ``register_*_hook`` methods of ``Module``."""

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> HookHandle:
        """``hook(module, args)`` (or ``(module, args, kwargs)``) before each forward; a returned
        value replaces the arguments."""
        return add_hook(self, "_forward_pre_hooks", hook, prepend, "_forward_pre_hooks_with_kwargs",
                        with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> HookHandle:
        """``hook(module, args, output)`` (or ``(module, args, kwargs, output)``) after each
        forward; a returned value replaces the output."""
        return add_hook(self, "_forward_hooks", hook, prepend, "_forward_hooks_with_kwargs", with_kwargs)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> HookHandle:
        """``hook(module, grad_input, grad_output)`` once the gradients with respect to the
        module's inputs are known; a returned tuple replaces ``grad_input``."""
        return add_hook(self, "_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> HookHandle:
        """``hook(module, grad_output)`` when the gradients of the outputs arrive; a returned
        tuple replaces them."""
        return add_hook(self, "_backward_pre_hooks", hook, prepend)

    def _has_hooks(self) -> bool:
        d = self.__dict__
        return bool(d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks")
                    or d.get("_backward_pre_hooks"))
