"""The one place where autograd_lab touches numba's private modules.

numba offers no public way to do the two things below, so both sit behind ``numba_internals()``
and nothing else in the package imports a private numba name. If a numba release moves them,
this file is the one to change.
"""
from __future__ import annotations

import types


def numba_internals() -> types.SimpleNamespace:
    """numba's private objects the kernels use, imported when first asked for (not at import).

    - ``launch_threads``: ``numba.np.ufunc.parallel._launch_threads`` starts numba's thread pool,
      which numba otherwise does itself on the first parallel loop or ``get_num_threads()``.
      Calling it ourselves lets ``_jit._start_threads`` choose the moment, and so let OpenMP read
      a passive wait policy (sleeping instead of spinning threads: one CNN epoch took 388 ms of
      CPU time with spinning, 73 ms without, on a shared 2-core machine).
    - ``FunctionCache``: ``numba.core.caching.FunctionCache`` raises when numba finds no writable
      folder for its on-disk cache. Asking it before the kernels are decorated with
      ``cache=True`` turns a read-only install into kernels that compile in every process instead
      of an import error.
    """
    from numba.core.caching import FunctionCache
    from numba.np.ufunc.parallel import _launch_threads

    return types.SimpleNamespace(launch_threads=_launch_threads, FunctionCache=FunctionCache)
