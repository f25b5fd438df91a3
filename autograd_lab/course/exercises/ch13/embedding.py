"""Check ``Embedding.apply(weight, idx)``: the rows ``weight[idx]`` for an int array ``idx``
of any shape; backward adds each position's gradient into its token's row (repeated tokens
add up) and gives ``idx`` no gradient."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from . import _shared as sh
from .messages import HINTS

ID = "ch13-embedding"
PARTS: tuple[str, ...] = ()

_ADD = "np.add.at(grad, ctx.idx, grad_output.data)"
MISTAKES = (
    Mistake("assigned", (_ADD, "grad[ctx.idx] = grad_output.data"), None, "embedding.scatter"),
    Mistake("buffered +=", (_ADD, "grad[ctx.idx] += grad_output.data"), None,
            "embedding.scatter"),
    Mistake("counted", (_ADD, "np.add.at(grad, ctx.idx, 1.0)"), None, "embedding.count"),
    Mistake("the positions' shape", ("return Variable(grad), None",
                                     "return Variable(grad_output.data), None"), None,
            "embedding.table"),
)

SAME = "the same token everywhere: its row gets the sum of every gradient"


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, table, idx, grad_output) of the cases: the same from the same seed."""
    rng = np.random.default_rng(seed)
    configs = [(5, 3, (2, 4)), (7, 4, (6,))] + ([(3, 2, (3, 5)), (10, 6, (1, 2, 3))]
                                                 if hidden else [])
    found = []
    for vocab, dim, idx_shape in configs:
        table = np.round(rng.normal(size=(vocab, dim)), 3)
        idx = rng.integers(0, vocab, size=idx_shape)
        idx.flat[0] = idx.flat[-1]                       # at least one repeated token
        g = np.round(rng.uniform(-1, 1, size=idx_shape + (dim,)), 3)
        found.append((f"a table ({vocab}, {dim}), indices of shape {idx_shape} with repeats",
                      table, idx, g))
    table = np.round(rng.normal(size=(4, 3)), 3)
    found.append((SAME, table, np.full((2, 3), 2), np.round(rng.uniform(-1, 1, size=(2, 3, 3)), 3)))
    return found


def observe(ob: Observer, Embedding: Any, pkg: Any = None, *, seed: int, hidden: bool) -> None:
    if not sh.observe_pkg(ob, pkg):
        return
    for name, table, idx, g in cases(seed, hidden):
        with ob.case(name):
            weight = pkg.Variable(table.copy(), requires_grad=True)
            out = Embedding.apply(weight, idx)
            if sh.put_data(ob, "lookup", out):
                sh.backward(ob, "backward raised", out, pkg.Variable(g))
                sh.put_grad(ob, "grad", weight)


def judge(ck: Checker, obs: Observations) -> None:
    sh.judge_pkg(ck, obs)
    table_hint = HINTS["embedding.table"]
    for name, table, idx, g in cases(obs.seed, obs.hidden):
        with ck.case(name):
            seen = obs.case(ck, name, what="your apply")
            lookup = sh.data(ck, seen, "lookup", "lookup")
            if name != SAME:
                ck.close(lookup, table[idx], atol=1e-12, what="lookup",
                         hint=HINTS["embedding.lookup"])
            sh.raised(ck, seen, "backward raised", "your backward", table_hint)
            got = sh.grad(ck, seen, "grad", "weight", table_hint)
            if got.shape != table.shape:
                ck.fail(f"weight's gradient has shape {got.shape}, expected {table.shape}.",
                        hint=table_hint)
            want = np.zeros(table.shape)
            np.add.at(want, idx, g)
            ck.close(got, want, atol=1e-12, what="gradient of weight",
                     hint=HINTS["embedding.scatter"], mistakes=_mistakes(table.shape, idx, g))
    ck.done()


def _mistakes(shape: tuple[int, ...], idx: np.ndarray, g: np.ndarray) -> list:
    assigned = np.zeros(shape)
    assigned[idx] = g
    counted = np.zeros(shape)
    np.add.at(counted, idx, np.ones_like(g))
    return [(assigned, HINTS["embedding.scatter"]), (counted, HINTS["embedding.count"])]
