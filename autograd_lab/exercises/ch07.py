"""Checkers for chapter 07, Fast kernels with numba.

The learner's kernels are ``@njit`` functions over numpy arrays. The checkers test values only
(never speed), so they work the same with ``NUMBA_DISABLE_JIT=1``. To keep compilation cheap,
every case calls a kernel with one and the same signature: C-contiguous float64 arrays of a fixed
number of dimensions and Python floats. Output buffers are filled with NaN before the call, so
an element the kernel forgets to write shows up.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import Checker

__all__ = ["ch07_affine_relu_forward", "ch07_affine_relu_backward", "ch07_softmax_rows",
           "ch07_column_sums"]

NUMBA_HINT = ("If numba could not compile your function, the first lines of the message name "
              "the line and the types it could not handle. Inside @njit use loops, scalars, "
              "math functions and the numpy arrays you were given.")


def _call(ck: Checker, fn: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's kernel with numba's warnings silenced.

    A graded cell that writes to stderr counts as failed in nbgrader, and numba warns, for
    example, when ``parallel=True`` finds no loop to parallelise (as in the untouched stub).
    The values are what is checked here; the warning would only cost points.
    """
    from numba.core.errors import NumbaWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaWarning)
        return ck.call(fn, *args, hint=NUMBA_HINT)


def _jit_enabled() -> bool:
    from numba import config
    return not config.DISABLE_JIT


def _check_kernel(ck: Checker, fn: Any, name: str, parallel: bool = False) -> None:
    """Fail unless ``fn`` is a numba-compiled function (skipped when the JIT is switched off)."""
    decorator = "@njit(parallel=True)" if parallel else "@njit"
    with ck.case(f"{name} is compiled by numba ({decorator})"):
        ck.check(callable(fn), f"{name} is not a function.", received=fn,
                 hint=f"Pass the function itself: check.…({name}).")
        if not _jit_enabled():
            return  # NUMBA_DISABLE_JIT=1: njit returns the plain Python function
        options = getattr(fn, "targetoptions", None)
        ck.check(hasattr(fn, "py_func") and isinstance(options, dict),
                 f"{name} is a plain Python function, not a numba kernel.",
                 hint=f"Put {decorator} on the line above `def {name}(...)` and run the cell "
                      "again.")
        if parallel:
            ck.check(bool(options.get("parallel")), f"{name} is compiled without parallel=True.",
                     hint="Use @njit(parallel=True): without it, prange is just range and the "
                          "blocks run one after the other on one thread.")


def _filled(shape: tuple[int, ...]) -> np.ndarray:
    """An output buffer full of NaN: whatever the kernel does not write stays NaN."""
    return np.full(shape, np.nan)


def _unwritten_hint(got: np.ndarray, expected: np.ndarray) -> str | None:
    if np.isnan(got).any() and not np.isnan(expected).any():
        return ("Some elements still hold the NaN the buffer was filled with: write every "
                "element (a buffer from np.empty holds garbage, not zeros).")
    return None


# -- ch07-affine-relu-forward ---------------------------------------------------------------
def _forward_cases(rng: np.random.Generator, hidden: bool) -> list[tuple[str, np.ndarray,
                                                                         float, float]]:
    cases = [
        ("7 elements, a=1.5, b=-0.25", np.round(rng.normal(size=7), 3), 1.5, -0.25),
        ("one element", np.array([0.75]), -2.0, 1.0),
        ("an empty array", np.zeros(0), 1.0, 1.0),
        ("a negative a flips which elements pass", np.round(rng.normal(size=9), 3), -3.0, 0.5),
        ("a * x + b exactly 0 gives 0", np.array([0.5, 0.25, 1.0, -1.0]), 2.0, -1.0),
        ("1000 elements", rng.normal(size=1000), 0.8, 0.1),
    ]
    if hidden:
        cases += [("a = 0: every output is relu(b)", rng.normal(size=5), 0.0, 0.3),
                  ("a = 0 and b < 0: all zeros", rng.normal(size=5), 0.0, -0.3),
                  ("513 elements, random a and b", 10 * rng.normal(size=513),
                   float(np.round(rng.normal(), 3)), float(np.round(rng.normal(), 3)))]
    return cases


