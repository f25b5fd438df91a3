"""Check the learner's in-place operations on ``Variable`` (add_, sub_, mul_, +=, -=, *=,
x[key] = value, zero_): the array itself changes, the version counts one per call, self is
returned, and what ``_check_inplace`` refuses is refused before anything changes. The course's
``_check_inplace`` and ``_counter`` are used (those are other exercises'), and grad mode is
switched on ``GradMode`` directly, so the learner's no_grad plays no part."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._judge import expect_raised, ran
from ._shared import (_MISSING, Steps, _counter_namespaces, _course_check_inplace,
                      _course_counter, _own_counter, _own_rules_problem, _with_course)
from .messages import HINTS

ID = "ch06-inplace-ops"
PARTS: tuple[str, ...] = ()

_BUMP = "        update(self.data, other.data)\n        bump_version(self)\n"

MISTAKES = (
    Mistake("no version bump", (_BUMP, "        update(self.data, other.data)\n"), None,
            "ops.bump"),
    Mistake("two version bumps", (_BUMP, _BUMP + "        bump_version(self)\n"), None,
            "ops.bump-once"),
    Mistake("self not returned", ("        return self\n        ### END SOLUTION\n    return method",
                                  "        ### END SOLUTION\n    return method"), None,
            "ops.return-self"),
    Mistake("a new array in _add", ("def _add(data, other):\n    ### BEGIN SOLUTION\n    data += other",
                                    "def _add(data, other):\n    ### BEGIN SOLUTION\n"
                                    "    data = data + other"), None, "ops.unchanged"),
    Mistake("a copy of the data", ("        update(self.data, other.data)\n",
                                   "        self.data = self.data.copy()\n"
                                   "        update(self.data, other.data)\n"), None, "ops.same-array"),
    Mistake("checked after the change",
            ("        _check_inplace(self, other)\n        update(self.data, other.data)\n",
             "        update(self.data, other.data)\n        _check_inplace(self, other)\n"),
            None, "ops.check-first"),
    Mistake("nothing refused", ("        _check_inplace(self, other)\n        update", "        update"),
            None, "ops.refuse"),
    Mistake("zero_ makes a new array",
            ("    _check_inplace(self)\n    self.data[...] = 0\n    bump_version(self)\n",
             "    _check_inplace(self)\n    self.data = np.zeros_like(self.data)\n"
             "    bump_version(self)\n"), None, "ops.zero-in-place"),
    Mistake("x[key] = value not counted", ("    self.data[key] = value.data\n    bump_version(self)\n",
                                           "    self.data[key] = value.data\n"), None, "ops.bump-one"),
)

METHODS = ("add_", "sub_", "mul_", "__iadd__", "__isub__", "__imul__", "__setitem__", "zero_")
OPS: dict[str, Callable[..., Any]] = {
    "add_": np.add, "sub_": np.subtract, "mul_": np.multiply,
    "__iadd__": np.add, "__isub__": np.subtract, "__imul__": np.multiply}
REFUSALS = ("add_", "x[0] = ...", "zero_")

SETUP = "Variable has the in-place methods, which can see GradMode"
C_SETITEM = "x[key] = value writes into x and counts 1"
C_ZERO = "x.zero_() zeroes x's own array, counts 1, returns x"
C_OFF = "with recording off, the leaf's update is allowed and counted"
C_HIDDEN = "a number as the other operand, and a broadcast row"


def _op_case(name: str) -> str:
    return f"x.{name}(other) changes x's own array, counts 1, returns x"


def _refusal_case(label: str) -> str:
    return f"{label} on a leaf that requires grad is refused, and changes nothing"


def cases(seed: int) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """(data, other) of each operation's case, and the data zero_ is given: the same from the
    same seed, wherever run."""
    rng = np.random.default_rng(seed)
    ops = {name: (np.round(rng.normal(size=3), 3), np.round(rng.uniform(0.5, 2.0, size=3), 3))
           for name in OPS}
    return ops, np.round(rng.normal(size=(2, 3)), 3)


def observe(ob: Observer, Variable: Any, *, seed: int, hidden: bool) -> None:
    with ob.case(SETUP):
        missing = [m for m in METHODS if not callable(getattr(Variable, m, None))]
        ob.put("is a class", isinstance(Variable, type))
        ob.put("missing", missing)
        GradMode = getattr(getattr(Variable, "add_", None), "__globals__", {}).get("GradMode")
        ob.put("sees GradMode", GradMode is not None)
    if not isinstance(Variable, type) or missing or GradMode is None:
        return
    scope: dict[str, Any] = getattr(getattr(Variable, "add_", None), "__globals__", {})
    own_rules = scope.get("_check_inplace", _MISSING)
    counters = _counter_namespaces(Variable)
    with _with_course([scope], "_check_inplace", _course_check_inplace(GradMode),
                      _own_rules_problem(own_rules), "ch06-inplace-rules"), \
            _with_course(counters, "_counter", _course_counter,
                         _own_counter(counters, Variable), "ch06-detach"):
        start = GradMode.enabled
        try:
            GradMode.enabled = True
            _observe_cases(Steps(ob), Variable, GradMode, seed, hidden)
        finally:
            GradMode.enabled = start


def _observe_cases(steps: Steps, Variable: Any, GradMode: Any, seed: int, hidden: bool) -> None:
    ob = steps.ob
    ops, zero_data = cases(seed)
    for name, (data, other) in ops.items():
        with steps.case(_op_case(name)):
            x = Variable(data.copy())
            array, before = x.data, x._version
            out = steps.call(name, getattr(Variable, name), x, Variable(other))
            _after(ob, x, array, out)
            ob.put("before", before)
    with steps.case(C_SETITEM):
        x = Variable(np.zeros(4))
        array = x.data
        steps.call("[1:3]", Variable.__setitem__, x, slice(1, 3), Variable(np.array([5.0, 6.0])))
        _after(ob, x, array)
        steps.call("[0]", Variable.__setitem__, x, 0, 2.0)
        ob.put("array[0]", array[0])
    with steps.case(C_ZERO):
        x = Variable(zero_data.copy())
        array = x.data
        _after(ob, x, array, steps.call("zero_", Variable.zero_, x))
    refusals = [lambda v: Variable.add_(v, 1.0), lambda v: Variable.__setitem__(v, 0, 1.0),
                lambda v: Variable.zero_(v)]
    for label, change in zip(REFUSALS, refusals):
        with steps.case(_refusal_case(label)):
            w = Variable(np.array([1.0, 2.0]), requires_grad=True)
            array = w.data
            ob.put("before", w._version)
            ob.put("raised returned", ob.attempt("raised", change, w))
            ob.put("array", np.array(array, dtype=np.float64))
            ob.put("version", w._version)
    with steps.case(C_OFF):
        w = Variable(np.array([1.0, 2.0]), requires_grad=True)
        GradMode.enabled = False
        try:
            steps.call("sub_", Variable.sub_, w, Variable(np.array([0.5, 0.5])))
        finally:
            GradMode.enabled = True
        ob.put("array", np.array(w.data, dtype=np.float64))
        ob.put("version", w._version)
    if hidden:
        with steps.case(C_HIDDEN):
            x = Variable(np.ones((2, 3)))
            steps.call("mul_", Variable.mul_, x, 3.0)
            steps.call("add_", Variable.add_, x, Variable(np.array([1.0, 2.0, 3.0])))
            ob.put("array", np.array(x.data, dtype=np.float64))
            ob.put("version", x._version)


def _after(ob: Observer, x: Any, array: np.ndarray, out: Any = _MISSING) -> None:
    """What a call on ``x`` left: its array (a copy), whether it is still x's, its version, and
    whether the call returned x."""
    if out is not _MISSING:
        ob.put("returned x", out is x)
        ob.put("out", repr(out))
    ob.put("same array", x.data is array)
    ob.put("array", np.array(array, dtype=np.float64))
    ob.put("version", x._version)


def judge(ck: Checker, obs: Observations) -> None:
    setup = obs.case(ck, SETUP, what="your Variable")
    missing = setup["missing"]
    ck.check(setup["is a class"] is True and not missing, f"Variable has no {', '.join(missing)}.",
             hint=HINTS["ops.setup"])
    if setup["sees GradMode"] is not True:
        ck.fail("the in-place methods cannot see GradMode.", hint=HINTS["ops.grad-mode"])
    what = "your in-place operations"
    for name, (data, other) in cases(obs.seed)[0].items():
        title = _op_case(name)
        with ck.case(title):
            seen = obs.case(ck, title, what=what)
            ran(ck, seen, name, HINTS["ops.traceback"].format(name=name))
            ck.check(seen["returned x"] is True, f"x.{name}(...) did not return x.",
                     received=seen["out"], hint=HINTS["ops.return-self"])
            ck.check(seen["same array"] is True, f"x.{name}(...) gave x a new array.",
                     hint=HINTS["ops.same-array"])
            op = OPS[name]
            ck.close(seen["array"], op(data, other), what=f"x.data after x.{name}(other)",
                     mistakes=[(data, f"the data did not change: the update of {name} "
                                      + HINTS["ops.unchanged"]),
                               (op(other, data), HINTS["ops.swapped"])])
            before, version = seen["before"], seen["version"]
            ck.check(version == before + 1, f"x.{name}(...) did not count one change.",
                     expected=before + 1, received=version,
                     hint=HINTS["ops.bump"] if version == before else HINTS["ops.bump-once"])
    _judge_setitem_zero(ck, obs, what)
    _judge_refusals(ck, obs, what)
    ck.done()


def _judge_setitem_zero(ck: Checker, obs: Observations, what: str) -> None:
    with ck.case(C_SETITEM):
        seen = obs.case(ck, C_SETITEM, what=what)
        ran(ck, seen, "[1:3]")
        ck.check(seen["same array"] is True, "x[key] = value gave x a new array.",
                 hint=HINTS["ops.setitem-array"])
        ck.close(seen["array"], [0.0, 5.0, 6.0, 0.0], what="x.data after x[1:3] = [5, 6]")
        ck.check(seen["version"] == 1, "x[key] = value did not count one change.",
                 expected=1, received=seen["version"], hint=HINTS["ops.bump-one"])
        ran(ck, seen, "[0]")
        ck.close(seen["array[0]"], 2.0, what="x.data[0] after x[0] = 2.0",
                 hint=HINTS["ops.number"])
    with ck.case(C_ZERO):
        seen = obs.case(ck, C_ZERO, what=what)
        ran(ck, seen, "zero_")
        ck.check(seen["returned x"] is True, "x.zero_() did not return x.", received=seen["out"],
                 hint=HINTS["ops.zero-return"])
        ck.check(seen["same array"] is True, "x.zero_() gave x a new array.",
                 hint=HINTS["ops.zero-in-place"])
        ck.close(seen["array"], np.zeros((2, 3)), what="x.data after zero_()")
        ck.check(seen["version"] == 1, "x.zero_() did not count one change.", expected=1,
                 received=seen["version"], hint=HINTS["ops.bump-one"])


def _judge_refusals(ck: Checker, obs: Observations, what: str) -> None:
    for label in REFUSALS:
        title = _refusal_case(label)
        with ck.case(title):
            seen = obs.case(ck, title, what=what)
            expect_raised(ck, seen, "raised", label, "RuntimeError", HINTS["ops.refuse"])
            ck.check(np.array_equal(seen["array"], [1.0, 2.0]) and seen["version"] == seen["before"],
                     f"{label} was refused, but only after it had changed the data or the "
                     "version.", hint=HINTS["ops.check-first"])
    with ck.case(C_OFF):
        seen = obs.case(ck, C_OFF, what=what)
        ran(ck, seen, "sub_", HINTS["ops.allowed"])
        ck.close(seen["array"], [0.5, 1.5], what="w after w.sub_(0.5) with recording off")
        ck.check(seen["version"] == 1, "the allowed update was not counted.", expected=1,
                 received=seen["version"], hint=HINTS["ops.bump-every"])
    if obs.hidden:
        with ck.case(C_HIDDEN):
            seen = obs.case(ck, C_HIDDEN, what=what)
            ran(ck, seen, "mul_")
            ran(ck, seen, "add_")
            ck.close(seen["array"], np.array([[4.0, 5.0, 6.0]] * 2), what="x.data")
            ck.check(seen["version"] == 2, "two calls did not count two changes.")
