"""Check ``output_size(n, k, stride=1, padding=0)``: how many positions a window of size k
takes along an axis of length n padded by ``padding`` on both sides, moving by ``stride``:
``(n + 2 * padding - k) // stride + 1``, as an int."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch10-output-size"
PARTS: tuple[str, ...] = ()

_KEY = "(n + 2 * padding - k) // stride + 1"
MISTAKES = (
    Mistake("no + 1", (_KEY, "(n + 2 * padding - k) // stride"), None, "size.plus-one"),
    Mistake("padding on one side", (_KEY, "(n + padding - k) // stride + 1"), None,
            "size.both-sides"),
    Mistake("no padding", (_KEY, "(n - k) // stride + 1"), None, "size.no-padding"),
    Mistake("no stride", (_KEY, "(n + 2 * padding - k) + 1"), None, "size.stride"),
    Mistake("true division", (_KEY, "(n + 2 * padding - k) / stride + 1"), None, "size.int"),
)


def cases(seed: int, hidden: bool) -> list[tuple[int, int, int, int]]:
    """(n, k, stride, padding) of every case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = [(8, 3, 1, 0), (8, 3, 1, 1), (8, 2, 2, 0), (7, 3, 2, 1), (5, 5, 1, 0), (28, 5, 3, 2)]
    if hidden:
        found += [(int(rng.integers(5, 40)), int(rng.integers(1, 5)), int(rng.integers(1, 4)),
                   int(rng.integers(0, 3))) for _ in range(4)]
    return found


def _title(n: int, k: int, s: int, p: int) -> str:
    return f"n={n}, k={k}, stride={s}, padding={p}"


def observe(ob: Observer, output_size: Callable[..., int], *, seed: int, hidden: bool) -> None:
    for n, k, s, p in cases(seed, hidden):
        with ob.case(_title(n, k, s, p)):
            ob.put("result", output_size(n, k, stride=s, padding=p))


def judge(ck: Checker, obs: Observations) -> None:
    for n, k, s, p in cases(obs.seed, obs.hidden):
        title = _title(n, k, s, p)
        with ck.case(title):
            got = obs.case(ck, title, what="your output_size")["result"]
            expected = (n + 2 * p - k) // s + 1
            ck.check(got is not None, "output_size returned None.", expected=expected,
                     hint=HINTS["size.return"])
            ck.check(isinstance(got, (int, np.integer)), "output_size should return an int.",
                     expected=expected, received=got, hint=HINTS["size.int"])
            mistakes = {(n + 2 * p - k) // s: HINTS["size.plus-one"],
                        (n + p - k) // s + 1: HINTS["size.both-sides"],
                        (n - k) // s + 1: HINTS["size.no-padding"],
                        (n + 2 * p - k) + 1: HINTS["size.stride"]}
            hint = mistakes.get(int(got), HINTS["size.formula"]) if got != expected else None
            ck.check(got == expected, "the output size is wrong.", expected=expected,
                     received=got, hint=hint)
    ck.done()
