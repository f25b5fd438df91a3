"""Shared helpers for the numba kernels: jit flags, serial/parallel pairs, a vectorisable exp.

numba on PyPI ships without a vector math library, so ``math.exp`` inside a loop stays scalar
(about 8x slower than numpy's SIMD ``np.exp``).  ``fast_exp`` below is plain arithmetic plus one
bit cast, which LLVM vectorises: range reduction ``x = n*ln2 + r`` with ``|r| <= ln2/2``, a Taylor
polynomial for ``exp(r)`` and ``2**n`` built directly in the exponent bits.  Its error is a few
units in the last place for float32 and float64.  Under ``NUMBA_DISABLE_JIT=1`` it is ``np.exp``.
"""
from __future__ import annotations

import os
import statistics
import time
import types as _pytypes
import warnings
from typing import Callable

import numpy as np

from numba import config, get_num_threads, njit, prange  # noqa: F401  (re-exported for the kernels)
from numba.core import types
from numba.extending import intrinsic, overload


def _start_threads_passively() -> None:
    """Start numba's thread pool with OpenMP's passive waiting, without changing os.environ.

    OpenMP threads that wait for work spin by default; on a shared or busy machine (a JupyterHub
    server, CI, a laptop running a browser) the spinning thread steals the core the other needs
    and a parallel kernel on a small array took milliseconds instead of microseconds (measured:
    one CNN epoch 388 ms of CPU time with spinning, 73 ms with passive waiting). The OpenMP
    runtime reads OMP_WAIT_POLICY once, when numba loads it: the variable is set for that moment
    only and then removed again, so the process environment (and every child process) is left as
    it was. A user's own setting wins.
    """
    from numba.np.ufunc import parallel

    if "OMP_WAIT_POLICY" in os.environ:
        parallel._launch_threads()
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        parallel._launch_threads()
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)


_start_threads_passively()


def _can_cache() -> bool:
    """Whether numba finds a writable place for its cache (the package's ``__pycache__``, the
    user's cache folder or NUMBA_CACHE_DIR). On a read-only install with no writable home it does
    not; kernels then compile in every process (slower start, same results) and say so once."""
    from numba.core.caching import FunctionCache

    def probe():  # pragma: no cover - never called, only located
        return 0

    try:
        FunctionCache(probe)
    except RuntimeError as exc:
        warnings.warn(
            f"numba cannot cache compiled kernels here ({exc}); they will compile in "
            "each new process (a few seconds on first use). Set NUMBA_CACHE_DIR to a writable "
            "folder to keep them.", RuntimeWarning, stacklevel=2)
        return False
    return True


CACHE = _can_cache()

# Fast-math flags: never 'nnan'/'ninf' (kernels keep inf and nan semantics), and 'reassoc' only
# for kernels whose sums must vectorise and that hold no carefully ordered arithmetic such as
# ``(m - x) + log_sum`` (which 'reassoc' may regroup into a cancelling ``m + (log_sum - x)``).
FASTMATH = {"contract", "nsz", "arcp", "afn"}
FASTMATH_REASSOC = FASTMATH | {"reassoc"}

# error_model="numpy": division by zero gives inf/nan instead of raising, which also lets LLVM
# vectorise loops that divide (Python's error model puts a zero check in front of every '/').
# nogil=True: kernels release the GIL, so Python threads can run them side by side (conv2d does).
JIT_OPTIONS = {"cache": CACHE, "fastmath": FASTMATH, "error_model": "numpy", "nogil": True}
REDUCE_OPTIONS = {"cache": CACHE, "fastmath": FASTMATH_REASSOC, "error_model": "numpy", "nogil": True}

# Below this many elements a serial loop beats prange on 2 cores (thread start-up ~2 us).
PARALLEL_MIN_SIZE = 60_000


#: every (serial, parallel) pair made by ``jit_pair``, so ``warmup`` can compile them all
REGISTRY: list[tuple[Callable, Callable]] = []


