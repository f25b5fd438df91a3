"""Check ``Index`` (forward(ctx, x, key) = x[key]; backward: grad_output scattered into zeros
of x's shape) and ``Scatter`` (forward(ctx, g, shape, key): zeros of shape with g added at key,
repeated positions summed; backward: grad_output[key]). forward and backward are called by hand
with a correct ctx and the course's apply and Mul, so only these two classes are judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import judge_by_hand, observe_by_hand
from ._shared import key_text, scatter_reference
from .messages import HINTS

ID = "ch05-index-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("Scatter assigns", ("np.add.at(out, key, g.data)", "out[key] = g.data"), None,
            "index.assigned"),
    Mistake("Scatter adds with +=", ("np.add.at(out, key, g.data)", "out[key] += g.data"), None,
            "index.assigned"),
    Mistake("Index's backward passes grad_output through", (
        "return Scatter.apply(grad_output, ctx.x_shape, ctx.key), None",
        "return grad_output, None"), None, "index.shape"),
    Mistake("Index's backward returns an array", (
        "return Scatter.apply(grad_output, ctx.x_shape, ctx.key), None",
        "return Scatter.apply(grad_output, ctx.x_shape, ctx.key).data, None"), None,
        "fn.variables"),
    Mistake("Index keeps no shape on ctx", ("        ctx.x_shape, ctx.key = x.shape, key\n",
                                           "        ctx.key = key\n"), None, "index.keep"),
    Mistake("Scatter starts from ones", ("out = np.zeros(shape, dtype=g.data.dtype)",
                                         "out = np.ones(shape, dtype=g.data.dtype)"), None,
            "index.ones"),
    Mistake("Scatter's backward returns one value", (
        "return Index.apply(grad_output, ctx.key), None, None",
        "return Index.apply(grad_output, ctx.key)"), None, "scatter.arity"),
)


def cases(seed: int, hidden: bool) -> tuple[list[tuple], list[tuple]]:
    """(shape, key, x, upstream gradient) of Index's cases and (shape, key, g, upstream
    gradient) of Scatter's: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    keys: list[tuple[tuple[int, ...], Any]] = [
        ((3, 2), 1), ((5,), slice(1, 4)), ((3, 4), (slice(1, None), slice(None, None, 2))),
        ((3, 2), [0, 0, 2])]
    if hidden:
        keys += [((5,), [4, 1, 4, 4]), ((3, 3), ([0, 2, 2], [1, 1, 1])), ((2, 3, 2), (1, -1))]
    index = []
    for shape, key in keys:
        x = np.round(rng.normal(size=shape), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=np.shape(x[key])), 3)
        index.append((shape, key, x, g))
    scatter = []
    for shape, key in keys[2:]:
        g = np.round(rng.normal(size=np.shape(np.zeros(shape)[key])), 3)
        up = np.round(rng.normal(size=shape), 3)
        scatter.append((shape, key, g, up))
    return index, scatter


def _titles(shape: tuple[int, ...], key: Any) -> tuple[str, str]:
    return (f"Index of x {shape} with key [{key_text(key)}]",
            f"Scatter of g into zeros {shape} at key [{key_text(key)}]")


def observe(ob: Observer, Index: Any, Scatter: Any, *, seed: int, hidden: bool) -> None:
    index, scatter = cases(seed, hidden)
    for shape, key, x, g in index:
        with ob.case(_titles(shape, key)[0]):
            observe_by_hand(ob, Index, [x], g, extra=(key,), keep=("Scatter",))
    for shape, key, g, up in scatter:
        with ob.case(_titles(shape, key)[1]):
            observe_by_hand(ob, Scatter, [g], up, extra=(shape, key), keep=("Index",))


def judge(ck: Checker, obs: Observations) -> None:
    index, scatter = cases(obs.seed, obs.hidden)
    for shape, key, x, g in index:
        title = _titles(shape, key)[0]
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [x], g, HINTS["index.keep"])
            ck.close(out, x[key], what="forward result", hint=HINTS["index.forward"])
            ck.check(len(grads) >= 1 and grads[0] is not None, "Index.backward returned no "
                     "gradient for x.", hint=HINTS["index.none"])
            got = np.asarray(grads[0], dtype=np.float64)
            if got.shape != shape:
                ck.fail(f"Index.backward returned a gradient of shape {got.shape}, but x has "
                        f"shape {shape}.", expected=f"shape {shape}",
                        received=f"shape {got.shape}", hint=HINTS["index.shape"])
            ck.close(got, scatter_reference(g, shape, key), what="gradient of x",
                     mistakes=_mistakes(g, shape, key), hint=HINTS["index.values"])
            ck.check(len(grads) == 2 and grads[1] is None, "Index.backward must return one "
                     "value per argument of forward.", expected="(grad_x, None)",
                     received=len(grads), hint=HINTS["index.arity"])
    for shape, key, g, up in scatter:
        title = _titles(shape, key)[1]
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [g], up, HINTS["scatter.keep"])
            ck.close(out, scatter_reference(g, shape, key), what="forward result",
                     mistakes=_mistakes(g, shape, key), hint=HINTS["scatter.forward"])
            ck.check(len(grads) >= 1 and grads[0] is not None, "Scatter.backward returned no "
                     "gradient for g.", hint=HINTS["scatter.none"])
            got = np.asarray(grads[0], dtype=np.float64)
            if got.shape != g.shape:
                ck.fail(f"Scatter.backward returned a gradient of shape {got.shape}, but g has "
                        f"shape {g.shape}.", expected=f"shape {g.shape}",
                        received=f"shape {got.shape}", hint=HINTS["scatter.shape"])
            ck.close(got, up[key], what="gradient of g", hint=HINTS["scatter.values"])
            ck.check(len(grads) == 3 and grads[1] is None and grads[2] is None,
                     "Scatter.backward must return one value per argument of forward.",
                     expected="(grad_g, None, None)", received=len(grads),
                     hint=HINTS["scatter.arity"])
    ck.done()


def _mistakes(g: np.ndarray, shape: tuple[int, ...], key: Any) -> list[tuple[np.ndarray, str]]:
    """Gradients of x[key] that a usual mistake gives, with the cause."""
    assigned = np.zeros(shape)
    assigned[key] = g
    ones = np.ones(shape)
    np.add.at(ones, key, g)
    return [(assigned, HINTS["index.assigned"]), (ones, HINTS["index.ones"])]
