"""Checks isolate, for the newer exercises of chapters 04 and 06: one broken exercise costs
only its own points.

Chapter 04: the course's ``mygrad`` engine with one realistic mistake in one exercise's piece
(the hooks, or the parts of ``backward`` the learner now writes); every checker of the
chapter's library exercises runs on it. The broken exercise's checker must fail, every other
must pass, and a ``note:`` line may only name the broken exercise.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest

from autograd_lab.course.exercises import check

from . import test_exercises_ch04 as t4
from ._checker_helpers import assert_only_its_own_points, assert_the_key_passes, with_mistake
from .test_hints_ch04_ch06 import ENGINE_MISTAKES, HOOKS_MISTAKES, ORDER_INPUT_MISTAKES


def ch04_library_checks(pkg) -> dict[str, Callable[[], None]]:
    """The graded checks of chapter 04's %%mygrad exercises, and the Scalar ones, on ``pkg``."""
    return {
        "ch04-topological-sort": lambda: check.ch04_topological_sort(t4.topological_sort,
                                                                     hidden=True),
        "ch04-backward": lambda: check.ch04_backward(t4.make_backward(), hidden=True),
        "ch04-topological-order": lambda: check.ch04_topological_order(
            pkg.topological_order, pkg, hidden=True),
        "ch04-hooks": lambda: check.ch04_hooks(pkg.register_hook, pkg.retain_grad,
                                               pkg.engine._run_hooks, pkg, hidden=True),
        "ch04-engine-backward": lambda: check.ch04_engine_backward(pkg.backward, pkg,
                                                                   hidden=True),
    }


CH04_BREAKS = ([("ch04-hooks", change) for change, _ in HOOKS_MISTAKES]
               + [("ch04-engine-backward", change) for change, _ in ENGINE_MISTAKES]
               + [("ch04-topological-order", change) for change, _ in ORDER_INPUT_MISTAKES])


def test_the_course_engine_passes_every_check_of_chapter_04(capsys):
    assert_the_key_passes(ch04_library_checks(t4.engine_package()), capsys)


@pytest.mark.parametrize("broken,change", CH04_BREAKS,
                         ids=[f"{b}-{i}" for i, (b, _) in enumerate(CH04_BREAKS)])
def test_one_broken_exercise_of_chapter_04_costs_only_its_own_points(broken, change, tmp_path,
                                                                     capsys):
    pkg = t4.engine_package(tmp_path, change)
    try:
        assert_only_its_own_points(ch04_library_checks(pkg), broken, capsys)
    finally:
        pkg.GradMode.enabled = True


def test_a_broken_hooks_exercise_is_named_once_by_the_engine_check(tmp_path, capsys):
    """_run_hooks that ignores the hooks' results: the engine check still passes the course's
    backward, runs it with the course's _run_hooks, and says so in one line."""
    pkg = t4.engine_package(tmp_path, HOOKS_MISTAKES[0][0])
    check.ch04_engine_backward(pkg.backward, pkg)
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == ["note: exercise ch04-hooks fails its own check; this check runs your "
                     "backward with the course's _run_hooks."]
    assert pkg.engine._run_hooks is not None and "_run_hooks" in vars(pkg.engine)


def test_the_engine_check_runs_before_the_hooks_cell_with_the_course_hooks(tmp_path, capsys):
    """A notebook in which the hooks cell has not run: _run_hooks is missing from backward's
    globals; the check supplies the course's, says so, and takes it away again."""
    pkg = t4.engine_package()
    namespace = pkg.backward.__globals__
    own = namespace.pop("_run_hooks")
    try:
        check.ch04_engine_backward(pkg.backward, pkg)
        assert "_run_hooks" not in namespace
    finally:
        namespace["_run_hooks"] = own
    out = capsys.readouterr().out
    assert "All 16 cases of ch04-engine-backward passed." in out
    assert "note: _run_hooks (exercise ch04-hooks) is not defined" in out


# -- chapter 06 ----------------------------------------------------------------------------------
def ch06_notebook(broken: str | None, replacements) -> dict:
    """What the chapter 06 notebook holds when exercise ``broken`` has the mistake
    ``replacements`` and every other %%mygrad cell is the key's: its globals, mygrad included."""
    from .test_exercises_ch06 import NOTEBOOK, reference_package, solution_cells
    pkg = reference_package()
    namespace = dict(vars(pkg.grad_mode))
    for cell in solution_cells(NOTEBOOK):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not source.startswith("%%mygrad"):
            continue
        source = source.split("\n", 1)[1]
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if broken is not None and grade_id == f"{broken}-code":
            source = with_mistake(source, replacements, broken)
        exec(source, namespace)  # noqa: S102 - the key's cells, one of them made wrong
    namespace["mygrad"] = pkg
    return namespace


def ch06_checks(ns: dict) -> dict[str, Callable[[], None]]:
    from .test_exercises_ch06 import PREDICTIONS, train_step
    return {
        "ch06-grad-mode-switch": lambda: check.ch06_grad_mode_switch(
            ns["set_grad_enabled"], ns["no_grad"], ns["enable_grad"], hidden=True),
        "ch06-detach": lambda: check.ch06_detach(ns["detach"], ns["requires_grad_"],
                                                 hidden=True),
        "ch06-inplace-rules": lambda: check.ch06_inplace_rules(ns["_check_inplace"],
                                                               hidden=True),
        "ch06-inplace-ops": lambda: check.ch06_inplace_ops(ns["Variable"], hidden=True),
        "ch06-version-check": lambda: check.ch06_version_check(ns["mygrad"], hidden=True),
        "ch06-predict-raises": lambda: check.ch06_predict_raises(dict(PREDICTIONS),
                                                                 hidden=True),
        "ch06-train-step": lambda: check.ch06_train_step(train_step, hidden=True),
    }


def _ch06_breaks() -> list:
    from .test_exercises_ch06 import DETACH_MISTAKES
    from .test_hints_ch04_ch06 import RULES_MISTAKES
    counter_mistakes = [r for r, words in DETACH_MISTAKES if "_counter" in "".join(
        old for old, _ in r)]
    assert len(counter_mistakes) >= 3
    return ([("ch06-inplace-rules", r) for r, _ in RULES_MISTAKES]
            + [("ch06-detach", r) for r in counter_mistakes])


CH06_BREAKS = _ch06_breaks()


def test_the_key_passes_every_check_of_chapter_06(capsys):
    assert_the_key_passes(ch06_checks(ch06_notebook(None, [])), capsys)


@pytest.mark.parametrize("broken,replacements", CH06_BREAKS,
                         ids=[f"{b}-{i}" for i, (b, _) in enumerate(CH06_BREAKS)])
def test_one_broken_exercise_of_chapter_06_costs_only_its_own_points(broken, replacements,
                                                                     capsys):
    notes = assert_only_its_own_points(ch06_checks(ch06_notebook(broken, replacements)), broken, capsys)
    if broken == "ch06-inplace-rules":           # the in-place check says it used the course's
        assert any("uses the course's _check_inplace" in note for note in notes), notes
