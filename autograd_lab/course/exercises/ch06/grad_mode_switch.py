"""Check the learner's ``set_grad_enabled`` (and the ``no_grad``/``enable_grad`` built on it): the
mode inside a block, the mode restored to what it was before the block (not to True), after an
error too, nesting, and use as a decorator (per call, recursion included). Only ``GradMode`` is
used: no Function is applied, so ``apply`` plays no part."""
from __future__ import annotations

from typing import Any

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._judge import ran
from ._shared import Steps
from .messages import HINTS

ID = "ch06-grad-mode-switch"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("__exit__ switches recording on", ("GradMode.enabled = self.previous",
                                               "GradMode.enabled = True"), None, "switch.restore"),
    Mistake("not restored after an error",
            ("        GradMode.enabled = self.previous\n",
             "        if exc_info[0] is None:\n            GradMode.enabled = self.previous\n"),
            None, "switch.error-restore"),
    Mistake("__exit__ swallows the error", ("return False                       # an",
                                            "return True                        # an"),
            None, "switch.swallow"),
    Mistake("the mode to restore read in __init__",
            ("        self.mode = bool(mode)\n        ### END SOLUTION\n\n    def __enter__(self):\n"
             "        ### BEGIN SOLUTION\n        self.previous = GradMode.enabled\n",
             "        self.mode = bool(mode)\n        self.previous = GradMode.enabled\n"
             "        ### END SOLUTION\n\n    def __enter__(self):\n        ### BEGIN SOLUTION\n"),
            None, "switch.read-enter"),
    Mistake("the mode kept on the class", ("        self.previous = GradMode.enabled\n",
                                           "        set_grad_enabled.previous = GradMode.enabled\n"),
            None, "switch.nested-outer"),
    Mistake("one switch for every call", ("            with set_grad_enabled(mode):",
                                          "            with self:"), None, "switch.recursion"),
    Mistake("the mode switched when decorating",
            ("        mode = self.mode\n", "        mode = self.mode\n        GradMode.enabled = mode\n"),
            None, "switch.decorate"),
    Mistake("the result forgotten", ("                return fn(*args, **kwargs)",
                                     "                fn(*args, **kwargs)"), None, "switch.result"),
    Mistake("the name lost",
            ("        run_in_mode.__name__, run_in_mode.__doc__ = fn.__name__, fn.__doc__\n", ""),
            None, "switch.name"),
    Mistake("the flag not made a bool", ("self.mode = bool(mode)", "self.mode = mode"), None,
            "switch.bool"),
)

SETUP = "set_grad_enabled is a class that can see GradMode"
C_NO_GRAD = "with no_grad(): recording is off inside and on again after"
C_SWITCH = "set_grad_enabled(False) and (True) switch to the mode given"
C_NESTED = "enable_grad inside no_grad: on, then off again, then on"
C_READ = "the mode is read when the block begins, not when the object is made"
C_ERROR = "an error inside `with no_grad():` still switches recording back on"
C_DECORATOR = "@no_grad() on a function: off during each call, as before afterwards"
C_RECURSION = "a decorated function that calls itself: the mode is right afterwards"
C_THREE = "three levels, starting with recording off"
MODES = (False, True, 0, 1)


class _Inside(Exception):
    """The error the check raises inside a with block on purpose."""


def _grad_mode_of(cls: Any) -> Any:
    """The ``GradMode`` the learner's ``set_grad_enabled`` switches (from its methods' globals)."""
    for name in ("__enter__", "__exit__", "__init__"):
        mode = getattr(cls.__dict__.get(name), "__globals__", {}).get("GradMode")
        if mode is not None:
            return mode
    return None


def _block(steps: Steps, key: str, manager: Any, GradMode: Any, raising: bool = False) -> Any:
    """Run ``with manager:`` around a block (that raises when ``raising``); the mode inside.
    With ``raising``, ``<key> outcome`` says whether the block's own error came out."""
    inside: list[Any] = []

    def block() -> None:
        with manager:
            inside.append(GradMode.enabled)
            if raising:
                raise _Inside("raised inside the with block on purpose")

    name = "with " + type(manager).__name__ + "()"
    block.__name__ = name
    if not raising:
        steps.call(key, block)
    else:
        try:
            block()
            steps.ob.put(key + " outcome", "no error")
        except _Inside:
            steps.ob.put(key + " outcome", "its own error")
        except Exception as err:  # noqa: BLE001 - the learner's __enter__ or __exit__
            steps.fail(key, name, err)
    return inside[0] if inside else None


