"""The checker framework and the checkers of chapters 00 and 01.

Each checker must pass a correct solution (with and without hidden cases) and
fail typical wrong ones with a message that names the exercise and gives a hint.
"""
from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course.exercises import check
from autograd_lab.course.exercises._common import Checker, format_value

from ._checker_helpers import (SEEDS, assert_all_passed, assert_calls_own_checker, failure,
                              graded_cells, solution_cells)


# -- correct solutions ----------------------------------------------------------------
def center_rows(X):
    return X - X.mean(axis=1, keepdims=True)


def pairwise_sq_dists(A, B):
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1)


def central_difference(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def numerical_gradient(f, x, h=1e-6):
    x = np.array(x, dtype=np.float64)
    grad = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        plus = float(f(x))
        x[idx] = old - h
        minus = float(f(x))
        x[idx] = old
        grad[idx] = (plus - minus) / (2 * h)
    return grad


def make_gradcheck(numgrad=numerical_gradient, *, use_rtol=True, raise_type=RuntimeError,
                   check_shape=True, name_index=True):
    def gradcheck(f, df, x, h=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
        analytical = np.asarray(df(x), dtype=np.float64)
        if check_shape and analytical.shape != np.shape(x):
            raise ValueError(f"df(x) has shape {analytical.shape}, x has shape {np.shape(x)}")
        numerical = numgrad(f, x, h)
        err = np.abs(analytical - numerical)
        ok = err <= atol + (rtol * np.abs(numerical) if use_rtol else 0)
        if np.all(ok):
            return True
        if raise_exception:
            idx = np.unravel_index(np.argmax(err), err.shape)
            where = f"at index {idx}" if name_index else "somewhere"
            raise raise_type(f"gradient mismatch {where}")
        return False
    return gradcheck


def run(checker, fn, seed=0, hidden=False):
    checker(fn, seed=seed, hidden=hidden)


# -- the check namespace -------------------------------------------------------------
def test_check_namespace_resolves_lazily_and_lists_checkers():
    assert check.ch01_central_difference.__module__.startswith("autograd_lab.course.exercises.ch01")
    names = dir(check)
    for name in ["ch00_center_rows", "ch00_pairwise_sq_dists", "ch01_central_difference",
                 "ch01_numerical_gradient", "ch01_gradcheck"]:
        assert name in names


@pytest.mark.parametrize("name,words", [("ch01_no_such_exercise", "ch01 has"),
                                        ("ch99_anything", "no module for chapter ch99"),
                                        ("central_difference", "named like")])
def test_check_namespace_unknown_names(name, words):
    with pytest.raises(AttributeError, match=words):
        getattr(check, name)


def test_check_namespace_is_read_only():
    with pytest.raises(AttributeError, match="read-only"):
        check.ch01_gradcheck = lambda *a, **k: None
    assert check.ch01_gradcheck.__module__ == "autograd_lab.course.exercises.ch01.gradcheck"


# -- _common ------------------------------------------------------------------------------
def test_checker_prints_passes_and_formats_failures(capsys):
    ck = Checker("ch99-demo", seed=3)
    with ck.case("first"):
        ck.close(ck.call(lambda: 1.0 + 1e-12), 1.0)
    with pytest.raises(AssertionError) as info, ck.case("second"):
        ck.close(np.array([1.0, 5.0]), np.array([1.0, 2.0]), hint="look closer")
    out = capsys.readouterr().out
    assert out == "✓ first\n"
    msg = str(info.value)
    assert 'Exercise ch99-demo failed in case "second"' in msg
    assert "worst element at index (1,)" in msg and "expected 2, received 5" in msg
    assert "hint: look closer" in msg


def test_checker_shape_none_and_mistake_hints():
    ck = Checker("ch99-demo")
    with pytest.raises(AssertionError, match=r"shape \(3,\), expected shape \(2,\)"):
        ck.close(np.zeros(3), np.zeros(2))
    with pytest.raises(AssertionError, match="forget the `return`"):
        ck.close(None, 1.0)
    with pytest.raises(AssertionError, match="hint: you doubled"):
        ck.close(4.0, 2.0, hint="generic", mistakes=[(4.0, "you doubled")])
    with pytest.raises(AssertionError, match="not a number"):
        ck.close("abc", 1.0)


def test_checker_call_turns_stub_into_not_done_and_crash_into_assertion():
    ck = Checker("ch99-demo")

    def stub(x):
        raise NotImplementedError("Exercise ch99-demo: write stub")

    def crash(x):
        return x[10]

    with pytest.raises(NotImplementedError, match="Exercise ch99-demo is not done yet"):
        ck.call(stub, 1)
    with pytest.raises(AssertionError, match="raised IndexError") as info:
        ck.call(crash, [1])
    assert isinstance(info.value.__cause__, IndexError)


def test_checker_raises_helper():
    ck = Checker("ch99-demo")
    assert isinstance(ck.raises(ValueError, int, "x"), ValueError)
    with pytest.raises(AssertionError, match="did not raise"):
        ck.raises(ValueError, int, "3")
    with pytest.raises(AssertionError, match="wrong kind of error"):
        ck.raises(KeyError, int, "x")


def test_format_value_is_short_and_rounded():
    assert format_value(0.1 + 0.2) == "0.3"
    assert format_value(np.arange(100.0)) == "array of shape (100,), dtype float64"
    assert format_value(np.bool_(True)) == "True"


# -- chapter 00 ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch00_correct_solutions_pass(seed, hidden, capsys):
    run(check.ch00_center_rows, center_rows, seed, hidden)
    run(check.ch00_pairwise_sq_dists, pairwise_sq_dists, seed, hidden)
    assert "passed" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,words", [
    (lambda X: X - X.mean(axis=0), "column means"),
    (lambda X: X - X.mean(), "mean of the whole array"),
    (lambda X: X / X.mean(axis=1, keepdims=True), "Each row should have mean 0"),
    (lambda X: (X - X.mean(axis=1, keepdims=True)).tolist(), "not a numpy array"),
])
def test_ch00_center_rows_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch00_center_rows, wrong)
    assert "ch00-center-rows" in msg and words in msg


