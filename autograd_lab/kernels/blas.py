"""How many threads BLAS (numpy's ``@``) may use: one for small products (``serial_blas``), and
one while our own worker threads run (``single_threaded_blas``).  Both do nothing when
threadpoolctl is missing or cannot reach the BLAS library.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager

# A multi-threaded GEMM waits for its second BLAS thread.  On a shared 2-core machine that thread is
# often descheduled, and a small product then takes milliseconds: 64x64 @ 64x128 took 16 us with one
# BLAS thread every time, 49-275 us with two (and up to 6 ms per call inside a training loop while
# another process ran); 32x144 @ 144x512 took 65 us serially, 58-1030 us with two threads.  Products
# under SERIAL_GEMM_FLOPS (2*m*k*n) therefore run with one BLAS thread: the thread count is switched
# by one ctypes call each way (~1 us) and restored afterwards.  When BLAS already runs on one thread
# there is nothing to switch, and serial_blas costs one query of the count.
SERIAL_GEMM_FLOPS = 16_000_000


class _Library:
    """One BLAS library: its thread-count functions and the count to restore."""

    __slots__ = ("path", "get", "set", "saved")

    def __init__(self, path: str, get_fn, set_fn) -> None:
        self.path, self.get, self.set, self.saved = path, get_fn, set_fn, None


_libraries: tuple | None = None  # the _Library of each BLAS numpy calls, found on first use
_lock = threading.Lock()
_depth = 0  # serial_blas blocks open now, in every thread; the outermost switches and restores
_switches = 0  # outermost entries so far: the lock-free check below uses it to see a switch start


def _find_libraries() -> tuple:
    """The BLAS numpy calls (the one in numpy's wheel when there is one, else every BLAS loaded:
    a conda numpy shares the environment's); none when threadpoolctl is missing or unable."""
    found = []
    try:
        from threadpoolctl import ThreadpoolController
        libs = ThreadpoolController().select(user_api="blas").lib_controllers
        own = [lib for lib in libs if "numpy" in os.path.basename(os.path.dirname(lib.filepath))]
        for lib in own or libs:
            get_fn = set_fn = None
            if lib.internal_api == "openblas" and hasattr(lib, "_get_symbol"):
                get_fn = lib._get_symbol("openblas_get_num_threads")  # direct ctypes calls
                set_fn = lib._get_symbol("openblas_set_num_threads")
            if get_fn is None or set_fn is None:
                get_fn, set_fn = lib.get_num_threads, lib.set_num_threads
            found.append(_Library(lib.filepath, get_fn, set_fn))
    except Exception:  # threadpoolctl missing or unable: leave BLAS as it is
        found = []
    return tuple(found)


def _blas_libraries() -> tuple:
    """The ``_Library`` of each BLAS serial_blas switches, found on first use."""
    global _libraries
    if _libraries is None:
        _libraries = _find_libraries()
    return _libraries


class _Unchanged:
    """The block runs with BLAS as it is."""

    __slots__ = ()

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc, tb) -> None:
        pass


class _OneThread:
    """The block runs with one BLAS thread; the outermost block (over all threads) restores."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _depth, _switches
        with _lock:
            _depth += 1  # raised before the count changes, lowered after it is restored:
            if _depth == 1:  # so _depth == 0 means the counts are the ones we found
                _switches += 1
                for lib in _libraries or ():
                    lib.saved = lib.get()
                    if lib.saved != 1:
                        lib.set(1)

    def __exit__(self, exc_type, exc, tb) -> None:
        global _depth
        with _lock:
            if _depth == 1:
                for lib in _libraries or ():
                    if lib.saved != 1 and lib.saved is not None:
                        lib.set(lib.saved)
            _depth -= 1


_UNCHANGED = _Unchanged()
_ONE_THREAD = _OneThread()


def serial_blas(flops: float = 0):
    """``with serial_blas(flops):`` runs the BLAS calls inside with one thread when ``flops`` is
    under ``SERIAL_GEMM_FLOPS``; nested and multi-threaded uses restore the count once, at the end."""
    # One of two shared context objects is returned, so a use allocates nothing.  No switch is
    # needed for a large product, nor when no block is open and every BLAS runs one thread
    # already.  That check takes no lock.  Is the 1 it reads the original count, and not one a
    # block in another thread has just set?  _depth is 0 only while the counts are the ones found
    # (it is raised before a switch and lowered after the restore).  So a 1 read after seeing
    # _depth == 0 is the original, unless a switch started in between -- and a switch starting
    # raises _switches, read before and after.  An original 1 is saved and restored as 1 by any
    # later block, so it stays 1 for this whole block.
    if flops >= SERIAL_GEMM_FLOPS:
        return _UNCHANGED
    if _libraries is None:
        _blas_libraries()
    switches = _switches
    if _depth == 0:
        for lib in _libraries or ():
            if lib.get() != 1:
                return _ONE_THREAD
        if switches == _switches:
            return _UNCHANGED
    return _ONE_THREAD


_controller = None


@contextmanager
def single_threaded_blas():
    """Limit BLAS to one thread while our own threads run (if threadpoolctl is installed)."""
    global _controller
    try:
        if _controller is None:
            from threadpoolctl import ThreadpoolController
            _controller = ThreadpoolController()
        limiter = _controller.limit(limits=1, user_api="blas")
    except Exception:  # threadpoolctl missing or unable: run with BLAS's own threads
        yield
        return
    with limiter:
        yield