def ch07_affine_relu_forward(affine_relu_forward: Callable[..., Any], *, seed: int = 0,
                             hidden: bool = False) -> None:
    """Check ``affine_relu_forward(x, a, b, out)``: writes max(a * x + b, 0) into the 1-d
    float64 array ``out``, leaves ``x`` unchanged and returns ``out``."""
    ck = Checker("ch07-affine-relu-forward", seed=seed, hidden=hidden)
    _check_kernel(ck, affine_relu_forward, "affine_relu_forward")
    for name, x, a, b in _forward_cases(ck.rng, hidden):
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            x_before = x.copy()
            out = _filled(x.shape)
            result = _call(ck, affine_relu_forward, x, float(a), float(b), out)
            expected = np.maximum(a * x_before + b, 0.0)
            ck.check(np.array_equal(x, x_before), "your kernel changed its input x.",
                     hint="Compute a * x[i] + b into a local variable and write only into out.")
            ck.close(out, expected, atol=1e-12, rtol=1e-9, what="content of out",
                     hint=_unwritten_hint(out, expected)
                     or "out[i] = max(a * x[i] + b, 0): multiply, add, then clip at 0.",
                     mistakes=[(a * x_before + b, "The relu is missing: negative values must "
                                "become 0."),
                               (a * np.maximum(x_before, 0) + b, "The relu is applied to x; "
                                "apply it last, to a * x[i] + b."),
                               (np.maximum(a * x_before, 0) + b, "b is added after the relu; "
                                "clip a * x[i] + b as a whole.")])
            ck.check(result is out, "your kernel did not return out.",
                     expected="the array out itself", received=result,
                     hint="End with `return out` (the array you were given, not a new one).")
    ck.done()


# -- ch07-affine-relu-backward --------------------------------------------------------------
def _backward_reference(x: np.ndarray, a: float, b: float, g: np.ndarray
                        ) -> tuple[np.ndarray, float, float]:
    mask = (a * x + b) > 0
    gm = g * mask
    return a * gm + 0.0, float((gm * x).sum()), float(gm.sum())  # + 0.0: no -0 in messages


def _backward_autograd(x: np.ndarray, a: float, b: float, g: np.ndarray
                       ) -> tuple[np.ndarray, float, float]:
    import autograd_lab as al
    xv = al.Variable(x.copy(), requires_grad=True)
    av = al.Variable(np.array(a), requires_grad=True)
    bv = al.Variable(np.array(b), requires_grad=True)
    ((av * xv + bv).relu() * al.Variable(g)).sum().backward()
    return xv.grad.data, float(av.grad.data), float(bv.grad.data)


