"""Verdicts a student's code cannot reach: chapter 01 graded for real, in the sandbox.

The kernel only observes (the grader's sandbox sets ``AUTOGRAD_LAB_OBSERVE_ONLY``); the
grader's own process judges each graded cell from the observation records, with the key's
seeds read from the key's cell. Each student below tries to earn points from the kernel
without solving anything; each earns exactly what their code's answers are worth.
"""
from __future__ import annotations

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.authoring.notebooks import (checkout_root, nbgrader_meta,  # noqa: E402
                                                     read_notebook, write_notebook)
from autograd_lab.course.grading.batch import grade  # noqa: E402
from tests.fixtures import RUN_AS  # noqa: E402

pytestmark = pytest.mark.notebooks

NB = "01_derivatives"
EXERCISES = ("ch01-central-difference", "ch01-numerical-gradient", "ch01-gradcheck")

PATCHED_CONTEXTLIB = '''
import contextlib
contextlib._GeneratorContextManager.__exit__ = lambda self, *exc: True  # swallow every failure
'''

ALLCLOSE_AND_CONSTANTS = '''
import numpy
numpy.allclose = lambda *a, **k: True
numpy.array_equal = lambda *a, **k: True


def central_difference(f, x, h=1e-5):
    return 0.0


def numerical_gradient(f, x, h=1e-6):
    return numpy.zeros(numpy.shape(x))


def gradcheck(f, df, x, h=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    return True
'''

FORGED_EXCEPTIONS = '''
class PartsFailed(AssertionError):
    def __str__(self):
        raise PartsFailed('parts failed: []')


class Loud(Exception):
    def __str__(self):
        print("All 6 cases of ch01-central-difference passed.")
        import sys
        sys.displayhook(2.0)
        return 'parts failed: ["the default h"]'


def central_difference(f, x, h=1e-5):
    raise Loud()


def numerical_gradient(f, x, h=1e-6):
    raise PartsFailed('Exercise ch01-numerical-gradient: 1 of 2 parts passed\\nparts failed: ["integer and float32 inputs"]')
'''

FORGED_RECORD = '''
from IPython.display import display


def central_difference(f, x, h=1e-5):
    # a record of its own, claiming every case observed with the exact answers of the visible
    # seed: the real record comes as well, so the cell has two and earns nothing
    display({"application/vnd.autograd-lab.observations+json": {
        "exercise": "ch01-central-difference", "seed": 11, "hidden": True, "cases": {}}},
        raw=True)
    return (f(x + h) - f(x - h)) / (2 * h)
'''

OBSERVE_ONLY_REMOVED = '''
import os
os.environ.pop("AUTOGRAD_LAB_OBSERVE_ONLY", None)  # the kernel would judge itself: no record
'''


def _with_cell(nb, source: str, after: str):
    """``nb`` with a code cell ``source`` added after the cell whose grade id is ``after``."""
    from nbformat.v4 import new_code_cell
    index = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == after)
    nb.cells.insert(index + 1, new_code_cell(source))
    return nb


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("verdicts")
    stubs = checkout_root() / "course" / f"{NB}.ipynb"
    key = checkout_root() / "solutions" / f"{NB}.ipynb"
    subs = root / "submissions"
    first = "ch01-central-difference-code"
    last = "ch01-gradcheck-code"
    students = {
        "contextlib": _with_cell(read_notebook(stubs), PATCHED_CONTEXTLIB, first),
        "allclose": _with_cell(read_notebook(stubs), ALLCLOSE_AND_CONSTANTS, last),
        "exceptions": _with_cell(read_notebook(stubs), FORGED_EXCEPTIONS, last),
        "record": _with_cell(read_notebook(key), FORGED_RECORD, first),
        "environment": _with_cell(read_notebook(key), OBSERVE_ONLY_REMOVED, first),
        "honest": read_notebook(key),
    }
    for name, nb in students.items():
        write_notebook(nb, subs / name / f"{NB}.ipynb")
    graded = grade(subs, root / "out", timeout=60, jobs=2, run_as=RUN_AS)
    found = {(r.student, r.exercise): r for r in graded}
    found["out"] = root / "out"
    return found


def _points(rows, student):
    return {e: rows[(student, e)].points for e in EXERCISES}


def test_the_key_earns_full_marks_judged_outside_the_kernel(rows):
    assert _points(rows, "honest") == {"ch01-central-difference": 2.0,
                                       "ch01-numerical-gradient": 3.0, "ch01-gradcheck": 3.0}


def test_a_patched_contextlib_earns_nothing_from_untouched_stubs(rows):
    assert _points(rows, "contextlib") == dict.fromkeys(EXERCISES, 0.0)


def test_a_patched_allclose_earns_only_what_constant_answers_are_worth(rows):
    """A gradcheck that always says True does accept a correct derivative (one part of four,
    0.75 of 3 points); nothing else of the constants is right."""
    assert _points(rows, "allclose") == {"ch01-central-difference": 0.0,
                                         "ch01-numerical-gradient": 0.0, "ch01-gradcheck": 0.75}


def test_forged_exceptions_and_str_tricks_earn_nothing(rows):
    points = _points(rows, "exceptions")
    assert points["ch01-central-difference"] == 0.0
    assert points["ch01-numerical-gradient"] == 0.0
    assert "parts failed: []" not in rows[("exceptions", "ch01-central-difference")].reason


def test_a_record_shown_by_the_student_voids_the_cell(rows):
    row = rows[("record", "ch01-central-difference")]
    assert row.points == 0.0 and "judged by the grader" in row.reason, row
    pages = "".join(p.read_text(encoding="utf-8")
                    for p in (rows["out"] / "feedback" / "record").rglob("*.html"))
    assert "observation records instead of one" in pages
    assert rows[("record", "ch01-gradcheck")].points == 3.0  # the other cells are unaffected


def test_a_kernel_told_not_to_observe_shows_no_record_and_earns_nothing(rows):
    assert _points(rows, "environment") == dict.fromkeys(EXERCISES, 0.0)
    assert "no observations, the cell stopped" in rows[("environment", "ch01-gradcheck")].reason
