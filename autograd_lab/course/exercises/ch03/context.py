"""Check the learner's ``Context``: a new node has no inputs, no flags and saved nothing;
``save_for_backward`` keeps the tensors on this node, in ``_saved`` (chapter 06 reads it);
``saved_tensors`` gives them back as a tuple, the same objects; ``release`` frees them
(``_saved`` becomes None), after which ``saved_tensors`` raises RuntimeError mentioning
retain_graph. Only the Context is used."""
from __future__ import annotations

from typing import Any

from .._common import Checker, format_value
from .._exercise import Mistake
from .._observe import Case, Observations, Observer, Raised
from ._shared import FAILED, call, ok
from .messages import HINTS

ID = "ch03-context"
PARTS: tuple[str, ...] = ()

_INIT_TO_SAVE = (
    "    function = None          # the Function class; set on each Function's node class\n\n"
    "    def __init__(self):\n        ### BEGIN SOLUTION\n        self.inputs = ()\n"
    "        self.needs_input_grad = ()\n        self._saved = ()\n        ### END SOLUTION\n\n"
    "    def save_for_backward(self, *tensors):\n"
    '        """Keep what backward will need (call it once, in forward)."""\n'
    "        ### BEGIN SOLUTION\n        self._saved = tensors\n")
_SAVE_TO_READ = (
    "        self._saved = tensors\n        ### END SOLUTION\n\n    @property\n"
    "    def saved_tensors(self):\n        ### BEGIN SOLUTION\n        if self._saved is None:\n"
    "            raise RuntimeError(_FREED.format(name=type(self).__name__))\n"
    "        return tuple(self._saved)")
_READ_TO_RELEASE = (
    "        if self._saved is None:\n"
    "            raise RuntimeError(_FREED.format(name=type(self).__name__))\n"
    "        return tuple(self._saved)\n        ### END SOLUTION\n\n    def release(self):\n"
    '        """Free the saved tensors (the engine calls this after using the node)."""\n'
    "        ### BEGIN SOLUTION\n        self._saved = None\n")

MISTAKES = (
    Mistake("saved on the class", (_INIT_TO_SAVE, _INIT_TO_SAVE.replace(
        "    function = None", "    _saved = ()\n    function = None").replace(
        "        self._saved = ()\n", "").replace("self._saved = tensors",
                                               "Context._saved = tensors")),
            None, "context.shared"),
    Mistake("release empties instead of freeing",
            ("        self._saved = None\n        ### END SOLUTION\n\n    def __repr__",
             "        self._saved = ()\n        ### END SOLUTION\n\n    def __repr__"), None,
            "context.freed"),
    Mistake("saved_tensors gives a list", ("        return tuple(self._saved)",
                                           "        return list(self._saved)"), None,
            "context.tuple"),
    Mistake("a new node without _saved", ("        self._saved = ()\n", ""), None,
            "context.new-saved"),
    Mistake("the tensors under another name", (_SAVE_TO_READ, _SAVE_TO_READ.replace(
        "self._saved = tensors", "self._kept = tensors").replace(
        "tuple(self._saved)", "tuple(getattr(self, '_kept', ()))")), None,
            "context.saved-attribute"),
    Mistake("freed marked by a string", (_READ_TO_RELEASE, _READ_TO_RELEASE.replace(
        "is None", '== "freed"').replace("self._saved = None", 'self._saved = "freed"')), None,
            "context.saved-none"),
)

C_NEW = "a new node: no inputs, no flags, nothing saved"
C_SAVE = "save_for_backward(a, b), then saved_tensors gives (a, b)"
C_OWN = "each node keeps its own tensors"
C_NONE = "save_for_backward(None, c) keeps None in its place"
C_RELEASE = "after release(), saved_tensors raises RuntimeError naming retain_graph"
_MISSING = "no attribute"


