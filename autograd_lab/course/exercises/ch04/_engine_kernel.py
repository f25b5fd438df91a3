"""The kernel's side of ch04-engine-backward: the course's ``topological_order`` and
``_run_hooks`` put under the learner's backward (with a note when the learner's own fail their
exercises), and the cases, each run on graphs built with the learner's package and recorded as
plain data. A case's docstring is its title."""
from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from .._common import deeper_than_recursion, format_value
from .._exercise import decide
from .._observe import Observer
from . import hooks, topological_order
from ._variables import (_course_order_of, _course_run_hooks, _h_graph, _hook_recorder, _mg,
                         _scale_function, _scaling_hook, _seed_graph, _values)

__all__ = ["decide", "course_order", "CASES", "observe_random"]


def _fails(module: ModuleType, *objects: Any) -> bool:
    """Whether another exercise's check fails on the learner's objects (run quietly)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            decide(module, *objects)
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return True
    return False


@contextlib.contextmanager
def course_order(backward: Callable[..., Any], pkg: ModuleType) -> Iterator[None]:
    """Run with the ``topological_order`` and ``_run_hooks`` the learner's ``backward`` calls
    replaced by the course's, then put them back; if the learner's fail their exercises
    (ch04-topological-order, ch04-hooks), say so in one line each."""
    ns = getattr(inspect.unwrap(backward), "__globals__", None) if callable(backward) else None
    if not isinstance(ns, dict):
        yield
        return
    own = ns.get("topological_order")
    if callable(own):
        if _fails(topological_order, own, pkg):
            print("note: exercise ch04-topological-order fails its own check; this check runs "
                  "your backward with the course's topological_order.")
        ns["topological_order"] = _course_order_of
    missing = object()
    own_hooks = ns.get("_run_hooks", missing)
    if own_hooks is missing:
        print("note: _run_hooks (exercise ch04-hooks) is not defined; this check runs your "
              "backward with the course's.")
    elif _fails(hooks, ns.get("register_hook"), ns.get("retain_grad"), ns.get("_run_hooks"),
                pkg):
        print("note: exercise ch04-hooks fails its own check; this check runs your backward "
              "with the course's _run_hooks.")
    ns["_run_hooks"] = _course_run_hooks
    try:
        yield
    finally:
        if callable(own):
            ns["topological_order"] = own
        if own_hooks is missing:
            ns.pop("_run_hooks", None)
        else:
            ns["_run_hooks"] = own_hooks


def _call(ob: Observer, key: str, fn: Any, *args: Any, **kwargs: Any) -> None:
    """Call the learner's ``fn``; keep what it raised (or None) under ``key``, and what it
    returned, as text, under ``key returned``."""
    result = ob.attempt(key, fn, *args, **kwargs)
    ob.put(f"{key} returned", format_value(result))


def _put_grad(ob: Observer, key: str, v: Any) -> None:
    grad = getattr(v, "grad", None)
    ob.put(f"{key} none", grad is None)
    if grad is not None:
        ob.put(key, _values(grad))


def _o_seed(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """the l1...l4 example: loss 40, gradients 28, 8, 10"""
    g = _seed_graph(pkg)
    _call(ob, "backward", backward, g["loss"])
    ob.put("loss", _values(g["loss"]))
    for name in ("w1", "w2", "w3"):
        _put_grad(ob, f"{name}.grad", g[name])
    ob.put("others none", g["l1"].grad is None and g["input"].grad is None)


def _o_h(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """x*y reused: out = h*h + h gives x.grad = 39, y.grad = 26"""
    g = _h_graph(pkg)
    _call(ob, "backward", backward, g["out"])
    _put_grad(ob, "x.grad", g["x"])
    _put_grad(ob, "y.grad", g["y"])


def _o_mode(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """the walk records nothing: grad mode is off while it runs, on afterwards"""
    mode = pkg.GradMode
    modes: list[bool] = []

    def probe(ctx: Any, grad: Any) -> Any:
        modes.append(bool(mode.enabled))
        return pkg.Variable(_values(grad) * ctx.factor)
    x = _mg(pkg, [1.0, -2.0], True)
    _call(ob, "backward 1", backward, _scale_function(pkg, probe).apply(x),
          pkg.Variable(np.ones(2)))
    ob.put("modes", modes)
    ob.put("enabled after", mode.enabled is True)
    ob.put("enabled after repr", repr(mode.enabled))
    out = ob.attempt("x * x", lambda: x * x)
    _call(ob, "backward 2", backward, out, pkg.Variable(np.ones(2)))
    _put_grad(ob, "x.grad", x)
    ob.put("recorded", x.grad is not None and (getattr(x.grad, "grad_fn", None) is not None
                                               or getattr(x.grad, "requires_grad", False)
                                               is not False))
    ob.put("grad_fn", repr(getattr(x.grad, "grad_fn", None)))


def _o_twice(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """a second backward adds into .grad (retain_graph=True the first time)"""
    x = _mg(pkg, 1.5, True)
    out = x * x * 2.0
    _call(ob, "backward 1", backward, out, retain_graph=True)
    _call(ob, "backward 2", backward, out)
    _put_grad(ob, "x.grad", x)


def _o_own(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """out = x + y: the two leaves get .grad arrays of their own"""
    x, y = _mg(pkg, [1.0, 2.0], True), _mg(pkg, [3.0, 4.0], True)
    _call(ob, "backward", backward, (x + y).sum())
    _put_grad(ob, "x.grad", x)
    _put_grad(ob, "y.grad", y)
    if x.grad is not None and y.grad is not None:
        ob.put("shared", bool(np.shares_memory(_values(x.grad), _values(y.grad))))


def _o_freed(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """saved tensors are freed: a second backward without retain_graph raises"""
    x = _mg(pkg, 2.0, True)
    out = x * x
    _call(ob, "backward 1", backward, out)
    _call(ob, "backward 2", backward, out)
    ob.put("enabled after", pkg.GradMode.enabled is True)
    ob.put("enabled after repr", repr(pkg.GradMode.enabled))


def _o_gradient(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """gradient= for an output that is not a single number"""
    x = _mg(pkg, [1.0, -2.0, 3.0], True)
    y = x * _mg(pkg, [2.0, 5.0, -1.0])
    _call(ob, "backward 1", backward, y, pkg.Variable(np.array([1.0, 10.0, 100.0])))
    _put_grad(ob, "x.grad", x)
    _call(ob, "backward 2", backward, x * 2.0)


def _o_nothing(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """a root that does not require grad raises RuntimeError"""
    _call(ob, "backward", backward, _mg(pkg, 1.0) * 2.0)


def _o_nones(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """surplus trailing None gradients are dropped, as in PyTorch"""
    x = _mg(pkg, [1.0, -2.0], True)
    scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor, None))
    _call(ob, "backward 1", backward, scale.apply(x), pkg.Variable(np.ones(2)))
    _put_grad(ob, "x.grad 1", x)
    x = _mg(pkg, [1.0, -2.0], True)
    scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor,))
    _call(ob, "backward 2", backward, scale.apply(x, 3.0), pkg.Variable(np.ones(2)))
    _put_grad(ob, "x.grad 2", x)


def _o_count(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """a backward with a wrong number of gradients raises RuntimeError"""
    x = _mg(pkg, [1.0, -2.0], True)
    scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor, g * ctx.factor))
    _call(ob, "backward 1", backward, scale.apply(x), pkg.Variable(np.ones(2)))
    x, w = _mg(pkg, [1.0, -2.0], True), _mg(pkg, [0.5, 4.0], True)
    scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor,))
    _call(ob, "backward 2", backward, scale.apply(x, w), pkg.Variable(np.ones(2)))


def _o_retain(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """a Variable marked _retains_grad keeps its gradient (h.grad = 13)"""
    g = _h_graph(pkg)
    g["h"]._retains_grad = True                 # what retain_grad (ch04-hooks) leaves
    _call(ob, "backward", backward, g["out"])
    _put_grad(ob, "h.grad", g["h"])


def _o_hooks(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """the complete gradient goes through _run_hooks once, and what it returns flows on"""
    g = _h_graph(pkg)
    seen: list[Any] = []
    g["h"]._hooks = [_hook_recorder(seen), _scaling_hook(pkg, 0.5)]   # as register_hook
    g["y"]._hooks = [_scaling_hook(pkg, 0.5)]                          # and on a leaf
    _call(ob, "backward", backward, g["out"])
    ob.put("seen", seen)
    _put_grad(ob, "x.grad", g["x"])
    _put_grad(ob, "y.grad", g["y"])


class _Boom(Exception):
    pass


def _o_raises(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """grad mode comes back after backward, also when a Function's backward raises"""
    mode = pkg.GradMode

    def exploding(ctx: Any, grad: Any) -> Any:
        raise _Boom("raised by the checker's Function on purpose")
    start = mode.enabled
    try:
        x = _mg(pkg, [1.0, 2.0], True)
        y = _scale_function(pkg, exploding).apply(x)
        _call(ob, "backward 1", backward, y, pkg.Variable(np.ones(2)))
        ob.put("enabled after 1", mode.enabled is True)
        ob.put("enabled after 1 repr", repr(mode.enabled))
        x = _mg(pkg, 2.0, True)
        y = ob.attempt("x * x", lambda: x * x)
        mode.enabled = False                      # a backward called inside no_grad
        _call(ob, "backward 2", backward, y)
        ob.put("off after 2", mode.enabled is False)
        ob.put("enabled after 2 repr", repr(mode.enabled))
    finally:
        mode.enabled = start