def jit_pair(fn: Callable, reassoc: bool = False) -> tuple[Callable, Callable]:
    """Compile ``fn`` twice, lazily: a serial and a ``parallel=True`` version (``prange`` loops).

    The parallel copy gets its own qualified name so numba's on-disk cache keeps both apart.
    ``reassoc=True`` lets LLVM reorder floating-point sums (needed to vectorise a reduction).
    """
    options = REDUCE_OPTIONS if reassoc else JIT_OPTIONS
    par = _pytypes.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel",
                                fn.__defaults__, fn.__closure__)
    par.__qualname__ = fn.__qualname__ + "_parallel"
    par.__doc__ = fn.__doc__
    par.__module__ = fn.__module__
    serial = njit(**options)(fn)
    parallel = njit(parallel=True, **options)(par)
    REGISTRY.append((serial, parallel))
    return serial, parallel


# Parallel kernels need every core at once: on a machine that other programs keep busy (a shared
# JupyterHub server, say) a parallel region waits milliseconds for a descheduled thread, and a
# serial loop is then many times faster.  AUTOGRAD_LAB_PARALLEL=0 (or set_parallel(False)) keeps
# every kernel serial.
_PARALLEL = os.environ.get("AUTOGRAD_LAB_PARALLEL", "1").strip().lower() not in ("0", "false", "no", "off")


def set_parallel(enabled: bool) -> bool:
    """Allow (True) or forbid (False) multi-threaded kernels; returns the previous setting."""
    global _PARALLEL
    previous, _PARALLEL = _PARALLEL, bool(enabled)
    return previous


def parallel_enabled() -> bool:
    """Whether kernels may use threads (see ``set_parallel``)."""
    return _PARALLEL


def num_threads() -> int:
    """Threads the kernels may use: numba's setting (``NUMBA_NUM_THREADS``,
    ``numba.set_num_threads``), or 1 when ``set_parallel(False)``."""
    return get_num_threads() if _PARALLEL else 1


def big_enough(size: int, min_size: int = PARALLEL_MIN_SIZE) -> bool:
    """Whether ``size`` elements pay for threads: from ``min_size`` on, times ``wake_up_scale()``.
    Only kernels that compute the same way on either path ask (each element, each row, or the
    same blocks of rows for the column sums), so the answer changes their time and never their
    numbers."""
    return size >= min_size and _PARALLEL and size >= min_size * (_scale or wake_up_scale())


def pick(pair: tuple[Callable, Callable], size: int, min_size: int = PARALLEL_MIN_SIZE) -> Callable:
    """The serial kernel for small work, the parallel one where ``big_enough``."""
    return pair[1] if big_enough(size, min_size) else pair[0]


# A parallel loop first wakes numba's other threads, which wait passively. The thresholds were
# measured where that took about 2 us. On a virtual machine whose idle CPUs sleep deeply it took
# 40-50 us (benchmarks/PROFILE.md, section 13), and a kernel just above its threshold ran ten times
# slower in parallel than serially. So the first kernel that could run in parallel measures the
# wake-up once, and every threshold grows in proportion, by at most 10x: a probe that a busy
# moment slowed must not keep a whole process off its threads.
_WAKE_UP_REFERENCE_US = 2.0
_MAX_SCALE = 10.0
_scale: float | None = None  # set by wake_up_scale() on first use


def _probe_k(x):
    for i in prange(x.size):
        x[i] += 1.0


_PROBE = jit_pair(_probe_k)


