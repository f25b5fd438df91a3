"""Check ``LogSoftmax``: a stable log of the softmax along ``axis``, and the backward
g - softmax(x) * g.sum(axis, keepdims=True). forward and backward are called by hand with a
correct ctx and the course's apply and Mul, so only the learner's LogSoftmax is judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import grad_of, judge_by_hand, observe_by_hand
from ._shared import softmax_reference
from .messages import HINTS

ID = "ch05-log-softmax"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no keepdims in backward", ("grad_output.sum(axis=ctx.axis, keepdims=True)",
                                        "grad_output.sum(axis=ctx.axis)"), None,
            "logsoftmax.keepdims"),
    Mistake("the log-probability where exp of it belongs", (
        "grad_output - y.exp() * grad_output", "grad_output - y * grad_output"), None,
        "logsoftmax.log-prob"),
    Mistake("no maximum subtracted", ("z = x.data - x.data.max(axis=axis, keepdims=True)",
                                      "z = x.data"), None, "logsoftmax.overflow"),
    Mistake("the wrong sign", (
        "return grad_output - y.exp() * grad_output.sum(axis=ctx.axis, keepdims=True), None",
        "return y.exp() * grad_output.sum(axis=ctx.axis, keepdims=True) - grad_output, None"),
        None, "logsoftmax.sign"),
    Mistake("no sum in backward", ("y.exp() * grad_output.sum(axis=ctx.axis, keepdims=True)",
                                   "y.exp() * grad_output"), None, "logsoftmax.no-sum"),
)

Case = tuple[str, tuple[int, ...], int, np.ndarray, np.ndarray]


def cases(seed: int, hidden: bool) -> list[Case]:
    """(title, shape, axis, x, upstream gradient): the same from the same seed."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[tuple[int, ...], int, float]] = [
        ((4,), -1, 1.0), ((3, 3), -1, 1.0), ((3, 4), 0, 1.0), ((2, 3), -1, 800.0)]
    if hidden:
        shapes += [((2, 3, 4), 1, 1.0), ((5, 2), 0, 800.0), ((1, 3), -1, 1.0)]
    found: list[Case] = []
    for shape, axis, scale in shapes:
        title = f"x of shape {shape}, axis={axis}" + (
            f", scores as large as {scale:g}" if scale > 1 else "")
        x = np.round(rng.normal(size=shape), 3) + (scale if scale > 1 else 0.0)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((title, shape, axis, x, g))
    return found


def observe(ob: Observer, LogSoftmax: Any, *, seed: int, hidden: bool) -> None:
    for title, _, axis, x, g in cases(seed, hidden):
        with ob.case(title), np.errstate(all="ignore"):
            observe_by_hand(ob, LogSoftmax, [x], g, extra=(axis,))


def judge(ck: Checker, obs: Observations) -> None:
    for title, shape, axis, x, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [x], g,
                                       "If numpy could not broadcast: "
                                       + HINTS["logsoftmax.keepdims"])
            _judge_forward(ck, out, x, axis)
            p = softmax_reference(x, axis)
            total = g.sum(axis=axis, keepdims=True)
            mistakes = [(g - p * g, HINTS["logsoftmax.no-sum"]),
                        (g - out * total, HINTS["logsoftmax.log-prob"]),
                        (p * total - g, HINTS["logsoftmax.sign"])]
            try:                                    # the sum without keepdims=True
                mistakes.append((g - p * g.sum(axis=axis), HINTS["logsoftmax.keepdims"]))
            except ValueError:
                pass
            grad_of(ck, grads, 0, "x", shape, g - p * total, mistakes)
            ck.check(len(grads) == 2 and grads[1] is None, "backward must return one value per "
                     "argument of forward.", expected="(grad_x, None)", received=len(grads),
                     hint=HINTS["logsoftmax.arity"])
    ck.done()


def _judge_forward(ck: Checker, out: np.ndarray, x: np.ndarray, axis: int) -> None:
    want = x - x.max(axis=axis, keepdims=True)
    want = want - np.log(np.exp(want).sum(axis=axis, keepdims=True))
    if not np.all(np.isfinite(out)) and out.shape == want.shape:
        ck.fail("the output holds inf or nan for large scores.",
                hint=HINTS["logsoftmax.overflow"])
    zx = x - x.max(axis=axis, keepdims=True)
    try:                                    # the log-sum without keepdims=True
        lost = [(zx - np.log(np.exp(zx).sum(axis=axis)), HINTS["logsoftmax.forward-lost-axis"])]
    except ValueError:
        lost = []
    p = softmax_reference(x, axis)
    ck.close(out, want, what="forward result", hint=HINTS["logsoftmax.forward"], mistakes=lost + [
        (np.log(p.sum(axis=axis, keepdims=True)) + 0 * x, HINTS["logsoftmax.no-z"]),
        (x - np.log(np.exp(x - x.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)),
         HINTS["logsoftmax.max-inside"])])
