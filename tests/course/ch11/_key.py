"""The key's chapter 11 cells as a namespace: the key's ``mygrad`` up to ``higher.py`` (built
once), then the chapter's library cells (``%%mygrad``) and solution cells run in order in a
fresh module, as a learner's kernel runs them."""
from __future__ import annotations

import itertools
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np

import autograd_lab as al
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT, write_init
from autograd_lab.course.learner.loader import _forget_package, build_package

_NAMES = ("Variable", "Context", "GradMode", "as_variable", "topological_order")


def _core() -> dict[str, Any]:
    before = {n: m for n, m in sys.modules.items() if n == PACKAGE or n.startswith(PACKAGE + ".")}
    folder = Path(tempfile.mkdtemp(prefix="ch11-key-")) / PACKAGE
    folder.mkdir()
    files: dict[str, Path] = {}
    for module in MODULES[:[m.name for m in MODULES].index("higher") + 1]:
        source = REFERENCE_ROOT / PACKAGE / f"{module.name}.py"
        target = folder / source.name
        target.write_text(source.read_text(encoding="utf-8") if source.exists()
                          else '"""(no module in this checkout)"""\n__all__ = []\n',
                          encoding="utf-8")
        files[module.name] = target
    write_init(folder)
    try:
        package = build_package(files, folder)
        return {n: getattr(package, n) for n in _NAMES}
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
    """The namespace of the kept cells, run in a module of their own."""
    module = types.ModuleType(f"ch11_key_{next(_count)}")
    sys.modules[module.__name__] = module
    ns = module.__dict__
    CORE_NAMES["GradMode"].enabled = True   # a mistake of ch11-grad may have left it off
    ns.update(CORE_NAMES, np=np, al=al)
    for source in sources:
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                         for line in source.splitlines())
        exec(compile(code, f"<{module.__name__} cell>", "exec"), ns)
    return ns
