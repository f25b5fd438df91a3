"""Check ``DataLoader(X, y, batch_size, shuffle, seed, drop_last)``: ``len(loader)`` is the
number of batches an epoch yields (the last partial batch counts unless ``drop_last``);
iterating yields ``(Variable of inputs, array of labels)`` pairs that cover every sample once per
epoch (inputs and labels of the same samples); without shuffle in order; with shuffle a new order
every epoch, from one generator made from ``seed`` (so the same seed repeats the whole sequence
of epochs and another seed does not)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, swapped_names
from .._exercise import Mistake
from .._functions import function_of
from .._observe import Observations, Observer
from .batches import course_batches
from .messages import HINTS

ID = "ch09-dataloader"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("a new generator every epoch", ("self.rng = np.random.default_rng(seed)",
                                            "self.rng = seed"), None, "loader.same-epochs"),
    Mistake("the partial batch not counted", ("return n // b if self.drop_last else -(-n // b)",
                                              "return n // b"), None, "loader.len-partial"),
    Mistake("the transform ignored", ("xb if self.transform is None else self.transform(xb)",
                                      "xb"), None, "loader.transform-count"),
)

SHUFFLED = ("with shuffle: every sample once per epoch, a new order each epoch, the same "
            "sequence for the same seed")
TRANSFORM = "transform: applied to each batch's inputs as it is drawn, every epoch"


def cases(seed: int, hidden: bool) -> tuple[int, int, np.ndarray, np.ndarray]:
    """n, batch_size, X and y: X[i] = (2 i, 2 i + 1) + a shift, y[i] = 3 i."""
    rng = np.random.default_rng(seed)
    n, bs = (10, 4) if not hidden else (23, 5)
    X = np.arange(n * 2, dtype=np.float64).reshape(n, 2) + rng.integers(0, 3)
    return n, bs, X, np.arange(n) * 3


def _ordered_title(n: int, bs: int, drop_last: bool) -> str:
    want = n // bs if drop_last else -(-n // bs)
    return (f"{n} samples, batch_size={bs}, drop_last={drop_last}: {want} batches, in order "
            "without shuffle")


def _epoch(loader: Any, Variable: Any) -> list[Any]:
    """One epoch as plain data: (inputs, labels, whether the inputs are a Variable, their type's
    name) for each pair, anything else as it came."""
    out: list[Any] = []
    for item in list(iter(loader)):
        if isinstance(item, (tuple, list)) and len(item) == 2:
            xb, yb = item
            out.append((np.asarray(getattr(xb, "data", xb)), np.asarray(getattr(yb, "data", yb)),
                        Variable is None or isinstance(xb, Variable), type(xb).__name__))
        else:
            out.append(item)
    return out


def _stored(loader: Any, name: str) -> Any:
    value = getattr(loader, name, None)
    return None if value is None else np.asarray(value)


def observe(ob: Observer, DataLoader: Any, *, seed: int, hidden: bool,
            Variable: Any = None) -> None:
    """Runs the learner's DataLoader with the course's batches (where its __iter__ uses that
    name): a mistake in batches costs exercise ch09-batches only."""
    found = getattr(function_of(DataLoader, "__iter__"), "__globals__", None)
    ns: dict[str, Any] = found if isinstance(found, dict) and "batches" in found else {}
    with swapped_names(ns, {"batches": course_batches} if ns else {}):
        _observe(ob, DataLoader, seed, hidden, Variable)


def _observe(ob: Observer, DataLoader: Any, seed: int, hidden: bool, Variable: Any) -> None:
    n, bs, X, y = cases(seed, hidden)
    for drop_last in (False, True):
        with ob.case(_ordered_title(n, bs, drop_last)):
            loader = DataLoader(X, y, batch_size=bs, shuffle=False, drop_last=drop_last)
            ob.put("X", _stored(loader, "X"))
            ob.put("y", _stored(loader, "y"))
            ob.put("len", len(loader))
            ob.put("epoch", _epoch(loader, Variable))
    with ob.case(SHUFFLED):
        loader = DataLoader(X, y, batch_size=bs, shuffle=True, seed=seed + 3)
        ob.put("epochs", [_epoch(loader, Variable), _epoch(loader, Variable)])
        again = DataLoader(X, y, batch_size=bs, shuffle=True, seed=seed + 3)
        ob.put("again", [_epoch(again, Variable), _epoch(again, Variable)])
        other = DataLoader(X, y, batch_size=bs, shuffle=True, seed=seed + 4)
        ob.put("other", _epoch(other, Variable))
    with ob.case(TRANSFORM):
        calls: list[int] = []

        def transform(xb: np.ndarray) -> np.ndarray:
            calls.append(len(xb))
            return np.asarray(xb) * 10.0 + len(calls)

        loader = DataLoader(X, y, batch_size=bs, shuffle=False, transform=transform)
        ob.put("X", _stored(loader, "X"))
        ob.put("calls before", len(calls))
        ob.put("epochs", [_epoch(loader, Variable), _epoch(loader, Variable)])
        ob.put("calls", len(calls))


def _pairs(ck: Checker, epoch: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    ck.check(isinstance(epoch, list), "an epoch was not observed.")
    out = []
    for k, item in enumerate(epoch):
        ck.check(isinstance(item, tuple) and len(item) == 4, f"batch {k} is not a pair (xb, yb).",
                 received=getattr(item, "repr", item), hint=HINTS["loader.pair"])
        xb, yb, is_variable, kind = item
        ck.check(is_variable is True, f"the inputs of batch {k} are a {kind}, not a Variable.",
                 hint=HINTS["loader.variable"])
        ck.check(isinstance(xb, np.ndarray) and isinstance(yb, np.ndarray),
                 f"batch {k} does not hold arrays of numbers.", hint=HINTS["loader.pair"])
        out.append((xb, yb))
    return out


def _labels(pairs: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    return np.concatenate([yb for _, yb in pairs]) if pairs else np.array([])


def judge(ck: Checker, obs: Observations) -> None:
    n, bs, X, y = cases(obs.seed, obs.hidden)
    what = "your DataLoader"
    for drop_last in (False, True):
        title = _ordered_title(n, bs, drop_last)
        with ck.case(title):
            _judge_ordered(ck, obs.case(ck, title, what=what), n, bs, X, y, drop_last)
    with ck.case(SHUFFLED):
        _judge_shuffled(ck, obs.case(ck, SHUFFLED, what=what), X, y)
    with ck.case(TRANSFORM):
        _judge_transform(ck, obs.case(ck, TRANSFORM, what=what,
                                      hint=HINTS["loader.transform-arg"]), n, bs, X)
    ck.done()


def _same(a: Any, b: np.ndarray) -> bool:
    return isinstance(a, np.ndarray) and np.array_equal(a, b)


def _judge_ordered(ck: Checker, seen: Any, n: int, bs: int, X: np.ndarray, y: np.ndarray,
                   drop_last: bool) -> None:
    want = n // bs if drop_last else -(-n // bs)
    for attr, value in (("X", X), ("y", y)):
        ck.check(_same(seen[attr], value), f"loader.{attr} does not hold the samples given.",
                 hint=HINTS["loader.store"])
    got = seen["len"]
    ck.check(got == want, f"len(loader) is {got}, expected {want}.", expected=want, received=got,
             hint=HINTS["loader.len-partial" if got == n // bs else "loader.len-drop"
                        if got == -(-n // bs) else "loader.len"])
    pairs = _pairs(ck, seen["epoch"])
    sizes = [len(yb) for _, yb in pairs]
    expected_sizes = [bs] * (n // bs) + ([n % bs] if n % bs and not drop_last else [])
    ck.check(sizes == expected_sizes, "the batches do not have the expected sizes.",
             expected=expected_sizes, received=sizes, hint=HINTS["loader.sizes"])
    ys = _labels(pairs)
    ck.check(np.array_equal(ys, y[:len(ys)]), "without shuffle the samples do not come in order.",
             expected=y[:len(ys)], received=ys, hint=HINTS["loader.order"])


def _judge_shuffled(ck: Checker, seen: Any, X: np.ndarray, y: np.ndarray) -> None:
    first, second = (_pairs(ck, e) for e in seen["epochs"])
    for pairs in (first, second):
        xs = np.concatenate([xb for xb, _ in pairs])
        ys = _labels(pairs)
        ck.check(sorted(ys.tolist()) == y.tolist(), "an epoch does not hold every sample exactly "
                 "once.", hint=HINTS["loader.once"])
        ck.check(np.array_equal(xs, X[ys // 3]), "inputs and labels of a batch come from "
                 "different samples.", hint=HINTS["loader.together"])
    order1, order2 = _labels(first), _labels(second)
    ck.check(not np.array_equal(order1, order2), "two epochs come in the same order.",
             hint=HINTS["loader.same-epochs"])
    a1, a2 = (_pairs(ck, e) for e in seen["again"])
    same = all(np.array_equal(p[1], q[1]) for p, q in zip(first + second, a1 + a2))
    ck.check(same, "two loaders made with the same seed give different epochs.",
             hint=HINTS["loader.same-seed"])
    o1 = _labels(_pairs(ck, seen["other"]))
    ck.check(not np.array_equal(o1, order1), "another seed gives the same order.",
             hint=HINTS["loader.seed"])


def _judge_transform(ck: Checker, seen: Any, n: int, bs: int, X: np.ndarray) -> None:
    ck.check(_same(seen["X"], X), "with a transform, loader.X no longer holds the samples given.",
             hint=HINTS["loader.transform-X"])
    first, second = (_pairs(ck, e) for e in seen["epochs"])
    done_before = seen["calls before"]
    ck.check(done_before == 0, f"the transform ran {done_before} times while the loader was "
             "made.", hint=HINTS["loader.transform-early"])
    want, calls = 2 * -(-n // bs), seen["calls"]
    ck.check(calls == want, f"the transform ran {calls} times in two epochs of {want // 2} "
             "batches.", expected=want, received=calls, hint=HINTS["loader.transform-count"])
    k = 0
    for pairs in (first, second):
        for xb, yb in pairs:
            k += 1
            ck.check(np.array_equal(xb, X[yb // 3] * 10.0 + k),
                     f"the inputs of batch {k} are not transform(xb).",
                     hint=HINTS["loader.transform-inputs"])
