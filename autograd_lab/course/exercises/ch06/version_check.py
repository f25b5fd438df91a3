"""Check the learner's ``save_for_backward``/``saved_tensors``, installed on ``mygrad.Context``:
the saved tensors come back as a tuple (None passes through), and a tensor changed in place after
it was saved makes ``saved_tensors`` raise RuntimeError naming both versions -- so that, in the
whole library, a stale saved tensor makes backward raise. The version counting itself is other
exercises' (the course's ``_counter`` is used)."""
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

ID = "ch06-version-check"
PARTS: tuple[str, ...] = ()

_VERSIONS = "ctx._saved_versions = tuple(None if t is None else t._version for t in tensors)"

MISTAKES = (
    Mistake("no versions kept", (_VERSIONS, "ctx._saved_versions = ()"), None, "version.kept-none"),
    Mistake("the comparison left out", ("if t is not None and t._version != version:", "if False:"),
            None, "version.never-compared"),
    Mistake("only the first tensor returned", ("return tuple(ctx._saved)",
                                               "return tuple(ctx._saved[:1])"), None,
            "version.tuple"),
    Mistake("copies returned", ("return tuple(ctx._saved)",
                                "return tuple(t if t is None else t.detach() for t in ctx._saved)"),
            None, "version.objects"),
    Mistake("a message without the versions",
            ('f"is at version {t._version}; expected version {version} instead.")',
             '"is at another version than when it was saved.")'), None, "version.both"),
    Mistake("ValueError", ("raise RuntimeError(\n                f\"one of",
                           "raise ValueError(\n                f\"one of"), None, "version.raise"),
    Mistake("compared with 0", ("t._version != version", "t._version != 0"), None,
            "version.unchanged"),
    Mistake("the given freed check left out", ("    if ctx._saved is None:\n", "    if False:\n"),
            None, "version.freed"),
    Mistake("a version read of None", (_VERSIONS,
                                       "ctx._saved_versions = tuple(t._version for t in tensors)"),
            None, "version.none"),
)

C_CONTEXT = "Context has save_for_backward and a saved_tensors property"
C_UNCHANGED = "unchanged tensors come back, the same objects, as a tuple"
C_NONE = "None is saved and returned as None"
C_EMPTY = "a ctx that saved nothing gives ()"
C_OWN = "each ctx checks its own tensors"
C_SECOND = "two tensors saved, only the second changed: RuntimeError"
C_FREED = "after a backward without retain_graph, the freed message still comes"
C_MUL = "in the library: a * c, then c changed in place, makes backward raise"
C_ALIAS = "in the library: a change through a detached alias is caught too"
C_THREE = "three tensors, only the middle one changed: RuntimeError"
C_CORRECT = "in the library: a correct program still runs and gives x.grad"
UNPACK = "<lambda>"  # the name a failing read of ctx.saved_tensors is reported under


def _versions(rng: np.random.Generator, hidden: bool) -> tuple[int, int]:
    """The version a tensor is saved at, and the one it is changed to."""
    before = 2 if not hidden else int(rng.integers(1, 4))
    after = 5 if not hidden else int(rng.integers(5, 9))
    return before, after


def _fine(before: int) -> str:
    return f"a tensor saved at version {before} and not changed since is fine"


def _stale(before: int, after: int) -> str:
    return f"saved at version {before}, changed to version {after}: RuntimeError"


class _Saved:
    """A stand-in tensor whose version the checker sets by hand (so the check of
    save_for_backward/saved_tensors does not depend on the rest of the learner's library)."""

    def __init__(self, name: str, version: int = 0) -> None:
        self.name, self._version = name, version
        # what a message may name about the tensor, as the chapter's section 4 suggests
        self.data = np.zeros(2)
        self.shape, self.dtype, self.ndim = self.data.shape, self.data.dtype, self.data.ndim
        self.requires_grad, self.is_leaf, self.grad_fn = False, True, None

    def detach(self) -> _Saved:
        return _Saved(self.name + "'")

    clone = detach

    def __repr__(self) -> str:
        return f"<tensor {self.name} at version {self._version}>"


def _kept_versions(ctx: Any) -> list[Any]:
    """The numbers ctx keeps besides its tensors: ints, and tuples or lists of ints."""
    found = []
    for name, value in vars(ctx).items():
        if name == "_saved":
            continue
        items = value if isinstance(value, (tuple, list)) else [value]
        if items and all(isinstance(v, int) and not isinstance(v, bool) or v is None
                         for v in items):
            found.append(value)
    return found