def observe(ob: Observer, set_grad_enabled: Any, no_grad: Any, enable_grad: Any, *, seed: int,
            hidden: bool) -> None:
    with ob.case(SETUP):
        ob.put("repr", repr(set_grad_enabled))
        is_class = ob.put("is a class", isinstance(set_grad_enabled, type))
        GradMode = _grad_mode_of(set_grad_enabled) if is_class else None
        ob.put("sees GradMode", GradMode is not None)
    if GradMode is None:
        return
    steps = Steps(ob)
    start = GradMode.enabled
    try:
        _observe_blocks(steps, set_grad_enabled, no_grad, enable_grad, GradMode)
        _observe_decorator(steps, no_grad, GradMode)
        if hidden:
            with steps.case(C_THREE):
                GradMode.enabled = False
                seen = []
                with steps.call("enable_grad()", enable_grad):
                    with steps.call("no_grad()", no_grad):
                        with steps.call("set_grad_enabled(True)", set_grad_enabled, True):
                            seen.append(GradMode.enabled)
                        seen.append(GradMode.enabled)
                    seen.append(GradMode.enabled)
                seen.append(GradMode.enabled)
                ob.put("seen", seen)
    finally:
        GradMode.enabled = start


def _observe_blocks(steps: Steps, set_grad_enabled: Any, no_grad: Any, enable_grad: Any,
                    GradMode: Any) -> None:
    ob = steps.ob
    GradMode.enabled = True
    with steps.case(C_NO_GRAD):
        ob.put("inside", _block(steps, "block", steps.call("no_grad()", no_grad), GradMode))
        ob.put("after", GradMode.enabled)
    with steps.case(C_SWITCH):
        for mode in MODES:
            GradMode.enabled = not mode
            manager = steps.call(f"set_grad_enabled({mode!r})", set_grad_enabled, mode)
            ob.put(f"inside {mode!r}", _block(steps, f"block {mode!r}", manager, GradMode))
            ob.put(f"after {mode!r}", GradMode.enabled)
    with steps.case(C_NESTED):
        GradMode.enabled = True
        seen = []
        with steps.call("no_grad()", no_grad):
            seen.append(GradMode.enabled)
            with steps.call("enable_grad()", enable_grad):
                seen.append(GradMode.enabled)
            seen.append(GradMode.enabled)
        seen.append(GradMode.enabled)
        ob.put("seen", seen)
    with steps.case(C_READ):
        GradMode.enabled = True
        manager = steps.call("enable_grad()", enable_grad)
        GradMode.enabled = False
        _block(steps, "block", manager, GradMode)
        ob.put("after", GradMode.enabled)
    with steps.case(C_ERROR):
        GradMode.enabled = True
        _block(steps, "block", steps.call("no_grad()", no_grad), GradMode, raising=True)
        ob.put("after", GradMode.enabled)


def _observe_decorator(steps: Steps, no_grad: Any, GradMode: Any) -> None:
    ob = steps.ob
    with steps.case(C_DECORATOR):
        def probe(x: Any) -> Any:
            """Doc of probe."""
            return GradMode.enabled, x

        GradMode.enabled = True
        decorated = steps.call("decorate", steps.call("no_grad()", no_grad), probe)
        ob.put("decorated", repr(decorated))
        ob.put("callable", callable(decorated))
        ob.put("after decorating", GradMode.enabled)
        result = steps.call("call", decorated, 7)
        ob.put("result is a tuple", isinstance(result, tuple))
        ob.put("result", result)
        ob.put("after the call", GradMode.enabled)
        ob.put("name", getattr(decorated, "__name__", None))
    with steps.case(C_RECURSION):
        def depth(n: int) -> Any:
            return GradMode.enabled if n == 0 else decorated_depth(n - 1)

        decorated_depth = steps.call("decorate", steps.call("no_grad()", no_grad), depth)
        GradMode.enabled = True
        ob.put("inside", steps.call("call", decorated_depth, 3))
        ob.put("after", GradMode.enabled)


