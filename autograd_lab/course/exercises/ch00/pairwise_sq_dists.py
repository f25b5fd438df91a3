"""Check ``pairwise_sq_dists(A, B)``: ``D[i, j] = sum((A[i] - B[j])**2)``, shape (n, m)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import keyed
from .messages import HINTS

ID = "ch00-pairwise-sq-dists"
PARTS: tuple[str, ...] = ()

_KEY = "return (diff**2).sum(axis=-1)"
MISTAKES = (
    Mistake("distances", (_KEY, "return np.sqrt((diff**2).sum(axis=-1))"), None,
            "pairwise.sqrt"),
    Mistake("squares the sum", ("(diff**2).sum(axis=-1)", "diff.sum(axis=-1) ** 2"), None,
            "pairwise.square-first"),
    Mistake("B against A", ("diff = A[:, None, :] - B[None, :, :]",
                            "diff = B[:, None, :] - A[None, :, :]"), None, "pairwise.transposed"),
    Mistake("no return", (_KEY, "(diff**2).sum(axis=-1)"), None, "common.return"),
    Mistake("in place", ("diff = A[:, None, :] - B[None, :, :]",
                         "A -= A.mean()\n    diff = A[:, None, :] - B[None, :, :]"), None,
            "pairwise.inputs"),
)

HAND = "a small example worked by hand"


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, A, B) of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = [(HAND, np.array([[0.0, 0.0], [1.0, 1.0]]),
              np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0]]))]
    sizes: list[tuple[int, ...]] = [(3, 4, 2), (5, 2, 3), (1, 3, 1)]
    if hidden:
        sizes += [tuple(int(n) for n in rng.integers(1, 8, size=3)) for _ in range(2)]
    for n, m, d in sizes:
        A = rng.normal(size=(n, d))
        found.append((f"A of shape {(n, d)}, B of shape {(m, d)}", A, rng.normal(size=(m, d))))
    return found


def observe(ob: Observer, pairwise_sq_dists: Callable[[np.ndarray, np.ndarray], np.ndarray], *,
            seed: int, hidden: bool) -> None:
    found = cases(seed, hidden)
    for key, (_, A, B) in zip(keyed(case[0] for case in found), found):
        with ob.case(key):
            ob.put("result", pairwise_sq_dists(A, B))
            ob.put("A after the call", A)
            ob.put("B after the call", B)


def judge(ck: Checker, obs: Observations) -> None:
    found = cases(obs.seed, obs.hidden)
    for key, (name, A, B) in zip(keyed(case[0] for case in found), found):
        with ck.case(name):
            seen = obs.case(ck, key, what="your pairwise_sq_dists")
            got = seen["result"]
            after = (seen["A after the call"], seen["B after the call"])
            ck.check(all(isinstance(a, np.ndarray) for a in after)
                     and np.array_equal(A, after[0]) and np.array_equal(B, after[1]),
                     "your function changed A or B.", hint=HINTS["pairwise.inputs"])
            (n, _), (m, _) = A.shape, B.shape
            if got is not None and np.shape(got) == (m, n) and m != n:
                ck.fail(f"the result has shape {(m, n)}, expected {(n, m)}.",
                        hint=HINTS["pairwise.transposed"])
            diff = A[:, None, :] - B[None, :, :]
            expected = (diff**2).sum(axis=-1)
            ck.close(got, expected, atol=1e-9, what="distance matrix",
                     mistakes=[(np.sqrt(expected), HINTS["pairwise.sqrt"]),
                               (diff.sum(axis=-1) ** 2, HINTS["pairwise.square-first"])],
                     hint=HINTS["pairwise.formula"])
    ck.done()