def _counted_change(v: Any, change: Callable[[], Any], label: str, exercises: str) -> None:
    """Run ``change`` (an in-place change of ``v`` through the learner's in-place operations
    and detach). Where those fail to count it on ``v``'s version (``exercises``, checked on
    their own), make the change and count it here instead, and say so in one line naming them,
    so that the version check is judged on its own."""
    before = v._version
    try:
        change()
        failed = None if v._version == before + 1 else (
            f"{label} moved the version from {before} to {v._version}, not to {before + 1}")
    except Exception as err:  # noqa: BLE001 - the other exercise's failure, reported below
        failed = f"{label} raised {type(err).__name__}: {err}"
    if failed is None:
        return
    print(f"note: {failed} -- exercise {exercises} fails its own check; this check made the "
          "change and counted it itself.")
    counter = v.__dict__.get("_counter")
    if not (isinstance(counter, list) and len(counter) == 1):
        counter = v._counter = [v._version]
    counter[0] = before + 1
    v.data[...] = v.data * 2


def observe(ob: Observer, mygrad: Any, *, seed: int, hidden: bool) -> None:
    Variable = getattr(mygrad, "Variable", None)
    counters = _counter_namespaces(Variable) if isinstance(Variable, type) else []
    scope = getattr(getattr(Variable, "add_", None), "__globals__", {})
    rules: list[dict[str, Any]] = [scope] if "GradMode" in scope else []
    own_rules = scope.get("_check_inplace", _MISSING)
    with _with_course(counters, "_counter", _course_counter,
                      _own_counter(counters, Variable), "ch06-detach"), \
            _with_course(rules, "_check_inplace", _course_check_inplace(scope.get("GradMode")),
                         _own_rules_problem(own_rules) if rules else None,
                         "ch06-inplace-rules"):
        Context = getattr(mygrad, "Context", None)
        with ob.case(C_CONTEXT):
            ob.put("Context", repr(Context))
            ob.put("is a class", isinstance(Context, type))
            if isinstance(Context, type):
                ob.put("saved_tensors", repr(Context.__dict__.get("saved_tensors")))
                ob.put("a property", isinstance(Context.__dict__.get("saved_tensors"), property))
        if isinstance(Context, type):
            rng = np.random.default_rng(seed)
            steps = Steps(ob)
            _observe_contexts(steps, Context, rng, hidden)
            _observe_library(steps, mygrad, Context, rng, hidden)


def _observe_contexts(steps: Steps, Context: type, rng: np.random.Generator,
                      hidden: bool) -> None:
    ob = steps.ob

    def unpack(key: str, ctx: Any) -> Any:
        return steps.call(key, lambda: ctx.saved_tensors)

    with steps.case(C_UNCHANGED):
        ctx = steps.call("Context()", Context)
        a, b = _Saved("a"), _Saved("b", 3)
        steps.call("save", ctx.save_for_backward, a, b)
        got = unpack("unpack", ctx)
        ob.put("got", repr(got))
        if ob.put("a tuple of 2", isinstance(got, tuple) and len(got) == 2):
            ob.put("the saved objects", got[0] is a and got[1] is b)
        again = unpack("unpack again", ctx)
        ob.put("again", isinstance(again, (tuple, list)) and len(again) == 2
               and again[0] is a and again[1] is b)
    with steps.case(C_NONE):
        ctx = steps.call("Context()", Context)
        a = _Saved("a")
        steps.call("save", ctx.save_for_backward, None, a)
        got = unpack("unpack", ctx)
        ob.put("got", repr(got))
        ob.put("(None, a)", len(got) == 2 and got[0] is None and got[1] is a)
    with steps.case(C_EMPTY):
        got = unpack("unpack", steps.call("Context()", Context))
        ob.put("got", repr(got))
        ob.put("length", len(tuple(got)))
    before, after = _versions(rng, hidden)
    with steps.case(_fine(before)):
        ctx = steps.call("Context()", Context)
        a = _Saved("a", before)
        steps.call("save", ctx.save_for_backward, a)
        ob.put("the saved one", unpack("unpack", ctx)[0] is a)
    with steps.case(_stale(before, after)):
        ctx = steps.call("Context()", Context)
        a = _Saved("a", before)
        steps.call("save", ctx.save_for_backward, a)
        a._version = after
        ob.put("raised returned repr", repr(ob.attempt("raised", lambda: ctx.saved_tensors)))
        ob.put("kept", _kept_versions(ctx))  # what save_for_backward kept, known only now
    with steps.case(C_OWN):
        first, second = steps.call("Context()", Context), steps.call("Context() 2", Context)
        a, b = _Saved("a"), _Saved("b")
        steps.call("save", first.save_for_backward, a)
        steps.call("save 2", second.save_for_backward, b)
        b._version += 1
        got = unpack("unpack", first)
        ob.put("got", repr(got))
        ob.put("its own", got[0] is a)
        ob.put("raised returned repr", repr(ob.attempt("raised", lambda: second.saved_tensors)))
    with steps.case(C_SECOND):
        ctx = steps.call("Context()", Context)
        a, b = _Saved("a", 1), _Saved("b", 1)
        steps.call("save", ctx.save_for_backward, a, b)
        b._version += 1
        ob.put("raised returned repr", repr(ob.attempt("raised", lambda: ctx.saved_tensors)))
    with steps.case(C_FREED):
        ctx = steps.call("Context()", Context)
        steps.call("save", ctx.save_for_backward, _Saved("a"))
        ctx.release()
        ob.put("raised returned repr", repr(ob.attempt("raised", lambda: ctx.saved_tensors)))


