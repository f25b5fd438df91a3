"""Check ``batches(x, y, batch_size, shuffle=False, seed=None, drop_last=False)``: yields
pairs (x[idx], y[idx]) that cover every sample once (the last batch may be smaller unless
``drop_last``), in order without shuffle, in a seeded random order with it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch09-batches"
PARTS: tuple[str, ...] = ()

_ORDER = "order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)"
MISTAKES = (
    Mistake("no drop_last", ("stop = n - n % batch_size if drop_last else n", "stop = n"), None,
            "batches.drop-last"),
    Mistake("drops the last batch always", ("stop = n - n % batch_size if drop_last else n",
                                            "stop = n - n % batch_size"), None, "batches.sizes"),
    Mistake("never shuffles", (_ORDER, "order = np.arange(n)"), None, "batches.order"),
    Mistake("draws with repeats", (_ORDER, "order = np.random.default_rng(seed).integers(0, n, n)"
                                           " if shuffle else np.arange(n)"), None,
            "batches.permutation"),
    Mistake("ignores the seed", (_ORDER, "order = np.random.default_rng().permutation(n) if "
                                         "shuffle else np.arange(n)"), None, "batches.same-seed"),
    Mistake("labels in order", ("yield x[idx], y[idx]", "yield x[idx], y[start:start + "
                                                       "batch_size]"), None, "batches.together"),
)


def course_batches(x: Any, y: Any, batch_size: int, shuffle: bool = False, seed: Any = None,
                   drop_last: bool = False) -> Any:
    """The course's batches (what the exercise asks for), for the checks of the exercises that
    use it."""
    n = len(x)
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start:start + batch_size]
        yield x[idx], y[idx]


def cases(seed: int, hidden: bool) -> list[tuple[int, int]]:
    """(n, batch_size) of each configuration."""
    rng = np.random.default_rng(seed)
    configs = [(10, 4), (12, 4), (7, 10)]
    if hidden:
        configs += [(int(rng.integers(20, 60)), int(rng.integers(2, 9))) for _ in range(2)]
    return configs


def data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """x[i] holds 100 * i + column, y[i] holds i: a batch tells which samples it holds."""
    ids = np.arange(n)
    x = (100 * ids[:, None] + np.arange(3)[None, :]).astype(np.float64)
    return x, ids.copy()


def _titles(n: int, bs: int) -> tuple[str, str, str]:
    return (f"{n} samples, batch_size={bs}, no shuffle: in order",
            f"{n} samples, batch_size={bs}, drop_last=True",
            f"{n} samples, batch_size={bs}, shuffled with a seed")


def _collect(batches: Callable[..., Any], x: np.ndarray, y: np.ndarray, **kwargs: Any) -> list:
    """What batches yielded: a pair of arrays for each pair, anything else as it came."""
    return [(np.asarray(data_of(item[0])), np.asarray(data_of(item[1])))
            if isinstance(item, (tuple, list)) and len(item) == 2 else item
            for item in batches(x, y, **kwargs)]


def observe(ob: Observer, batches: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    for n, bs in cases(seed, hidden):
        x, y = data(n)
        ordered, dropped, shuffled = _titles(n, bs)
        with ob.case(ordered):
            ob.put("batches", _collect(batches, x, y, batch_size=bs))
        with ob.case(dropped):
            ob.put("batches", _collect(batches, x, y, batch_size=bs, drop_last=True))
        with ob.case(shuffled):
            ob.put("batches", _collect(batches, x, y, batch_size=bs, shuffle=True, seed=3))
            ob.put("x after", x)
            ob.put("y after", y)
            ob.put("again", _collect(batches, x, y, batch_size=bs, shuffle=True, seed=3))
            ob.put("other seeds", [_collect(batches, x, y, batch_size=bs, shuffle=True, seed=s)
                                   for s in (4, 5, 6)])


def _pairs(ck: Checker, got: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The observed batches, each checked to be a pair of arrays of the same length."""
    if not isinstance(got, list):
        ck.fail("batches did not yield pairs (xb, yb).", received=got,
                hint=HINTS["batches.pair"])
    result = []
    for k, item in enumerate(got):
        ck.check(isinstance(item, tuple) and len(item) == 2
                 and all(isinstance(v, np.ndarray) for v in item),
                 f"batch {k} is not a pair (xb, yb).", received=getattr(item, "repr", item),
                 hint=HINTS["batches.pair"])
        xb, yb = item
        ck.check(len(xb) == len(yb), f"batch {k} has {len(xb)} inputs but {len(yb)} labels.",
                 hint=HINTS["batches.same-length"])
        result.append((xb, yb))
    return result