def ch07_affine_relu_backward(affine_relu_backward: Callable[..., Any], *, seed: int = 0,
                              hidden: bool = False) -> None:
    """Check ``affine_relu_backward(x, a, b, grad_out, grad_x) -> (grad_a, grad_b)`` for
    y = relu(a * x + b): writes dL/dx into ``grad_x`` and returns dL/da and dL/db, where
    ``grad_out`` is dL/dy; the derivative of relu at 0 is taken as 0 (as in PyTorch)."""
    ck = Checker("ch07-affine-relu-backward", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, affine_relu_backward, "affine_relu_backward")
    renamed = {"a * x + b exactly 0 gives 0": "a * x + b exactly 0: relu'(0) is taken as 0"}
    cases = [(renamed.get(name, name), x, a, b) for name, x, a, b in _forward_cases(rng, hidden)]
    cases.insert(1, ("agrees with autograd_lab's backward", np.round(rng.normal(size=6), 3),
                     1.25, 0.5))
    formula = ("With z = a * x[i] + b and g = grad_out[i]: where z > 0, grad_x[i] = a * g, and "
               "add g * x[i] to grad_a and g to grad_b; where z <= 0, grad_x[i] = 0 and nothing "
               "is added.")
    for name, x, a, b in cases:
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            g = np.ascontiguousarray(np.round(rng.normal(size=x.shape), 3))
            x_before, g_before = x.copy(), g.copy()
            grad_x = _filled(x.shape)
            result = _call(ck, affine_relu_backward, x, float(a), float(b), g, grad_x)
            if name.startswith("agrees"):
                gx, ga, gb = _backward_autograd(x_before, a, b, g_before)
            else:
                gx, ga, gb = _backward_reference(x_before, a, b, g_before)
            ck.check(np.array_equal(x, x_before) and np.array_equal(g, g_before),
                     "your kernel changed x or grad_out.", hint="Write only into grad_x.")
            ck.check(isinstance(result, (tuple, list)) and len(result) == 2,
                     "your kernel must return two numbers, (grad_a, grad_b).",
                     expected="a tuple (grad_a, grad_b)", received=result,
                     hint="Accumulate both sums in local variables in the loop and end with "
                          "`return grad_a, grad_b`.")
            at_zero = (a * x_before + b) == 0
            mistakes = [(a * g_before, "The mask is missing: where a * x[i] + b <= 0 the "
                         "gradient is 0."),
                        (g_before * ((a * x_before + b) > 0), "The factor a is missing: "
                         "d(a * x + b)/dx = a, so grad_x[i] = a * grad_out[i] where z > 0.")]
            if at_zero.any():
                mistakes.insert(0, (a * g_before * ((a * x_before + b) >= 0), "At z == 0 "
                                    "exactly, take relu's derivative as 0 (test z > 0, not "
                                    "z >= 0), as PyTorch does."))
            ck.close(grad_x, gx, atol=1e-12, rtol=1e-9, what="grad_x",
                     hint=_unwritten_hint(grad_x, gx) or formula, mistakes=mistakes)
            got_a, got_b = result
            swapped = np.allclose([float(got_b), float(got_a)], [ga, gb], atol=1e-9, rtol=1e-9)
            if swapped and not np.isclose(ga, gb):
                ck.fail("grad_a and grad_b look swapped.", expected=(ga, gb),
                        received=(float(got_a), float(got_b)),
                        hint="Return them in this order: grad_a, grad_b.")
            ck.close(float(got_a), ga, atol=1e-9, rtol=1e-9, what="grad_a (first returned value)",
                     hint=formula, mistakes=[(float(g_before[(a * x_before + b) > 0].sum()),
                                              "grad_a adds g * x[i], not g: "
                                              "d(a * x + b)/da = x.")])
            ck.close(float(got_b), gb, atol=1e-9, rtol=1e-9, what="grad_b (second returned value)",
                     hint=formula, mistakes=[(float(g_before.sum()), "grad_b sums grad_out only "
                                              "where z > 0.")])
    ck.done()


# -- ch07-softmax-rows ----------------------------------------------------------------------
def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ch07_softmax_rows(softmax_rows: Callable[..., Any], *, seed: int = 0,
                      hidden: bool = False) -> None:
    """Check ``softmax_rows(x, out)``: the numerically stable softmax of each row of the 2-d
    float64 array ``x``, written into ``out`` (same shape), ``x`` unchanged, ``out`` returned."""
    ck = Checker("ch07-softmax-rows", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, softmax_rows, "softmax_rows")
    cases = [
        ("a (3, 5) input", np.round(rng.normal(size=(3, 5)), 3)),
        ("a (4, 4) input (square: rows, not columns)", np.round(2 * rng.normal(size=(4, 4)), 3)),
        ("one row, one column", np.array([[3.0]])),
        ("a row of equal values gives 1/n each", np.full((2, 4), 7.5)),
        ("logits of +-1000 (exp would overflow without the shift)",
         np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.0]])),
        ("no rows: a (0, 4) input", np.zeros((0, 4))),
    ]
    if hidden:
        cases += [("a (6, 3) input", rng.normal(size=(6, 3))),
                  ("a (2, 50) input with large logits", 300 * rng.normal(size=(2, 50))),
                  ("a (17, 1) input: every row is [1]", rng.normal(size=(17, 1)))]
    for name, x in cases:
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            x_before = x.copy()
            out = _filled(x.shape)
            with np.errstate(all="ignore"):
                result = _call(ck, softmax_rows, x, out)
            expected = _softmax(x_before)
            ck.check(np.array_equal(x, x_before), "your kernel changed its input x.",
                     hint="Keep the row maximum in a local variable and compute exp(x[i, j] - m) "
                          "without assigning into x.")
            hint = ("Per row i: m = max of the row, e_j = exp(x[i, j] - m), then "
                    "out[i, j] = e_j / sum_j e_j.")
            if not np.isfinite(out).all() and np.isfinite(expected).all():
                hint = ("exp overflowed: subtract the row maximum before exp (softmax does not "
                        "change, and exp(x - max) <= 1).") if np.abs(x_before).max() > 700 else (
                        _unwritten_hint(out, expected) or hint)
            mistakes = []
            if x.size:
                shifted = np.exp(x_before - x_before.max(axis=1, keepdims=True))
                with np.errstate(all="ignore"):
                    mistakes = [(shifted, "The rows are not normalised: divide every e_j by the "
                                 "sum of its row."),
                                (_softmax(x_before, axis=0), "That is the softmax of each column; "
                                 "take the maximum and the sum along each row (over j)."),
                                (shifted / shifted.sum(), "You divided by the sum of the whole "
                                 "array; divide by the sum of each row.")]
            ck.close(out, expected, atol=1e-12, rtol=1e-9, what="content of out", hint=hint,
                     mistakes=mistakes)
            ck.check(result is out, "your kernel did not return out.",
                     expected="the array out itself", received=result,
                     hint="End with `return out` (the array you were given, not a new one).")
    ck.done()