def judge(ck: Checker, obs: Observations) -> None:
    what = "your set_grad_enabled"
    setup = obs.case(ck, SETUP, what=what)
    ck.check(setup["is a class"] is True, "set_grad_enabled is not a class.",
             received=setup["repr"], hint=HINTS["switch.classes"])
    if setup["sees GradMode"] is not True:
        ck.fail("set_grad_enabled's methods cannot see GradMode.", hint=HINTS["switch.setup"])
    restore = HINTS["switch.restore"]
    with ck.case(C_NO_GRAD):
        seen = obs.case(ck, C_NO_GRAD, what=what)
        ran(ck, seen, "no_grad()", HINTS["switch.no-grad-args"])
        ran(ck, seen, "block")
        ck.check(seen["inside"] is False, "GradMode.enabled was not False inside `with no_grad():`.",
                 expected=False, received=seen["inside"], hint=HINTS["switch.enter"])
        ck.check(seen["after"] is True, "recording stayed off after `with no_grad():`.",
                 expected=True, received=seen["after"], hint=restore)
    with ck.case(C_SWITCH):
        seen = obs.case(ck, C_SWITCH, what=what)
        for mode in MODES:
            ran(ck, seen, f"set_grad_enabled({mode!r})")
            ran(ck, seen, f"block {mode!r}")
            inside, after = seen[f"inside {mode!r}"], seen[f"after {mode!r}"]
            ck.check(inside is bool(mode),
                     f"inside `with set_grad_enabled({mode!r}):` the mode was wrong.",
                     expected=bool(mode), received=inside, hint=HINTS["switch.bool"])
            ck.check(after is (not mode), "the mode after the block is not the mode before it.",
                     expected=not mode, received=after, hint=restore)
    with ck.case(C_NESTED):
        seen = obs.case(ck, C_NESTED, what=what)
        ran(ck, seen, "no_grad()")
        ran(ck, seen, "enable_grad()")
        modes = seen["seen"]
        ck.check(modes == [False, True, False, True], "the modes of nested blocks are wrong.",
                 expected="[False, True, False, True] (in no_grad, in enable_grad, back in "
                          "no_grad, after)", received=modes,
                 hint=HINTS["switch.nested-outer"] + restore if modes[:2] == [False, True]
                 else restore)
    _judge_read_and_error(ck, obs, what)
    _judge_decorator(ck, obs, what)
    if obs.hidden:
        with ck.case(C_THREE):
            seen = obs.case(ck, C_THREE, what=what)
            for key in ("enable_grad()", "no_grad()", "set_grad_enabled(True)"):
                ran(ck, seen, key)
            ck.check(seen["seen"] == [True, False, True, False], "the modes of nested blocks are "
                     "wrong.", expected=[True, False, True, False], received=seen["seen"],
                     hint=restore)
    ck.done()


def _judge_read_and_error(ck: Checker, obs: Observations, what: str) -> None:
    with ck.case(C_READ):
        seen = obs.case(ck, C_READ, what=what)
        ran(ck, seen, "enable_grad()")
        ran(ck, seen, "block")
        ck.check(seen["after"] is False, "after the block the mode is not the one it had when the "
                 "block began.", expected=False, received=seen["after"],
                 hint=HINTS["switch.read-enter"])
    with ck.case(C_ERROR):
        seen = obs.case(ck, C_ERROR, what=what)
        ran(ck, seen, "no_grad()")
        ran(ck, seen, "block", HINTS["switch.error-through"])
        if seen["block outcome"] != "its own error":
            ck.fail("an error raised inside the with block disappeared.",
                    expected="the block's error, passed on to the caller", received="no error",
                    hint=HINTS["switch.swallow"])
        ck.check(seen["after"] is True, "recording stayed off after an error inside "
                 "`with no_grad():`.", expected=True, received=seen["after"],
                 hint=HINTS["switch.error-restore"])


def _judge_decorator(ck: Checker, obs: Observations, what: str) -> None:
    with ck.case(C_DECORATOR):
        seen = obs.case(ck, C_DECORATOR, what=what)
        ran(ck, seen, "no_grad()")
        ran(ck, seen, "decorate", HINTS["switch.call"])
        ck.check(seen["callable"] is True, "@no_grad() did not give a function.",
                 received=seen.get("decorated"), hint=HINTS["switch.wrapper"])
        ck.check(seen["after decorating"] is True, "decorating a function switched recording off.",
                 expected=True, received=seen["after decorating"], hint=HINTS["switch.decorate"])
        ran(ck, seen, "call")
        result = seen["result"]
        ck.check(seen["result is a tuple"] is True and result == (False, 7),
                 "the decorated function did not run in no_grad mode with its arguments, or did "
                 "not give back its result.", expected=(False, 7), received=result,
                 hint=HINTS["switch.result"])
        ck.check(seen["after the call"] is True, "recording stayed off after calling the "
                 "decorated function.", expected=True, received=seen["after the call"],
                 hint=HINTS["switch.restore"])
        ck.check(seen["name"] == "probe", "the decorated function lost its name.",
                 expected="probe", received=seen["name"], hint=HINTS["switch.name"])
    with ck.case(C_RECURSION):
        seen = obs.case(ck, C_RECURSION, what=what)
        for key in ("no_grad()", "decorate", "call"):
            ran(ck, seen, key)
        ck.check(seen["inside"] is False, "recording was on inside the innermost call.",
                 expected=False, received=seen["inside"])
        ck.check(seen["after"] is True, "after a decorated function called itself, recording "
                 "stayed off.", expected=True, received=seen["after"],
                 hint=HINTS["switch.recursion"])
