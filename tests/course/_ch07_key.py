"""The key's chapter 07 kernels (course/reference ``mygrad/kernels.py``) for the checker tests.

``KEY`` is the key's ``kernels`` module, built once with the modules it imports; the package
is then taken out of ``sys.modules`` again (whatever ``mygrad`` was there before is put back),
so other tests build their own. ``plain(kernel)`` is the Python function behind a kernel
(the kernel itself with NUMBA_DISABLE_JIT=1), ``with_range(kernel)`` the same function with its
``prange`` loop written as ``range``: right values, one thread (a typical mistake), and
``edited(kernel, (old, new), ...)`` the function with other edits of its source.
"""
from __future__ import annotations

import inspect
import linecache
import sys
import textwrap

from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package

CORE = ["variable", "function", "engine", "ops", "grad_mode", "kernels"]
"""The key's modules that ``mygrad/kernels.py`` needs, in the course's order."""


def build_key():
    """A fresh package ``mygrad`` (in ``sys.modules``) of the key's ``CORE`` modules."""
    return build_package({m: REFERENCE_ROOT / PACKAGE / f"{m}.py" for m in CORE})


def _uncached(module):
    """``module`` with each of its numba kernels compiled again in this process, without
    numba's cache.

    The key's kernels carry ``cache=True``, and a kernel loaded from numba's cache rebuilds its
    environment by importing its module by name (``mygrad.kernels``). The key's package leaves
    ``sys.modules`` once it is built (other tests build their own), so the tests call copies
    that compile from the same Python functions and globals instead."""
    from numba import njit
    for name, obj in list(vars(module).items()):
        if hasattr(obj, "py_func") and isinstance(getattr(obj, "targetoptions", None), dict):
            options = {k: v for k, v in obj.targetoptions.items()
                       if k in ("parallel", "fastmath", "error_model", "boundscheck")}
            setattr(module, name, njit(**options)(obj.py_func))
    return module


def _load_kernels():
    before = {n: m for n, m in sys.modules.items() if n == PACKAGE or n.startswith(PACKAGE + ".")}
    try:
        return _uncached(build_key().kernels)
    finally:
        _forget_package()
        sys.modules.update(before)


KEY = _load_kernels()


def plain(kernel):
    """The Python function a numba kernel compiles."""
    return getattr(kernel, "py_func", kernel)


def edited(kernel, *replacements, label="edited"):
    """``kernel``'s function, decorator dropped and each ``(old, new)`` of ``replacements``
    applied to its source, as a plain Python function whose source ``inspect`` can read (the
    checkers read it). Each ``old`` must occur, so a change to the key cannot make a typical
    mistake silently the key again."""
    function = plain(kernel)
    lines = textwrap.dedent(inspect.getsource(function)).splitlines(keepends=True)
    source = "".join(line for line in lines if not line.startswith("@"))
    for old, new in replacements:
        if old not in source:
            raise AssertionError(f"{function.__name__} of the key has no {old!r} to replace")
        source = source.replace(old, new)
    filename = f"<{function.__name__} {label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = dict(function.__globals__)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[function.__name__]


def with_range(kernel):
    """``kernel``'s function with its ``prange`` loop written as ``range`` (see :func:`edited`)."""
    return edited(kernel, ("prange(", "range("), label="with range")
