"""Check mygrad's ``backward(root, gradient=None, retain_graph=None, create_graph=False)`` and
its wiring (``Variable.backward``, ``retain_grad``, ``register_hook``).

The kernel runs the learner's backward on graphs built with the learner's package, with the
course's ``topological_order`` and ``_run_hooks`` in place of the learner's (so a mistake there
costs those exercises only), and records the gradients as numbers, what the calls raised, the
grad mode seen during and after the walk; the judge decides.
"""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .._common import Checker, deeper_than_recursion, grad_data
from .._exercise import Mistake
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._engine_kernel import CASES, course_order, observe_random
from ._variables import _package
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
def observe(ob: Observer, backward: Callable[..., Any], mygrad: ModuleType | None = None, *,
            seed: int, hidden: bool) -> None:
    pkg = _package(mygrad)
    mode = getattr(pkg, "GradMode", None)
    start = getattr(mode, "enabled", True)
    with ob.case("setup"):
        ob.put("name", str(getattr(backward, "__name__", repr(backward))))
        ob.put("depth", deeper_than_recursion(3000))
    try:
        with course_order(backward, pkg):
            for observe_case in CASES:
                with ob.case(observe_case.__doc__ or ""):
                    observe_case(ob, backward, pkg)
            if hidden:
                with ob.case(C_RANDOM):
                    observe_random(ob, backward, pkg, numbers(seed, hidden))
    finally:
        if mode is not None:
            mode.enabled = start             # a broken engine may have left recording off



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
