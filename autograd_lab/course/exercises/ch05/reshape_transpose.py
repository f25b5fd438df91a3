"""Check ``Reshape`` (forward(ctx, x, shape)) and ``Transpose`` (forward(ctx, x, axes=None)):
numpy's reshape and transpose, and backwards that move each gradient back to where its
element came from. Called by hand with a correct ctx and the course's apply and Mul, so
only these two classes are judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import judge_by_hand, observe_by_hand
from .messages import HINTS

ID = "ch05-reshape-transpose"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("Reshape's backward keeps grad_output's shape",
            ("return Reshape.apply(grad_output, ctx.x_shape), None", "return grad_output, None"),
            None, "moved.shape"),
    Mistake("Reshape keeps no shape on ctx", ("        ctx.x_shape = x.shape\n", ""), None,
            "reshape.keep-shape"),
    Mistake("Transpose's backward uses forward's axes",
            ("tuple(np.argsort(ctx.axes))", "tuple(ctx.axes)"), None, "transpose.same-axes"),
    Mistake("Transpose's backward reverses every axis",
            ("inverse = None if ctx.axes is None else tuple(np.argsort(ctx.axes))",
             "inverse = None"), None, "transpose.reversed"),
    Mistake("Transpose keeps no axes on ctx", ("        ctx.axes = axes\n", ""), None,
            "transpose.keep-axes"),
)

Case = tuple[str, str, tuple[int, ...], Any, np.ndarray, np.ndarray]


def cases(seed: int, hidden: bool) -> list[Case]:
    """(title, "Reshape" or "Transpose", x's shape, new shape or axes, x, upstream gradient):
    the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    reshapes: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
        ((2, 3), (3, 2)), ((2, 3, 4), (6, 4)), ((6,), (2, 3))]
    transposes: list[tuple[tuple[int, ...], Any]] = [
        ((2, 3), None), ((2, 3, 4), (1, 2, 0)), ((2, 3, 4), None)]
    if hidden:
        reshapes += [((4, 3), (12,)), ((2, 2, 3), (3, 4))]
        transposes += [((2, 3, 4, 5), (3, 0, 2, 1)), ((3, 2), (1, 0))]
    found: list[Case] = []
    for shape, new in reshapes:
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.normal(size=new), 3)
        found.append((f"Reshape of x {shape} to {new}", "Reshape", shape, new, x, g))
    for shape, axes in transposes:
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.normal(size=np.transpose(x, axes).shape), 3)
        found.append((f"Transpose of x {shape} with axes={axes}", "Transpose", shape, axes, x, g))
    return found


def observe(ob: Observer, Reshape: Any, Transpose: Any, *, seed: int, hidden: bool) -> None:
    for title, which, _, arg, x, g in cases(seed, hidden):
        with ob.case(title):
            observe_by_hand(ob, Reshape if which == "Reshape" else Transpose, [x], g,
                            extra=(arg,))


def judge(ck: Checker, obs: Observations) -> None:
    for title, which, shape, arg, x, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            seen = obs.case(ck, title)
            if which == "Reshape":
                out, grads = judge_by_hand(ck, seen, [x], g, HINTS["reshape.keep-shape"])
                ck.close(out, x.reshape(arg), what="forward result",
                         hint=HINTS["reshape.forward"])
                _moved_grad(ck, grads, shape, g.reshape(shape), [], "Reshape")
                continue
            out, grads = judge_by_hand(ck, seen, [x], g, HINTS["transpose.keep-axes"])
            ck.close(out, np.transpose(x, arg), what="forward result",
                     hint=HINTS["transpose.forward"])
            inverse = None if arg is None else tuple(int(i) for i in np.argsort(arg))
            mistakes = []
            if arg is not None and tuple(arg) != inverse:
                mistakes = [(np.transpose(g, arg), HINTS["transpose.same-axes"]),
                            (np.transpose(g), HINTS["transpose.reversed"])]
            _moved_grad(ck, grads, shape, np.transpose(g, inverse), mistakes, "Transpose")
    ck.done()


def _moved_grad(ck: Checker, grads: list[Any], shape: tuple[int, ...], want: np.ndarray,
                mistakes: list[tuple[np.ndarray, str]], name: str) -> None:
    """The gradient of x for an operation that only moves elements: x's shape, and each
    element's gradient where the element came from."""
    ck.check(len(grads) >= 1 and grads[0] is not None, f"{name}.backward returned no gradient "
             "for x.", hint=HINTS["moved.none"])
    got = np.asarray(grads[0], dtype=np.float64)
    for mistake, hint in mistakes:
        if np.shape(mistake) == got.shape and np.allclose(got, mistake):
            ck.fail(f"{name}.backward returned a gradient of shape {got.shape} for x of shape "
                    f"{shape}, with its elements in the wrong places.", hint=hint)
    if got.shape != shape:
        ck.fail(f"{name}.backward returned a gradient of shape {got.shape}, but x has shape "
                f"{shape}.", expected=f"shape {shape}", received=f"shape {got.shape}",
                hint=f"grad_output has the shape of {name}'s output; " + HINTS["moved.shape"])
    ck.close(got, want, what="gradient of x", mistakes=[(m, h) for m, h in mistakes
                                                        if np.shape(m) == got.shape],
             hint=HINTS["moved.values"])
    ck.check(len(grads) == 2 and grads[1] is None, f"{name}.backward must return one value per "
             "argument of forward.", expected="(grad_x, None)", received=len(grads),
             hint=HINTS["moved.arity"])
