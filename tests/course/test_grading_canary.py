"""The canary's verdict from its rows, without running a kernel.

test_grading_trust.py runs real canaries (a key that fails, limits no kernel can run under);
here the batch is replaced by rows made by the test, so that what the error says is seen for
every case: many problems at once, a crash graded as another user, and a notebook whose canary
passed beside one whose canary failed.
"""
from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from autograd_lab.course.authoring.notebooks import CourseError
from autograd_lab.course.grading import batch
from autograd_lab.course.grading.batch import Row


class _NoCourse:
    def __init__(self, *args) -> None:
        pass

    def add_students(self, names) -> None:
        pass

    def generate(self, *args) -> None:
        pass


@pytest.fixture
def canary(tmp_path, monkeypatch):
    """Run batch.canary on notebooks whose key and copy score the points given per exercise."""
    monkeypatch.setattr(batch, "Course", _NoCourse)
    monkeypatch.setattr(batch, "read_notebook", lambda path: None)
    monkeypatch.setattr(batch, "environment_roots", lambda: ["/env"])
    monkeypatch.setattr(batch, "_CANARIES_PASSED", set())
    monkeypatch.setattr(batch, "_canary_key", lambda plan, n: (n,))

    def run(scores: dict[str, tuple[list[float], list[float]]], status: str = "failed",
            run_as: str | None = None) -> list[str]:
        def rows(course, plan, submitted, log, label):
            return {(who, n): [Row(who, n, f"{n}-{i}", p, 2.0, "passed" if p == 2 else status,
                                   "why")
                               for i, p in enumerate(scores[n][who == "copy"])]
                    for who, n in submitted}
        monkeypatch.setattr(batch, "_run_batch", rows)
        plan = SimpleNamespace(expected=list(scores), key={n: tmp_path / n for n in scores},
                               released=dict.fromkeys(scores),
                               settings=SimpleNamespace(run_as=run_as and SimpleNamespace(
                                   name=run_as)))
        said: list[str] = []
        batch.canary(plan, logging.getLogger("test"), said.append)
        return said
    return run


def test_a_passing_canary_says_so_and_is_not_run_again(canary) -> None:
    assert canary({"a": ([2, 2], [0, 0])})[-1] == \
        "canary: the key scores full marks and the student copy zero"
    assert canary({"a": ([2, 2], [0, 0])}) == []  # passed in this process: skipped


def test_the_error_lists_six_problems_and_counts_the_rest(canary) -> None:
    with pytest.raises(CourseError) as err:
        canary({n: ([0, 0, 0], [1, 0, 0]) for n in ("a", "b", "c")})
    text = str(err.value)
    assert text.startswith("Nothing was graded: the canary failed. the key's a scored 0 / 2 on "
                           "a-0 (failed: why); ")
    assert text.count("; ") == 5  # six shown of 12 (four problems a notebook)
    assert " (and 6 more). Run the key with `autograd-lab check`" in text
    assert "the untouched student copy of a scored 1 on a-0: its graded cell passes without an " \
           "answer" in text


def test_a_crashed_key_points_at_the_setup_and_the_user_it_ran_as(canary) -> None:
    with pytest.raises(CourseError, match=r"do not run: check that the Python environment "
                                          r"\(/env\) is readable by grader, that --memory"):
        canary({"a": ([0, 2], [0, 0])}, status="crashed", run_as="grader")
    with pytest.raises(CourseError, match=r"\(/env\) is readable, that --memory"):
        canary({"a": ([0, 2], [0, 0])}, status="crashed")


def test_a_notebook_that_passed_is_not_run_again_beside_one_that_failed(canary) -> None:
    with pytest.raises(CourseError, match="copy of b scored 2 on b-1"):
        canary({"a": ([2], [0]), "b": ([2, 2], [0, 2])})
    assert canary({"a": ([2], [0])}) == []
