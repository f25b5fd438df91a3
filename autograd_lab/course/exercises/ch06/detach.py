"""Check the learner's ``detach(self)`` and ``requires_grad_(self, flag)``: a new leaf around the
same array, with the same version counter, the original untouched; and requires_grad_ setting
the flag of a leaf and returning the Variable itself. Values are made and linked by hand
(``grad_fn`` set to a stand-in node), so no other exercise is involved."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._judge import expect_raised
from .messages import HINTS

ID = "ch06-detach"
PARTS: tuple[str, ...] = ()

_COUNTER_BODY = ("    counter = v.__dict__.get(\"_counter\")\n    if counter is None:\n"
                 "        counter = v._counter = [0]\n")

MISTAKES = (
    Mistake("a copy of the data", ("out = Variable(self.data)", "out = Variable(self.data.copy())"),
            None, "detach.shares-data"),
    Mistake("requires_grad passed on", ("out = Variable(self.data)",
                                        "out = Variable(self.data, requires_grad=self.requires_grad)"),
            None, "detach.requires-grad"),
    Mistake("the Variable itself, cut from its graph",
            ("    out = Variable(self.data)\n    out._counter = _counter(self)\n    return out",
             "    self.grad_fn = None\n    self.requires_grad = False\n    return self"),
            None, "detach.new"),
    Mistake("a copy of the counter", ("out._counter = _counter(self)",
                                      "out._counter = list(_counter(self))"),
            None, "detach.counter-shared"),
    Mistake("requires_grad_ returns nothing", ("    self.requires_grad = bool(requires_grad)\n"
                                               "    return self",
                                               "    self.requires_grad = bool(requires_grad)"),
            None, "detach.return-self"),
    Mistake("a computed Variable not refused",
            ("    if not self.is_leaf:\n        raise RuntimeError(_ONLY_LEAVES.format(",
             "    if False:\n        raise RuntimeError(_ONLY_LEAVES.format("),
            None, "detach.only-leaves"),
    Mistake("a refusal of its own words",
            ("raise RuntimeError(_ONLY_LEAVES.format(type(self.grad_fn).__name__))",
             "raise RuntimeError(\"not a leaf\")"), None, "detach.only-leaves-message"),
    Mistake("a new counter on every call", (_COUNTER_BODY, "    counter = v._counter = [0]\n"),
            None, "counter.once"),
    Mistake("one counter on the class",
            (_COUNTER_BODY, "    counter = getattr(v, \"_counter\", None)\n    if counter is None:\n"
                            "        counter = type(v)._counter = [0]\n"), None, "counter.keep"),
    Mistake("a counter starting at 1", ("counter = v._counter = [0]", "counter = v._counter = [1]"),
            None, "counter.zero"),
)

SETUP = "detach can see Variable and _counter"
C_COUNTER = "_counter(v): [0] for a new Variable, the same list every call, one each"
C_NEW = "y.detach() of a computed y: a new leaf that needs no gradient"
C_DATA = "the detached Variable shares the data: the same numpy array"
C_SHARED = "the detached Variable shares the version counter"
C_FLAG = "requires_grad_() sets the flag of a leaf and returns the Variable"
C_REFUSED = "requires_grad_ of a computed Variable is refused, pointing to detach"
C_TWICE = "detach of a detached Variable still shares data and counter"


def observe(ob: Observer, detach: Any, requires_grad_: Any, *, seed: int, hidden: bool) -> None:
    scope = getattr(detach, "__globals__", {})
    Variable, counter = scope.get("Variable"), scope.get("_counter")
    with ob.case(SETUP):
        ob.put("sees Variable", isinstance(Variable, type))
        ob.put("sees _counter", callable(counter))
    if not (isinstance(Variable, type) and callable(counter)):
        return
    rng = np.random.default_rng(seed)
    with ob.case(C_COUNTER):
        a, b = Variable(np.zeros(2)), Variable(np.zeros(2))
        first = counter(a)
        ob.put("first", first)
        ob.put("first is a list", isinstance(first, list))
        ob.put("the same list again", counter(a) is first)
        ob.put("kept in v._counter", a.__dict__.get("_counter") is first)
        ob.put("another Variable's", counter(b) is first)

    class Node:
        """a stand-in grad_fn: the checker links the Variable by hand"""

    def computed(data: Any) -> Any:
        v = Variable(np.asarray(data, dtype=np.float64))
        v.requires_grad, v.grad_fn = True, Node()
        return v

    _detached(ob, detach, counter, Variable, computed(np.round(rng.normal(size=3), 3)))
    with ob.case(C_FLAG):
        v = Variable(np.array([1.0, 2.0]))
        ob.put("returned itself", requires_grad_(v) is v)
        ob.put("requires_grad", v.requires_grad)
        requires_grad_(v, 0)
        ob.put("requires_grad after (v, 0)", v.requires_grad)
    with ob.case(C_REFUSED):
        y = computed([1.0])
        ob.put("raised returned", ob.attempt("raised", requires_grad_, y, False))
        ob.put("y requires grad", y.requires_grad is True)
    if hidden:
        with ob.case(C_TWICE):
            y = computed(rng.normal(size=(2, 2)))
            dd = detach(detach(y))
            ob.put("shared", counter(dd) is counter(y) and bool(np.shares_memory(dd.data, y.data)))


def _detached(ob: Observer, detach: Any, counter: Any, Variable: type, y: Any) -> None:
    """The cases on ``d = detach(y)`` of a computed ``y``."""
    with ob.case(C_NEW):
        node = y.grad_fn
        d = detach(y)
        ob.put("type", type(d).__name__)
        if not ob.put("is a Variable", isinstance(d, Variable)):
            return
        ob.put("is y", d is y)
        ob.put("a leaf", d.grad_fn is None and d.is_leaf)
        ob.put("grad_fn", repr(d.grad_fn))
        ob.put("requires_grad", d.requires_grad)
        ob.put("y unchanged", y.grad_fn is node and y.requires_grad is True)
        ob.put("y", repr(y))
    with ob.case(C_DATA):
        ob.put("shares", d.data is y.data or bool(np.shares_memory(d.data, y.data)))
    with ob.case(C_SHARED):
        ob.put("shares", counter(d) is counter(y))


def judge(ck: Checker, obs: Observations) -> None:
    setup = obs.case(ck, SETUP, what="your detach")
    if setup["sees Variable"] is not True:
        ck.fail("detach cannot see Variable.", hint=HINTS["detach.setup"])
    ck.check(setup["sees _counter"] is True, "detach cannot see _counter.",
             hint=HINTS["detach.counter-setup"])
    with ck.case(C_COUNTER):
        _judge_counter(ck, obs.case(ck, C_COUNTER, what="your _counter"))
    with ck.case(C_NEW):
        seen = obs.case(ck, C_NEW, what="your detach")
        ck.check(seen["is a Variable"] is True, "detach did not return a Variable.",
                 received=seen["type"], hint=HINTS["detach.variable"])
        ck.check(seen["is y"] is False, "detach returned the Variable itself.",
                 hint=HINTS["detach.new"])
        ck.check(seen["a leaf"] is True, "the detached Variable is not a leaf.",
                 received=seen["grad_fn"], hint=HINTS["detach.leaf"])
        ck.check(seen["requires_grad"] is False, "the detached Variable requires grad.",
                 expected=False, received=seen["requires_grad"], hint=HINTS["detach.requires-grad"])
        ck.check(seen["y unchanged"] is True, "detach changed the original Variable.",
                 received=seen["y"], hint=HINTS["detach.original"])
    with ck.case(C_DATA):
        ck.check(obs.case(ck, C_DATA, what="your detach")["shares"] is True,
                 "the detached Variable holds a copy of the data.", hint=HINTS["detach.shares-data"])
    with ck.case(C_SHARED):
        ck.check(obs.case(ck, C_SHARED, what="your _counter")["shares"] is True,
                 "the detached Variable has a version counter of its own.",
                 hint=HINTS["detach.counter-shared"])
    _judge_requires_grad(ck, obs)
    if obs.hidden:
        with ck.case(C_TWICE):
            ck.check(obs.case(ck, C_TWICE, what="your detach")["shared"] is True,
                     "detaching twice lost the shared data or counter.")
    ck.done()


def _judge_counter(ck: Checker, seen: Any) -> None:
    if seen["first is a list"] is not True or seen["first"] != [0]:
        ck.fail(f"_counter(v) of a new Variable is {seen['first']!r}, not [0].",
                hint=HINTS["counter.zero"])
    ck.check(seen["the same list again"] is True,
             "_counter(v) gave a different list on the second call.", hint=HINTS["counter.once"])
    ck.check(seen["kept in v._counter"] is True, "_counter(v) did not keep its list in v._counter.",
             hint=HINTS["counter.keep"])
    ck.check(seen["another Variable's"] is False, "two Variables got the same counter.",
             hint=HINTS["counter.one-each"])


def _judge_requires_grad(ck: Checker, obs: Observations) -> None:
    with ck.case(C_FLAG):
        seen = obs.case(ck, C_FLAG, what="your requires_grad_")
        ck.check(seen["returned itself"] is True, "requires_grad_ did not return the Variable "
                 "itself.", hint=HINTS["detach.return-self"])
        ck.check(seen["requires_grad"] is True, "requires_grad_() did not switch requires_grad on.",
                 expected=True, received=seen["requires_grad"], hint=HINTS["detach.flag-default"])
        ck.check(seen["requires_grad after (v, 0)"] is False,
                 "requires_grad_(0) did not give requires_grad False.", expected=False,
                 received=seen["requires_grad after (v, 0)"], hint=HINTS["detach.flag-bool"])
    with ck.case(C_REFUSED):
        seen = obs.case(ck, C_REFUSED, what="your requires_grad_")
        err = expect_raised(ck, seen, "raised", "requires_grad_", "RuntimeError",
                            HINTS["detach.only-leaves"])
        ck.check("detach" in err.message, "the refusal does not say what to do instead.",
                 received=err.message, hint=HINTS["detach.only-leaves-message"])
        ck.check(seen["y requires grad"] is True, "requires_grad_ changed a computed Variable "
                 "before refusing.", hint=HINTS["detach.refuse-first"])
