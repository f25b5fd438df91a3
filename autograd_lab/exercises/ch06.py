"""Checkers for chapter 06, Grad modes and in-place operations."""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import Checker, library

__all__ = ["SNIPPETS", "VISIBLE_SNIPPETS", "snippet_raises", "ch06_predict_raises",
           "ch06_train_step", "ch06_version_check"]


# -- ch06-predict-raises ---------------------------------------------------------------------
# The snippets the learner predicts. The notebook shows exactly this code; the checker runs it
# to find the truth, so the answers come from the library itself, not from a table.
SNIPPETS: dict[str, str] = {
    "a": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
        """,
    "b": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.add_(1)
        (y * y).sum().backward()
        """,
    "c": """\
        w = al.tensor([1.0, 2.0], requires_grad=True)
        w.mul_(0.5)
        """,
    "d": """\
        w = al.tensor([1.0, 2.0], requires_grad=True)
        with al.no_grad():
            w.mul_(0.5)
        """,
    "e": """\
        x = al.tensor([1.0, -2.0], requires_grad=True)
        y = x + 1
        z = y.relu()
        y.mul_(2)
        z.sum().backward()
        """,
    "f": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.tanh()
        y.detach().zero_()
        y.sum().backward()
        """,
    "g": """\
        x = al.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = al.tensor([[0.5], [-1.0]])
        y = x @ w
        w += 1
        y.sum().backward()
        """,
    "h": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        x.data[0] = 10.0
        y.backward()
        """,
}
VISIBLE_SNIPPETS = ("a", "b", "c", "d", "e", "f")

_WHY = {
    "a": "exp saves its output y for backward; y.add_(1) changes it afterwards.",
    "b": "x * 2 saves x (unchanged); y * y saves y after the add_, so backward sees the "
         "version it saved.",
    "c": "an in-place change to a leaf that requires grad, with grad mode on.",
    "d": "under no_grad an in-place update of a leaf is allowed: it is how parameters are "
         "updated.",
    "e": "relu saves its output z, not its input y, so changing y later does no harm.",
    "f": "detach() shares memory and the version counter: zeroing the detached view changes "
         "the output tanh saved.",
    "g": "matmul saves both operands, w included, even though w does not require grad.",
    "h": "x.data bypasses the version counter: nothing raises, and the gradient is silently "
         "wrong.",
}


def snippet_raises(code: str) -> bool:
    """Run one snippet (with ``al`` and ``np`` defined) and say whether it raised."""
    namespace: dict[str, Any] = {"al": library(), "np": np}
    try:
        exec(textwrap.dedent(code), namespace)  # noqa: S102 - our own fixed snippets
    except Exception:
        return True
    return False


def ch06_predict_raises(predictions: dict[str, bool], *, seed: int = 0,
                        hidden: bool = False) -> None:
    """Check ``predictions``: for each snippet name, True if it raises, False if it runs."""
    ck = Checker("ch06-predict-raises", seed=seed, hidden=hidden)
    names = list(SNIPPETS) if hidden else list(VISIBLE_SNIPPETS)
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
    for name in names:
        with ck.case(f"snippet {name}"):
            truth = snippet_raises(SNIPPETS[name])
            said = bool(predictions[name])
            if said != truth:
                ck.fail(f"you predicted that snippet {name} "
                        f"{'raises' if said else 'runs'}, but it "
                        f"{'raises' if truth else 'runs without an error'}.",
                        expected=truth, received=said,
                        hint=f"Snippet {name}: {_WHY[name]} Ask of every snippet: what did "
                             "each op save for backward, and was it changed after it was saved?")
    if not hidden:
        print(f"(Snippets {', '.join(n for n in SNIPPETS if n not in names)} are checked when "
              "the notebook is graded.)")
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
def _bumped(al: Any, data: Any, times: int) -> Any:
    v = al.Variable(np.array(data, dtype=np.float64))
    for _ in range(times):
        v.add_(0.0)
    return v


