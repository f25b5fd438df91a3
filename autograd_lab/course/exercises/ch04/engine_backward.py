"""Check mygrad's ``backward(root, gradient=None, retain_graph=None, create_graph=False)`` and
its wiring (``Variable.backward``, ``retain_grad``, ``register_hook``).

The kernel runs the learner's backward on graphs built with the learner's package, with the
course's ``topological_order`` and ``_run_hooks`` in place of the learner's (so a mistake there
costs those exercises only), and records the gradients as numbers, what the calls raised, the
grad mode seen during and after the walk; the judge decides.
"""
from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from .._common import Checker, deeper_than_recursion, format_value, grad_data
from .._exercise import Mistake, judge_record
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._variables import (_course_order_of, _course_run_hooks, _h_graph, _hook_recorder, _mg,
                         _package, _scale_function, _scaling_hook, _seed_graph, _values)
from . import hooks, topological_order
from .messages import HINTS

ID = "ch04-engine-backward"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("one user's gradient kept",
            ("grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx", "grads[id(x)] = gx"),
            None, "engine.one-user"),
    Mistake(".grad overwritten", ("        v.grad = v.grad + grad", "        v.grad = grad"),
            None, "engine.accumulate-add"),
    Mistake("no copy of the first gradient",
            ("        v.grad = Variable(grad.data.copy()) if not GradMode.enabled else grad",
             "        v.grad = Variable(grad.data)"), None, "engine.copy"),
    Mistake("nodes never released", ("                node.release()", "                pass"),
            None, "engine.release"),
    Mistake("hooks' result dropped", ("            g = _run_hooks(v, grads.pop(id(v)))",
                                      "            g = grads.pop(id(v))\n"
                                      "            _run_hooks(v, g)"), None,
            "engine.hooks-result"),
    Mistake("_retains_grad ignored",
            ('            if v.grad_fn is None or getattr(v, "_retains_grad", False):',
             "            if v.grad_fn is None:"), None, "engine.retain"),
    Mistake("a root that recorded nothing accepted",
            ("    if not root.requires_grad:\n        raise RuntimeError(_NOTHING_RECORDED)\n",
             ""), None, "engine.nothing-recorded"),
    Mistake("surplus Nones refused",
            ("    if len(grads) > n and all(g is None for g in grads[n:]):", "    if False:"),
            None, "engine.surplus-none"),
    Mistake("missing gradients filled without looking",
            ("    elif len(grads) < n and not any(node.needs_input_grad[len(grads):]):",
             "    elif len(grads) < n:"), None, "engine.filled"),
)

C_SEED = "the l1...l4 example: loss 40, gradients 28, 8, 10"
C_H = "x*y reused: out = h*h + h gives x.grad = 39, y.grad = 26"
C_MODE = "the walk records nothing: grad mode is off while it runs, on afterwards"
C_TWICE = "a second backward adds into .grad (retain_graph=True the first time)"
C_OWN = "out = x + y: the two leaves get .grad arrays of their own"
C_FREED = "saved tensors are freed: a second backward without retain_graph raises"
C_GRADIENT = "gradient= for an output that is not a single number"
C_NOTHING = "a root that does not require grad raises RuntimeError"
C_NONES = "surplus trailing None gradients are dropped, as in PyTorch"
C_COUNT = "a backward with a wrong number of gradients raises RuntimeError"
C_RETAIN = "a Variable marked _retains_grad keeps its gradient (h.grad = 13)"
C_HOOKS = "the complete gradient goes through _run_hooks once, and what it returns flows on"
C_RAISES = "grad mode comes back after backward, also when a Function's backward raises"
C_SHAPE = "the root's gradient has the root's shape: a (1, 1) leaf gives [[1.]]"
C_CREATE = "create_graph=True keeps the graph: a second backward still works"
C_DEEP = "deep"
C_RANDOM = "random numbers in the l1...l4 graph, compared with autograd_lab"


