"""Shared helpers for the numba kernels: jit flags, serial/parallel pairs and the rule that picks
one of a pair, a vectorisable exp.

numba on PyPI ships without a vector math library, so ``math.exp`` inside a loop stays scalar
(about 8x slower than numpy's SIMD ``np.exp``).  ``fast_exp`` below is plain arithmetic plus one
bit cast, which LLVM vectorises: range reduction ``x = n*ln2 + r`` with ``|r| <= ln2/2``, a Taylor
polynomial for ``exp(r)`` and ``2**n`` built directly in the exponent bits.  Its error is a few
units in the last place for float32 and float64.  Under ``NUMBA_DISABLE_JIT=1`` it is ``np.exp``.
"""
from __future__ import annotations

import os
import types as _pytypes
import warnings
from typing import Any, Callable, Literal, Union

import numpy as np

from numba import config, get_num_threads, njit, prange  # noqa: F401  (re-exported for the kernels)
from numba.core import types
from numba.extending import intrinsic, overload

from ._numba_private import numba_internals


def _can_cache() -> bool:
    """Whether numba finds a writable place for its cache (the package's ``__pycache__``, the
    user's cache folder or NUMBA_CACHE_DIR). On a read-only install with no writable home it does
    not; kernels then compile in every process (slower start, same results) and say so once.

    This one runs at import, unlike the thread start below: the kernels are decorated at import,
    and a ``cache=True`` decoration without a writable folder would raise there."""
    def probe():  # pragma: no cover - never called, only located
        return 0

    try:
        numba_internals().FunctionCache(probe)
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

# From this many elements the column sums (``sum_rows``, the fused backward's bias gradient) split
# their rows into one block per thread. The blocks fix the order of the additions, so this number
# sets the sums' last bits and never changes; whether the blocks then run on threads is asked apart,
# through ``big_enough`` and the thresholds below, and changes only the time.
PARALLEL_MIN_SIZE = 60_000


#: every (serial, parallel) pair made by ``jit_pair``, so ``warmup`` can compile them all
REGISTRY: list[tuple[Any, Any]] = []  # numba dispatchers (plain functions without JIT)


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


# ---------------------------------------------------------------- serial or parallel
# The size (elements of work) from which each kernel runs its parallel version, fixed, so that the
# choice is the same in every process whatever the machine's load. A parallel loop first wakes
# numba's other thread, which sleeps between loops: about 2 us on the machine where the kernels
# were first tuned, 40-58 us on the 2-core virtual machine of benchmarks/PROFILE.md, sections 12-14.
# Each value below says which measurement chose it: the crossovers on that slower machine (or the
# first machine's thresholds times ten, as section 13 scaled them there), so that a kernel just
# above its threshold is never many times slower than serial. Where waking is cheap they leave
# some speed unused between the two; set_parallel(True) takes it. The wake-up of a machine, and
# the thresholds it suggests, are measured by benchmarks/thread_wakeup.py --probe.
THRESHOLDS: dict[str, int] = {
    # relu forward/backward and the bias + relu forward: relu_fwd on 65,536 values took 5.2-5.6 us
    # serial, 67-73 us parallel; on 1,000,000 the parallel one takes 115-120 us (section 13)
    "elementwise": 600_000,
    # sigmoid and tanh, alone or after a bias (an exp per value): sigmoid_fwd on 65,536 values took
    # 29-30 us serial against 63-82 us parallel (section 13)
    "exp": 80_000,
    # the fused bias + activation backward (derivative, grad_z store, column sums): serial 44-45 us
    # and parallel 43 us at 98,304 values, 93 against 62-67 at 262,144 (section 14)
    "bias_act_bwd": 80_000,
    # sum_rows: serial was faster at every size measured, 89-100 us against 110-130 at 1,048,576
    # values (section 14), so threads only beyond that
    "sum_rows": 2_000_000,
    # softmax, log-softmax, logsumexp and cross-entropy, rows split across threads: 10x the 16,000
    # first measured (section 13 moved every row threshold by the measured 10x)
    "rows": 160_000,
    # im2col / col2im, counted in columns' elements: 10x the 32,000 first measured (section 13)
    "conv": 320_000,
    # max-pool forward and backward, counted in input elements: on 2 shared cores prange lost at
    # 32k and 65k elements (forward 59 against 94 us, 256 against 314; backward 40 against 57) and
    # won from 262k (forward 1,296 us serial against 320 parallel), where a 50 us wake-up is small
    "pool": 262_144,
}

