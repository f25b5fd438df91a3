"""The key's chapter 08 cells as a namespace: the key's ``mygrad`` of chapters 02-07 (built
once), then the chapter's library cells (``%%mygrad``) and solution cells run in order in a
fresh module, as a learner's kernel runs them."""
from __future__ import annotations

import itertools
import sys
import types
from typing import Any

import numpy as np

from .._ch07_key import CORE, _uncached, build_key
from autograd_lab.course.learner.export import PACKAGE
from autograd_lab.course.learner.loader import _forget_package

_NAMES = ("Variable", "as_variable", "no_grad", "Function", "GradMode", "column_sums",
          "column_sums_ref")


def _core() -> dict[str, Any]:
    before = {n: m for n, m in sys.modules.items() if n == PACKAGE or n.startswith(PACKAGE + ".")}
    try:
        package = build_key()
        _uncached(package.kernels)
        found = {n: getattr(package, n, None) for n in _NAMES}
        for name in _NAMES:
            if found[name] is None:
                found[name] = next(getattr(getattr(package, m), name) for m in CORE
                                   if hasattr(getattr(package, m), name))
        return found
    finally:
        _forget_package()
        sys.modules.update(before)


CORE_NAMES = _core()
_count = itertools.count()


def keep(cell: dict) -> bool:
    """The library cells and the solution cells: what the exercises are made of."""
    source = "".join(cell["source"])
    return source.startswith("%%mygrad") or cell["metadata"].get("nbgrader", {}).get(
        "solution", False)


def namespace(sources: list[str]) -> dict[str, Any]:
    """The namespace of the kept cells, run in a module of their own (a learner's class then
    finds its ``Variable`` through its module, as in ``__main__``)."""
    module = types.ModuleType(f"ch08_key_{next(_count)}")
    sys.modules[module.__name__] = module
    ns = module.__dict__
    ns.update(CORE_NAMES, np=np)
    for source in sources:
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                         for line in source.splitlines())
        exec(compile(code, f"<{module.__name__} cell>", "exec"), ns)
    return ns
