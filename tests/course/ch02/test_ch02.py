"""Chapter 02's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's solution cells run in one namespace holding numpy, as the notebook runs them (the
``%%mygrad`` line of the Variable cell dropped: the class is the notebook's own)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tests.course._observe_args import use_it  # noqa: F401 - the graded cells call first
from tests.course.exercise_data import Chapter, chapter_tests


def _is_solution(cell: dict) -> bool:
    return bool(cell["metadata"].get("nbgrader", {}).get("solution", False))


def _namespace(sources: list[str]) -> dict[str, Any]:
    ns: dict[str, Any] = {"np": np, "__name__": "__key__"}
    for source in sources:
        if source.startswith("%%"):
            source = source.split("\n", 1)[1]
        exec(compile(source, "<key cell>", "exec"), ns)  # noqa: S102 - the key's cells
    return ns


CHAPTER = Chapter("02_variable_graph.ipynb", "ch02", keep=_is_solution, namespace=_namespace)

globals().update(chapter_tests(CHAPTER))


def test_a_repeated_hidden_shape_is_observed_twice():
    """At seed 0 a random hidden shape of ch02-variable-class repeats (4,): both cases keep
    their own observations, so the key passes (it failed when the second hid the first)."""
    from autograd_lab.course.exercises.ch02 import variable_class
    from tests.course.exercise_data import verdict
    titles = [title for title, _ in variable_class.cases(0, True)[0]]
    assert len(set(titles)) < len(titles)
    assert verdict(variable_class, [CHAPTER.run_key()["Variable"]], 0, True) == (set(), "")
