"""The key's ``mygrad`` (course/reference) as a package, for the tests of chapters 08 and 09."""
from __future__ import annotations

import types
from collections.abc import Iterator

import pytest

from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package


@pytest.fixture(scope="module")
def mygrad() -> Iterator[types.ModuleType]:
    """``mygrad`` built from the key's module files up to chapter 09 (removed afterwards)."""
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 9
             and (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
    yield build_package(files, REFERENCE_ROOT / PACKAGE)
    _forget_package()
