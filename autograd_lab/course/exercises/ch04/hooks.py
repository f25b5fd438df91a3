"""Check mygrad's ``register_hook(v, fn)`` (a list of hooks per Variable in ``v._hooks``, and a
handle whose ``remove()`` takes one off), ``retain_grad(v)`` (``v._retains_grad = True``) and
``_run_hooks(v, grad)`` (the hooks in order; a result other than None replaces the gradient).
The learner's backward plays no part: the course's walk runs the graphs.

The kernel records what the watching hooks saw, the gradients as numbers and whether they are
Variables; the judge decides.
"""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._variables import (_course_walk, _h_graph, _hook_recorder, _mg, _package, _scaling_hook,
                      _values)
from .messages import HINTS

ID = "ch04-hooks"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("results ignored", ("            grad = as_variable(changed)\n",
                                "            pass\n"), None, "hooks.results-ignored"),
    Mistake("no Variable made", ("grad = as_variable(changed)", "grad = changed"), None,
            "hooks.variable"),
    Mistake("remove() not idempotent", ("        if self._hook in self._hooks:\n"
                                        "            self._hooks.remove(self._hook)",
                                        "        self._hooks.remove(self._hook)"), None,
            "hooks.remove-twice"),
    Mistake("a new list each time", ('    if "_hooks" not in self.__dict__:\n'
                                     "        self._hooks = []",
                                     "    self._hooks = []"), None, "hooks.dropped"),
    Mistake("no return of the handle", ("return _HookHandle(self._hooks, hook)", "pass"), None,
            "hooks.handle"),
)

C_PLAIN = "_run_hooks of a Variable without hooks gives the gradient back"
C_ORDER = "_run_hooks: hooks in order; a result replaces the gradient, None keeps it"
C_ONE = "register_hook on h: the hook sees h's complete gradient (13) once"
C_TWO = "two hooks on h both run, in the order they were registered"
C_REMOVE = "two hooks on h; remove() takes off only its own; removing twice is harmless"
C_RETAIN = "retain_grad: h keeps its complete gradient 13; x and y as before"
C_LEAF = "a hook on the leaf x: x.grad is what the hook returns"
C_FRESH = "a hook on one Variable leaves a fresh Variable without hooks"
_USES = {C_PLAIN: ("_run_hooks",), C_ORDER: ("_run_hooks",), C_ONE: ("register_hook",),
         C_TWO: ("register_hook",), C_REMOVE: ("register_hook",), C_RETAIN: ("retain_grad",),
         C_LEAF: ("register_hook",), C_FRESH: ("register_hook", "_run_hooks")}
_NAMES = ("register_hook", "retain_grad", "_run_hooks")


