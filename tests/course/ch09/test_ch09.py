"""Chapter 09's exercises written as data (see ``tests/course/exercise_data.py``).

Only some of the chapter's exercises are written as ``observe`` and ``judge`` so far (the others
are in ``ch09/legacy.py`` and tested by ``tests/course/test_exercises_ch09*.py``): the graded
cells and the key's code cells are those of the package's ``EXERCISES``. They run on autograd_lab's Variable; the
key's ``cross_entropy_ref`` runs, as in the notebook, where section 3's ``log_softmax(x, dim)``
and ``as_variable`` are defined (the exercise's one-argument ``log_softmax`` ran before it)."""
from __future__ import annotations

import types
from typing import Any

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab.course.exercises import ch09
from tests.course.exercise_data import Chapter, _without_magics, chapter_tests

CONVERTED = {m.ID for m in ch09.EXERCISES}


class _Chapter(Chapter):
    def graded(self) -> dict[str, str]:
        """The graded cells of the exercises written as data, each with its visible check call
        also after the hidden block (the shared ``arguments`` reads the call that follows it;
        these cells have it before)."""
        return {k: v + "\n" + v.split("### BEGIN HIDDEN TESTS")[0]
                for k, v in super().graded().items() if k in CONVERTED}


def _keep(cell: dict[str, Any]) -> bool:
    grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
    return grade_id.removesuffix("-code") in CONVERTED or "import numpy" in "".join(
        cell["source"])


def _as_variable(x: Any) -> Any:
    return x if isinstance(x, al.Variable) else al.Variable(x)


def _namespace(sources: list[str]) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__key__", "Variable": al.Variable}
    for source in sources:
        exec(compile(_without_magics(source), "<key cell>", "exec"), ns)
    section_3 = {**ns, "log_softmax": F.log_softmax, "as_variable": _as_variable}
    key = ns["cross_entropy_ref"]
    ns["cross_entropy_ref"] = types.FunctionType(key.__code__, section_3, key.__name__)
    return ns


CHAPTER = _Chapter("09_training_digits.ipynb", "ch09", keep=_keep, namespace=_namespace)

globals().update(chapter_tests(CHAPTER))