def numbers(seed: int, hidden: bool) -> dict[str, np.ndarray]:
    """The random numbers of the hidden case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    if not hidden:
        return {}
    vals = np.round(rng.uniform(-2, 2, size=3), 3)
    return {"vals": vals, "input": np.round(rng.uniform(-1, 1, size=(2, 3)), 3)}


# -- the kernel's side ---------------------------------------------------------------------
def decide(module: ModuleType, *objects: Any, seed: int = 0, hidden: bool = False) -> None:
    """Observe and judge one exercise here, whatever the kernel is (in the grader's sandbox a
    check would only show its record): raises as the check does."""
    ob = Observer(module.ID, seed, hidden)
    module.observe(ob, *objects, seed=seed, hidden=hidden)
    judge_record(module, ob.record())


def _fails(module: ModuleType, *objects: Any) -> bool:
    """Whether another exercise's check fails on the learner's objects (run quietly)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            decide(module, *objects)
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return True
    return False


@contextlib.contextmanager
def _course_order(backward: Callable[..., Any], pkg: ModuleType) -> Iterator[None]:
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


def observe(ob: Observer, backward: Callable[..., Any], mygrad: ModuleType | None = None, *,
            seed: int, hidden: bool) -> None:
    pkg = _package(mygrad)
    mode = getattr(pkg, "GradMode", None)
    start = getattr(mode, "enabled", True)
    with ob.case("setup"):
        ob.put("name", str(getattr(backward, "__name__", repr(backward))))
        ob.put("depth", deeper_than_recursion(3000))
    try:
        with _course_order(backward, pkg):
            for observe_case in _OBSERVE:
                with ob.case(observe_case.__doc__ or ""):
                    observe_case(ob, backward, pkg)
            if hidden:
                with ob.case(C_RANDOM):
                    _o_random(ob, backward, pkg, numbers(seed, hidden))
    finally:
        if mode is not None:
            mode.enabled = start             # a broken engine may have left recording off


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


def _o_random(ob: Observer, backward: Any, pkg: ModuleType, num: dict[str, Any]) -> None:
    mine = [_mg(pkg, v, True) for v in num["vals"]]
    l1 = _mg(pkg, num["input"]) * mine[0]
    loss = ((l1 + mine[1]) * (l1 * mine[2])).mean()
    _call(ob, "backward", backward, loss)
    for k in range(3):
        _put_grad(ob, f"w{k + 1}.grad", mine[k])


_OBSERVE = (_o_seed, _o_h, _o_mode, _o_twice, _o_own, _o_freed, _o_gradient, _o_nothing,
            _o_nones, _o_count, _o_retain, _o_hooks, _o_raises, _o_shape, _o_create, _o_deep)


# -- the judge's side ----------------------------------------------------------------------
def judge(ck: Checker, obs: Observations) -> None:
    setup = obs.case(ck, "setup")
    name, depth = str(setup["name"]), int(setup["depth"])
    for judge_case, title in _JUDGES:
        shown = f"a deep chain ({depth:,} operations) needs no recursion" if title == C_DEEP \
            else title
        with ck.case(shown):
            judge_case(ck, obs.case(ck, title, what=f"your {name}"), name)
    if obs.hidden:
        with ck.case(C_RANDOM):
            _random(ck, obs.case(ck, C_RANDOM, what=f"your {name}"), name,
                    numbers(obs.seed, obs.hidden))
    ck.done()


def _ok(ck: Checker, seen: Any, key: str, name: str, hint: str | None = None) -> None:
    """The learner's call ``key`` returned (else its error, as ck.call reports it)."""
    err = seen[key]
    if isinstance(err, Raised):
        raise_learner_error(ck, err, f"your {name}", hint)


