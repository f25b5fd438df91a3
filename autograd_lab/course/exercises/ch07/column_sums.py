"""Check ``column_sums_blocked(x, partial)``: with nblocks = partial.shape[0] and
step = ceil(rows / nblocks), row c of ``partial`` becomes the column sums of rows
c*step .. (c+1)*step - 1 of the 2-d float64 ``x`` (zeros for a block with no rows);
``partial`` is returned, so that ``partial.sum(axis=0)`` is ``x.sum(axis=0)``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import (blocks, filled, judge_kernel, judge_no_race, judge_runs, judge_structure,
                      observe_kernel, observe_runs, quiet_call, shown, unwritten_hint)
from .messages import HINTS

ID = "ch07-column-sums"
PARTS: tuple[str, ...] = ()
NAME = "column_sums_blocked"

MISTAKES = (
    Mistake("range instead of prange", ("for c in prange(nblocks):", "for c in range(nblocks):"),
            None, "kernel.prange"),
    Mistake("step rounded down", ("step = (rows + nblocks - 1) // nblocks",
                                  "step = max(rows // nblocks, 1)"), None, "colsum.floor"),
    Mistake("assigns instead of adding", ("partial[c, j] += x[i, j]", "partial[c, j] = x[i, j]"),
            None, "colsum.assign"),
    Mistake("partial not zeroed", ("partial[c, j] = 0.0", "pass"), None, "kernel.unwritten"),
)

SHAPES = [((10, 3), 2), ((7, 4), 3), ((5, 2), 1), ((2, 5), 4), ((1000, 10), 2)]
HIDDEN_SHAPES = [((0, 3), 2), ((33, 6), 5), ((9, 1), 9)]
RACE_SHAPES = [((400_000, 2), 3), ((100_000, 4), 3), ((30_001, 3), 2), ((4_096, 10), 5),
               ((999, 7), 4)]


def _title(shape: tuple[int, int], nblocks: int) -> str:
    return f"x of shape {shape} in {nblocks} block(s)"


def cases(seed: int, hidden: bool) -> tuple[list[tuple[np.ndarray, int]],
                                            list[tuple[np.ndarray, int]]]:
    """(x, nblocks) of the value cases, then of the repeated runs: the same from the same seed."""
    rng = np.random.default_rng(seed)
    values = [(np.ascontiguousarray(np.round(rng.normal(size=shape), 3)), nblocks)
              for shape, nblocks in SHAPES + (HIDDEN_SHAPES if hidden else [])]
    runs = [(np.ascontiguousarray(rng.normal(size=shape)), nblocks)
            for shape, nblocks in RACE_SHAPES]
    return values, runs


def observe(ob: Observer, column_sums_blocked: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    observe_kernel(ob, column_sums_blocked, NAME, parallel=True)
    values, runs = cases(seed, hidden)
    for x, nblocks in values:
        with ob.case(_title(x.shape, nblocks)):
            partial = filled((nblocks, x.shape[1]))
            result = quiet_call(column_sums_blocked, x, partial)
            ob.put("x after the call", x)
            ob.put("partial", partial)
            ob.put("returned partial", result is partial)
            ob.put("result", result)
    observe_runs(ob, column_sums_blocked, runs, repeats=8 if hidden else 5)


def judge(ck: Checker, obs: Observations) -> None:
    kernel = judge_kernel(ck, obs, NAME, parallel=True)
    judge_no_race(ck, kernel.get("source"), NAME)
    values, runs = cases(obs.seed, obs.hidden)
    for x, nblocks in values:
        title = _title(x.shape, nblocks)
        with ck.case(title):
            seen = obs.case(ck, title, what=f"your {NAME}", hint=HINTS["kernel.numba"])
            ck.check(np.array_equal(seen["x after the call"], x),
                     "your kernel changed its input x.", hint=HINTS["colsum.x-changed"])
            _judge_partial(ck, seen["partial"], x, nblocks)
            ck.check(seen["returned partial"] is True, "your kernel did not return partial.",
                     expected="the array partial itself", received=shown(seen["result"]),
                     hint=HINTS["colsum.return"])
    judge_structure(ck, kernel.get("source"), NAME, {"x": 2, "partial": 2}, parallel=True)
    judge_runs(ck, obs, NAME, runs)
    ck.done()


def _judge_partial(ck: Checker, partial: Any, x: np.ndarray, nblocks: int) -> None:
    rows, cols = x.shape
    expected = np.stack([x[lo:hi].sum(axis=0) for lo, hi in blocks(rows, nblocks)])
    floor_step = max(rows // nblocks, 1)
    floor = np.stack([x[c * floor_step:(c + 1) * floor_step].sum(axis=0)
                      for c in range(nblocks)])
    last_only = np.stack([x[hi - 1] if hi > lo else np.zeros(cols)
                          for lo, hi in blocks(rows, nblocks)])
    hint = unwritten_hint(partial, expected)
    if hint and nblocks > rows:
        hint = HINTS["colsum.empty-block"]
    ck.close(partial, expected, atol=1e-9, rtol=1e-9, what="content of partial",
             hint=hint or HINTS["colsum.formula"],
             mistakes=[(np.broadcast_to(x.sum(axis=0), expected.shape), HINTS["colsum.all-rows"]),
                       (floor, HINTS["colsum.floor"]), (last_only, HINTS["colsum.assign"])])
    ck.close(np.asarray(partial).sum(axis=0), x.sum(axis=0), atol=1e-9, rtol=1e-9,
             what="partial.sum(axis=0)", hint=HINTS["colsum.formula"])
