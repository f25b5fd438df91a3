"""The chapter 06 checkers not yet written as ``observe`` and ``judge``, and the course's pieces
(``_counter``, ``_check_inplace``) the checks use in place of a learner's failing one."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from ._shared import (_MISSING, _counter_namespaces, _course_check_inplace,
                      _course_counter, _own_counter, _own_rules_problem, _with_course)

__all__ = ["ch06_version_check", "mygrad_grad_mode"]


# -- ch06-version-check ----------------------------------------------------------------------
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


_RAISE_HINT = ("In save_for_backward keep, next to the tensors, the version each one has at "
               "that moment (t._version); in saved_tensors compare each stored number with the "
               "tensor's current _version and raise RuntimeError if they differ.")


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


def _never_raised_hint(ctx: Any, before: int) -> str:
    """Why saved_tensors did not raise: look at what save_for_backward kept on ctx."""
    kept = _kept_versions(ctx)
    if any(before in (v if isinstance(v, (tuple, list)) else [v]) for v in kept):
        return (f"save_for_backward kept the version the tensor had when it was saved "
                f"({before}), so that half is right. saved_tensors never compared it with the "
                "tensor's _version now: compare each kept number with the tensor's current "
                "_version and raise RuntimeError when they differ.")
    if kept:
        return ("save_for_backward kept numbers, but not the version the tensor had at that "
                f"moment ({before}): read t._version for each tensor when it is saved. "
                + _RAISE_HINT)
    return ("save_for_backward kept no version next to the tensors (ctx holds only the "
            "tensors), so saved_tensors has nothing to compare with. " + _RAISE_HINT)


def ch06_version_check(mygrad: Any, *, seed: int = 0, hidden: bool = False) -> None:
    """Check the learner's ``save_for_backward``/``saved_tensors``, installed on
    ``mygrad.Context``: the saved tensors come back as a tuple (None passes through), and a
    tensor changed in place after it was saved makes ``saved_tensors`` raise RuntimeError naming
    both versions -- so that, in the whole library, a stale saved tensor makes backward raise.
    The version counting itself is other exercises' (the course's ``_counter`` is used)."""
    ck = Checker("ch06-version-check", seed=seed, hidden=hidden)
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
        _version_check_cases(ck, mygrad, hidden)
    ck.done()


def _version_check_cases(ck: Checker, mygrad: Any, hidden: bool) -> None:
    """The cases of ch06-version-check (with the course's _counter)."""
    rng = ck.rng
    Context = getattr(mygrad, "Context", None)
    with ck.case("Context has save_for_backward and a saved_tensors property"):
        if not isinstance(Context, type):
            ck.fail("mygrad has no class Context.",
                    received=Context, hint="Pass the package: check.ch06_version_check(mygrad).")
        ck.check(isinstance(Context.__dict__.get("saved_tensors"), property),
                 "Context.saved_tensors is not a property.",
                 received=Context.__dict__.get("saved_tensors"),
                 hint="Install it as a property: Context.saved_tensors = property(saved_tensors)"
                      ", so that ctx.saved_tensors (without parentheses) runs your function.")

    def new_ctx() -> Any:
        return ck.call(Context, hint="Context() must work without arguments.")

    def unpack(ctx: Any, hint: str = _RAISE_HINT) -> Any:
        return ck.call(lambda: ctx.saved_tensors, hint=hint)

    with ck.case("unchanged tensors come back, the same objects, as a tuple"):
        ctx = new_ctx()
        a, b = _Saved("a"), _Saved("b", 3)
        ck.call(ctx.save_for_backward, a, b)
        got = unpack(ctx, hint="Nothing changed since save_for_backward (b was saved at version "
                               "3), so nothing may raise: compare with the version recorded when "
                               "each tensor was saved, not with 0.")
        ck.check(isinstance(got, tuple) and len(got) == 2, "saved_tensors is not a tuple of 2.",
                 expected="(a, b)", received=got,
                 hint="Return tuple(...) of the saved tensors, in the order they were saved.")
        ck.check(got[0] is a and got[1] is b, "saved_tensors did not return the saved objects.",
                 expected="(a, b)", received=got,
                 hint="Return the tensors themselves: not copies, not their data, not the "
                      "versions.")
        again = unpack(ctx)
        ck.check(again[0] is a and again[1] is b, "reading saved_tensors twice failed.",
                 hint="saved_tensors must not consume what was saved.")
    with ck.case("None is saved and returned as None"):
        ctx = new_ctx()
        a = _Saved("a")
        ck.call(ctx.save_for_backward, None, a,
                hint="None has no _version: keep None for it instead of reading one.")
        got = unpack(ctx, hint="Skip the version check for a saved None.")
        ck.check(len(got) == 2 and got[0] is None and got[1] is a,
                 "saved_tensors did not return (None, a).", received=got,
                 hint="Store None as it is and skip the version check for it.")
    with ck.case("a ctx that saved nothing gives ()"):
        got = unpack(new_ctx(), hint="A new Context has _saved = () and nothing else (Add and "
                                     "Neg never call save_for_backward): when no versions were "
                                     "stored, there is nothing to compare.")
        ck.check(tuple(got) == (), "a new ctx's saved_tensors is not empty.", received=got,
                 hint="A new Context saved nothing, yet saved_tensors returned tensors: they "
                      "come from another ctx. Keep what was saved on ctx itself (ctx._saved), "
                      "not on Context or in a global.")
    before = 2 if not hidden else int(rng.integers(1, 4))
    after = 5 if not hidden else int(rng.integers(5, 9))
    with ck.case(f"a tensor saved at version {before} and not changed since is fine"):
        ctx = new_ctx()
        a = _Saved("a", before)
        ck.call(ctx.save_for_backward, a)
        got = unpack(ctx, hint="Compare with the version recorded when the tensor was saved, "
                               "not with 0: a tensor may have been changed before it was saved.")
        ck.check(got[0] is a, "saved_tensors did not return the saved tensor.")
    with ck.case(f"saved at version {before}, changed to version {after}: RuntimeError"):
        ctx = new_ctx()
        a = _Saved("a", before)
        ck.call(ctx.save_for_backward, a)
        a._version = after
        try:
            err = ck.raises(RuntimeError, lambda: ctx.saved_tensors, hint=_RAISE_HINT)
        except AssertionError as failure:
            if "did not raise" not in str(failure):
                raise
            # what save_for_backward kept is known only now (a lazy saved_tensors writes it)
            raise ck.error("your saved_tensors did not raise although the tensor changed "
                           "after it was saved.", expected="RuntimeError",
                           received=f"it returned the tensors (the tensor is at version {after})",
                           hint=_never_raised_hint(ctx, before)) from None
        message = str(err)
        ck.check(str(before) in message and str(after) in message,
                 "the error message does not name both versions.",
                 expected=f"a message containing {after} (now) and {before} (when saved)",
                 received=message,
                 hint="Say what happened and both numbers, like PyTorch: '... modified by an "
                      "inplace operation: ... is at version 5; expected version 2 instead.'")
    with ck.case("each ctx checks its own tensors"):
        first, second = new_ctx(), new_ctx()
        a, b = _Saved("a"), _Saved("b")
        ck.call(first.save_for_backward, a)
        ck.call(second.save_for_backward, b)
        b._version += 1
        got = unpack(first, hint="Keep what was saved on ctx (the instance), not on Context or "
                                 "in a global: every node of the graph has its own.")
        ck.check(got[0] is a, "the first ctx did not return its own tensor.", received=got,
                 hint="Keep what was saved on ctx (the instance), not on Context or in a "
                      "global: every node of the graph has its own.")
        ck.raises(RuntimeError, lambda: second.saved_tensors, hint=_RAISE_HINT)
    with ck.case("two tensors saved, only the second changed: RuntimeError"):
        ctx = new_ctx()
        a, b = _Saved("a", 1), _Saved("b", 1)
        ck.call(ctx.save_for_backward, a, b)
        b._version += 1
        ck.raises(RuntimeError, lambda: ctx.saved_tensors,
                  hint="Check every saved tensor, not only the first.")
    with ck.case("after a backward without retain_graph, the freed message still comes"):
        ctx = new_ctx()
        ck.call(ctx.save_for_backward, _Saved("a"))
        ctx.release()
        err = ck.raises(RuntimeError, lambda: ctx.saved_tensors,
                        hint="Keep the given first lines of saved_tensors: the engine frees the "
                             "saved tensors (ctx._saved = None) after a backward.")
        ck.check("retain_graph" in str(err), "the freed-buffers message is gone.",
                 received=str(err), hint="Keep the given first lines of saved_tensors.")
    with ck.case("in the library: a * c, then c changed in place, makes backward raise"):
        a = mygrad.Variable(np.round(rng.normal(size=3), 3), requires_grad=True)
        c = mygrad.Variable(np.round(rng.normal(size=3), 3))
        y = ck.call(lambda: (a * c).sum())
        _counted_change(c, lambda: c.mul_(2.0), "c.mul_(2.0)", "ch06-inplace-ops")
        ck.raises(RuntimeError, y.backward,
                  hint="c's version moved from 0 to 1 after Mul saved it, yet backward ran: "
                       "Mul's backward reads ctx.saved_tensors, so check that the last two "
                       "lines of your cell ran (they install your functions on Context) and "
                       "that save_for_backward keeps the versions of the tensors it saves.")
    with ck.case("in the library: a change through a detached alias is caught too"):
        x = mygrad.Variable(np.round(rng.normal(size=2), 3), requires_grad=True)
        y = ck.call(lambda: x.exp())
        loss = ck.call(lambda: (y * 1.0).sum())
        _counted_change(y, lambda: y.detach().zero_(), "y.detach().zero_()",
                        "ch06-detach or ch06-inplace-ops")
        ck.raises(RuntimeError, loss.backward,
                  hint="Exp saves its output y, and y's version moved after that, yet backward "
                       "ran: saved_tensors must compare every saved tensor's version, outputs "
                       "included.")
    if hidden:
        with ck.case("three tensors, only the middle one changed: RuntimeError"):
            ctx = new_ctx()
            ts = [_Saved(n, int(rng.integers(0, 3))) for n in "pqr"]
            ck.call(ctx.save_for_backward, *ts)
            ts[1]._version += 1
            ck.raises(RuntimeError, lambda: ctx.saved_tensors,
                      hint="Check every saved tensor, not only the first or the last.")
        with ck.case("in the library: a correct program still runs and gives x.grad"):
            x = mygrad.Variable(np.array([0.5, -1.0]), requires_grad=True)
            ck.call(lambda: (x * x).sum().backward())
            ck.close(x.grad.data, 2 * x.data, what="x.grad of sum(x * x)")


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


# -- the loader's check of mygrad/grad_mode.py ------------------------------------------------
def mygrad_grad_mode(pkg: Any) -> None:
    """The loader's check of the learner's ``mygrad/grad_mode.py``: the shared check of
    :mod:`._library`, then the version rules of this chapter (add_, mul_, +=, x[...] = ...,
    zero_ bump the version; detach shares it; enable_grad; what in-place refuses)."""
    from .._library import grad_mode
    grad_mode(pkg)
    ck = Checker("mygrad-grad-mode-versions")
    with ck.case("add_, mul_, sub_, +=, x[...] = and zero_ each bump the version by one"):
        x = pkg.Variable(np.array([1.0, 2.0, 3.0]))
        versions = [x._version]
        x.add_(1.0); versions.append(x._version)                  # noqa: E702
        x.mul_(2.0); versions.append(x._version)                  # noqa: E702
        x.sub_(1.0); versions.append(x._version)                  # noqa: E702
        same = x.__iadd__(1.0)                                     # what x += 1.0 does
        ck.check(same is x, "x += 1 did not give back the Variable.", received=same,
                 hint="__iadd__ must return self: Python binds its result to x again.")
        versions.append(x._version)
        x[0] = 5.0; versions.append(x._version)                   # noqa: E702
        x.zero_(); versions.append(x._version)                    # noqa: E702
        ck.check(versions == list(range(7)), "the versions did not count 0, 1, ..., 6.",
                 expected=list(range(7)), received=versions,
                 hint="Each in-place method calls bump_version(self) once.")
    with ck.case("detach shares the version counter; enable_grad records inside no_grad"):
        y = pkg.Variable(np.ones(2))
        d = y.detach()
        d.add_(1.0)
        ck.check(y._version == 1, "a change through detach() did not count for the original.",
                 hint="detach() shares the counter object, not a copy of its value.")
        w = pkg.Variable(np.ones(2), requires_grad=True)
        with pkg.no_grad():
            with pkg.enable_grad():
                z = w * 2
        ck.check(z.grad_fn is not None, "enable_grad inside no_grad did not record.")
    with ck.case("in-place on a leaf that requires grad is refused, allowed under no_grad"):
        w = pkg.Variable(np.ones(2), requires_grad=True)
        ck.raises(RuntimeError, w.add_, 1.0, hint="Refuse it while grad mode is on.")
        with pkg.no_grad():
            w.add_(1.0)
        ck.close(w.data, [2.0, 2.0], what="w after add_ under no_grad")
    ck.done()
