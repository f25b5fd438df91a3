"""Chapter 11's exercises, from their declared data (see ``tests/course/exercise_data.py``).

One exception to "a mistake costs no other exercise a point": the notebook builds ``hvp`` and
``newton_step`` on the learner's own ``grad`` (ch11-grad), so a wrong ``grad`` makes them wrong
too; the isolation test leaves those pairs out (:data:`DEPENDS`). ``hessian`` and
``newton_step`` see the course's exact ``hvp`` and ``hessian`` while they are checked."""
from __future__ import annotations

import pytest

from autograd_lab.course.exercises._exercise import Mistake
from tests.course.exercise_data import Chapter, arguments, chapter_tests, verdict

from . import _key

DEPENDS = {"ch11-hvp": {"ch11-grad"}, "ch11-newton-step": {"ch11-grad"}}
"""Exercise -> the exercises whose learner code it calls on purpose (their mistakes may cost it)."""


class _Chapter(Chapter):
    """Each graded cell with its hidden block first (``exercise_data.arguments`` reads the
    visible call after ``### END HIDDEN TESTS``, and chapter 11's cells end with it)."""

    def graded(self) -> dict[str, str]:
        return {k: _hidden_first(v) for k, v in super().graded().items()}


def _hidden_first(source: str) -> str:
    start, end = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
    if start not in source or not source.rstrip().endswith(end):
        return source
    head, _, rest = source.partition(start)
    hidden, _, tail = rest.partition(end)
    return f"{start}{hidden}{end}\n{head}{tail}"


CHAPTER = _Chapter("11_higher_order.ipynb", "ch11", keep=_key.keep, namespace=_key.namespace)

globals().update(chapter_tests(CHAPTER))

_MISTAKES = [(m.ID, k) for m in CHAPTER.module.EXERCISES for k in m.MISTAKES]


@pytest.mark.parametrize("exercise_id,mistake", _MISTAKES,
                         ids=[f"{e}:{k.name}" for e, k in _MISTAKES])
def test_a_mistake_costs_no_other_exercise_a_point(exercise_id: str, mistake: Mistake) -> None:
    ns = CHAPTER.run_key(mistake, exercise_id)
    graded = CHAPTER.graded()
    for module in CHAPTER.module.EXERCISES:
        if module.ID == exercise_id or exercise_id in DEPENDS.get(module.ID, ()):
            continue
        failed, message = verdict(module, arguments(graded[module.ID], module.ID, ns), 11, True)
        assert not failed, f"{mistake.name} in {exercise_id} costs {module.ID}: {message}"