def _observe_library(steps: Steps, mygrad: Any, Context: type, rng: np.random.Generator,
                     hidden: bool) -> None:
    ob = steps.ob
    with steps.case(C_MUL):
        a = mygrad.Variable(np.round(rng.normal(size=3), 3), requires_grad=True)
        c = mygrad.Variable(np.round(rng.normal(size=3), 3))
        y = steps.call("product", lambda: (a * c).sum())
        _counted_change(c, lambda: c.mul_(2.0), "c.mul_(2.0)", "ch06-inplace-ops")
        ob.put("raised returned repr", repr(ob.attempt("raised", y.backward)))
    with steps.case(C_ALIAS):
        x = mygrad.Variable(np.round(rng.normal(size=2), 3), requires_grad=True)
        y = steps.call("exp", lambda: x.exp())
        loss = steps.call("loss", lambda: (y * 1.0).sum())
        _counted_change(y, lambda: y.detach().zero_(), "y.detach().zero_()",
                        "ch06-detach or ch06-inplace-ops")
        ob.put("raised returned repr", repr(ob.attempt("raised", loss.backward)))
    if hidden:
        with steps.case(C_THREE):
            ctx = steps.call("Context()", Context)
            ts = [_Saved(n, int(rng.integers(0, 3))) for n in "pqr"]
            steps.call("save", ctx.save_for_backward, *ts)
            ts[1]._version += 1
            ob.put("raised returned repr", repr(ob.attempt("raised", lambda: ctx.saved_tensors)))
        with steps.case(C_CORRECT):
            x = mygrad.Variable(np.array([0.5, -1.0]), requires_grad=True)
            steps.call("backward", lambda: (x * x).sum().backward())
            ob.put("grad", np.array(x.grad.data, dtype=np.float64))


def judge(ck: Checker, obs: Observations) -> None:
    what = "your saved_tensors"
    with ck.case(C_CONTEXT):
        seen = obs.case(ck, C_CONTEXT, what=what)
        if seen["is a class"] is not True:
            ck.fail("mygrad has no class Context.", received=seen["Context"],
                    hint=HINTS["version.package"])
        ck.check(seen["a property"] is True, "Context.saved_tensors is not a property.",
                 received=seen["saved_tensors"], hint=HINTS["version.property"])
    _judge_contexts(ck, obs, what)
    before, after = _versions(np.random.default_rng(obs.seed), obs.hidden)
    _judge_versions(ck, obs, what, before, after)
    _judge_library(ck, obs, what)
    ck.done()


def _new_ctx(ck: Checker, seen: Any, key: str = "Context()") -> None:
    ran(ck, seen, key, HINTS["version.context"])


def _judge_contexts(ck: Checker, obs: Observations, what: str) -> None:
    with ck.case(C_UNCHANGED):
        seen = obs.case(ck, C_UNCHANGED, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "save")
        ran(ck, seen, "unpack", HINTS["version.unchanged"])
        ck.check(seen["a tuple of 2"] is True, "saved_tensors is not a tuple of 2.",
                 expected="(a, b)", received=seen["got"], hint=HINTS["version.tuple"])
        ck.check(seen["the saved objects"] is True, "saved_tensors did not return the saved "
                 "objects.", expected="(a, b)", received=seen["got"], hint=HINTS["version.objects"])
        ran(ck, seen, "unpack again", HINTS["version.raise"])
        ck.check(seen["again"] is True, "reading saved_tensors twice failed.",
                 hint=HINTS["version.twice"])
    with ck.case(C_NONE):
        seen = obs.case(ck, C_NONE, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "save", HINTS["version.none"])
        ran(ck, seen, "unpack", HINTS["version.none-unpack"])
        ck.check(seen["(None, a)"] is True, "saved_tensors did not return (None, a).",
                 received=seen["got"], hint=HINTS["version.none-kept"])
    with ck.case(C_EMPTY):
        seen = obs.case(ck, C_EMPTY, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "unpack", HINTS["version.empty"])
        ck.check(seen["length"] == 0, "a new ctx's saved_tensors is not empty.",
                 received=seen["got"], hint=HINTS["version.empty-global"])


