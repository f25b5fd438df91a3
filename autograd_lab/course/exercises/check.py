"""The ``check`` namespace: ``check.chNN_name`` is ``chNN_name`` from module ``chNN``.

Chapter modules are imported on first use, so a notebook only loads its own
chapter's checkers. The namespace is read-only: assigning ``check.ch01_x = ...``
raises, so a notebook cannot replace a checker by accident.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import types
from collections.abc import Callable
from typing import Any

_NAME = re.compile(r"^(ch\d\d)_\w+$")
_PACKAGE = __name__.rpartition(".")[0]


def _chapters() -> list[str]:
    package = sys.modules[_PACKAGE]
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__)
                  if re.fullmatch(r"ch\d\d", m.name))


def __getattr__(name: str) -> Callable[..., Any]:
    match = _NAME.match(name)
    if match is None:
        raise AttributeError(
            f"check has no attribute {name!r}: checkers are named like 'ch01_central_difference' "
            "(the exercise id with '-' replaced by '_').")
    chapter = match.group(1)
    try:
        module = importlib.import_module(f"{_PACKAGE}.{chapter}")
    except ModuleNotFoundError as err:
        if err.name != f"{_PACKAGE}.{chapter}":
            raise
        raise AttributeError(f"check has no checker {name!r}: there is no module for chapter "
                             f"{chapter}; known chapters: {', '.join(_chapters())}.") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        known = ", ".join(n for n in dir(module) if n.startswith(chapter + "_"))
        raise AttributeError(f"check has no checker {name!r}; {chapter} has: {known}.")
    return fn


def __dir__() -> list[str]:
    names = []
    for chapter in _chapters():
        module = importlib.import_module(f"{_PACKAGE}.{chapter}")
        names += [n for n in dir(module) if n.startswith(chapter + "_")]
    return sorted(names)


class _ReadOnlyModule(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if _NAME.match(name):
            raise AttributeError(f"check.{name} is read-only: checkers cannot be replaced.")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ReadOnlyModule
