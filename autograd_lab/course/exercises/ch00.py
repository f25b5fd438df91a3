"""Checkers for chapter 00, Welcome: the numpy refresher."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._common import Checker

__all__ = ["ch00_demo_double", "ch00_center_rows", "ch00_pairwise_sq_dists"]


def ch00_demo_double(double: Callable[[np.ndarray], np.ndarray], *,
                     seed: int = 0, hidden: bool = False) -> None:
    """Check ``double(x) -> 2 * x``: the ungraded demonstration of how checks report."""
    ck = Checker("ch00-demo-double", seed=seed, hidden=hidden)
    for shape in [(3,), (2, 2)]:
        with ck.case(f"a {shape} array"):
            x = np.round(ck.rng.normal(size=shape), 2)
            ck.close(ck.call(double, x), 2 * x, what="result", hint="Multiply by 2.",
                     mistakes=[(x + 2, "You added 2; double means multiply by 2.")])
    ck.done()


def ch00_center_rows(center_rows: Callable[[np.ndarray], np.ndarray], *,
                     seed: int = 0, hidden: bool = False) -> None:
    """Check ``center_rows(X)``: subtract from each row of a 2-D array that row's mean."""
    ck = Checker("ch00-center-rows", seed=seed, hidden=hidden)
    shapes: list[tuple[int, ...]] = [(3, 5), (4, 4), (1, 6), (5, 1)]
    if hidden:
        shapes += [tuple(int(n) for n in ck.rng.integers(2, 9, size=2)) for _ in range(2)]
    for shape in shapes:
        with ck.case(f"a {shape} array"):
            X: np.ndarray = np.round(ck.rng.normal(2.0, 3.0, size=shape), 2)
            before = X.copy()
            got = ck.call(center_rows, X)
            ck.check(isinstance(got, np.ndarray), "the result is not a numpy array.",
                     expected="np.ndarray", received=type(got).__name__,
                     hint="Return the centred array (numpy operations give arrays).")
            ck.check(np.array_equal(X, before), "your function changed its input X.",
                     hint="Build a new array (X - ...) instead of subtracting in place (X -= ...).")
            ck.close(got, before - before.mean(axis=1, keepdims=True), atol=1e-9, what="result",
                     hint="Each row should have mean 0: X.mean(axis=1, keepdims=True) is the "
                          "column of row means, shape (n, 1), and broadcasts across the row.",
                     mistakes=_center_mistakes(before))
    with ck.case("an integer array gives floats"):
        X = np.arange(12).reshape(3, 4)
        got = ck.call(center_rows, X)
        ck.close(got, X - X.mean(axis=1, keepdims=True), atol=1e-12, what="result",
                 hint="Keep the fractions: numpy's mean already returns floats.")
    ck.done()


def _center_mistakes(X: np.ndarray) -> list[tuple[np.ndarray, str]]:
    mistakes = [(X - X.mean(axis=0, keepdims=True),
                 "You subtracted the column means: axis=0 averages down each column. "
                 "The mean of each row is X.mean(axis=1, keepdims=True)."),
                (X - X.mean(), "You subtracted the mean of the whole array; "
                               "each row needs its own mean: X.mean(axis=1, keepdims=True).")]
    if X.shape[0] == X.shape[1]:
        mistakes.append((X - X.mean(axis=1),
                         "X.mean(axis=1) has shape (n,), which broadcasts along the rows, "
                         "so row i's mean was subtracted from column i. Use keepdims=True."))
    return mistakes


def ch00_pairwise_sq_dists(pairwise_sq_dists: Callable[[np.ndarray, np.ndarray], np.ndarray], *,
                           seed: int = 0, hidden: bool = False) -> None:
    """Check ``pairwise_sq_dists(A, B)``: ``D[i, j] = sum((A[i] - B[j])**2)``, shape (n, m)."""
    ck = Checker("ch00-pairwise-sq-dists", seed=seed, hidden=hidden)
    with ck.case("a small example worked by hand"):
        A = np.array([[0.0, 0.0], [1.0, 1.0]])
        B = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0]])
        _check_pairwise(ck, pairwise_sq_dists, A, B)
    sizes: list[tuple[int, ...]] = [(3, 4, 2), (5, 2, 3), (1, 3, 1)]
    if hidden:
        sizes += [tuple(int(n) for n in ck.rng.integers(1, 8, size=3)) for _ in range(2)]
    for n, m, d in sizes:
        with ck.case(f"A of shape {(n, d)}, B of shape {(m, d)}"):
            _check_pairwise(ck, pairwise_sq_dists, ck.rng.normal(size=(n, d)),
                            ck.rng.normal(size=(m, d)))
    ck.done()


def _check_pairwise(ck: Checker, pairwise_sq_dists: Callable[..., np.ndarray],
                    A: np.ndarray, B: np.ndarray) -> None:
    before = (A.copy(), B.copy())
    got = ck.call(pairwise_sq_dists, A, B)
    ck.check(np.array_equal(A, before[0]) and np.array_equal(B, before[1]),
             "your function changed A or B.", hint="Do not modify the inputs.")
    (n, _), (m, _) = A.shape, B.shape
    if got is not None and np.shape(got) == (m, n) and m != n:
        ck.fail(f"the result has shape {(m, n)}, expected {(n, m)}.", hint="Rows belong "
                "to A and columns to B: D[i, j] compares A[i] with B[j].")
    diff = A[:, None, :] - B[None, :, :]
    expected = (diff**2).sum(axis=-1)
    ck.close(got, expected, atol=1e-9, what="distance matrix",
             mistakes=[(np.sqrt(expected), "Those are distances; square them (no sqrt)."),
                       (diff.sum(axis=-1) ** 2,
                        "Square each difference first, then sum over the last axis.")],
             hint="D[i, j] = ((A[i] - B[j])**2).sum(); A[:, None, :] - B[None, :, :] "
                  "has shape (n, m, d); sum it over the last axis.")
