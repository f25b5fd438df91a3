"""What the checks on mygrad's Variables share: the learner's package, the chapter's graphs
built with it, and the course's walk (its topological order and its hooks), which ch04-hooks
runs the learner's hook functions with and ch04-engine-backward puts under the learner's
backward."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .._common import Checker

__all__ = ["_package", "_mg", "_scale_function", "_seed_graph", "_h_graph", "_values", "_course_order_of", "_course_run_hooks", "_any_run_hooks", "_course_walk", "_hook_recorder", "_scaling_hook"]


def _package(mygrad: ModuleType | None) -> ModuleType:
    if mygrad is not None:
        return mygrad
    try:
        return importlib.import_module("mygrad")
    except ImportError:
        raise TypeError("pass your package: check.ch04_...(your_function, mygrad), with mygrad "
                        "from `mygrad = load_mygrad(chapter=4)` in the first cell.") from None


def _mg(pkg: ModuleType, value: Any, requires_grad: bool = False) -> Any:
    return pkg.Variable(np.asarray(value, dtype=np.float64), requires_grad=requires_grad)


def _scale_function(pkg: ModuleType, backward: Callable[..., Any]) -> type[Any]:
    """A Function of ``pkg``: Scale.apply(x, factor=2.0) = x * factor, with the given backward."""
    def forward(ctx: Any, x: Any, factor: Any = 2.0) -> Any:
        ctx.factor = getattr(factor, "data", factor)
        return pkg.Variable(x.data * ctx.factor)
    return type("Scale", (pkg.Function,), {"forward": staticmethod(forward),
                                           "backward": staticmethod(backward)})


def _seed_graph(pkg: ModuleType) -> dict[str, Any]:
    """The chapter's l1...l4 example: loss 40, gradients 28, 8, 10."""
    g = {"input": _mg(pkg, np.ones((2, 2)))}
    g["w1"], g["w2"], g["w3"] = (_mg(pkg, v, True) for v in (2.0, 3.0, 4.0))
    g["l1"] = g["input"] * g["w1"]
    g["l2"] = g["l1"] + g["w2"]
    g["l3"] = g["l1"] * g["w3"]
    g["l4"] = g["l2"] * g["l3"]
    g["loss"] = g["l4"].mean()
    return g


def _h_graph(pkg: ModuleType, xv: float = 2.0, yv: float = 3.0) -> dict[str, Any]:
    """Section 1's graph: h = x*y is used three times in out = h*h + h."""
    g = {"x": _mg(pkg, xv, True), "y": _mg(pkg, yv, True)}
    g["h"] = g["x"] * g["y"]
    g["h*h"] = g["h"] * g["h"]
    g["out"] = g["h*h"] + g["h"]
    return g


def _values(v: Any) -> Any:
    return None if v is None else np.asarray(getattr(v, "data", v), dtype=np.float64)


def _course_order_of(root: Any) -> list[Any]:
    """The course's topological_order: every Variable root depends on that requires grad,
    once, root first and each before the Variables it came from (iterative)."""
    def inputs(v: Any) -> list[Any]:
        node = v.grad_fn
        return [] if node is None else [x for x in node.inputs if hasattr(x, "grad_fn")
                                        and getattr(x, "requires_grad", False)]
    order, seen = [], {id(root)}
    stack = [(root, iter(inputs(root)))]
    while stack:
        v, rest = stack[-1]
        for x in rest:
            if id(x) not in seen:
                seen.add(id(x))
                stack.append((x, iter(inputs(x))))
                break
        else:
            stack.pop()
            order.append(v)
    return order[::-1]


def _course_run_hooks(v: Any, grad: Any, *, own_only: bool = True) -> Any:
    """The course's _run_hooks: v's hooks in order, a result other than None replaces grad.
    ``own_only``: only the list on v itself (a list a wrong register_hook left on the class is
    ignored, so that it cannot reach the checks of other exercises)."""
    hooks = v.__dict__.get("_hooks", ()) if own_only else getattr(v, "_hooks", ())
    for hook in list(hooks):
        changed = hook(grad)
        if changed is not None:
            grad = changed if hasattr(changed, "grad_fn") else type(grad)(np.asarray(changed))
    return grad


def _any_run_hooks(v: Any, grad: Any) -> Any:
    """The course's _run_hooks reading v._hooks wherever it lives (on v, or on its class)."""
    return _course_run_hooks(v, grad, own_only=False)


def _course_walk(ck: Checker, pkg: ModuleType, root: Any,
                 run_hooks: Callable[[Any, Any], Any] = _any_run_hooks) -> None:
    """The course's backward from ``root`` (seeded with ones, grad mode off, nodes released),
    passing each complete gradient through ``run_hooks``."""
    mode = pkg.GradMode
    enabled, mode.enabled = mode.enabled, False
    try:
        grads = {id(root): pkg.Variable(np.ones_like(root.data))}
        for v in _course_order_of(root):
            g = ck.call(run_hooks, v, grads.pop(id(v)))
            ck.check(g is not None and hasattr(g, "grad_fn"), "_run_hooks did not give back a "
                     "Variable.", expected="the gradient that flows on (a Variable)",
                     received=g, hint="Return the gradient after the hooks: the one you were "
                     "given if no hook replaced it; a hook's result other than None becomes a "
                     "Variable (as_variable) first.")
            if v.grad_fn is None or getattr(v, "_retains_grad", False):
                v.grad = (pkg.Variable(np.array(g.data, copy=True)) if v.grad is None
                          else pkg.Variable(v.grad.data + g.data))
            node = v.grad_fn
            if node is None:
                continue
            out = node.function.backward(node, g)
            out = out if isinstance(out, tuple) else (out,)
            for x, gx, needed in zip(node.inputs, out, node.needs_input_grad):
                if needed and gx is not None:
                    grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx
            node.release()
    finally:
        mode.enabled = enabled


def _hook_recorder(seen: list[Any]) -> Callable[[Any], None]:
    """A hook that only watches: it notes the gradient's value (None if it got None)."""
    def watch(grad: Any) -> None:
        seen.append(None if grad is None else float(np.sum(_values(grad))))
    return watch


def _scaling_hook(pkg: ModuleType, factor: float, as_array: bool = False) -> Callable[[Any], Any]:
    """A hook that returns grad * factor (a Variable, or a bare numpy array if ``as_array``)."""
    def scale(grad: Any) -> Any:
        if grad is None:
            return None
        value = _values(grad) * factor
        return value if as_array else pkg.Variable(value)
    return scale
