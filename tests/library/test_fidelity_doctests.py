"""The docstring examples of the library run (doctest) and show what they say."""
from __future__ import annotations

import doctest
import importlib
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "autograd_lab"


def _modules() -> list[str]:
    names = []
    for p in sorted(PKG.rglob("*.py")):
        if "__pycache__" in p.parts or p.name == "__main__.py":
            continue
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples in {name} failed (run python -m doctest -v on it)"


def test_examples_exist():
    # the suite really runs examples: the core modules carry some
    counts = {n: doctest.testmod(importlib.import_module(n), report=False).attempted
              for n in ("autograd_lab", "autograd_lab.variable", "autograd_lab.engine", "autograd_lab.grad_mode")}
    assert all(c > 0 for c in counts.values()), counts