def test_ch00_center_rows_rejects_in_place_and_missing_keepdims():
    def in_place(X):
        X -= X.mean(axis=1, keepdims=True)
        return X
    assert "changed its input" in failure(check.ch00_center_rows, in_place)

    def no_keepdims(X):  # right for non-square arrays thanks to a transpose, wrong on square ones
        return X - X.mean(axis=1) if X.shape[0] == X.shape[1] else center_rows(X)
    assert "keepdims=True" in failure(check.ch00_center_rows, no_keepdims)


@pytest.mark.parametrize("wrong,words", [
    (lambda A, B: np.sqrt(pairwise_sq_dists(A, B)), "no sqrt"),
    (lambda A, B: pairwise_sq_dists(B, A), "shape"),
    (lambda A, B: ((A[:, None, :] - B[None, :, :]).sum(-1)) ** 2, "Square each difference"),
    (lambda A, B: None, "return"),
])
def test_ch00_pairwise_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch00_pairwise_sq_dists, wrong)
    assert "ch00-pairwise-sq-dists" in msg and words in msg


# -- chapter 01 ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch01_correct_solutions_pass(seed, hidden, capsys):
    run(check.ch01_central_difference, central_difference, seed, hidden)
    run(check.ch01_numerical_gradient, numerical_gradient, seed, hidden)
    run(check.ch01_gradcheck, make_gradcheck(), seed, hidden)
    assert_all_passed(capsys.readouterr().out, 3, hidden)


@pytest.mark.parametrize("wrong,words", [
    (lambda f, x, h=1e-5: (f(x + h) - f(x)) / h, "forward difference"),
    (lambda f, x, h=1e-5: (f(x) - f(x - h)) / h, "backward difference"),
    (lambda f, x, h=1e-5: (f(x + h) - f(x - h)) / h, "divide by 2 * h"),
    (lambda f, x, h=1e-5: (f(x + 1e-5) - f(x - 1e-5)) / 2e-5, "ignores the h"),
    (lambda f, x, h: (f(x + h) - f(x - h)) / (2 * h), "default value"),
    (lambda f, x, h=1e-12: (f(x + h) - f(x - h)) / (2 * h), "round-off"),
    (lambda f, x, h=1e-5: np.array([(f(x + h) - f(x - h)) / (2 * h)]), "single number"),
])
def test_ch01_central_difference_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch01_central_difference, wrong)
    assert "ch01-central-difference" in msg and words in msg


