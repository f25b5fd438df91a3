"""Chapter 10's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's solution cells run on autograd_lab's ``Variable`` and ``Function`` (the library the
checks use by default), so that MaxPool is a Function of the library its check builds inputs
with."""
from __future__ import annotations

from typing import Any

import numpy as np

import autograd_lab as al
from tests.course.exercise_data import Chapter, _without_magics, chapter_tests


def _namespace(sources: list[str]) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__key__", "np": np, "Variable": al.Variable,
                          "Function": al.Function}
    for source in sources:
        exec(compile(_without_magics(source), "<key cell>", "exec"), ns)
    return ns


class _Chapter(Chapter):
    def graded(self) -> dict[str, str]:
        """The graded cells, each with its visible check call also after the hidden block (the
        shared ``arguments`` reads the call that follows it; output-size's comes before)."""
        return {k: v + "\n" + v.split("### BEGIN HIDDEN TESTS")[0] for k, v in
                super().graded().items()}


CHAPTER = _Chapter("10_convolution_pooling.ipynb", "ch10", keep=lambda cell: cell["metadata"].get(
    "nbgrader", {}).get("solution", False), namespace=_namespace)

globals().update(chapter_tests(CHAPTER))