def _judge_versions(ck: Checker, obs: Observations, what: str, before: int, after: int) -> None:
    title = _fine(before)
    with ck.case(title):
        seen = obs.case(ck, title, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "save")
        ran(ck, seen, "unpack", HINTS["version.not-zero"])
        ck.check(seen["the saved one"] is True, "saved_tensors did not return the saved tensor.")
    title = _stale(before, after)
    with ck.case(title):
        seen = obs.case(ck, title, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "save")
        if seen["raised"] is None:
            ck.fail("your saved_tensors did not raise although the tensor changed after it was "
                    "saved.", expected="RuntimeError",
                    received=f"it returned the tensors (the tensor is at version {after})",
                    hint=_never_raised_hint(seen["kept"], before))
        message = expect_raised(ck, seen, "raised", UNPACK, "RuntimeError",
                                HINTS["version.raise"]).message
        ck.check(str(before) in message and str(after) in message,
                 "the error message does not name both versions.",
                 expected=f"a message containing {after} (now) and {before} (when saved)",
                 received=message, hint=HINTS["version.both"])
    with ck.case(C_OWN):
        seen = obs.case(ck, C_OWN, what=what)
        _new_ctx(ck, seen)
        _new_ctx(ck, seen, "Context() 2")
        ran(ck, seen, "save")
        ran(ck, seen, "save 2")
        ran(ck, seen, "unpack", HINTS["version.own-ctx"])
        ck.check(seen["its own"] is True, "the first ctx did not return its own tensor.",
                 received=seen["got"], hint=HINTS["version.own-ctx"])
        expect_raised(ck, seen, "raised", UNPACK, "RuntimeError", HINTS["version.raise"])
    with ck.case(C_SECOND):
        seen = obs.case(ck, C_SECOND, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "save")
        expect_raised(ck, seen, "raised", UNPACK, "RuntimeError", HINTS["version.every"])
    with ck.case(C_FREED):
        seen = obs.case(ck, C_FREED, what=what)
        _new_ctx(ck, seen)
        ran(ck, seen, "save")
        err = expect_raised(ck, seen, "raised", UNPACK, "RuntimeError", HINTS["version.freed"])
        ck.check("retain_graph" in err.message, "the freed-buffers message is gone.",
                 received=err.message, hint=HINTS["version.freed-message"])


def _judge_library(ck: Checker, obs: Observations, what: str) -> None:
    with ck.case(C_MUL):
        seen = obs.case(ck, C_MUL, what=what)
        ran(ck, seen, "product")
        expect_raised(ck, seen, "raised", "backward", "RuntimeError", HINTS["version.library-mul"])
    with ck.case(C_ALIAS):
        seen = obs.case(ck, C_ALIAS, what=what)
        ran(ck, seen, "exp")
        ran(ck, seen, "loss")
        expect_raised(ck, seen, "raised", "backward", "RuntimeError", HINTS["version.library-exp"])
    if obs.hidden:
        with ck.case(C_THREE):
            seen = obs.case(ck, C_THREE, what=what)
            _new_ctx(ck, seen)
            ran(ck, seen, "save")
            expect_raised(ck, seen, "raised", UNPACK, "RuntimeError",
                          HINTS["version.every-middle"])
        with ck.case(C_CORRECT):
            seen = obs.case(ck, C_CORRECT, what=what)
            ran(ck, seen, "backward")
            ck.close(seen["grad"], 2 * np.array([0.5, -1.0]), what="x.grad of sum(x * x)")


def _never_raised_hint(kept: Any, before: int) -> str:
    """Why saved_tensors did not raise, from what save_for_backward kept on ctx (observed)."""
    kept = kept if isinstance(kept, list) else []
    if any(before in (v if isinstance(v, (tuple, list)) else [v]) for v in kept):
        return (HINTS["version.kept-right"].format(before=before) + " "
                + HINTS["version.never-compared"])
    if kept:
        return HINTS["version.kept-other"].format(before=before) + " " + HINTS["version.raise"]
    return HINTS["version.kept-none"] + " " + HINTS["version.raise"]
