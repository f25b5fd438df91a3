"""The course notebooks as a whole: ``course/`` is exactly the release of ``solutions/``, the
key follows the exercise conventions, and grading gives the key full marks and the
untouched student copy zero -- failing only because of the exercise stubs.

Notebooks are discovered, so new chapters are covered as soon as they exist. Each
notebook's cells are also run by nbval (see the README's test command):

    pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg solutions
    pytest --nbval-lax --nbval-current-env course
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from autograd_lab.course.authoring.notebooks import (RAISES_TAG, exercises, is_grade_cell, is_solution_cell,
                                           list_notebooks, nbgrader_meta, read_notebook,
                                           strip_ansi)

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = list_notebooks(ROOT / "solutions") if (ROOT / "solutions").is_dir() else []
COURSE = ROOT / "course"
NAMES = [p.name for p in SOLUTIONS]
GRADE_TIMEOUT = 300  # per cell, generous: this is about correctness, not speed

needs_notebooks = pytest.mark.skipif(not SOLUTIONS, reason="no notebooks in solutions/ yet")


# -- static checks: fast, no kernel -------------------------------------------------------
@needs_notebooks
@pytest.mark.parametrize("name", NAMES)
def test_course_copy_is_the_release_of_the_key(name: str) -> None:
    pytest.importorskip("nbgrader")
    from autograd_lab.course.authoring.release import released_text
    target = COURSE / name
    assert target.exists(), f"course/{name} is missing: run `autograd-lab release`"
    assert target.read_text(encoding="utf-8") == released_text(ROOT / "solutions" / name), (
        f"course/{name} differs from the release of solutions/{name}: course/ is generated, "
        "never edited by hand. Run `autograd-lab release` and commit the result.")


def test_course_has_no_notebook_without_a_key() -> None:
    extra = sorted({p.name for p in list_notebooks(COURSE)} - set(NAMES)) if COURSE.is_dir() else []
    assert not extra, f"course/ has notebooks with no solutions/ counterpart: {extra}"


@needs_notebooks
@pytest.mark.parametrize("name", NAMES)
def test_key_has_no_raises_exception_tags(name: str) -> None:
    """Such a tag would let a broken solution cell pass nbval unnoticed."""
    nb = read_notebook(ROOT / "solutions" / name)
    bad = [i for i, c in enumerate(nb.cells)
           if RAISES_TAG in c.get("metadata", {}).get("tags", [])
           or "NBVAL_RAISES_EXCEPTION" in c.source]
    assert not bad, f"solutions/{name}: cells {bad} allow exceptions; fix the cells instead"


@needs_notebooks
@pytest.mark.parametrize("name", NAMES)
def test_key_follows_the_exercise_conventions(name: str) -> None:
    nb = read_notebook(ROOT / "solutions" / name)
    graded = {ex.id: ex for ex in exercises(nb)}
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for ex in graded.values():
        cell = nb.cells[ex.cell_index]
        meta = nbgrader_meta(cell)
        assert re.fullmatch(r"ch\d\d-[a-z0-9]+(-[a-z0-9]+)*", ex.id), f"bad exercise id {ex.id!r}"
        assert meta.get("locked") and ex.points > 0, f"{ex.id}: graded cells are locked, points > 0"
        assert f"check.{ex.id.replace('-', '_')}(" in cell.source, (
            f"{ex.id}: the graded cell should call check.{ex.id.replace('-', '_')}(...)")
        assert ex.id in markdown, f"{ex.id}: no markdown cell names the exercise"
    for index, cell in enumerate(nb.cells):
        if is_solution_cell(cell) and cell.cell_type == "code":
            grade_id = nbgrader_meta(cell).get("grade_id", "")
            assert grade_id.endswith("-code") and grade_id[:-5] in graded, (
                f"cell {index}: a solution cell's grade_id is '<exercise id>-code' of a graded "
                f"exercise, got {grade_id!r}")
            assert "### BEGIN SOLUTION" in cell.source, f"cell {index}: no solution region"
        # a markdown cell that is both is nbgrader's manually graded answer cell
        if is_grade_cell(cell) and is_solution_cell(cell) and cell.cell_type == "code":
            pytest.fail(f"cell {index}: a code cell cannot be both solution and graded here")
        if is_grade_cell(cell) and cell.cell_type == "markdown":
            meta = nbgrader_meta(cell)
            assert is_solution_cell(cell) and meta.get("points", 0) > 0, (
                f"cell {index}: a graded markdown cell is a manual answer cell: solution and "
                "grade set, points > 0")
            assert meta.get("grade_id", "") in markdown.replace(cell.source, ""), (
                f"cell {index}: no other markdown cell names the answer {meta.get('grade_id')}")


# -- grading the key and the untouched student copies ----------------------------------------
@pytest.fixture(scope="module")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    pytest.importorskip("nbgrader")
    from autograd_lab.course.grading.batch import grade
    root = tmp_path_factory.mktemp("course_grading")
    for student, folder in (("key", ROOT / "solutions"), ("untouched", COURSE)):
        (root / "subs" / student).mkdir(parents=True)
        for name in NAMES:
            if (folder / name).exists():
                shutil.copyfile(folder / name, root / "subs" / student / name)
    rows = grade(root / "subs", root / "out", solutions=ROOT / "solutions",
                 timeout=GRADE_TIMEOUT, jobs=2, notebooks=[Path(n).stem for n in NAMES])
    table: dict[tuple[str, str], list] = {}
    for row in rows:
        table.setdefault((row.student, row.notebook), []).append(row)
    return root / "out", table


@needs_notebooks
@pytest.mark.notebooks
@pytest.mark.parametrize("name", NAMES)
def test_grader_gives_the_key_full_marks(graded_class, name: str) -> None:
    _, table = graded_class
    lost = [(r.exercise, r.status, r.reason) for r in table[("key", Path(name).stem)]
            if r.points != r.max_points]
    assert not lost, f"the key of {name} loses points: {lost}"


@needs_notebooks
@pytest.mark.notebooks
@pytest.mark.parametrize("name", NAMES)
def test_grader_gives_the_untouched_copy_zero(graded_class, name: str) -> None:
    _, table = graded_class
    rows = table[("untouched", Path(name).stem)]
    scored = [(r.exercise, r.points) for r in rows if r.points or r.status != "failed"]
    assert not scored, f"course/{name} untouched earns points (an exercise nobody has to do)"


def _stub_error(output: dict, ids: set[str]) -> bool:
    text = strip_ansi(str(output.get("evalue", "")))
    return output.get("ename") == "NotImplementedError" and any(
        f"Exercise {i}" in text for i in ids)


@needs_notebooks
@pytest.mark.notebooks
@pytest.mark.parametrize("name", NAMES)
def test_untouched_copy_fails_only_because_of_the_stubs(graded_class, name: str) -> None:
    """Every error comes from a stub's NotImplementedError (or is a NameError after a stub
    stopped an earlier cell), every such cell carries the ``raises-exception`` tag for
    nbval-lax, and every graded cell fails."""
    out, table = graded_class
    ran_path = out / "autograded" / "untouched" / name
    if not ran_path.exists():
        rows = table[("untouched", Path(name).stem)]
        pytest.fail(f"course/{name} was not run by the grader: {rows[0].status} ({rows[0].reason})"
                    if rows else f"course/{name} has no graded exercises to run")
    ran = read_notebook(ran_path)
    course = {c.get("id"): c for c in read_notebook(COURSE / name).cells}
    ids = {ex.id for ex in exercises(ran)}
    stub_raised = False
    stubbed_answers = set()  # exercises whose answer cell itself raised the stub
    for index, cell in enumerate(ran.cells):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        grade_id = nbgrader_meta(cell).get("grade_id")
        if is_grade_cell(cell) and cell.cell_type == "code":   # markdown ones are graded by hand
            assert errors, f"{name} cell {index}: graded cell passes in the student copy"
        for err in errors:
            tb = strip_ansi("\n".join(err.get("traceback", [])))
            # a graded cell may fail in any way once its own answer cell raised the stub, or
            # when the stub's error arrives wrapped; in any cell, a NameError may follow from
            # an earlier stub that stopped a cell before it defined the name
            ok = (_stub_error(err, ids)
                  or (is_grade_cell(cell) and (grade_id in stubbed_answers
                                               or "NotImplementedError" in tb))
                  or (stub_raised and err.get("ename") == "NameError"))
            assert ok, (f"{name} cell {index} fails for another reason than a stub: "
                        f"{err.get('ename')}: {strip_ansi(str(err.get('evalue')))[:300]}")
            tags = course.get(cell.get("id"), {}).get("metadata", {}).get("tags", [])
            assert RAISES_TAG in tags, (f"{name} cell {index} raises in the student copy but has "
                                        f"no '{RAISES_TAG}' tag, so nbval-lax fails on it; do not "
                                        "call exercise code outside exercise and graded cells")
            if _stub_error(err, ids):
                stub_raised = True
                if is_solution_cell(cell) and grade_id:
                    stubbed_answers.add(grade_id.removesuffix("-code"))