class _Tensor:
    """A stand-in saved tensor (the Context check needs no Variable)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<tensor {self.name}>"


# -- observe ----------------------------------------------------------------------------------
def _text(value: Any) -> str:
    try:
        return format_value(value)
    except Exception:  # noqa: BLE001 - a learner's repr may raise
        return f"<{type(value).__name__}>"


def _listing(value: Any) -> dict[str, Any]:
    """A sequence the learner's node gave: its type's name, its items (a stand-in tensor as its
    name, None as None, anything else as its type's name) and how it prints."""
    try:
        items: Any = [v.name if type(v) is _Tensor else None if v is None
                      else f"<{type(v).__name__}>" for v in tuple(value)]
    except Exception:  # noqa: BLE001 - not a sequence
        items = None
    return {"type": type(value).__name__, "items": items, "text": _text(value)}


def _attribute(ctx: Any, name: str) -> Any:
    value = getattr(ctx, name, _MISSING)
    return _MISSING if value is _MISSING else _listing(value)


def _saved(ob: Observer, key: str, ctx: Any) -> Any:
    got = call(ob, key, lambda: ctx.saved_tensors)
    if got is not FAILED:
        ob.put(key, _listing(got))
    return got


def observe(ob: Observer, Context: type[Any], *, seed: int, hidden: bool) -> None:
    with ob.case("setup"):
        ob.put("is class", isinstance(Context, type))
        ob.put("text", _text(Context))
    if not isinstance(Context, type):
        return
    with ob.case(C_NEW):
        ctx = call(ob, "new", Context)
        if ctx is not FAILED:
            ob.put("inputs", _attribute(ctx, "inputs"))
            ob.put("needs_input_grad", _attribute(ctx, "needs_input_grad"))
            _saved(ob, "saved", ctx)
    with ob.case(C_SAVE):
        ctx = call(ob, "new", Context)
        if ctx is not FAILED and call(ob, "save", ctx.save_for_backward, _Tensor("a"),
                                      _Tensor("b")) is not FAILED:
            if _saved(ob, "saved", ctx) is not FAILED and \
                    _saved(ob, "again", ctx) is not FAILED:
                ob.put("_saved", _attribute(ctx, "_saved"))
    with ob.case(C_OWN):
        first, second = call(ob, "new", Context), call(ob, "new 2", Context)
        if FAILED not in (first, second) and \
                call(ob, "save", first.save_for_backward, _Tensor("a")) is not FAILED and \
                call(ob, "save 2", second.save_for_backward, _Tensor("b")) is not FAILED and \
                _saved(ob, "first", first) is not FAILED:
            third = call(ob, "new 3", Context)
            if third is not FAILED:
                _saved(ob, "fresh", third)
    with ob.case(C_NONE):
        ctx = call(ob, "new", Context)
        if ctx is not FAILED and call(ob, "save", ctx.save_for_backward, None,
                                      _Tensor("c")) is not FAILED:
            _saved(ob, "saved", ctx)
    with ob.case(C_RELEASE):
        ctx, other = call(ob, "new", Context), call(ob, "new 2", Context)
        if FAILED not in (ctx, other) and \
                call(ob, "save", ctx.save_for_backward, _Tensor("a")) is not FAILED and \
                call(ob, "save 2", other.save_for_backward, _Tensor("b")) is not FAILED and \
                call(ob, "release", ctx.release) is not FAILED:
            returned = ob.attempt("freed", lambda: ctx.saved_tensors)
            ob.put("returned", _text(returned))
            _saved(ob, "other", other)
            ob.put("_saved", _attribute(ctx, "_saved"))
            ob.put("_saved is None", getattr(ctx, "_saved", _MISSING) is None)


# -- judge ------------------------------------------------------------------------------------
def _new(ck: Checker, seen: Case, key: str = "new") -> None:
    ok(ck, seen, key, "your Context", HINTS["context.new"])


def _got(ck: Checker, seen: Case, key: str, hint: str) -> dict[str, Any]:
    ok(ck, seen, key, "your saved_tensors", hint)
    return seen[key]


def _empty(value: Any) -> bool:
    return value != _MISSING and (value["items"] == [] or value["text"] in ("None", "0", "''"))


def _received(value: Any, attribute: str = "") -> str:
    return value["text"] if isinstance(value, dict) else f"no attribute {attribute}".strip()


def judge(ck: Checker, obs: Observations) -> None:
    seen = obs.case(ck, "setup")
    ck.check(seen["is class"], "Context is not a class.", received=seen["text"],
             hint=HINTS["context.class"])
    with ck.case(C_NEW):
        seen = obs.case(ck, C_NEW, what="your Context")
        _new(ck, seen)
        inputs, needs = seen["inputs"], seen["needs_input_grad"]
        ck.check(_empty(inputs), "a new node has no empty inputs.",
                 received=_received(inputs), hint=HINTS["context.inputs"])
        ck.check(needs != _MISSING and needs["items"] == [],
                 "a new node has no empty needs_input_grad.", received=_received(needs),
                 hint=HINTS["context.needs"])
        got = _got(ck, seen, "saved", HINTS["context.new-saved"])
        ck.check(got["type"] == "tuple", "saved_tensors is not a tuple.", expected="()",
                 received=got["text"], hint=HINTS["context.tuple"])
        ck.check(got["items"] == [], "a new node's saved_tensors is not ().", expected=(),
                 received=got["text"], hint=HINTS["context.empty"])
    with ck.case(C_SAVE):
        _judge_save(ck, obs.case(ck, C_SAVE, what="your save_for_backward"))
    with ck.case(C_OWN):
        seen = obs.case(ck, C_OWN, what="your save_for_backward")
        _new(ck, seen)
        _new(ck, seen, "new 2")
        ok(ck, seen, "save", "your save_for_backward")
        ok(ck, seen, "save 2", "your save_for_backward")
        got = _got(ck, seen, "first", HINTS["context.on-self"])
        ck.check(got["items"] == ["a"], "the first node gave back another node's tensors.",
                 expected="(a,)", received=got["text"], hint=HINTS["context.shared"])
        _new(ck, seen, "new 3")
        fresh = _got(ck, seen, "fresh", HINTS["context.new-nothing"])
        ck.check(fresh["type"] == "tuple" and fresh["items"] == [],
                 "a new node sees tensors saved by other nodes.", hint=HINTS["context.fresh"])
    with ck.case(C_NONE):
        seen = obs.case(ck, C_NONE, what="your save_for_backward")
        _new(ck, seen)
        ok(ck, seen, "save", "your save_for_backward")
        got = _got(ck, seen, "saved", HINTS["context.none-saved"])
        ck.check(got["items"] == [None, "c"], "saved_tensors did not give (None, c).",
                 received=got["text"], hint=HINTS["context.none-kept"])
    with ck.case(C_RELEASE):
        _judge_release(ck, obs.case(ck, C_RELEASE, what="your release"))
    ck.done()


def _judge_release(ck: Checker, seen: Case) -> None:
    _new(ck, seen)
    _new(ck, seen, "new 2")
    ok(ck, seen, "save", "your save_for_backward")
    ok(ck, seen, "save 2", "your save_for_backward")
    ok(ck, seen, "release", "your release")
    err = seen["freed"]
    if err is None:
        ck.fail("your saved_tensors did not raise.", expected="RuntimeError",
                received=f"it returned {seen['returned']}", hint=HINTS["context.freed"])
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError"):
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a("RuntimeError"):
        ck.fail("your saved_tensors raised the wrong kind of error.", expected="RuntimeError",
                received=f"{err.name}: {err.message}", hint=HINTS["context.freed"])
    ck.check("retain_graph" in err.message, "the error does not say how to fix it.",
             received=err.message, hint=HINTS["context.retain-graph"])
    got = _got(ck, seen, "other", HINTS["context.others-kept"])
    ck.check(got["items"] is not None and len(got["items"]) == 1,
             "releasing one node freed another node's tensors.", received=got["text"],
             hint=HINTS["context.release-self"])
    ck.check(seen["_saved is None"], "after release() the node's _saved is not None.",
             expected="ctx._saved is None", received=_received(seen["_saved"], "_saved"),
             hint=HINTS["context.saved-none"])


def _judge_save(ck: Checker, seen: Case) -> None:
    _new(ck, seen)
    ok(ck, seen, "save", "your save_for_backward")
    got = _got(ck, seen, "saved", HINTS["context.give-back"])
    ck.check(got["type"] == "tuple", "saved_tensors is not a tuple.", expected="(a, b)",
             received=got["text"], hint=HINTS["context.tuple-order"])
    ck.check(got["items"] == ["a", "b"],
             "saved_tensors did not give back the saved objects, in order.",
             expected="(a, b)", received=got["text"], hint=HINTS["context.same-objects"])
    again = _got(ck, seen, "again", HINTS["context.read-twice"])
    ck.check(again["items"] == ["a", "b"], "reading saved_tensors a second time failed.",
             received=again["text"], hint=HINTS["context.read-only"])
    kept = seen["_saved"]
    ck.check(kept != _MISSING and kept["type"] in ("tuple", "list")
             and kept["items"] == ["a", "b"],
             "the node does not keep the saved tensors in its attribute _saved.",
             expected="ctx._saved == (a, b)", received=_received(kept, "_saved"),
             hint=HINTS["context.saved-attribute"])
