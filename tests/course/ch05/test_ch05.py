"""Chapter 05's exercises, from their declared data (see ``tests/course/exercise_data.py``).

The key's ``%%mygrad`` cells run as the notebook runs them: in the namespace of the course's
``mygrad/ops.py`` (chapters 02-05), one after another."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from tests.course.exercise_data import Chapter, _without_magics, arguments, chapter_tests


def _is_code_cell(cell: dict) -> bool:
    return cell["metadata"].get("nbgrader", {}).get("grade_id", "").endswith("-code")


def ch05_package() -> Any:
    """The course's mygrad of chapters 02-05."""
    from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
    from autograd_lab.course.learner.loader import build_package
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES if m.chapter <= 5}
    return build_package(files)


def _namespace(sources: list[str]) -> dict[str, Any]:
    namespace = dict(vars(ch05_package().ops))
    for source in sources:
        exec(compile(_without_magics(source), "<key cell>", "exec"), namespace)  # noqa: S102
    return namespace


class _Chapter05(Chapter):
    """The chapter's graded cells, each with its first call only: a cell of this chapter ends
    with its hidden call, which the shared lookup of the checker's arguments would miss."""

    def graded(self) -> dict[str, str]:
        return {k: v.split("### BEGIN HIDDEN TESTS")[0] for k, v in super().graded().items()}


CHAPTER = _Chapter05("05_tensors_broadcasting.ipynb", "ch05", keep=_is_code_cell,
                     namespace=_namespace)

globals().update(chapter_tests(CHAPTER))


def _matmul(pkg: Any, transposed_b: bool) -> Any:
    """A mygrad MatMul whose grad_a is right, or misses b's transpose (square inputs only)."""
    class MatMul(pkg.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return pkg.Variable(a.data @ b.data)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return grad_output @ (b.T if transposed_b else b), a.T @ grad_output
    return MatMul


@pytest.mark.parametrize("right", [True, False])
def test_the_split_gradcheck_agrees_with_central_differences(right):
    from autograd_lab.course.exercises import ch05
    from autograd_lab.course.exercises._common import Checker
    from autograd_lab.course.exercises._observe import Observations, Observer
    from autograd_lab.course.exercises.ch05._gradcheck import judge_gradcheck, observe_gradcheck

    pkg = ch05_package()
    MatMul = _matmul(pkg, transposed_b=right)
    rng = np.random.default_rng(5)
    inputs = tuple(pkg.Variable(rng.normal(size=(2, 2)), requires_grad=True) for _ in range(2))
    ob = Observer("ch05-matmul-backward", 0, False)
    with ob.case("gradcheck"):
        observe_gradcheck(ob, pkg.Variable, MatMul.apply, inputs)
    obs = Observations(json.loads(json.dumps(ob.record())))
    ck = Checker("ch05-matmul-backward")
    if right:
        judge_gradcheck(ck, obs.case(ck, "gradcheck"), [(2, 2), (2, 2)])
        assert ch05.numeric_gradcheck(pkg.Variable, MatMul.apply, inputs)
        return
    with pytest.raises(AssertionError, match="gradient of input 0 differs"):
        judge_gradcheck(ck, obs.case(ck, "gradcheck"), [(2, 2), (2, 2)])
    with pytest.raises(ch05.GradcheckFailed, match="input 0"):
        ch05.numeric_gradcheck(pkg.Variable, MatMul.apply, inputs)


@pytest.mark.parametrize("broken", [None, "ch05-softmax"])
def test_the_graders_verdict_on_each_graded_cell_comes_from_its_records(broken):
    """Both calls of a graded cell (visible and hidden) observed as in the grader's sandbox,
    then judged from the records alone: the key gets every point, a mistake loses its own."""
    from autograd_lab.course.exercises._observe import MIME, Observer
    from autograd_lab.course.exercises.verdict import graded_calls, judge_cell

    exercises = {m.ID: m for m in CHAPTER.module.EXERCISES}
    mistake = exercises[broken].MISTAKES[0] if broken else None
    ns = CHAPTER.run_key(mistake, broken)
    for exercise_id, source in Chapter.graded(CHAPTER).items():
        module = exercises[exercise_id]
        objects = arguments(CHAPTER.graded()[exercise_id], exercise_id, ns)
        outputs = []
        for seed, hidden in graded_calls(source, exercise_id):
            ob = Observer(exercise_id, seed, hidden)
            module.observe(ob, *objects, seed=seed, hidden=hidden)
            outputs.append({"output_type": "display_data",
                            "data": json.loads(json.dumps({MIME: ob.record()}))})
        verdict = judge_cell(exercise_id, source, outputs)
        assert verdict is not None
        assert verdict.passed == (exercise_id != broken), verdict.text
