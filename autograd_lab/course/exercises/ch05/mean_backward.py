"""Check ``Mean``: numpy's mean over ``axis`` (an int, a tuple or None) with ``keepdims``, and
a backward that copies ``grad_output / n`` over the averaged axes, n being the number of
elements each mean averages. forward and backward are called by hand with a correct ctx and
the course's apply and Mul, so only the learner's Mean is judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import grad_of, judge_by_hand, observe_by_hand
from ._shared import sum_grad
from .messages import HINTS

ID = "ch05-mean-backward"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("Sum's gradient", ("g * (1.0 / max(ctx.n, 1))", "g"), None, "mean.sum-grad"),
    Mistake("multiplies by n", ("g * (1.0 / max(ctx.n, 1))", "g * max(ctx.n, 1)"), None,
            "mean.times-n"),
    Mistake("divides by every element", (
        "ctx.n = x.data.size // max(int(np.prod(_kept_shape(x.shape, axis))), 1) if x.ndim else 1",
        "ctx.n = x.data.size"), None, "mean.all-elements"),
    Mistake("the averaged axes not put back", (
        "g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))",
        "g = grad_output"), None, "mean.broadcast"),
)

Case = tuple[tuple[int, ...], Any, bool, np.ndarray, np.ndarray]


def cases(seed: int, hidden: bool) -> list[Case]:
    """(x's shape, axis, keepdims, x, upstream gradient): the same from the same seed."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[tuple[int, ...], Any, bool]] = [
        ((2, 3), 0, False), ((3, 4), None, False), ((2, 3, 4), (0, 2), False), ((3, 4), -1, True)]
    if hidden:
        shapes += [((4, 2, 3), 1, True), ((5,), 0, False), ((3, 2), None, True),
                   ((2, 2, 3), -2, False)]
    found: list[Case] = []
    for shape, axis, keepdims in shapes:
        x = np.round(rng.normal(size=shape), 3)
        want_y = x.mean(axis=axis, keepdims=keepdims)
        g = np.round(rng.uniform(0.5, 2.0, size=np.shape(want_y)), 3)
        found.append((shape, axis, keepdims, x, g))
    return found


def _title(shape: tuple[int, ...], axis: Any, keepdims: bool) -> str:
    return f"x of shape {shape}, axis={axis}, keepdims={keepdims}"


def observe(ob: Observer, Mean: Any, *, seed: int, hidden: bool) -> None:
    for shape, axis, keepdims, x, g in cases(seed, hidden):
        with ob.case(_title(shape, axis, keepdims)):
            observe_by_hand(ob, Mean, [x], g, extra=(axis, keepdims))


def judge(ck: Checker, obs: Observations) -> None:
    for shape, axis, keepdims, x, g in cases(obs.seed, obs.hidden):
        title = _title(shape, axis, keepdims)
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [x], g, HINTS["mean.broadcast"])
            want_y = x.mean(axis=axis, keepdims=keepdims)
            ck.close(out, want_y, what="forward result", hint=HINTS["mean.forward"])
            n = x.size // max(int(np.prod(np.shape(want_y))), 1)
            spread = sum_grad(g, shape, axis, keepdims)
            mistakes = [(spread, HINTS["mean.sum-grad"]), (spread * n, HINTS["mean.times-n"])]
            if n != x.size:
                mistakes.append((spread / x.size, f"The gradient was divided by all {x.size} "
                                 f"elements of x; each mean averages only n = {n} of them "
                                 + HINTS["mean.all-elements"]))
            if np.size(want_y) not in (n, x.size):
                mistakes.append((spread / np.size(want_y), HINTS["mean.output-size"]))
            got = grads[0] if grads else None
            got_shape = np.shape(got) if got is not None else None
            if got is not None and got_shape != shape:
                ck.fail(f"the gradient of x has shape {got_shape}, but x has shape {shape}.",
                        expected=f"shape {shape}", received=f"shape {got_shape}",
                        hint=HINTS["mean.shape"])
            grad_of(ck, grads, 0, "x", shape, spread / n, mistakes)
            ck.check(len(grads) == 3 and grads[1] is None and grads[2] is None,
                     "backward must return one value per argument of forward.",
                     expected="(grad_x, None, None)", received=len(grads),
                     hint=HINTS["mean.arity"])
    ck.done()
