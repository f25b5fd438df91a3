"""Check ``train_step(w, b, X, y, lr) -> float``: one step of gradient descent on
mean((X @ w + b - y) ** 2) that updates the leaves ``w`` and ``b`` in place under ``no_grad``,
leaves no stale gradient behind, and returns the loss before the update."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch06-train-step"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("the update outside no_grad", ("    with al.no_grad():\n        w -= lr * w.grad\n"
                                           "        b -= lr * b.grad\n",
                                           "    w -= lr * w.grad\n    b -= lr * b.grad\n"),
            None, "train.raised"),
    Mistake("rebinding the names", ("        w -= lr * w.grad\n        b -= lr * b.grad\n",
                                    "        w = w - lr * w.grad\n        b = b - lr * b.grad\n"),
            None, "train.rebinding"),
    Mistake("no zeroing", ("    w.grad = None\n    b.grad = None\n", ""), None, "train.clear"),
    Mistake("uphill", ("        w -= lr * w.grad\n", "        w += lr * w.grad\n"), None,
            "train.uphill"),
    Mistake("returns the Variable", ("return loss.item()", "return loss"), None,
            "train.float"),
    Mistake("the loss after the update", ("    return loss.item()",
                                          "    return ((X @ w + b - y) ** 2).mean().item()"),
            None, "train.before"),
    Mistake("returns nothing", ("return loss.item()", "loss.item()"), None, "train.return"),
)


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


def cases(seed: int, hidden: bool) -> list[tuple[int, int, float, int, dict[str, np.ndarray]]]:
    """(n, d, lr, steps, arrays X, y, w0, b0) of each configuration, the same from the same seed."""
    rng = np.random.default_rng(seed)
    configs = [(8, 3, 0.1, 3)] + ([(20, 2, 0.05, 5), (5, 4, 0.2, 4)] if hidden else [])
    found = []
    for n, d, lr, steps in configs:
        arrays = {"X": np.round(rng.normal(size=(n, d)), 3),
                  "y": np.round(rng.normal(size=(n, 1)), 3),
                  "w0": np.round(rng.normal(size=(d, 1)), 3),
                  "b0": np.round(rng.normal(size=(1,)), 3)}
        found.append((n, d, lr, steps, arrays))
    return found


def _one_step(n: int, d: int, lr: float) -> str:
    return f"one step on {n} points with {d} features (lr={lr})"


def _steps(steps: int) -> str:
    return f"{steps} steps in a row match gradient descent"


def observe(ob: Observer, train_step: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    al = library()
    for n, d, lr, steps, arrays in cases(seed, hidden):
        w = al.Variable(arrays["w0"].copy(), requires_grad=True)
        b = al.Variable(arrays["b0"].copy(), requires_grad=True)
        w_obj, b_obj = w, b
        Xv, yv = al.Variable(arrays["X"]), al.Variable(arrays["y"])
        with ob.case(_one_step(n, d, lr)):
            loss = train_step(w, b, Xv, yv, lr)
            ob.put("loss is None", loss is None)
            ob.put("loss type", type(loss).__name__)
            if ob.put("loss is a float", isinstance(loss, (float, np.floating))):
                ob.put("loss", float(loss))
            ob.put("leaves requiring grad", bool(w.is_leaf and b.is_leaf and w.requires_grad
                                                 and b.requires_grad))
            ob.put("w", np.array(w.data, dtype=np.float64))
            ob.put("b", np.array(b.data, dtype=np.float64))
        with ob.case(_steps(steps)):
            for step in range(1, steps):
                ob.put(f"loss {step}", float(train_step(w, b, Xv, yv, lr)))
            ob.put("same objects", w is w_obj and b is b_obj)
            ob.put("w", np.array(w.data, dtype=np.float64))
            ob.put("b", np.array(b.data, dtype=np.float64))


def judge(ck: Checker, obs: Observations) -> None:
    what = "your train_step"
    for n, d, lr, steps, arrays in cases(obs.seed, obs.hidden):
        w0, b0, X, y = arrays["w0"], arrays["b0"], arrays["X"], arrays["y"]
        losses, w_end, b_end = _reference_steps(w0, b0, X, y, lr, steps)
        _, w1, b1 = _reference_steps(w0, b0, X, y, lr, 1)
        title = _one_step(n, d, lr)
        with ck.case(title):
            seen = obs.case(ck, title, what=what, hint=HINTS["train.raised"])
            ck.check(seen["loss is None"] is False, "train_step returned None.",
                     expected=losses[0], hint=HINTS["train.return"])
            ck.check(seen["loss is a float"] is True, "train_step should return a "
                     "Python float.", expected="a float", received=seen["loss type"],
                     hint=HINTS["train.float"])
            ck.close(seen["loss"], losses[0], what="returned loss", hint=HINTS["train.before"])
            ck.check(seen["leaves requiring grad"] is True,
                     "after the step, w or b is no longer a leaf that requires grad.",
                     hint=HINTS["train.inplace"])
            w, b = seen["w"], seen["b"]
            ck.check(not np.allclose(w, w0), "the caller's w did not change.", expected=w1,
                     received=w, hint=HINTS["train.rebinding"])
            ck.close(w, w1, what="w after one step", hint=HINTS["train.update"],
                     mistakes=[(2 * w0 - w1, HINTS["train.uphill"])])
            ck.close(b, b1, what="b after one step", hint=HINTS["train.update"])
        title = _steps(steps)
        with ck.case(title):
            seen = obs.case(ck, title, what=what)
            for step in range(1, steps):
                ck.close(seen[f"loss {step}"], losses[step],
                         what=f"loss returned by step {step + 1}", hint=HINTS["train.clear"])
            ck.check(seen["same objects"] is True, "the parameters were replaced.",
                     hint=HINTS["train.update"])
            ck.close(seen["w"], w_end, what=f"w after {steps} steps",
                     hint=HINTS["train.clear-short"])
            ck.close(seen["b"], b_end, what=f"b after {steps} steps", hint=HINTS["train.update"])
    ck.done()