# -- ch07-column-sums -----------------------------------------------------------------------
def _blocks(rows: int, nblocks: int) -> list[tuple[int, int]]:
    step = (rows + nblocks - 1) // nblocks
    return [(min(rows, c * step), min(rows, (c + 1) * step)) for c in range(nblocks)]


def ch07_column_sums(column_sums_blocked: Callable[..., Any], *, seed: int = 0,
                     hidden: bool = False) -> None:
    """Check ``column_sums_blocked(x, partial)``: with nblocks = partial.shape[0] and
    step = ceil(rows / nblocks), row c of ``partial`` becomes the column sums of rows
    c*step .. (c+1)*step - 1 of the 2-d float64 ``x`` (zeros for a block with no rows);
    ``partial`` is returned, so that ``partial.sum(axis=0)`` is ``x.sum(axis=0)``."""
    ck = Checker("ch07-column-sums", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, column_sums_blocked, "column_sums_blocked", parallel=True)
    cases = [((10, 3), 2), ((7, 4), 3), ((5, 2), 1), ((2, 5), 4), ((1000, 10), 2)]
    if hidden:
        cases += [((0, 3), 2), ((33, 6), 5), ((9, 1), 9)]
    formula = ("Block c covers rows c*step .. min(rows, (c+1)*step) - 1 with step = "
               "(rows + nblocks - 1) // nblocks. In `for c in prange(nblocks)`: set partial[c, :] "
               "to 0, then add each of the block's rows into partial[c, :].")
    for shape, nblocks in cases:
        with ck.case(f"x of shape {shape} in {nblocks} block(s)"):
            x = np.ascontiguousarray(np.round(rng.normal(size=shape), 3))
            x_before = x.copy()
            partial = _filled((nblocks, shape[1]))
            result = _call(ck, column_sums_blocked, x, partial)
            ck.check(np.array_equal(x, x_before), "your kernel changed its input x.",
                     hint="Write only into partial.")
            expected = np.stack([x_before[lo:hi].sum(axis=0)
                                 for lo, hi in _blocks(shape[0], nblocks)])
            floor_step = max(shape[0] // nblocks, 1)
            floor = np.stack([x_before[c * floor_step:(c + 1) * floor_step].sum(axis=0)
                              for c in range(nblocks)])
            last_only = np.stack([x_before[hi - 1] if hi > lo else np.zeros(shape[1])
                                  for lo, hi in _blocks(shape[0], nblocks)])
            hint = _unwritten_hint(partial, expected)
            if hint and nblocks > shape[0]:
                hint = ("A block with no rows must still be set to 0: zero partial[c, :] before "
                        "the loop over the block's rows.")
            ck.close(partial, expected, atol=1e-9, rtol=1e-9, what="content of partial",
                     hint=hint or formula,
                     mistakes=[(np.broadcast_to(x_before.sum(axis=0), expected.shape),
                                "Every block summed all the rows; block c adds only its own rows."),
                               (floor, "Rows are missing at the end: step = rows // nblocks "
                                "rounds down; use (rows + nblocks - 1) // nblocks."),
                               (last_only, "Each block holds only its last row: add with +=, "
                                "do not assign.")])
            ck.close(partial.sum(axis=0), x_before.sum(axis=0), atol=1e-9, rtol=1e-9,
                     what="partial.sum(axis=0)", hint=formula)
            ck.check(result is partial, "your kernel did not return partial.",
                     expected="the array partial itself", received=result,
                     hint="End with `return partial`.")
    ck.done()
