"""Derivatives of whole functions, as ``torch.autograd.functional``: jacobian, hessian, vjp, jvp,
hvp and vhp.

``inputs`` is a Variable or a tuple of Variables; ``func`` takes them as positional arguments and
returns a Variable or a tuple of Variables. Results have the structure PyTorch gives them: a
Jacobian of one output with respect to one input has shape ``output.shape + input.shape``; with
tuples of inputs or outputs it becomes a tuple (or a tuple of tuples, outputs first).

>>> import autograd_lab as al
>>> from autograd_lab.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, al.tensor([1.0, 3.0]))
Variable([[2., 0.],
          [0., 6.]])
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..engine import grad as _grad
from ..grad_mode import enable_grad
from ..variable import Variable


def _as_tuple(x: Any, what: str, fn: str) -> tuple[bool, tuple[Variable, ...]]:
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, v in enumerate(items):
        if not isinstance(v, Variable):
            raise TypeError(f"{fn}: the {what} must be a Variable or a tuple of Variables, but "
                            f"{what}[{i}] is a {type(v).__name__}")
    return is_tuple, tuple(items)


def _prepare(inputs: tuple[Variable, ...], create_graph: bool) -> tuple[Variable, ...]:
    """Inputs that require grad: a differentiable alias under create_graph (so a higher-order
    derivative reaches the caller's graph), otherwise a detached copy."""
    out = []
    for x in inputs:
        if x.dtype.kind != "f":
            raise TypeError(f"inputs must be floating point Variables to differentiate, got {x.dtype}")
        if create_graph and x.requires_grad:
            out.append(x.reshape(x.shape))
        else:
            out.append(x.detach().requires_grad_())
    return tuple(out)


def _fill(grads: tuple, like: tuple[Variable, ...]) -> tuple[Variable, ...]:
    """None (no path from output to input) becomes zeros, as in PyTorch."""
    return tuple(Variable(np.zeros(x.shape, x.dtype)) if g is None else g for g, x in zip(grads, like))


def _outputs(func: Callable, xs: tuple[Variable, ...], fn: str) -> tuple[bool, tuple[Variable, ...]]:
    return _as_tuple(func(*xs), "outputs of the user-provided function", fn)


def _result(values: tuple, is_tuple: bool) -> Any:
    return values if is_tuple else values[0]


def _detach_all(vs: tuple[Variable, ...], create_graph: bool) -> tuple[Variable, ...]:
    return vs if create_graph else tuple(v.detach() for v in vs)


def _seed(v: Any, outputs: tuple[Variable, ...], fn: str, name: str = "v") -> tuple[Variable, ...]:
    if v is None:
        if any(o.data.size != 1 for o in outputs):
            raise RuntimeError(f"{fn}: the function has an output with more than one element, so "
                               f"{name} must be given (a Variable of the output's shape)")
        return tuple(Variable(np.ones(o.shape, o.dtype)) for o in outputs)
    _, vs = _as_tuple(v, name, fn)
    if len(vs) != len(outputs) or any(a.shape != o.shape for a, o in zip(vs, outputs)):
        raise ValueError(f"{fn}: {name} has shapes {[a.shape for a in vs]} but they must match "
                         f"{[o.shape for o in outputs]}")
    return vs


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product, one reverse pass."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _outputs(func, xs, "vjp")
        vs = _seed(v, outs, "vjp")
        live = [i for i, o in enumerate(outs) if o.requires_grad]
        if live:
            grads = _grad([outs[i] for i in live], xs, [vs[i] for i in live],
                          create_graph=create_graph, allow_unused=True)
        else:
            grads = (None,) * len(xs)
        grads = _fill(tuple(grads), xs)
    return _result(_detach_all(outs, create_graph), out_tuple), _result(_detach_all(grads, create_graph), in_tuple)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick (the
    vector-Jacobian product is linear in its vector u; differentiating it by u gives J v)."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if any(x.data.size != 1 for x in xs):
            raise RuntimeError("jvp: an input has more than one element, so v must be given")
        v = tuple(Variable(np.ones(x.shape, x.dtype)) for x in xs)
    vs = _seed(v, xs, "jvp")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _outputs(func, xs, "jvp")
        us = tuple(Variable(np.zeros(o.shape, o.dtype), requires_grad=True) for o in outs)
        live = [i for i, o in enumerate(outs) if o.requires_grad]
        if not live:
            jv = tuple(Variable(np.zeros(o.shape, o.dtype)) for o in outs)
        else:
            gs = _grad([outs[i] for i in live], xs, [us[i] for i in live], create_graph=True,
                       allow_unused=True)
            pairs = [(g, vi) for g, vi in zip(gs, vs) if g is not None and g.requires_grad]
            if pairs:
                found = _grad([g for g, _ in pairs], us, [vi for _, vi in pairs],
                              create_graph=create_graph, allow_unused=True)
                jv = _fill(tuple(found), outs)  # zeros where no gradient came
            else:
                jv = tuple(Variable(np.zeros(o.shape, o.dtype)) for o in outs)
    return _result(_detach_all(outs, create_graph), out_tuple), _result(_detach_all(jv, create_graph), out_tuple)


def _jacobian_rows(out: Variable, xs: tuple[Variable, ...], create_graph: bool) -> list[Variable]:
    """d out / d x for every x: each of shape out.shape + x.shape, one reverse pass per output element."""
    rows: list[list[Any]] = [[] for _ in xs]
    if out.requires_grad:
        for k in range(out.data.size):
            seed = np.zeros(out.data.size, out.dtype)
            seed[k] = 1
            gs = _grad(out, xs, Variable(seed.reshape(out.shape)), retain_graph=True,
                       create_graph=create_graph, allow_unused=True)
            for i, g in enumerate(_fill(tuple(gs), xs)):
                rows[i].append(g)
    result = []
    for i, x in enumerate(xs):
        if not rows[i]:
            result.append(Variable(np.zeros(out.shape + x.shape, out.dtype)))
        elif create_graph:
            from ..ops import stack
            result.append(stack(rows[i]).reshape(out.shape + x.shape))
        else:
            result.append(Variable(np.stack([g.data for g in rows[i]]).reshape(out.shape + x.shape)))
    return result


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs`` (reverse mode: one backward pass per output element)."""
    # vectorize=True is a speed option in PyTorch (batched backward passes): the values are the
    # same, so it is accepted and the rows are computed one by one
    if strategy != "reverse-mode":
        raise NotImplementedError(f"jacobian: strategy={strategy!r} is not implemented here; use "
                                  "strategy='reverse-mode' (the values are the same)")
    in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _outputs(func, xs, "jacobian")
        per_output = tuple(tuple(_detach_all(tuple(_jacobian_rows(o, xs, create_graph)), create_graph))
                           for o in outs)
    if out_tuple and in_tuple:
        return per_output
    if out_tuple:
        return tuple(row[0] for row in per_output)
    if in_tuple:
        return per_output[0]
    return per_output[0][0]


def _gradient_of(func: Callable, fn: str) -> Callable:
    def gradient(*xs: Variable) -> tuple[Variable, ...]:
        _, outs = _outputs(func, xs, fn)
        if len(outs) != 1 or outs[0].data.size != 1:
            raise RuntimeError(f"{fn}: the function must return a single Variable with one element, "
                               f"got {len(outs)} output(s) of shapes {[o.shape for o in outs]}")
        out = outs[0]
        if not out.requires_grad:
            return tuple(Variable(np.zeros(x.shape, x.dtype)) for x in xs)
        return _fill(tuple(_grad(out, xs, create_graph=True, allow_unused=True)), xs)
    return gradient


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: shape ``input.shape + input.shape`` (a tuple
    of tuples for a tuple of inputs)."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")
    gradient = _gradient_of(func, "hessian")
    h = jacobian(lambda *a: gradient(*a), xs, create_graph=create_graph)
    return h if in_tuple else h[0][0]


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H): the vector-Hessian product of a scalar function."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "vhp")
    if v is None and any(x.data.size != 1 for x in xs):
        raise RuntimeError("vhp: an input has more than one element, so v must be given")
    with enable_grad():
        xs = _prepare(xs, create_graph)
        vs = _seed(v, xs, "vhp") if v is not None else tuple(Variable(np.ones(x.shape, x.dtype)) for x in xs)
        _, outs = _outputs(func, xs, "vhp")
        out = outs[0]
        gs = _gradient_of(lambda *a: out, "vhp")(*xs)
        pairs = [(g, vi) for g, vi in zip(gs, vs) if g.requires_grad]
        if pairs:
            res = _fill(tuple(_grad([g for g, _ in pairs], xs, [vi for _, vi in pairs],
                                    create_graph=create_graph, allow_unused=True)), xs)
        else:
            res = tuple(Variable(np.zeros(x.shape, x.dtype)) for x in xs)
    return _detach_all((out,), create_graph)[0], _result(_detach_all(res, create_graph), in_tuple)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v): the Hessian-vector product. For a function whose second derivatives
    are continuous H is symmetric, so H v = (v^T H)^T, which is what is computed."""
    out, res = vhp(func, inputs, v, create_graph, strict)
    return out, res


__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]
