"""Chapter 07's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's ``%%mygrad kernels`` cells run in one namespace on a fresh ``mygrad`` core (the
key's variable, function, engine, ops and grad_mode modules), as the notebook runs them. A
kernel cell compiles once per distinct source: its functions are kept and reused by every
namespace whose cell reads the same, so a mistake compiles only the kernel it changes. The
cells are registered with ``linecache`` under a name of their own, so the checks can read a
kernel's source as they do in a notebook; ``cache=True`` is dropped (numba caches only
functions defined in files).
"""
from __future__ import annotations

import hashlib
import json
import linecache
import math
import sys
from typing import Any

import numba
import numpy as np
import pytest
from numba import njit, prange

from autograd_lab.course.exercises import _exercise, check
from autograd_lab.course.exercises._observe import MIME, OBSERVE_ONLY
from autograd_lab.course.exercises.verdict import graded_calls, judge_cell

from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package
from tests.course.exercise_data import Chapter, arguments, chapter_tests

CORE = ["variable", "function", "engine", "ops", "grad_mode"]
_KERNEL_CELLS: dict[str, dict[str, Any]] = {}


def _core() -> Any:
    """A fresh ``mygrad`` of the key's core modules, taken out of ``sys.modules`` again."""
    before = {n: m for n, m in sys.modules.items() if n == PACKAGE or n.startswith(PACKAGE + ".")}
    try:
        return build_package({m: REFERENCE_ROOT / PACKAGE / f"{m}.py" for m in CORE})
    finally:
        _forget_package()
        sys.modules.update(before)


def _compiled(source: str) -> Any:
    name = f"<ch07 key cell {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    return compile(source, name, "exec")


def _plain(source: str) -> str:
    lines = [line for line in source.splitlines() if not line.lstrip().startswith("%")]
    return "\n".join(lines).replace("@njit(cache=True)", "@njit").replace(", cache=True", "")


def _kernel_cell(source: str) -> dict[str, Any]:
    """The functions a cell of ``@njit`` kernels defines, compiled once per source."""
    if source not in _KERNEL_CELLS:
        scratch: dict[str, Any] = {"__name__": "__key__", "np": np, "math": math,
                                   "numba": numba, "njit": njit, "prange": prange}
        base = set(scratch)
        exec(_compiled(source), scratch)
        _KERNEL_CELLS[source] = {k: v for k, v in scratch.items() if k not in base}
    return _KERNEL_CELLS[source]


def namespace(sources: list[str]) -> dict[str, Any]:
    core = _core()
    ns: dict[str, Any] = {"__name__": "__key__", "np": np, "math": math, "numba": numba,
                          "njit": njit, "prange": prange, "Variable": core.Variable,
                          "Function": core.Function, "GradMode": core.GradMode,
                          "as_variable": core.as_variable}
    for source in map(_plain, sources):
        if "@njit" in source and "class " not in source:
            ns.update(_kernel_cell(source))
        else:
            exec(_compiled(source), ns)
    return ns


class _Chapter(Chapter):
    """The chapter's graded cells call their checker before the hidden block; the shared
    tests read the visible call after it (as chapter 01's cells have it), so the block is
    read first here."""

    def graded(self) -> dict[str, str]:
        return {k: _hidden_first(v) for k, v in super().graded().items()}


def _hidden_first(source: str) -> str:
    head, begin, rest = source.partition("### BEGIN HIDDEN TESTS")
    hidden, end, tail = rest.partition("### END HIDDEN TESTS")
    if not begin or not end:
        return source
    return f"{begin}{hidden}{end}\n{head}{tail}"


CHAPTER = _Chapter("07_fast_kernels.ipynb", "ch07",
                  keep=lambda cell: "".join(cell["source"]).startswith("%%mygrad kernels"),
                  namespace=namespace)

globals().update(chapter_tests(CHAPTER))


@pytest.mark.parametrize("exercise_id", ["ch07-column-sums", "ch07-relu-function"])
def test_the_grader_judges_the_graded_cell_from_the_kernels_records(exercise_id, monkeypatch):
    """In the grader's sandbox a check only shows its observations; the grader's verdict on
    the key's graded cell (as written, visible call first) comes from those records alone,
    after their JSON round trip, and a declared mistake loses the exercise."""
    module = next(m for m in CHAPTER.module.EXERCISES if m.ID == exercise_id)
    source = Chapter.graded(CHAPTER)[exercise_id]
    shown: list = []
    monkeypatch.setenv(OBSERVE_ONLY, "1")
    monkeypatch.setattr(_exercise, "show_record", shown.append)
    for mistake, passed in [(None, True), (module.MISTAKES[0], False)]:
        shown.clear()
        ns = CHAPTER.run_key(mistake, exercise_id)
        for seed, hidden in graded_calls(source, exercise_id):
            getattr(check, exercise_id.replace("-", "_"))(
                *arguments(_hidden_first(source), exercise_id, ns), seed=seed, hidden=hidden)
        outputs = [{"output_type": "display_data", "data": {MIME: json.loads(json.dumps(r))}}
                   for r in shown]
        verdict = judge_cell(exercise_id, source, outputs)
        assert verdict is not None and verdict.passed is passed, verdict
