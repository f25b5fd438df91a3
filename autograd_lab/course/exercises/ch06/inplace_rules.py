"""Check the learner's ``_check_inplace(self, other=None)``: with grad mode off it allows
everything; with grad mode on it refuses a leaf that requires grad (PyTorch's message), a
computed Variable that requires grad and an ``other`` that requires grad, and allows the rest
(``other`` may be a number or None). Variables are made and linked by hand, and grad mode is
switched on ``GradMode`` directly: no other exercise plays a part."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._judge import expect_ran, expect_raised
from .messages import HINTS

ID = "ch06-inplace-rules"
PARTS: tuple[str, ...] = ()

_LEAF_WORDS = "a leaf Variable that requires grad is being used in an in-place operation"

MISTAKES = (
    Mistake("grad mode not looked at", ("    if not GradMode.enabled:\n        return\n", ""),
            None, "rules.no-grad"),
    Mistake("only leaves refused", ('    if self.requires_grad or getattr(other, "requires_grad",'
                                    ' False):\n        raise RuntimeError(_NOT_RECORDED)\n', ""),
            None, "rules.computed"),
    Mistake("the other operand not looked at",
            ('self.requires_grad or getattr(other, "requires_grad", False)', "self.requires_grad"),
            None, "rules.other"),
    Mistake("other.requires_grad read directly",
            ('getattr(other, "requires_grad", False)', "other.requires_grad"), None,
            "rules.number"),
    Mistake("the leaf gets the other message",
            ("raise RuntimeError(_LEAF_IN_PLACE)", "raise RuntimeError(_NOT_RECORDED)"), None,
            "rules.leaf-message"),
    Mistake("everything refused while recording",
            ('    if self.requires_grad or getattr(other, "requires_grad", False):\n'
             "        raise RuntimeError(_NOT_RECORDED)\n", "    raise RuntimeError(_NOT_RECORDED)\n"),
            None, "rules.plain"),
)

SETUP = "the check can see Variable and GradMode"
C_LEAF = "recording on: a leaf that requires grad is refused, in PyTorch's words"
C_COMPUTED = "recording on: a computed Variable that requires grad is refused"
C_OTHER = "recording on: another operand that requires grad is refused"
C_PLAIN = "recording on: Variables that need no gradient may change"
C_OFF = "recording off: every change is allowed (an optimizer's step)"
C_ANY_OTHER = "recording on: a leaf requiring grad is refused with any other"
C_MODE = "the rules leave grad mode as they found it"

# (case, [(label, refused, var specs (requires_grad, computed) or a plain value, hint id)])
_CALLS: list[tuple[str, list[tuple[str, bool, tuple[Any, ...], str]]]] = [
    (C_LEAF, [("_check_inplace(w) with w a leaf that requires grad", True, ((True, False),),
               "rules.leaf")]),
    (C_COMPUTED, [("_check_inplace(y) with y computed, requiring grad", True, ((True, True),),
                   "rules.computed")]),
    (C_OTHER, [("_check_inplace(c, w) with c a constant and w requiring grad", True,
                ((False, False), (True, False)), "rules.other")]),
    (C_PLAIN, [("_check_inplace(c, d) with two constants", False, ((False, False), (False, False)),
                "rules.plain"),
               ("_check_inplace(c, 2.0) with a plain number", False, ((False, False), 2.0),
                "rules.number"),
               ("_check_inplace(c) (zero_ passes no other)", False, ((False, False),),
                "rules.none")]),
    (C_OFF, [("_check_inplace(w, c) under no_grad", False, ((True, False), (False, False)),
              "rules.no-grad"),
             ("_check_inplace(y, w) under no_grad", False, ((True, True), (True, False)),
              "rules.no-grad")]),
]
_HIDDEN_CALLS: list[tuple[str, list[tuple[str, bool, tuple[Any, ...], str]]]] = [
    (C_ANY_OTHER, [("_check_inplace(w, 3.0)", True, ((True, False), 3.0), "rules.any-other")]),
    (C_MODE, [("_check_inplace(c, d)", False, ((False, False), (False, False)), "rules.plain")]),
]


def _calls(hidden: bool) -> list[tuple[str, list[tuple[str, bool, tuple[Any, ...], str]]]]:
    return _CALLS + (_HIDDEN_CALLS if hidden else [])


def observe(ob: Observer, check_inplace: Any, *, seed: int, hidden: bool) -> None:
    scope: dict[str, Any] = getattr(check_inplace, "__globals__", {})
    Variable: Any = scope.get("Variable")
    GradMode: Any = scope.get("GradMode")
    with ob.case(SETUP):
        ob.put("sees them", isinstance(Variable, type) and GradMode is not None)
    if not isinstance(Variable, type) or GradMode is None:
        return
    rng = np.random.default_rng(seed)

    class Node:
        """a stand-in grad_fn: the checker links the Variable by hand"""

    def var(spec: Any) -> Any:
        if not isinstance(spec, tuple):
            return spec
        v = Variable(np.round(rng.normal(size=2), 3))
        if spec[0]:
            v.requires_grad = True
        if spec[1]:
            v.grad_fn = Node()
        return v

    start = GradMode.enabled
    try:
        GradMode.enabled = True
        for title, calls in _calls(hidden):
            with ob.case(title):
                GradMode.enabled = title != C_OFF
                for label, _, specs, _ in calls:
                    args = [var(s) for s in specs]
                    ob.put(label + " returned", ob.attempt(label, check_inplace, *args))
                if title == C_MODE:
                    ob.put("grad mode after", GradMode.enabled is True)
                GradMode.enabled = True
    finally:
        GradMode.enabled = start


def judge(ck: Checker, obs: Observations) -> None:
    setup = obs.case(ck, SETUP, what="your _check_inplace")
    if setup["sees them"] is not True:
        ck.fail("_check_inplace cannot see Variable and GradMode.", hint=HINTS["rules.setup"])
    for title, calls in _calls(obs.hidden):
        with ck.case(title):
            seen = obs.case(ck, title, what="your _check_inplace")
            for label, refused, _, hint in calls:
                if refused:
                    err = expect_raised(ck, seen, label, label, "RuntimeError", HINTS[hint])
                    if title == C_LEAF:
                        ck.check(_LEAF_WORDS in err.message,
                                 "the message for a leaf is not PyTorch's.",
                                 expected="_LEAF_IN_PLACE (\"" + _LEAF_WORDS + " ...\")",
                                 received=err.message, hint=HINTS["rules.leaf-message"])
                else:
                    expect_ran(ck, seen, label, label, HINTS[hint])
            if title == C_MODE:
                ck.check(seen["grad mode after"] is True, "_check_inplace switched grad mode off.",
                         hint=HINTS["rules.mode"])
    ck.done()
