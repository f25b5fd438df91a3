"""Check ``column_sums(x)``, the library's column sum on the blocked kernel: it picks the
blocks by size (one per thread from ``PARALLEL_MIN_SIZE`` elements on, else one block on the
serial copy), allocates ``partial`` of ``x``'s dtype, passes a C-contiguous ``x`` and returns
the sum of the partial rows. The check swaps the two kernels for recording stand-ins to see
how they are called, then runs ``column_sums`` on compiled kernels of the course's (so that a
mistake in the blocked kernel costs only that exercise)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, swapped_names
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import blocks, jit_enabled, quiet_call, shown
from .messages import HINTS

ID = "ch07-column-sums-wrapper"
PARTS: tuple[str, ...] = ()
NAMES = ("column_sums_blocked", "_column_sums_serial", "PARALLEL_MIN_SIZE")
SETUP = "column_sums and the names it uses"
COLS = 10
COMPILED = "with compiled kernels behind it: small and large x give x.sum(axis=0)"

MISTAKES = (
    Mistake("returns partial", ("return column_sums_blocked(x, partial).sum(axis=0)",
                                "return column_sums_blocked(x, partial)"), None,
            "wrapper.sum-partial"),
    Mistake("a float64 partial", (
        "partial = np.empty((numba.get_num_threads(), x.shape[1]), dtype=x.dtype)",
        "partial = np.empty((numba.get_num_threads(), x.shape[1]))"), None, "wrapper.dtype"),
    Mistake("x not made contiguous", ("x = np.ascontiguousarray(x)\n    ", ""), None,
            "wrapper.contiguous"),
    Mistake("one block when large", ("np.empty((numba.get_num_threads(), x.shape[1])",
                                     "np.empty((1, x.shape[1])"), None, "wrapper.blocks-large"),
)


def cases(seed: int, hidden: bool, threshold: int) -> tuple[list, list[np.ndarray]]:
    """(name, x) of the recorded cases, then the x of the compiled case: the same from the
    same seed (and threshold), wherever run."""
    rng = np.random.default_rng(seed)
    big_rows = -(-threshold // COLS)
    found = [("a small x, shape (7, 4)", (7, 4), np.float64, False),
             (f"a large x, shape ({big_rows}, {COLS}): at least PARALLEL_MIN_SIZE elements",
              (big_rows, COLS), np.float64, False),
             ("a float32 x keeps its dtype", (50, 3), np.float32, False),
             ("a transposed (not C-contiguous) x", (6, 9), np.float64, True)]
    if hidden:
        found += [("a large float32 x", (big_rows + 5, COLS), np.float32, False),
                  ("a small x with one row", (1, 5), np.float64, False)]
    recorded = []
    for name, shape, dtype, transposed in found:
        x = np.round(rng.normal(size=shape[::-1] if transposed else shape), 3).astype(dtype)
        recorded.append((name, x.T if transposed else x))
    compiled = [np.round(rng.normal(size=shape), 3) for shape in [(9, 3), (big_rows, COLS)]]
    return recorded, compiled


def _recording_kernel(kind: str, calls: list) -> Callable[..., Any]:
    """A stand-in for the blocked kernel: records how it was called, and fills ``partial``
    with the block sums (in numpy) only when ``partial`` has the shape the kernel needs."""
    def kernel(x: np.ndarray, partial: np.ndarray) -> np.ndarray:
        calls.append((kind, x, partial))
        if (isinstance(x, np.ndarray) and isinstance(partial, np.ndarray) and x.ndim == 2
                and partial.ndim == 2 and partial.shape[0] >= 1 and partial.shape[1] == x.shape[1]):
            for c, (lo, hi) in enumerate(blocks(x.shape[0], partial.shape[0])):
                partial[c] = x[lo:hi].sum(axis=0)
        return partial
    return kernel


def _blocked_reference(x: np.ndarray, partial: np.ndarray) -> np.ndarray:
    rows, cols = x.shape
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in range(nblocks):
        for j in range(cols):
            partial[c, j] = 0.0
        for i in range(c * step, min(rows, (c + 1) * step)):
            for j in range(cols):
                partial[c, j] += x[i, j]
    return partial


def compiled_reference() -> Callable[..., Any]:
    """The course's blocked kernel, compiled by numba (plain Python with the JIT off)."""
    return _compiled() if jit_enabled() else _blocked_reference


@functools.cache
def _compiled() -> Callable[..., Any]:
    from numba import njit
    return njit(_blocked_reference)


