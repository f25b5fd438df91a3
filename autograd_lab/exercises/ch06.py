"""Checkers for chapter 06, Grad modes and in-place operations."""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import Checker, library

__all__ = ["RULES", "SNIPPETS", "VISIBLE_SNIPPETS", "snippet_raises", "ch06_predict_raises",
           "ch06_train_step", "ch06_version_check"]


# -- ch06-predict-raises ---------------------------------------------------------------------
# The snippets the learner predicts. The notebook shows exactly this code; the checker runs it
# to find the truth, so the answers come from the library itself, not from a table. None of
# them repeats a demo of the chapter: each applies one of its rules to a new case.
SNIPPETS: dict[str, str] = {
    "a": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        s = y.sum()
        y.add_(1)
        s.backward()
        """,
    "b": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.log()
        x.detach().mul_(2)
        y.sum().backward()
        """,
    "c": """\
        w = al.tensor([1.0, 2.0], requires_grad=True)
        with al.no_grad():
            with al.enable_grad():
                w.mul_(0.5)
        """,
    "d": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.clone()
        y[0] = 0.0
        (y * y).sum().backward()
        """,
    "e": """\
        x = al.tensor([0.5, -1.0], requires_grad=True)
        y = x.sigmoid()
        y.detach().clone().zero_()
        y.sum().backward()
        """,
    "f": """\
        x = al.tensor([1.0, 4.0], requires_grad=True)
        y = x.sqrt()
        y.mul_(1.0)
        y.sum().backward()
        """,
    "g": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        loss = (x * x).sum()
        with al.no_grad():
            x -= 0.1
        loss.backward()
        """,
    "h": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.tanh()
        z = y.detach()
        z = z + 1
        y.sum().backward()
        """,
}
VISIBLE_SNIPPETS = ("a", "b", "c", "d", "e", "f")

# For a wrong prediction: the rule the snippet hits, as a question to ask of it. Each names the
# rule and where to look, not the verdict of any other snippet.
RULES: dict[str, str] = {
    "a": "Look at what each operation saved and when: `sum` saves nothing but a shape, and "
         "`x * 2` keeps only what x's gradient reads, the 2. Which saved tensor does the "
         "in-place line change?",
    "b": "`detach()` shares memory *and* the version counter with the tensor it came from, so "
         "a change through the detached alias counts as a change of that tensor. What does "
         "`log` save for its backward?",
    "c": "`enable_grad` switches recording back on inside `no_grad`. What is the rule for an "
         "in-place change of a leaf that requires grad while recording is on?",
    "d": "A clone is a new, computed tensor, not a leaf, so changing it in place is recorded "
         "like any operation. Did anything save `y` *before* the change?",
    "e": "`clone()` copies the data into new memory with a fresh version counter. Which "
         "tensor does the in-place line change, and did `sigmoid` save it?",
    "f": "The version counter counts in-place operations, not changed values: `mul_(1.0)` "
         "still counts. What does `sqrt` save for its backward?",
    "g": "`no_grad` stops recording, but it does not stop the version counter. Which tensor "
         "did the product save, and what happens to it before backward?",
    "h": "`z = z + 1` is out of place: it makes a new tensor and rebinds the name. Is any "
         "tensor that `tanh` saved changed?",
}


def snippet_raises(code: str) -> bool:
    """Run one snippet (with ``al`` and ``np`` defined) and say whether it raised."""
    namespace: dict[str, Any] = {"al": library(), "np": np}
    try:
        exec(textwrap.dedent(code), namespace)  # noqa: S102 - our own fixed snippets
    except Exception:
        return True
    return False


def _verdict(raises: bool) -> str:
    return "raises" if raises else "runs"


def ch06_predict_raises(predictions: dict[str, bool], *, seed: int = 0,
                        hidden: bool = False) -> None:
    """Check ``predictions``: for each snippet name, True if it raises, False if it runs.

    The snippets are judged together: a failure says how many predictions are wrong and
    explains the rule behind the first wrong one, without confirming the others one by one.
    """
    ck = Checker("ch06-predict-raises", seed=seed, hidden=hidden)
    with ck.case("predictions is a dict with a True/False for every snippet"):
        ck.check(isinstance(predictions, dict), "predictions is not a dict.",
                 expected='a dict like {"a": True, "b": False, ...}',
                 received=type(predictions).__name__,
                 hint="Fill in the dict given in the exercise cell.")
        for name in SNIPPETS:
            ck.check(name in predictions, f"there is no prediction for snippet {name!r}.",
                     hint=f'Add an entry "{name}": True (raises) or False (runs).')
            value = predictions[name]
            ck.check(isinstance(value, (bool, np.bool_)),
                     f"the prediction for snippet {name!r} is not True or False.",
                     expected="True (it raises) or False (it runs)", received=value,
                     hint="Replace None (or a string) by True or False.")
    groups = [list(VISIBLE_SNIPPETS)]
    if hidden:
        groups.append([n for n in SNIPPETS if n not in VISIBLE_SNIPPETS])
    for names in groups:
        span = f"{', '.join(names[:-1])} and {names[-1]}"
        with ck.case(f"snippets {span}"):
            wrong = [n for n in names if bool(predictions[n]) != snippet_raises(SNIPPETS[n])]
            if wrong:
                first = wrong[0]
                said = bool(predictions[first])
                others = len(wrong) - 1
                more = (f" {others} more of snippets {span} "
                        f"{'is' if others == 1 else 'are'} wrong too." if others else
                        " It is the only wrong one among these.")
                ck.fail(f"{len(wrong)} of {len(names)} predictions are wrong. Snippet {first}: "
                        f"you predicted that it {_verdict(said)}, but it "
                        f"{_verdict(not said)}.{more}",
                        hint=f"{RULES[first]} Ask of every snippet: what did each operation "
                             "save for backward, and was it changed (through any alias) after "
                             "it was saved?")
    if not hidden:
        rest = [n for n in SNIPPETS if n not in VISIBLE_SNIPPETS]
        print(f"(Snippets {', '.join(rest)} are checked when the notebook is graded.)")
    ck.done()


# -- ch06-train-step -------------------------------------------------------------------------
def _reference_steps(w: np.ndarray, b: np.ndarray, X: np.ndarray, y: np.ndarray, lr: float,
                     steps: int) -> tuple[list[float], np.ndarray, np.ndarray]:
    losses = []
    for _ in range(steps):
        r = X @ w + b - y
        losses.append(float(np.mean(r ** 2)))
        gw = X.T @ (2 * r / r.size)
        gb = (2 * r / r.size).sum(axis=0)
        w, b = w - lr * gw, b - lr * gb
    return losses, w, b


def ch06_train_step(train_step: Callable[..., float], *, seed: int = 0,
                    hidden: bool = False) -> None:
    """Check ``train_step(w, b, X, y, lr) -> float``: one step of gradient descent on
    mean((X @ w + b - y) ** 2) that updates the leaves ``w`` and ``b`` in place under
    ``no_grad``, leaves no stale gradient behind, and returns the loss before the update."""
    ck = Checker("ch06-train-step", seed=seed, hidden=hidden)
    al = library()
    rng = ck.rng
    configs = [(8, 3, 0.1, 3)] + ([(20, 2, 0.05, 5), (5, 4, 0.2, 4)] if hidden else [])
    inplace_hint = ("Update the parameters in place inside `with al.no_grad():` "
                    "(w -= lr * w.grad), then clear the gradients (w.grad = None or "
                    "w.grad.zero_()).")
    for n, d, lr, steps in configs:
        X = np.round(rng.normal(size=(n, d)), 3)
        y = np.round(rng.normal(size=(n, 1)), 3)
        w0 = np.round(rng.normal(size=(d, 1)), 3)
        b0 = np.round(rng.normal(size=(1,)), 3)
        losses, w_end, b_end = _reference_steps(w0, b0, X, y, lr, steps)
        w = al.Variable(w0.copy(), requires_grad=True)
        b = al.Variable(b0.copy(), requires_grad=True)
        w_obj, b_obj = w, b
        Xv, yv = al.Variable(X), al.Variable(y)
        _, w1, b1 = _reference_steps(w0, b0, X, y, lr, 1)
        with ck.case(f"one step on {n} points with {d} features (lr={lr})"):
            loss = ck.call(train_step, w, b, Xv, yv, lr,
                           hint="If this is the in-place error, that is the bug to fix: "
                                + inplace_hint)
            ck.check(loss is not None, "train_step returned None.", expected=losses[0],
                     hint="Return the loss before the update, as a float: loss.item().")
            ck.close(float(loss), losses[0], what="returned loss",
                     hint="Return mean((X @ w + b - y) ** 2) computed before the update.")
            ck.check(w.is_leaf and b.is_leaf and w.requires_grad and b.requires_grad,
                     "after the step, w or b is no longer a leaf that requires grad.",
                     hint="An update recorded in the graph (w = w - lr * w.grad outside "
                          "no_grad) turns the parameter into a computed Variable. "
                          + inplace_hint)
            moved = not np.allclose(w.data, w0)
            ck.check(moved, "the caller's w did not change.", expected=w1, received=w.data,
                     hint="Rebinding a name inside the function (w = w - lr * w.grad) makes a "
                          "new Variable the caller never sees. " + inplace_hint)
            ck.close(w.data, w1, what="w after one step", hint=inplace_hint,
                     mistakes=[(2 * w0 - w1, "You stepped uphill: subtract "
                                "lr * w.grad.")])
            ck.close(b.data, b1, what="b after one step", hint=inplace_hint)
        with ck.case(f"{steps} steps in a row match gradient descent"):
            for step in range(1, steps):
                loss = ck.call(train_step, w, b, Xv, yv, lr)
                ck.close(float(loss), losses[step], what=f"loss returned by step {step + 1}",
                         hint="Gradients accumulate in .grad across backward calls: clear them "
                              "every step (w.grad = None, or w.grad.zero_() under no_grad).")
            ck.check(w is w_obj and b is b_obj, "the parameters were replaced.",
                     hint=inplace_hint)
            ck.close(w.data, w_end, what=f"w after {steps} steps",
                     hint="Gradients accumulate in .grad across backward calls: clear them "
                          "every step.")
            ck.close(b.data, b_end, what=f"b after {steps} steps", hint=inplace_hint)
    ck.done()


# -- ch06-version-check ----------------------------------------------------------------------
class _Saved:
    """A stand-in tensor whose version the checker sets by hand (so the check of
    save_for_backward/saved_tensors does not depend on the rest of the learner's library)."""

    def __init__(self, name: str, version: int = 0) -> None:
        self.name, self._version, self.shape = name, version, (2,)
        self.data = np.zeros(2)

    def detach(self) -> _Saved:
        return _Saved(self.name + "'")

    clone = detach

    def __repr__(self) -> str:
        return f"<tensor {self.name} at version {self._version}>"


_RAISE_HINT = ("In save_for_backward keep, next to the tensors, the version each one has at "
               "that moment (t._version); in saved_tensors compare each stored number with the "
               "tensor's current _version and raise RuntimeError if they differ.")


def ch06_version_check(mygrad: Any, *, seed: int = 0, hidden: bool = False) -> None:
    """Check the learner's ``save_for_backward``/``saved_tensors``, installed on
    ``mygrad.Context``: the saved tensors come back as a tuple (None passes through), and a
    tensor changed in place after it was saved makes ``saved_tensors`` raise RuntimeError naming
    both versions -- so that, in the whole library, a stale saved tensor makes backward raise."""
    ck = Checker("ch06-version-check", seed=seed, hidden=hidden)
    rng = ck.rng
    Context = getattr(mygrad, "Context", None)
    with ck.case("Context has save_for_backward and a saved_tensors property"):
        ck.check(isinstance(Context, type), "mygrad has no class Context.",
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
        err = ck.raises(RuntimeError, lambda: ctx.saved_tensors,
                        hint="Read each version in save_for_backward (when the tensor is "
                             "saved), not in saved_tensors: by then it has already changed. "
                             + _RAISE_HINT)
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
        ck.check(hasattr(c, "mul_"), "Variable has no mul_: run the in-place cell above first.")
        ck.call(c.mul_, 2.0, hint="mul_ comes from the in-place cell above: run it first.")
        ck.raises(RuntimeError, y.backward,
                  hint="Mul saves both inputs with ctx.save_for_backward and its backward reads "
                       "ctx.saved_tensors, but here no error came: check that the last two lines "
                       "of the cell ran, installing your functions on Context.")
    with ck.case("in the library: a change through a detached alias is caught too"):
        x = mygrad.Variable(np.round(rng.normal(size=2), 3), requires_grad=True)
        y = ck.call(lambda: x.exp())
        loss = ck.call(lambda: (y * 1.0).sum())
        ck.call(lambda: y.detach().zero_())
        ck.raises(RuntimeError, loss.backward,
                  hint="Exp saves its output; detach() shares the version counter, so zeroing "
                       "the detached alias bumps the version the saved output reports.")
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
    ck.done()


# -- the loader's check of mygrad/grad_mode.py ------------------------------------------------
def mygrad_grad_mode(pkg: Any) -> None:
    """The loader's check of the learner's ``mygrad/grad_mode.py``: the shared check of
    :mod:`._library`, then the version rules of this chapter (add_, mul_, +=, x[...] = ...,
    zero_ bump the version; detach shares it; enable_grad; what in-place refuses)."""
    from ._library import grad_mode
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
