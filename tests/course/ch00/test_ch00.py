"""Chapter 00's exercises, from their declared data (see ``tests/course/exercise_data.py``)."""
from __future__ import annotations

import pytest

from autograd_lab.course.exercises import check
from autograd_lab.course.exercises.ch00 import demo_double
from autograd_lab.course.exercises.ch00.messages import HINTS
from tests.course._observe_args import use_it  # noqa: F401 - the graded cells call first
from tests.course.exercise_data import Chapter, chapter_tests

CHAPTER = Chapter("00_welcome.ipynb", "ch00", keep=lambda cell: cell["metadata"].get(
    "nbgrader", {}).get("solution", False) or "import numpy" in "".join(cell["source"]))

globals().update(chapter_tests(CHAPTER))


def test_the_demonstration_passes_doubling_and_names_its_mistakes(capsys):
    check.ch00_demo_double(lambda x: 2 * x)
    assert "All 2 cases of ch00-demo-double passed." in capsys.readouterr().out
    for mistake in demo_double.MISTAKES:
        wrong = eval("lambda x: " + mistake.replace[1])  # the demonstration's one-line answer
        with pytest.raises(AssertionError, match="ch00-demo-double") as info:
            check.ch00_demo_double(wrong)
        assert HINTS[mistake.hint] in str(info.value)


@pytest.mark.parametrize("module,seed", [("center_rows", 20), ("pairwise_sq_dists", 79)])
def test_a_repeated_hidden_shape_is_observed_twice(module, seed):
    """At these seeds a random hidden shape repeats a case's title; each case keeps its own
    observation, so the key passes and a wrong answer on the repeated case still fails."""
    from autograd_lab.course.exercises import ch00
    from tests.course.exercise_data import verdict
    exercise = getattr(ch00, module)
    titles = [case[0] for case in exercise.cases(seed, True)]
    assert len(set(titles)) < len(titles)
    ns = CHAPTER.run_key()
    assert verdict(exercise, [ns[module]], seed, True) == (set(), "")