def test_ch01_stub_reports_not_done():
    def stub(f, x, h=1e-5):
        raise NotImplementedError("Exercise ch01-central-difference: write your code here")
    with pytest.raises(NotImplementedError, match="ch01-central-difference is not done yet") as info:
        check.ch01_central_difference(stub)
    assert str(info.value).count("ch01-central-difference") == 1


def test_ch01_gradcheck_names_the_unfinished_exercise_it_depends_on():
    def numgrad_stub(f, x, h=1e-6):
        raise NotImplementedError("Exercise ch01-numerical-gradient: write your code here")
    with pytest.raises(NotImplementedError, match="uses exercise ch01-numerical-gradient, which "
                                                  "is not done yet"):
        check.ch01_gradcheck(make_gradcheck(numgrad_stub))


def _no_copy_drift(f, x, h=1e-6):  # perturbs the caller's array and "restores" by arithmetic
    grad = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        x[idx] += h
        plus = f(x)
        x[idx] -= 2 * h
        minus = f(x)
        x[idx] += h
        grad[idx] = (plus - minus) / (2 * h)
    return grad


def _in_place_native_dtype(f, x, h=1e-6):  # keeps x's dtype: integers truncate x + h
    x = x.copy()
    grad = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        plus = f(x)
        x[idx] = old - h
        minus = f(x)
        x[idx] = old
        grad[idx] = (plus - minus) / (2 * h)
    return grad


@pytest.mark.parametrize("wrong,words", [
    (lambda f, x, h=1e-6: numerical_gradient(f, x, h).ravel(), "shape"),
    (lambda f, x, h=1e-6: list(numerical_gradient(f, x, h)), "not a numpy array"),
    (lambda f, x, h=1e-6: numerical_gradient(f, x, h).astype(np.float32), "not float64"),
    (_no_copy_drift, "changed its input"),
    (_in_place_native_dtype, "integer array cannot hold"),
    (lambda f, x, h=1e-6: np.full(np.shape(x), central_difference(
        lambda t: f(np.full(np.shape(x), t)), 0.3)), "one element at a time"),
])
def test_ch01_numerical_gradient_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch01_numerical_gradient, wrong)
    assert "ch01-numerical-gradient" in msg and words in msg


def test_ch01_numerical_gradient_float32_work_fails():
    def float32_work(f, x, h=1e-6):  # right dtype at the end, but x + h computed in float32
        return _in_place_native_dtype(f, np.asarray(x, dtype=np.float32), h).astype(np.float64)
    msg = failure(check.ch01_numerical_gradient, float32_work)
    assert "float64 copy" in msg


@pytest.mark.parametrize("wrong,words", [
    (make_gradcheck(use_rtol=False), "rtol"),
    (make_gradcheck(raise_type=ValueError), "wrong kind of error"),
    (make_gradcheck(name_index=False), "worst element"),
    (make_gradcheck(check_shape=False), "ValueError"),
    (lambda f, df, x, **kw: 1, "True or False"),
    (lambda f, df, x, **kw: True, "must not pass"),
    (lambda f, df, x, **kw: np.allclose(df(x), numerical_gradient(f, x)), "raise_exception"),
])
def test_ch01_gradcheck_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch01_gradcheck, wrong)
    assert "ch01-gradcheck" in msg and words in msg


# -- the notebooks use these checkers consistently -----------------------------------------
@pytest.mark.parametrize("name", ["00_welcome.ipynb", "01_derivatives.ipynb"])
def test_graded_cells_call_their_own_checker(name):
    graded = graded_cells(solution_cells(name))
    assert len(graded) >= 2
    for cell in graded:
        checker = assert_calls_own_checker(cell)
        assert callable(getattr(check, checker))


def test_the_how_to_in_common_docstring_works(capsys):
    import textwrap

    from autograd_lab.course.exercises import _common
    example = textwrap.dedent(_common.__doc__.split("Writing one::")[1].split("``seed``")[0])
    namespace: dict = {}
    exec(example, namespace)  # the documented checker must itself be a working checker
    namespace["ch01_double"](lambda x: 2 * x if isinstance(x, np.ndarray) else _raise(TypeError))
    assert "All 2 cases of ch01-double passed." in capsys.readouterr().out
    with pytest.raises(AssertionError, match="You added 2"):
        namespace["ch01_double"](lambda x: x + 2)


def _raise(kind):
    raise kind("not an array")