def wake_up_us(repeats: int = 15) -> float:
    """What starting a parallel loop costs here, in microseconds: the median time of a parallel
    loop over 64 numbers minus that of the serial one, alternating (0 without JIT)."""
    if config.DISABLE_JIT:
        return 0.0
    serial, parallel = _PROBE
    x = np.zeros(64)
    serial(x), parallel(x)  # compiled (or loaded from the cache) before anything is timed
    clock = time.perf_counter
    serial_times, parallel_times = [], []
    for _ in range(repeats):
        start = clock()
        serial(x)
        middle = clock()
        parallel(x)
        serial_times.append(middle - start)
        parallel_times.append(clock() - middle)
    return max(0.0, (statistics.median(parallel_times) - statistics.median(serial_times)) * 1e6)


def wake_up_scale() -> float:
    """By how much the thresholds between serial and parallel kernels grow on this machine: the
    measured wake-up over the 2 us they were measured with, from 1 to 10. Measured once per process."""
    global _scale
    if _scale is None:
        _scale = min(_MAX_SCALE, max(1.0, wake_up_us() / _WAKE_UP_REFERENCE_US))
    return _scale


# ---------------------------------------------------------------- vectorisable exp
def fast_exp(x):
    """exp(x) for a float scalar; inside jitted code a vectorisable polynomial version."""
    return np.exp(x)


if not config.DISABLE_JIT:
    from llvmlite import ir

    @intrinsic
    def _bits_as_float32(typingctx, bits):
        if not isinstance(bits, types.Integer):
            return None
        def codegen(context, builder, signature, args):
            low = builder.trunc(args[0], ir.IntType(32)) if bits.bitwidth > 32 else args[0]
            return builder.bitcast(low, ir.FloatType())
        return types.float32(bits), codegen

    @intrinsic
    def _bits_as_float64(typingctx, bits):
        if not isinstance(bits, types.Integer) or bits.bitwidth != 64:
            return None
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.DoubleType())
        return types.float64(bits), codegen

    # Separate jitted functions with their own flags: had the polynomial been inlined into a
    # caller compiled with 'reassoc', LLVM could fold the two-part ln2 reduction into one and lose
    # ~100 ulp.  LLVM still inlines these small functions into the calling loop and vectorises.
    _EXP_FLAGS = {"contract", "nsz", "arcp"}

    @njit(cache=CACHE, fastmath=_EXP_FLAGS, error_model="numpy")
    def _exp32(x):
        # below -86.5 the true value is under 3e-38: flush it to zero
        small = x < np.float32(-86.5)
        x = min(max(x, np.float32(-86.5)), np.float32(89.0))
        n = np.floor(x * np.float32(1.4426950408889634) + np.float32(0.5))
        r = x - n * np.float32(0.693359375) + n * np.float32(2.12194440e-4)
        p = np.float32(1.0 / 5040.0)
        p = p * r + np.float32(1.0 / 720.0)
        p = p * r + np.float32(1.0 / 120.0)
        p = p * r + np.float32(1.0 / 24.0)
        p = p * r + np.float32(1.0 / 6.0)
        p = p * r + np.float32(0.5)
        p = p * r + np.float32(1.0)
        p = p * r + np.float32(1.0)
        # 2**n as 2 * 2**(n-1), so that n = 128 (x up to 88.72) stays finite
        scale = _bits_as_float32((np.int32(n) + np.int32(126)) << np.int32(23))
        y = p * scale * np.float32(2.0)
        return np.float32(0.0) if small else y

    @njit(cache=CACHE, fastmath=_EXP_FLAGS, error_model="numpy")
    def _exp64(x):
        small = x < -708.0
        x = min(max(x, -708.0), 710.0)
        n = np.floor(x * 1.4426950408889634 + 0.5)
        r = x - n * 0.6931471803691238 - n * 1.9082149292705877e-10
        p = 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        scale = _bits_as_float64((np.int64(n) + np.int64(1022)) << np.int64(52))
        y = p * scale * 2.0
        return 0.0 if small else y

    @overload(fast_exp)
    def _fast_exp_overload(x):
        if x == types.float32:
            return lambda x: _exp32(x)
        if x == types.float64:
            return lambda x: _exp64(x)
        return None
