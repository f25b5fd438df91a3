"""What the chapter 07 checks share: calling a kernel quietly, what a kernel is (compiled,
parallel, its source) on the kernel's side, and the judge's checks of those facts.

The learner's kernels are ``@njit`` functions over numpy arrays. The checks test values only
(never speed), so they work the same with ``NUMBA_DISABLE_JIT=1``. To keep compilation cheap,
every case calls a kernel with one and the same signature: C-contiguous float64 arrays of a fixed
number of dimensions and Python floats. Output buffers are filled with NaN before the call, so
an element the kernel forgets to write shows up.
"""
from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._observe import Case, Observations, Observer, Opaque
from ._structure import prange_loops, racy_writes, source_lines, temporaries, tree_of
from .messages import HINTS

__all__ = ["quiet_call", "jit_enabled", "kernel_case", "observe_kernel", "judge_kernel",
           "judge_no_race", "judge_structure", "thread_counts", "observe_runs", "judge_runs",
           "filled", "unwritten_hint", "softmax", "blocks", "shown"]


def quiet_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call the learner's kernel with numba's warnings silenced.

    A graded cell that writes to stderr counts as failed in nbgrader, and numba warns, for
    example, when ``parallel=True`` finds no loop to parallelise (as in the untouched stub).
    The values are what is checked here; the warning would only cost points."""
    from numba.core.errors import NumbaWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaWarning)
        return fn(*args, **kwargs)


def _jit_enabled() -> bool:
    from numba import config
    return not config.DISABLE_JIT


def jit_enabled() -> bool:
    """Whether numba compiles, read through the chapter's package (so that a test can run the
    checks as with ``NUMBA_DISABLE_JIT=1`` by replacing ``ch07._jit_enabled``)."""
    package = sys.modules[__name__.rpartition(".")[0]]
    return bool(getattr(package, "_jit_enabled", _jit_enabled)())


def shown(value: Any) -> Any:
    """An observed value as a failure message shows it (an object by its repr)."""
    if isinstance(value, Opaque):
        text = value.repr
        return text if len(text) <= 200 else text[:197] + "..."
    return value


def kernel_case(name: str, parallel: bool = False) -> str:
    decorator = "@njit(parallel=True)" if parallel else "@njit"
    return f"{name} is compiled by numba ({decorator})"


def observe_kernel(ob: Observer, fn: Any, name: str, parallel: bool = False) -> None:
    """What ``fn`` is: a function, compiled by numba (with which options), and its source."""
    with ob.case(kernel_case(name, parallel)):
        ob.put("callable", callable(fn))
        ob.put("object", fn)
        ob.put("jit", jit_enabled())
        options = getattr(fn, "targetoptions", None)
        ob.put("compiled", hasattr(fn, "py_func") and isinstance(options, dict))
        ob.put("parallel", isinstance(options, dict) and bool(dict.get(options, "parallel")))
        ob.put("source", source_lines(fn))


def judge_kernel(ck: Checker, obs: Observations, name: str, parallel: bool = False) -> Case:
    """Fail unless the kernel is a numba-compiled function (skipped when the JIT is off);
    returns its observations (the source, for :func:`judge_structure`)."""
    decorator = "@njit(parallel=True)" if parallel else "@njit"
    title = kernel_case(name, parallel)
    with ck.case(title):
        seen = obs.case(ck, title, what=f"your {name}")
        ck.check(seen["callable"] is True, f"{name} is not a function.",
                 received=shown(seen["object"]),
                 hint=HINTS["kernel.pass-function"].format(name=name))
        if seen["jit"] is not True:
            return seen  # NUMBA_DISABLE_JIT=1: njit returns the plain Python function
        if seen["compiled"] is not True:
            ck.fail(f"{name} is a plain Python function, not a numba kernel.",
                    hint=HINTS["kernel.decorate"].format(decorator=decorator, name=name))
        if parallel:
            ck.check(seen["parallel"] is True, f"{name} is compiled without parallel=True.",
                     hint=HINTS["kernel.parallel"])
    return seen


def judge_no_race(ck: Checker, source: Any, name: str) -> None:
    """Fail if a write inside a prange loop is indexed by anything but the loop variable."""
    func = tree_of(source)
    if func is None:
        return
    with ck.case(f"{name}: every prange iteration writes only its own elements (no race)"):
        writes = racy_writes(func)
        text, var = writes[0] if writes else ("", "")
        ck.check(not writes,
                 f"{name} writes {', '.join(f'`{w}`' for w, _ in writes[:3])} from a prange "
                 "loop, at an index other than the loop variable's own slot.",
                 hint=HINTS["kernel.race"].format(text=text, var=var) if writes else None)


def judge_structure(ck: Checker, source: Any, name: str, ndims: dict[str, int],
                    parallel: bool = False) -> None:
    """Fail if the kernel computes with whole arrays, or is parallel without a prange loop."""
    func = tree_of(source)
    if func is None:                     # no source to read (e.g. built with exec): values only
        return
    with ck.case(f"{name} is one pass of scalar arithmetic (no temporary arrays)"):
        temps = temporaries(func, ndims)
        ck.check(not temps,
                 f"{name} computes with whole arrays: {', '.join(f'`{t}`' for t in temps[:3])}. "
                 "Each such operation allocates a new temporary array and makes a pass over "
                 "memory of its own, even inside @njit: the cost this chapter's kernels remove.",
                 hint=HINTS["kernel.scalars"])
    if parallel:
        with ck.case(f"{name} splits its loop over threads with prange"):
            ck.check(prange_loops(func) > 0,
                     f"{name} has no `for ... in prange(...)` loop: with only `range`, "
                     "@njit(parallel=True) runs every block one after the other on one thread.",
                     hint=HINTS["kernel.prange"])


def thread_counts() -> list[int]:
    """1, 2 and the number numba uses now, within what numba started with (in the kernel)."""
    import numba
    top = numba.config.NUMBA_NUM_THREADS
    return sorted({n for n in (1, 2, numba.get_num_threads()) if 1 <= n <= top})


RUNS = "repeated runs"
"""The observation case of the repeated runs of a parallel kernel."""


def observe_runs(ob: Observer, fn: Any, inputs: list[tuple[np.ndarray, int]],
                 repeats: int) -> None:
    """Run the kernel on every (x, nblocks) of ``inputs`` with each thread count, ``repeats``
    times each, and keep every ``partial`` it gives. Only for a compiled parallel kernel (a
    plain Python loop never races); the thread count is put back afterwards."""
    import numba
    with ob.case(RUNS):
        if not (jit_enabled() and hasattr(fn, "py_func")):
            ob.put("skipped", True)
            return
        counts = ob.put("threads", thread_counts())
        before = numba.get_num_threads()
        try:
            for k, (x, nblocks) in enumerate(inputs):
                for threads in counts:
                    numba.set_num_threads(threads)
                    runs = []
                    for _ in range(repeats):
                        partial = filled((nblocks, x.shape[1]))
                        quiet_call(fn, x, partial)
                        runs.append(partial)
                    ob.put(f"{k} {threads}", runs)
        finally:
            numba.set_num_threads(before)


def judge_runs(ck: Checker, obs: Observations, name: str,
               inputs: list[tuple[np.ndarray, int]]) -> None:
    """Compare every run with the serial sums: a race shows up as a difference in some runs."""
    seen = obs.case(ck, RUNS, what=f"your {name}", hint=HINTS["kernel.numba"])
    if seen.get("skipped") is True:
        return
    counts = seen["threads"]
    with ck.case(f"{name} gives the serial sums on every run, with "
                 f"{' and '.join(map(str, counts))} thread(s)"):
        for k, (x, nblocks) in enumerate(inputs):
            expected = np.stack([x[lo:hi].sum(axis=0) for lo, hi in blocks(x.shape[0], nblocks)])
            for threads in counts:
                runs = seen[f"{k} {threads}"]
                wrong = sum(not (isinstance(p, np.ndarray) and p.shape == expected.shape
                                 and np.allclose(p, expected, rtol=1e-9, atol=1e-7))
                            for p in runs)
                ck.check(wrong == 0,
                         f"on x of shape {x.shape} in {nblocks} blocks with {threads} "
                         f"thread(s), partial differed from the serial sums in {wrong} of "
                         f"{len(runs)} runs.", hint=HINTS["kernel.runs-differ"])


def filled(shape: tuple[int, ...]) -> np.ndarray:
    """An output buffer full of NaN: whatever the kernel does not write stays NaN."""
    return np.full(shape, np.nan)


def unwritten_hint(got: Any, expected: np.ndarray) -> str | None:
    if (isinstance(got, np.ndarray) and got.dtype.kind == "f" and np.isnan(got).any()
            and not np.isnan(expected).any()):
        return HINTS["kernel.unwritten"]
    return None


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def blocks(rows: int, nblocks: int) -> list[tuple[int, int]]:
    step = (rows + nblocks - 1) // nblocks
    return [(min(rows, c * step), min(rows, (c + 1) * step)) for c in range(nblocks)]
