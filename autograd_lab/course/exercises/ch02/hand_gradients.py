"""Check ``hand_gradients(w1, w2, w3)``: a dict of d loss / d l4, l3, l2, l1 ((2, 2) arrays)
and d loss / d w1, w2, w3 (numbers) for the chapter's example with input = ones(2, 2)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import Variable, ones, tensor
from .._common import Checker, grad_data
from .._exercise import Mistake
from .._observe import Observations, Observer, Opaque
from ._shared import keyed
from .messages import HINTS

ID = "ch02-hand-gradients"
PARTS: tuple[str, ...] = ()

KEYS = ("l4", "l3", "l2", "l1", "w1", "w2", "w3")

MISTAKES = (
    Mistake("only the path through l3", ("d_l1 = d_l2 * 1 + d_l3 * w3", "d_l1 = d_l3 * w3"), None,
            "hand.l1-l2"),
    Mistake("the mean's 1/4 forgotten", ("d_l4 = np.full((2, 2), 1 / 4)", "d_l4 = np.ones((2, 2))"),
            None, "hand.l4-mean"),
    Mistake("w1's four contributions not summed",
            ('"w1": float((d_l1 * inp).sum())', '"w1": float(d_l1[0, 0])'), None, "hand.w1-sum"),
    Mistake("no entry for w3", ('"w3": float((d_l3 * l1).sum())}', "}"), None, "hand.keys"),
    Mistake("a number for l4", ('"l4": d_l4', '"l4": 0.25'), None, "hand.l-shape"),
)


def example(w1: float, w2: float, w3: float) -> dict[str, np.ndarray]:
    """The chapter's graph run by the engine: d loss / d every named Variable."""
    inp = ones(2, 2)
    ws = [tensor(float(v), requires_grad=True) for v in (w1, w2, w3)]
    l1 = inp * ws[0]
    l2 = l1 + ws[1]
    l3 = l1 * ws[2]
    l4 = l2 * l3
    for v in (l1, l2, l3, l4):
        v.retain_grad()
    l4.mean().backward()
    out = {name: grad_data(v) for name, v in zip(["l1", "l2", "l3", "l4"], [l1, l2, l3, l4])}
    out.update({name: grad_data(v) for name, v in zip(["w1", "w2", "w3"], ws)})
    return out


def cases(seed: int, hidden: bool) -> list[tuple[float, ...]]:
    """The (w1, w2, w3) of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    points: list[tuple[float, ...]] = [(2.0, 3.0, 4.0), (1.0, -1.0, 0.5)]
    if hidden:
        points += [tuple(float(v) + 0.0 for v in np.round(rng.uniform(-3, 3, size=3), 2))
                   for _ in range(3)]
    return points


def _title(w1: float, w2: float, w3: float) -> str:
    return f"w1={w1:g}, w2={w2:g}, w3={w3:g}"


def observe(ob: Observer, hand_gradients: Callable[..., dict], *, seed: int,
            hidden: bool) -> None:
    points = cases(seed, hidden)
    for key, w in zip(keyed(_title(*w) for w in points), points):
        with ob.case(key):
            got = hand_gradients(*w)
            ob.put("is a dict", isinstance(got, dict))
            ob.put("type", type(got).__name__)
            if not isinstance(got, dict):
                continue
            ob.put("keys", sorted(map(str, got)))
            for key in KEYS:
                if key in got:
                    value = got[key]
                    ob.put(key, value.data if isinstance(value, Variable) else value)


def judge(ck: Checker, obs: Observations) -> None:
    points = cases(obs.seed, obs.hidden)
    for key, (w1, w2, w3) in zip(keyed(_title(*w) for w in points), points):
        with ck.case(_title(w1, w2, w3)):
            seen = obs.case(ck, key, what="your hand_gradients")
            ck.check(seen["is a dict"] is True, "the result is not a dict.",
                     expected="{'l4': ..., 'l3': ..., 'l2': ..., 'l1': ..., 'w1': ..., 'w2': ..., "
                              "'w3': ...}", received=seen["type"], hint=HINTS["hand.dict"])
            want = example(w1, w2, w3)
            missing = [k for k in want if k not in seen]
            ck.check(not missing, f"the dict has no entry for {missing}.",
                     expected=sorted(want), received=seen["keys"], hint=HINTS["hand.keys"])
            mistakes = _mistakes(want, w3)
            for key in KEYS:
                _judge_key(ck, key, seen[key], want[key], mistakes[key])
    ck.done()


def _judge_key(ck: Checker, key: str, value: Any, want: np.ndarray, mistakes: list) -> None:
    expected = want if key.startswith("l") else float(want)
    if isinstance(value, Opaque):
        value = value.repr
    if np.shape(value) != np.shape(expected):
        ck.fail(f"d loss / d {key} has shape {np.shape(value)}, expected "
                f"{np.shape(expected)}.", expected=expected, received=value,
                hint=HINTS["hand.l-shape" if key.startswith("l") else "hand.w-shape"])
    ck.close(value, expected, atol=1e-8, rtol=1e-8, what=f"d loss / d {key}",
             mistakes=mistakes, hint=HINTS["hand.chain"])


def _mistakes(d: dict[str, np.ndarray], w3: float) -> dict[str, list[tuple[Any, str]]]:
    return {
        "l4": [(np.ones((2, 2)), HINTS["hand.l4-mean"])],
        "l3": [(4 * d["l3"], HINTS["hand.mean"]), (d["l2"], HINTS["hand.l3-factor"])],
        "l2": [(4 * d["l2"], HINTS["hand.mean"]), (d["l3"], HINTS["hand.l2-factor"])],
        "l1": [(d["l2"], HINTS["hand.l1-l3"]), (w3 * d["l3"], HINTS["hand.l1-l2"])],
        "w1": [(d["l1"][0, 0], HINTS["hand.w1-sum"]), (d["w1"] / 4, HINTS["hand.w-average"])],
        "w2": [(d["w2"] / 4, HINTS["hand.w2"])],
        "w3": [(d["w3"] / 4, HINTS["hand.w3"])],
    }