def _raised(ck: Checker, seen: Any, key: str, wanted: str, name: str, hint: str) -> None:
    """The learner's call ``key`` raised ``wanted`` (as ck.raises reports it)."""
    err = seen[key]
    if err is None:
        ck.fail(f"your {name} did not raise.", expected=wanted,
                received=f"it returned {seen[f'{key} returned']}", hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a(wanted):
        return
    if err.is_a("NotImplementedError"):
        raise_learner_error(ck, err, f"your {name}")
    ck.fail(f"your {name} raised the wrong kind of error.", expected=wanted,
            received=f"{err.name}: {err.message}", hint=hint)


def _grad_close(ck: Checker, seen: Any, key: str, expected: Any, hint: str | None,
                mistakes: list[tuple[Any, str]] | None = None, what: str | None = None) -> None:
    what = what or key
    ck.check(seen[f"{key} none"] is False, f"{what} is None after backward.", expected=expected,
             hint=hint)
    ck.close(seen[key], expected, what=what, hint=hint, mistakes=mistakes or ())


def _seed(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name)
    ck.close(seen["loss"], 40.0, what="loss")
    one_user = HINTS["engine.one-user"]
    for w, want, mistakes in (("w1", 28.0, [(8.0, one_user), (20.0, one_user)]),
                              ("w2", 8.0, []), ("w3", 10.0, [])):
        _grad_close(ck, seen, f"{w}.grad", want, HINTS["engine.grads"], mistakes)
    ck.check(seen["others none"] is True,
             "a non-leaf (l1) or a Variable that needs no grad (input) got a .grad.",
             hint=HINTS["engine.non-leaf"])


def _h(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name)
    _grad_close(ck, seen, "x.grad", 39.0, HINTS["engine.grads"],
                [(3 * 39.0, HINTS["engine.per-path"]), (18.0 + 3.0, HINTS["engine.one-of-h"])])
    _grad_close(ck, seen, "y.grad", 26.0, HINTS["engine.grads"])


def _mode(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward 1", name)
    ck.check(seen["modes"] == [False], "a Function's backward ran with grad mode on.",
             expected="GradMode.enabled False during the walk", received=seen["modes"],
             hint=HINTS["engine.mode-off"])
    ck.check(seen["enabled after"] is True, "grad mode is off after backward.", expected=True,
             received=seen["enabled after repr"], hint=HINTS["engine.mode-back"])
    _ok(ck, seen, "x * x", "<lambda>")
    _ok(ck, seen, "backward 2", name)
    ck.check(seen["x.grad none"] is False, "x.grad is None after backward.",
             hint=HINTS["engine.grads"])
    ck.check(seen["recorded"] is False, "x.grad was recorded: it has a grad_fn (or requires "
             "grad).", received=seen["grad_fn"], hint=HINTS["engine.mode-off"])


def _twice(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward 1", name)
    _ok(ck, seen, "backward 2", name)
    _grad_close(ck, seen, "x.grad", 12.0, HINTS["engine.accumulate"],
                [(6.0, HINTS["engine.accumulate-add"])], what="x.grad after two calls")


def _own(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name)
    _grad_close(ck, seen, "x.grad", [1.0, 1.0], HINTS["engine.grads"])
    _grad_close(ck, seen, "y.grad", [1.0, 1.0], HINTS["engine.grads"])
    ck.check(seen["shared"] is False,
             "x.grad and y.grad share one array: changing one (an optimizer's zero_() "
             "does) would change the other.", hint=HINTS["engine.copy"])


def _freed(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward 1", name)
    _raised(ck, seen, "backward 2", "RuntimeError", name, HINTS["engine.release"])
    ck.check(seen["enabled after"] is True, "grad mode stayed off after a backward that "
             "raised.", expected=True, received=seen["enabled after repr"],
             hint=HINTS["engine.mode-finally"])


def _gradient(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward 1", name)
    _grad_close(ck, seen, "x.grad", [2.0, 50.0, -100.0], HINTS["engine.gradient"])
    _raised(ck, seen, "backward 2", "RuntimeError", name, HINTS["engine.needs-gradient"])


def _nothing(ck: Checker, seen: Any, name: str) -> None:
    _raised(ck, seen, "backward", "RuntimeError", name, HINTS["engine.nothing-recorded"])


def _nones(ck: Checker, seen: Any, name: str) -> None:
    rule = HINTS["engine.rule"]
    _ok(ck, seen, "backward 1", name, HINTS["engine.surplus-none"] + rule)
    _grad_close(ck, seen, "x.grad 1", [2.0, 2.0], rule, what="x.grad after Scale.apply(x)")
    _ok(ck, seen, "backward 2", name, HINTS["engine.missing-number"] + rule)
    _grad_close(ck, seen, "x.grad 2", [3.0, 3.0], rule, what="x.grad after Scale.apply(x, 3.0)")


def _count(ck: Checker, seen: Any, name: str) -> None:
    rule = HINTS["engine.rule"]
    _raised(ck, seen, "backward 1", "RuntimeError", name, HINTS["engine.cut-off"] + rule)
    _raised(ck, seen, "backward 2", "RuntimeError", name, HINTS["engine.filled"] + rule)


def _retain(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name)
    _grad_close(ck, seen, "h.grad", 13.0, HINTS["engine.retain"])


def _hooks(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name)
    ck.check(seen["seen"] != [], "your backward never passed h's gradient through _run_hooks.",
             expected=[13.0], received=seen["seen"], hint=HINTS["engine.hooks-never"])
    ck.check(seen["seen"] == [13.0], "the hooks on h were not called once with the whole "
             "gradient 13.", expected=[13.0], received=seen["seen"],
             hint=HINTS["engine.hooks-once"])
    _grad_close(ck, seen, "x.grad", 19.5, HINTS["engine.hooks-flow"],
                [(39.0, HINTS["engine.hooks-result"])])
    _grad_close(ck, seen, "y.grad", 6.5, HINTS["engine.hooks-leaf"],
                [(13.0, HINTS["engine.hooks-leaf-late"])])


def _raises(ck: Checker, seen: Any, name: str) -> None:
    _raised(ck, seen, "backward 1", "_Boom", name, HINTS["engine.unchanged"])
    ck.check(seen["enabled after 1"] is True, "grad mode stayed off after a backward that "
             "raised.", expected=True, received=seen["enabled after 1 repr"],
             hint=HINTS["engine.mode-finally"])
    _ok(ck, seen, "x * x", "<lambda>")
    _ok(ck, seen, "backward 2", name)
    ck.check(seen["off after 2"] is True, "grad mode was switched on by a backward called "
             "with recording off.", expected=False, received=seen["enabled after 2 repr"],
             hint=HINTS["engine.mode-caller"])


def _shape(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name)
    got = None if seen["x.grad none"] else seen["x.grad"]
    ck.check(got is not None and tuple(np.shape(got)) == (1, 1),
             "x.grad of a (1, 1) root does not have shape (1, 1).", expected="[[1.]]",
             received=got, hint=HINTS["engine.root-shape"])
    ck.close(got, [[1.0]], what="x.grad")


def _create(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "x * x * 2.0", "<lambda>")
    _ok(ck, seen, "backward 1", name, HINTS["engine.create-graph"])
    _ok(ck, seen, "backward 2", name, HINTS["engine.retain-follows"])
    ck.close(None if seen["x.grad none"] else seen["x.grad"], 12.0,
             what="x.grad after the two calls", hint=HINTS["engine.twice-six"])


def _deep(ck: Checker, seen: Any, name: str) -> None:
    _ok(ck, seen, "backward", name, HINTS["engine.iterative"])
    _grad_close(ck, seen, "x.grad", 1.0, HINTS["engine.grads"])


def _random(ck: Checker, seen: Any, name: str, num: dict[str, Any]) -> None:
    import autograd_lab as al
    ref = [al.tensor(float(v), requires_grad=True) for v in num["vals"]]
    l1 = al.tensor(num["input"]) * ref[0]
    ((l1 + ref[1]) * (l1 * ref[2])).mean().backward()
    _ok(ck, seen, "backward", name)
    for k in range(3):
        _grad_close(ck, seen, f"w{k + 1}.grad", grad_data(ref[k]), HINTS["engine.grads"])


_JUDGES: tuple[tuple[Callable[[Checker, Any, str], None], str], ...] = (
    (_seed, C_SEED), (_h, C_H), (_mode, C_MODE), (_twice, C_TWICE), (_own, C_OWN),
    (_freed, C_FREED), (_gradient, C_GRADIENT), (_nothing, C_NOTHING), (_nones, C_NONES),
    (_count, C_COUNT), (_retain, C_RETAIN), (_hooks, C_HOOKS), (_raises, C_RAISES),
    (_shape, C_SHAPE), (_create, C_CREATE), (_deep, C_DEEP))