ParallelMode = Union[bool, Literal["auto"]]


def _mode_from_env(value: str | None) -> ParallelMode:
    """AUTOGRAD_LAB_PARALLEL: 0/false/no/off keeps every kernel serial, always/force runs every
    kernel that has a parallel version in parallel, anything else (1, auto, unset) uses THRESHOLDS."""
    text = (value or "auto").strip().lower()
    if text in ("0", "false", "no", "off"):
        return False
    if text in ("always", "force"):
        return True
    return "auto"


_MODE: ParallelMode = _mode_from_env(os.environ.get("AUTOGRAD_LAB_PARALLEL"))


def set_parallel(mode: ParallelMode) -> ParallelMode:
    """Choose how kernels pick between their serial and parallel versions; returns the previous mode.

    ``"auto"`` (the default): each kernel goes parallel from its size in ``THRESHOLDS``.
    ``False``: every kernel serial, one thread (best on a machine other programs keep busy).
    ``True``: every kernel that has a parallel version uses it, whatever the size (for timing the
    parallel kernels, or a machine whose idle threads wake in a few microseconds).
    The environment variable ``AUTOGRAD_LAB_PARALLEL`` sets the mode a process starts with
    (``0`` for False, ``always`` for True). The mode changes the time and, but for a few units in
    the last place (see the package's docstring), not the numbers."""
    global _MODE
    if mode is not True and mode is not False and mode != "auto":
        raise ValueError(f"set_parallel expects True, False or 'auto', got {mode!r}; "
                         "use False to keep every kernel serial, 'auto' for the size thresholds")
    previous, _MODE = _MODE, mode
    return previous


def parallel_mode() -> ParallelMode:
    """The current mode (see ``set_parallel``): True, False or ``"auto"``."""
    return _MODE


def parallel_enabled() -> bool:
    """Whether kernels may use threads at all (the mode is not False)."""
    return _MODE is not False


_threads_started = False


def _start_threads() -> None:
    """Start numba's thread pool once, with OpenMP's passive waiting, before the first parallel
    kernel or thread count needs it (never at import).

    OpenMP threads that wait for work spin by default; on a shared or busy machine (a JupyterHub
    server, CI, a laptop running a browser) the spinning thread steals the core the other needs
    and a parallel kernel on a small array took milliseconds instead of microseconds (measured:
    one CNN epoch 388 ms of CPU time with spinning, 73 ms with passive waiting). The OpenMP
    runtime reads OMP_WAIT_POLICY once, when numba loads it: the variable is set for that moment
    only and removed again, so the environment is left as it was. A user's own setting wins, and
    so does a pool that numba already started (by a parallel loop of the user's own)."""
    global _threads_started
    if _threads_started or config.DISABLE_JIT:
        _threads_started = True
        return
    launch = numba_internals().launch_threads
    if "OMP_WAIT_POLICY" in os.environ:
        launch()
    else:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        try:
            launch()
        finally:
            os.environ.pop("OMP_WAIT_POLICY", None)
    _threads_started = True


def num_threads() -> int:
    """Threads the kernels may use: numba's setting (``NUMBA_NUM_THREADS``,
    ``numba.set_num_threads``), or 1 when ``set_parallel(False)``."""
    if _MODE is False:
        return 1
    _start_threads()
    return get_num_threads()


def big_enough(size: int, min_size: int = THRESHOLDS["elementwise"]) -> bool:
    """Whether ``size`` elements go to the threads: from ``min_size`` on in the ``"auto"`` mode,
    always with ``set_parallel(True)``, never with ``False``. Only kernels that compute the same
    way on either path ask (each element, each row, or the same blocks of rows for the column
    sums), so the answer changes their time and never their numbers."""
    if _MODE is False or (_MODE == "auto" and size < min_size):
        return False
    _start_threads()
    return True


def pick(pair: tuple[Callable, Callable], size: int,
         min_size: int = THRESHOLDS["elementwise"]) -> Callable:
    """The serial kernel for small work, the parallel one where ``big_enough``."""
    return pair[1] if big_enough(size, min_size) else pair[0]


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