def ch06_version_check(VersionedCtx: type, *, seed: int = 0, hidden: bool = False) -> None:
    """Check a ctx class with ``save_for_backward(*tensors)`` and a ``saved_tensors`` property
    that returns the saved Variables (None passes through) and raises RuntimeError naming both
    versions when a saved Variable was changed in place after it was saved."""
    ck = Checker("ch06-version-check", seed=seed, hidden=hidden)
    al = library()
    rng = ck.rng
    raise_hint = ("In save_for_backward keep each tensor together with tensor._version at "
                  "that moment; in saved_tensors compare the stored number with the tensor's "
                  "current _version and raise RuntimeError if they differ.")

    def new_ctx() -> Any:
        return ck.call(VersionedCtx, hint="VersionedCtx() must work without arguments.")

    with ck.case("unchanged tensors come back, the same objects, as a tuple"):
        ctx = new_ctx()
        a, b = al.Variable(rng.normal(size=3)), al.Variable(rng.normal(size=(2, 2)))
        ck.call(ctx.save_for_backward, a, b)
        got = ck.call(lambda: ctx.saved_tensors, hint=raise_hint)
        ck.check(isinstance(got, tuple) and len(got) == 2, "saved_tensors is not a tuple of 2.",
                 expected="(a, b)", received=got,
                 hint="Return tuple(...) of the saved tensors, in the order they were saved.")
        ck.check(got[0] is a and got[1] is b, "saved_tensors did not return the saved objects.",
                 hint="Return the Variables themselves (not copies, not their .data).")
        again = ck.call(lambda: ctx.saved_tensors)
        ck.check(again[0] is a and again[1] is b, "reading saved_tensors twice failed.",
                 hint="saved_tensors must not consume what was saved.")
    with ck.case("None is saved and returned as None"):
        ctx = new_ctx()
        a = al.Variable(np.ones(2))
        ck.call(ctx.save_for_backward, None, a)
        got = ck.call(lambda: ctx.saved_tensors,
                      hint="Store None as it is and skip the version check for it.")
        ck.check(len(got) == 2 and got[0] is None and got[1] is a,
                 "saved_tensors did not return (None, a).", received=got,
                 hint="Store None as it is and skip the version check for it.")
    before, after = (2, 5) if not hidden else (int(rng.integers(1, 4)), int(rng.integers(5, 9)))
    with ck.case(f"a tensor changed before it was saved (version {before}) is fine"):
        ctx = new_ctx()
        a = _bumped(al, rng.normal(size=2), before)
        ck.call(ctx.save_for_backward, a)
        got = ck.call(lambda: ctx.saved_tensors,
                      hint="Compare with the version recorded at save time, not with 0.")
        ck.check(got[0] is a, "saved_tensors did not return the saved tensor.")
    with ck.case(f"saved at version {before}, changed to version {after}: RuntimeError"):
        ctx = new_ctx()
        a = _bumped(al, rng.normal(size=3), before)
        ck.call(ctx.save_for_backward, a)
        for _ in range(after - before):
            a.mul_(1.0)
        err = ck.raises(RuntimeError, lambda: ctx.saved_tensors, hint=raise_hint)
        message = str(err)
        ck.check(str(before) in message and str(after) in message,
                 "the error message does not name both versions.",
                 expected=f"a message containing {after} (now) and {before} (when saved)",
                 received=message,
                 hint="Say what happened and both numbers, like PyTorch: f'... modified by an "
                      "inplace operation: is at version {now}; expected version {saved} "
                      "instead.'")
    with ck.case("a change through a detached alias is caught too"):
        ctx = new_ctx()
        a = al.Variable(rng.normal(size=4))
        ck.call(ctx.save_for_backward, a)
        a.detach().zero_()
        ck.raises(RuntimeError, lambda: ctx.saved_tensors, hint=raise_hint)
    with ck.case("each ctx checks its own tensors"):
        first, second = new_ctx(), new_ctx()
        a, b = al.Variable(np.ones(2)), al.Variable(np.ones(2))
        ck.call(first.save_for_backward, a)
        ck.call(second.save_for_backward, b)
        b.add_(1.0)
        ck.call(lambda: first.saved_tensors,
                hint="Keep what was saved on self (the ctx instance), not on the class.")
        ck.raises(RuntimeError, lambda: second.saved_tensors, hint=raise_hint)
    if hidden:
        with ck.case("three tensors, only the middle one changed: RuntimeError"):
            ctx = new_ctx()
            ts = [al.Variable(rng.normal(size=2)) for _ in range(3)]
            ck.call(ctx.save_for_backward, *ts)
            ts[1].sub_(1.0)
            ck.raises(RuntimeError, lambda: ctx.saved_tensors, hint=raise_hint)
    ck.done()


# The loader checks the learner's mygrad/grad_mode.py with this (see exercises/_library.py).
from ._library import grad_mode as mygrad_grad_mode  # noqa: E402
