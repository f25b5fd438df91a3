"""Chapter 09's exercises written as data (see ``tests/course/exercise_data.py``).

The key's code cells run in one namespace, in the notebook's order, with the cells of section 3
that the exercises' cells use (``%%mygrad functional activations`` and ``cross_entropy``): as in
the notebook, section 3's ``log_softmax(x, dim=-1)`` then replaces the exercise's one-argument
``log_softmax``, and the key's ``cross_entropy_ref`` runs with it. The graded cell of
ch09-log-softmax, which runs before section 3, gets the exercise's function."""
from __future__ import annotations

from typing import Any

from autograd_lab.course.exercises import ch09
from tests.course.exercise_data import Chapter, _without_magics, chapter_tests

CONVERTED = {m.ID for m in ch09.EXERCISES}
SECTION_3 = ("%%mygrad functional activations\n", "%%mygrad functional cross_entropy\n")


class _Chapter(Chapter):
    def graded(self) -> dict[str, str]:
        return {k: v for k, v in super().graded().items() if k in CONVERTED}


def _keep(cell: dict[str, Any]) -> bool:
    grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
    source = "".join(cell["source"])
    return (grade_id.removesuffix("-code") in CONVERTED or "import numpy" in source
            or source.startswith(SECTION_3))


def _namespace(sources: list[str]) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__key__"}
    exercise_log_softmax = None
    for source in sources:
        if source.startswith(SECTION_3[0]):
            exercise_log_softmax = ns.get("log_softmax")
        exec(compile(_without_magics(source), "<key cell>", "exec"), ns)
    return {**ns, "log_softmax": exercise_log_softmax}


CHAPTER = _Chapter("09_training_digits.ipynb", "ch09", keep=_keep, namespace=_namespace,
                   keywords=True)

globals().update(chapter_tests(CHAPTER))
