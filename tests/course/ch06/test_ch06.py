"""Chapter 06's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's ``%%mygrad`` cells run, in order, in the globals of a fresh copy of the key's
``mygrad.grad_mode`` (as the magic runs them in the learner's package); the plain solution cells
(``train_step``, ``predictions``) run in the same namespace, which also holds ``al``, ``np`` and
the package as ``mygrad``."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

import autograd_lab as al
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package
from tests.course.exercise_data import Chapter, chapter_tests


def _keep(cell: dict) -> bool:
    source = "".join(cell["source"])
    return bool(cell["metadata"].get("nbgrader", {}).get("solution", False)
                or source.startswith("%%mygrad"))


def _namespace(sources: list[str]) -> dict[str, Any]:
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 6}
    pkg = build_package(files)
    namespace = dict(vars(pkg.grad_mode))
    namespace.update(al=al, np=np, mygrad=pkg)
    for source in sources:
        if source.startswith("%%mygrad"):
            source = source.split("\n", 1)[1]
        exec(compile(source, "<key cell>", "exec"), namespace)  # noqa: S102 - the key's cells
    return namespace


class _Chapter(Chapter):
    """The graded cells without their hidden block: this notebook's cells call the checker
    before the hidden block, and ``arguments`` reads the call after it."""

    def graded(self) -> dict[str, str]:
        return {grade_id: re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", source,
                                 flags=re.S)
                for grade_id, source in super().graded().items()}


CHAPTER = _Chapter("06_grad_modes_inplace.ipynb", "ch06", keep=_keep, namespace=_namespace)

globals().update(chapter_tests(CHAPTER))