def numbers(seed: int, hidden: bool) -> dict[str, float]:
    """The random numbers of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = {"start": float(np.round(rng.uniform(1.0, 3.0), 2))}
    if hidden:
        found["leaf x"] = float(np.round(rng.uniform(1, 2), 2))
    return found


# -- the kernel's side ---------------------------------------------------------------------
def observe(ob: Observer, register_hook: Any, retain_grad: Any, run_hooks: Any,
            mygrad: ModuleType | None = None, *, seed: int, hidden: bool) -> None:
    pkg = _package(mygrad)
    fns = {"register_hook": register_hook, "retain_grad": retain_grad, "_run_hooks": run_hooks}
    with ob.case("functions"):
        for name, fn in fns.items():
            ob.put(f"{name} callable", callable(fn))
            ob.put(f"{name} name", str(getattr(fn, "__name__", repr(fn))))
    num = numbers(seed, hidden)
    walk = Checker(ID, seed=seed, hidden=hidden)  # the course's walk reports through it
    with ob.case(C_PLAIN):
        _put_grad(ob, "got", run_hooks(_mg(pkg, 1.0, True), _mg(pkg, 2.0)))
    with ob.case(C_ORDER):
        v, seen = _mg(pkg, 1.0, True), _seen()
        v._hooks = [_hook_recorder(seen), _scaling_hook(pkg, 2.0), _hook_recorder(seen),
                    _scaling_hook(pkg, 3.0, as_array=True)]
        _put_grad(ob, "got", run_hooks(v, _mg(pkg, num["start"])))
        ob.put("seen", seen)
    with ob.case(C_ONE):
        g, seen = _h_graph(pkg), _seen()
        handle = register_hook(g["h"], _hook_recorder(seen))
        ob.put("handle", handle is not None and callable(getattr(handle, "remove", None)))
        ob.put("handle repr", handle)
        _course_walk(walk, pkg, g["out"])
        ob.put("seen", seen)
    with ob.case(C_TWO):
        g, seen = _h_graph(pkg), _seen()
        register_hook(g["h"], _hook_recorder(seen))
        register_hook(g["h"], _scaling_hook(pkg, 0.5))
        register_hook(g["h"], _hook_recorder(seen))
        _course_walk(walk, pkg, g["out"])
        ob.put("seen", seen)
    with ob.case(C_REMOVE):
        g, seen = _h_graph(pkg), _seen()
        first = register_hook(g["h"], _hook_recorder(seen))
        register_hook(g["h"], _scaling_hook(pkg, 0.5))
        ob.attempt("remove 1", lambda: first.remove())
        ob.attempt("remove 2", lambda: first.remove())
        _course_walk(walk, pkg, g["out"])
        ob.put("seen", seen)
        _put_grad(ob, "x.grad", g["x"].grad)
    with ob.case(C_RETAIN):
        g = _h_graph(pkg)
        retain_grad(g["h"])
        _course_walk(walk, pkg, g["out"])
        _put_grad(ob, "h.grad", g["h"].grad)
        _put_grad(ob, "x.grad", g["x"].grad)
        ob.put("h unchanged", g["h"].requires_grad is True and g["h"].grad_fn is not None)
    if hidden:
        with ob.case(C_LEAF):
            g = _h_graph(pkg, num["leaf x"], 3.0)
            register_hook(g["x"], _scaling_hook(pkg, 0.0))
            _course_walk(walk, pkg, g["out"])
            _put_grad(ob, "x.grad", g["x"].grad)
        with ob.case(C_FRESH):
            u, w, seen = _mg(pkg, 1.0, True), _mg(pkg, 2.0, True), _seen()
            register_hook(u, _hook_recorder(seen))
            _put_grad(ob, "got", run_hooks(w, _mg(pkg, 5.0)))
            ob.put("seen", seen)


def _seen() -> list[Any]:
    """What the watching hooks of a case saw."""
    return []


def _put_grad(ob: Observer, key: str, v: Any) -> None:
    ob.put(f"{key} none", v is None)
    ob.put(f"{key} variable", hasattr(v, "grad_fn"))
    if v is not None:
        ob.put(key, _values(v))


# -- the judge's side ----------------------------------------------------------------------
def judge(ck: Checker, obs: Observations) -> None:
    num = numbers(obs.seed, obs.hidden)
    start = num["start"]
    cases = [C_PLAIN, C_ORDER, C_ONE, C_TWO, C_REMOVE, C_RETAIN] + (
        [C_LEAF, C_FRESH] if obs.hidden else [])
    for title in cases:
        with ck.case(title):
            _callables(ck, obs, _USES[title])
            seen = obs.case(ck, title, what=_what(ck, obs, _USES[title]))
            _JUDGES[title](ck, seen, start)
    ck.done()


def _callables(ck: Checker, obs: Observations, names: tuple[str, ...]) -> None:
    fns = obs.case(ck, "functions", what="your functions")
    for name in names:
        ck.check(fns[f"{name} callable"] is True, f"{fns[f'{name} name']} is not callable.",
                 expected="a function", received=fns[f"{name} name"],
                 hint="Pass the function itself, without calling it.")


def _what(ck: Checker, obs: Observations, names: tuple[str, ...]) -> str:
    fns = obs.case(ck, "functions")
    return "your " + " or ".join(str(fns.get(f"{n} name", n)) for n in names)


def _close(ck: Checker, seen: Any, key: str, expected: float, what: str,
           hint: str | None = None, mistakes: list[tuple[Any, str]] | None = None) -> None:
    """As the old _grad_close: None first, then the value."""
    ck.check(seen[f"{key} none"] is False, f"{what} is None after backward.",
             expected=expected, hint=hint)
    ck.close(seen[key], expected, what=what, hint=hint, mistakes=mistakes or ())


def _plain(ck: Checker, seen: Any, start: float) -> None:
    ck.check(seen["got none"] is False, "_run_hooks returned None for a Variable without hooks.",
             expected="the gradient it was given", received=None, hint=HINTS["hooks.return"])
    ck.close(seen["got"], 2.0, what="the gradient _run_hooks returned")


def _order(ck: Checker, seen: Any, start: float) -> None:
    hooks_seen = seen["seen"]
    ck.check(isinstance(hooks_seen, list), "the observation of this case is not readable.")
    ck.check(bool(hooks_seen), "_run_hooks called none of v's hooks.",
             expected="the hooks in v._hooks, each called with the gradient",
             received=hooks_seen, hint=HINTS["hooks.none-called"])
    got = None if seen["got none"] else seen["got"]
    ck.check(got is not None and None not in hooks_seen, "a hook that returned None took the "
             "gradient away.", expected=f"{start * 6:g} after the hooks", received=got,
             hint=HINTS["hooks.none-kept"])
    ck.check(seen["got variable"] is True, "_run_hooks returned something that is not a "
             "Variable.", received=seen.get("got type"), hint=HINTS["hooks.variable"])
    ck.check(len(hooks_seen) == 2 and hooks_seen[0] == start, "the watching hooks were not "
             "called once each, in order.", expected=[start, 2 * start], received=hooks_seen,
             hint=HINTS["hooks.once-each"])
    ck.close(got, start * 6, what="the gradient _run_hooks returned",
             mistakes=[(start, HINTS["hooks.results-ignored"]),
                       (start * 3, HINTS["hooks.last-only"])])
    ck.check(hooks_seen[1] == 2 * start, "the third hook did not see the gradient as the "
             "second hook left it.", expected=2 * start, received=hooks_seen[1],
             hint=HINTS["hooks.chain"])


def _one(ck: Checker, seen: Any, start: float) -> None:
    ck.check(seen["handle"] is True, "register_hook did not return a handle with a remove() "
             "method.", received=seen.get("handle repr"), hint=HINTS["hooks.handle"])
    hooks_seen = seen["seen"]
    ck.check(hooks_seen != [], "the hook on h was never called.", expected=[13.0],
             received=hooks_seen, hint=HINTS["hooks.append"])
    many = isinstance(hooks_seen, list) and len(hooks_seen) > 1
    ck.check(hooks_seen == [13.0], "the hook registered on h ran for other Variables too."
             if many else "the hook did not see h's gradient 13.", expected=[13.0],
             received=hooks_seen, hint=HINTS["hooks.shared"].format(count=len(hooks_seen))
             if many else None)


def _two(ck: Checker, seen: Any, start: float) -> None:
    hooks_seen = seen["seen"]
    ck.check(isinstance(hooks_seen, list) and len(hooks_seen) == 2 and hooks_seen[0] == 13.0,
             "not every hook registered on h ran.", expected=[13.0, 6.5], received=hooks_seen,
             hint=HINTS["hooks.dropped"])
    ck.check(hooks_seen == [13.0, 6.5], "the hooks on h did not run in the order they were "
             "registered.", expected=[13.0, 6.5], received=hooks_seen, hint=HINTS["hooks.end"])


def _remove(ck: Checker, seen: Any, start: float) -> None:
    for k, hint in ((1, HINTS["hooks.remove"]), (2, HINTS["hooks.remove-twice"])):
        err = seen[f"remove {k}"]
        if isinstance(err, Raised):
            raise_learner_error(ck, err, "your remove", hint)
    ck.check(seen["seen"] == [], "remove() left the hook in place: it still ran.",
             received=seen["seen"], hint=HINTS["hooks.remove-list"])
    _close(ck, seen, "x.grad", 19.5, "x.grad with the halving hook left on h",
           HINTS["hooks.halving"], mistakes=[(39.0, HINTS["hooks.halving-lost"])])


def _retain(ck: Checker, seen: Any, start: float) -> None:
    _close(ck, seen, "h.grad", 13.0, "h.grad after retain_grad", HINTS["hooks.retain"])
    _close(ck, seen, "x.grad", 39.0, "x.grad", HINTS["hooks.retain-same"])
    ck.check(seen["h unchanged"] is True, "retain_grad changed h itself.",
             hint=HINTS["hooks.retain-h"])


def _leaf(ck: Checker, seen: Any, start: float) -> None:
    _close(ck, seen, "x.grad", 0.0, "x.grad", HINTS["hooks.leaf"])


def _fresh(ck: Checker, seen: Any, start: float) -> None:
    got = seen["got"] if seen["got none"] is False else None
    ck.check(seen["seen"] == [] and got is not None and np.ndim(got) == 0 and float(got) == 5.0,
             "a hook registered on one Variable ran for another.", received=seen["seen"],
             hint=HINTS["hooks.own-list"])


_JUDGES: dict[str, Callable[[Checker, Any, float], None]] = {
    C_PLAIN: _plain, C_ORDER: _order, C_ONE: _one, C_TWO: _two, C_REMOVE: _remove,
    C_RETAIN: _retain, C_LEAF: _leaf, C_FRESH: _fresh}
