"""Check the learner's ``Sum`` and ``Mean`` over all elements: forward gives one number;
backward spreads grad_output (a single number) back over the input's shape, divided by the
number of elements for Mean."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import by_hand, judge_by_hand, judge_setup, setup
from .messages import HINTS

ID = "ch03-reductions"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("Sum's gradient not spread", ("        return BroadcastTo.apply(grad_output, "
                                          "ctx.x_shape)\n", "        return grad_output\n"),
            None, "reductions.spread"),
    Mistake("Mean does not divide", ("grad_output * Variable(1.0 / n)", "grad_output"), None,
            "reductions.mean-is-sum"),
    Mistake("n is the first axis", ("n = max(int(np.prod(ctx.x_shape)), 1)",
                                    "n = ctx.x_shape[0]"), None, "reductions.first-axis"),
    Mistake("Sum's forward takes the mean", ("return Variable(x.data.sum())",
                                             "return Variable(x.data.mean())"), None,
            "reductions.forward-sum"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """(title, "Sum" or "Mean", x, grad_output): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(4,), (2, 3)] + ([(2, 1, 3), (1,)] if hidden else []):
        for name in ("Sum", "Mean"):
            x = np.round(rng.normal(size=shape), 3)
            g = np.array(round(float(rng.uniform(0.5, 2.0)), 3))
            found.append((f"{name} of a {shape} input", name, x, g))
    return found


def observe(ob: Observer, Sum: type[Any], Mean: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, Sum, "forward", ("Variable",), ((Sum, "Sum"), (Mean, "Mean")))
    if ns is None:
        return
    for title, name, x, g in cases(seed, hidden):
        with ob.case(title):
            by_hand(ob, Sum if name == "Sum" else Mean, ns, x, g)


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("Sum", "Mean"))
    for title, name, x, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            out, grad = judge_by_hand(ck, obs.case(ck, title, what=f"your {name}"), name, x, g,
                                      HINTS)
            _judge_one(ck, name, x, g, out, grad)
    ck.done()


def _judge_one(ck: Checker, name: str, x: np.ndarray, g: np.ndarray, out: Any,
               grad: np.ndarray) -> None:
    shape, n = x.shape, x.size
    ck.close(out, x.sum() if name == "Sum" else x.mean(), what="output",
             hint=HINTS[f"reductions.forward-{name.lower()}"])
    if grad.shape != shape:
        ck.fail(f"{name}.backward's gradient has shape {grad.shape}, but x has "
                f"shape {shape}.", hint=HINTS["reductions.spread"])
    right = np.full(shape, g if name == "Sum" else g / n)
    mistakes = [(np.ones(shape) / (n if name == "Mean" else 1), HINTS["reductions.chain"])]
    if name == "Mean":
        mistakes += [(np.full(shape, g), HINTS["reductions.mean-is-sum"] + f" Here n = {n}."),
                     (np.full(shape, g / shape[0]), HINTS["reductions.first-axis"] +
                      f" Here n = {n}.")]
    ck.close(grad, right, what=f"{name}'s gradient of x", mistakes=[
        (m, h) for m, h in mistakes if not np.allclose(m, right)],
        hint=HINTS["reductions.spread" if name == "Sum" else "reductions.mean"])
