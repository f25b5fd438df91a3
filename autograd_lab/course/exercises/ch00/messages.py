"""Every hint the chapter 00 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # shared
    "common.return": "Did you forget the `return` statement?",
    # ch00-demo-double
    "double.multiply": "Multiply by 2.",
    "double.added": "You added 2; double means multiply by 2.",
    # ch00-center-rows
    "center.array": "Return the centred array (numpy operations give arrays).",
    "center.in-place": "Build a new array (X - ...) instead of subtracting in place (X -= ...).",
    "center.formula": "Each row should have mean 0: X.mean(axis=1, keepdims=True) is the "
                      "column of row means, shape (n, 1), and broadcasts across the row.",
    "center.ints": "Keep the fractions: numpy's mean already returns floats.",
    "center.columns": "You subtracted the column means: axis=0 averages down each column. "
                      "The mean of each row is X.mean(axis=1, keepdims=True).",
    "center.whole": "You subtracted the mean of the whole array; "
                    "each row needs its own mean: X.mean(axis=1, keepdims=True).",
    "center.keepdims": "X.mean(axis=1) has shape (n,), which broadcasts along the rows, "
                       "so row i's mean was subtracted from column i. Use keepdims=True.",
    # ch00-pairwise-sq-dists
    "pairwise.inputs": "Do not modify the inputs.",
    "pairwise.transposed": "Rows belong to A and columns to B: D[i, j] compares A[i] with B[j].",
    "pairwise.formula": "D[i, j] = ((A[i] - B[j])**2).sum(); A[:, None, :] - B[None, :, :] "
                        "has shape (n, m, d); sum it over the last axis.",
    "pairwise.sqrt": "Those are distances; square them (no sqrt).",
    "pairwise.square-first": "Square each difference first, then sum over the last axis.",
}