def observe(ob: Observer, column_sums: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    import numba
    space = getattr(column_sums, "__globals__", None)
    with ob.case(SETUP):
        ob.put("object", column_sums)
        ob.put("function", callable(column_sums) and isinstance(space, dict))
        if not (callable(column_sums) and isinstance(space, dict)):
            return
        if ob.put("missing", [name for name in NAMES if name not in space]):
            return
        ob.put("threads", numba.get_num_threads())
        threshold = ob.put("threshold", int(space["PARALLEL_MIN_SIZE"]))
    recorded, compiled = cases(seed, hidden, threshold)
    for name, x in recorded:
        with ob.case(name):
            calls: list = []
            stand_ins = {kind: _recording_kernel(kind, calls) for kind in NAMES[:2]}
            with swapped_names(space, stand_ins):
                got = column_sums(x)
            _observe_calls(ob, calls, got)
    with ob.case(COMPILED):
        kernel = compiled_reference()
        with swapped_names(space, {NAMES[0]: kernel, NAMES[1]: kernel}):
            ob.put("sums", [quiet_call(column_sums, x) for x in compiled])


def _observe_calls(ob: Observer, calls: list, got: Any) -> None:
    ob.put("kinds", [kind for kind, *_ in calls])
    if calls:
        _, x_in, partial = calls[0]
        ob.put("x contiguous", isinstance(x_in, np.ndarray) and bool(x_in.flags.c_contiguous))
        is_array = isinstance(partial, np.ndarray)
        ob.put("partial shape", tuple(partial.shape) if is_array else None)
        ob.put("partial dtype", str(partial.dtype) if is_array else None)
        ob.put("returned partial", got is partial)
    ob.put("result", got)
    ob.put("result shape", tuple(np.shape(got)))
    ob.put("result dtype", str(np.asarray(got).dtype))


def judge(ck: Checker, obs: Observations) -> None:
    rule = HINTS["wrapper.rule"]
    setup = obs.case(ck, SETUP, what="your column_sums", hint=rule)
    if setup["function"] is not True:
        ck.fail("column_sums is not a Python function.", received=shown(setup["object"]),
                hint=HINTS["wrapper.pass-function"])
    missing = setup["missing"]
    ck.check(not missing, f"column_sums cannot see {', '.join(missing)}.",
             hint=HINTS["wrapper.names"])
    threshold, threads = setup["threshold"], setup["threads"]
    recorded, compiled = cases(obs.seed, obs.hidden, threshold)
    for name, x in recorded:
        with ck.case(name):
            seen = obs.case(ck, name, what="your column_sums", hint=rule)
            _judge_calls(ck, seen, x, threshold, threads)
    with ck.case(COMPILED):
        sums = obs.case(ck, COMPILED, what="your column_sums", hint=rule)["sums"]
        if not (isinstance(sums, list) and len(sums) == len(compiled)):
            ck.fail("the sums of this case were not all observed.")
        for x, got in zip(compiled, sums):
            ck.close(got, x.sum(axis=0), atol=1e-8, rtol=1e-9,
                     what=f"column sums of a {x.shape} x", hint=rule)
    ck.done()


def _judge_calls(ck: Checker, seen: Any, x: np.ndarray, threshold: int, threads: int) -> None:
    rule = HINTS["wrapper.rule"]
    kinds = seen["kinds"]
    ck.check(len(kinds) == 1, f"column_sums called the kernels {len(kinds)} times.",
             expected="one call: column_sums_blocked or _column_sums_serial", received=kinds,
             hint=rule)
    kind = kinds[0]
    large = x.size >= threshold
    want_kind = NAMES[0] if large else NAMES[1]
    nblocks = threads if large else 1
    ck.check(kind == want_kind, f"x has {x.size} elements and column_sums called {kind}.",
             expected=want_kind, received=kind,
             hint=HINTS["wrapper.large" if large else "wrapper.small"].format(threshold=threshold))
    shape = seen["partial shape"]
    cols = x.shape[1]
    ck.check(isinstance(shape, tuple) and len(shape) == 2 and shape[1:] == (cols,),
             f"partial has shape {shape}, but x has {cols} columns.",
             expected=f"({nblocks}, {cols})", received=shape,
             hint=HINTS["wrapper.partial-shape"])
    ck.check(shape[0] == nblocks, f"partial has {shape[0]} block(s).", expected=nblocks,
             received=shape[0], hint=HINTS["wrapper.blocks-large" if large else
                                           "wrapper.blocks-small"])
    ck.check(seen["partial dtype"] == str(x.dtype),
             f"partial is {seen['partial dtype']} for a {x.dtype} x.", expected=str(x.dtype),
             received=seen["partial dtype"], hint=HINTS["wrapper.dtype"])
    ck.check(seen["x contiguous"] is True, "the kernel got an x that is not C-contiguous.",
             hint=HINTS["wrapper.contiguous"])
    expected = x.sum(axis=0)
    got_shape = seen["result shape"]
    ck.check(seen["returned partial"] is not True and got_shape != shape,
             f"column_sums returned an array of shape {got_shape}, the shape of partial.",
             expected=f"shape {expected.shape}", received=f"shape {got_shape}",
             hint=HINTS["wrapper.sum-partial"])
    dtype = np.float32 if x.dtype == np.float32 else np.float64
    ck.close(seen["result"], expected, atol=1e-4 if dtype == np.float32 else 1e-9, rtol=1e-5,
             what="column sums", hint=rule)
    ck.check(seen["result dtype"] == str(x.dtype),
             f"the sums are {seen['result dtype']} for a {x.dtype} x.", expected=str(x.dtype),
             received=seen["result dtype"], hint=HINTS["wrapper.keep-dtype"])
