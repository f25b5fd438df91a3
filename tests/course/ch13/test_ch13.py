"""Chapter 13's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The graded cells check the learner's ``mygrad.attention``, written by the chapter's
``%%mygrad attention`` cells: the namespace is the key's ``mygrad`` (built once) with an
``attention`` module made of those cells as the test gives them (one of them with a mistake),
and the checkers get ``pkg=mygrad`` after the objects the cell names, as the cell passes it."""
from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package
from tests.course import exercise_data
from tests.course._observe_args import anywhere_but_hidden
from tests.course.exercise_data import Chapter, chapter_tests

_SECTION = "# --- section:"
_base: list[types.ModuleType] = []


def _package() -> types.ModuleType:
    """The key's ``mygrad`` of every module but ``attention`` (built once, put back into
    ``sys.modules`` when another test took it out)."""
    if not _base:
        files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES
                 if m.name != "attention" and (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
        _base.append(build_package(files, REFERENCE_ROOT / PACKAGE))
    pkg = _base[0]
    for name, module in [(PACKAGE, pkg)] + [(f"{PACKAGE}.{n}", m) for n, m in vars(pkg).items()
                                            if isinstance(m, types.ModuleType)]:
        sys.modules[name] = module
    return pkg


def _is_attention_cell(cell: dict) -> bool:
    return "".join(cell["source"]).startswith("%%mygrad attention")


def _namespace(sources: list[str]) -> dict[str, Any]:
    """The notebook's names after the chapter's ``%%mygrad attention`` cells: those of the
    ``attention`` module they write, and ``mygrad``."""
    pkg = _package()
    header = (REFERENCE_ROOT / PACKAGE / "attention.py").read_text(encoding="utf-8")
    text = header.split(_SECTION)[0] + "\n\n".join(s.split("\n", 1)[1] for s in sources)
    module = types.ModuleType(f"{PACKAGE}.attention")
    module.__package__ = PACKAGE
    sys.modules[module.__name__] = module
    exec(compile(text, "<the key's attention cells>", "exec"), vars(module))  # noqa: S102
    pkg.attention = module
    return {**vars(module), "mygrad": pkg}


def _arguments(source: str, exercise: str, ns: dict[str, Any]) -> list[Any]:
    """The objects the graded cell names, then its ``pkg=`` (``observe`` takes it last)."""
    found = anywhere_but_hidden(source, exercise, ns)
    call = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", source, flags=re.S)
    match = re.search(r"pkg=(\w+)", call)
    return found + ([ns[match.group(1)]] if match else [])


@pytest.fixture(autouse=True)
def _pkg_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exercise_data, "arguments", _arguments)


@pytest.fixture(scope="module", autouse=True)
def _forget() -> Iterator[None]:
    yield
    _forget_package()


CHAPTER = Chapter("13_attention.ipynb", "ch13", keep=_is_attention_cell, namespace=_namespace)

globals().update(chapter_tests(CHAPTER))