def _o_shape(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """the root's gradient has the root's shape: a (1, 1) leaf gives [[1.]]"""
    x = _mg(pkg, [[2.0]], True)
    _call(ob, "backward", backward, x)
    _put_grad(ob, "x.grad", x)


def _o_create(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """create_graph=True keeps the graph: a second backward still works"""
    x = _mg(pkg, 1.5, True)
    out = ob.attempt("x * x * 2.0", lambda: x * x * 2.0)
    _call(ob, "backward 1", backward, out, create_graph=True)
    _call(ob, "backward 2", backward, out)
    _put_grad(ob, "x.grad", x)


def _o_deep(ob: Observer, backward: Any, pkg: ModuleType) -> None:
    """deep"""
    x = _mg(pkg, 1.0, True)
    y = x
    for _ in range(deeper_than_recursion(3000)):
        y = y * 1.0
    _call(ob, "backward", backward, y)
    _put_grad(ob, "x.grad", x)


def observe_random(ob: Observer, backward: Any, pkg: ModuleType, num: dict[str, Any]) -> None:
    mine = [_mg(pkg, v, True) for v in num["vals"]]
    l1 = _mg(pkg, num["input"]) * mine[0]
    loss = ((l1 + mine[1]) * (l1 * mine[2])).mean()
    _call(ob, "backward", backward, loss)
    for k in range(3):
        _put_grad(ob, f"w{k + 1}.grad", mine[k])


CASES = (_o_seed, _o_h, _o_mode, _o_twice, _o_own, _o_freed, _o_gradient, _o_nothing,
            _o_nones, _o_count, _o_retain, _o_hooks, _o_raises, _o_shape, _o_create, _o_deep)