def _ids(ck: Checker, got: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The sample ids in the order they came (x[i] holds 100 * i + col, y[i] holds i)."""
    seen = np.concatenate([yb for _, yb in got]) if got else np.zeros(0, dtype=int)
    for k, (xb, yb) in enumerate(got):
        ck.check(xb.ndim == 2 and np.array_equal(xb[:, 0] // 100, yb),
                 f"in batch {k} the inputs and labels do not belong together.",
                 hint=HINTS["batches.together"])
    return seen


def judge(ck: Checker, obs: Observations) -> None:
    what = "your batches"
    for n, bs in cases(obs.seed, obs.hidden):
        x, y = data(n)
        sizes = [bs] * (n // bs) + ([n % bs] if n % bs else [])
        ordered, dropped, shuffled = _titles(n, bs)
        with ck.case(ordered):
            got = _pairs(ck, obs.case(ck, ordered, what=what)["batches"])
            got_sizes = [len(yb) for _, yb in got]
            ck.check(got_sizes == sizes, "the batch sizes are wrong.", expected=sizes,
                     received=got_sizes, hint=HINTS["batches.sizes"])
            ids = _ids(ck, got)
            ck.check(np.array_equal(ids, np.arange(n)), "without shuffle the samples should "
                     "come in their order 0, 1, 2, ...", expected=np.arange(n), received=ids,
                     hint=HINTS["batches.order"])
        with ck.case(dropped):
            got = _pairs(ck, obs.case(ck, dropped, what=what)["batches"])
            got_sizes = [len(yb) for _, yb in got]
            ck.check(got_sizes == [bs] * (n // bs), "drop_last should skip a last batch that "
                     "is smaller than batch_size (and only that one).",
                     expected=[bs] * (n // bs), received=got_sizes,
                     hint=HINTS["batches.drop-last"])
        with ck.case(shuffled):
            _judge_shuffled(ck, obs.case(ck, shuffled, what=what), x, y, sizes)
    ck.done()


def _judge_shuffled(ck: Checker, seen: Any, x: np.ndarray, y: np.ndarray,
                    sizes: list[int]) -> None:
    n = len(y)
    got = _pairs(ck, seen["batches"])
    x_after, y_after = seen["x after"], seen["y after"]
    ck.check(isinstance(x_after, np.ndarray) and np.array_equal(x_after, x)
             and isinstance(y_after, np.ndarray) and np.array_equal(y_after, y),
             "batches changed the x or y it was given.", hint=HINTS["batches.in-place"])
    got_sizes = [len(yb) for _, yb in got]
    ck.check(got_sizes == sizes, "the batch sizes are wrong.", expected=sizes,
             received=got_sizes, hint=HINTS["batches.shuffled-sizes"])
    ids = _ids(ck, got)
    ck.check(np.array_equal(np.sort(ids), np.arange(n)), "not every sample came exactly once.",
             expected=f"each of 0..{n - 1} once", received=ids,
             hint=HINTS["batches.permutation"])
    again = _ids(ck, _pairs(ck, seen["again"]))
    ck.check(np.array_equal(ids, again), "the same seed gave a different order.",
             expected=ids, received=again, hint=HINTS["batches.same-seed"])
    others = seen["other seeds"]
    ck.check(isinstance(others, list) and len(others) == 3,
             "the batches of the other seeds were not observed.")
    other_ids = [_ids(ck, _pairs(ck, o)) for o in others]
    ck.check(not np.array_equal(ids, np.arange(n)) or n < 3,
             "with shuffle=True the samples still came in order.", received=ids,
             hint=HINTS["batches.order"])
    ck.check(any(not np.array_equal(ids, o) for o in other_ids),
             "different seeds gave the same order.", hint=HINTS["batches.seed"])
