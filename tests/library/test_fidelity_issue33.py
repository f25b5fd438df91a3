"""Nothing silently wrong (issue 33): each reproducer runs unchanged on autograd_lab and on PyTorch.

A case is a function of the library (``al`` or ``torch``) and its functional module; it returns the
values it computed. The expected numbers are written out from PyTorch's semantics, so the cases run
without torch too; where torch is installed every case also runs on it, which checks the numbers.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as alF
from autograd_lab.errors import BackwardError, ShapeError

from .._oracle import torch

inf, nan = math.inf, math.nan


def _libs():
    libs = [pytest.param((al, alF), id="autograd_lab")]
    if torch is not None:
        libs.append(pytest.param((torch, torch.nn.functional), id="torch"))
    return libs


LIBS = _libs()


def t(lib, values, grad=True, dtype=None):
    return lib.tensor(values, dtype=dtype or lib.float64, requires_grad=grad)


def as_np(x):
    if x is None:
        return None
    if isinstance(x, al.Variable):
        return x.data
    if isinstance(x, (tuple, list)):
        return [as_np(v) for v in x]
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def same(got, expected):
    got = as_np(got)
    if isinstance(expected, list) and expected and isinstance(expected[0], (list, np.ndarray)) \
            and isinstance(got, list):
        for g, e in zip(got, expected):
            same(g, e)
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                               rtol=1e-6, atol=1e-8, equal_nan=True)


def grads_of(lib, fn, *values):
    xs = [t(lib, v) for v in values]
    fn(*xs).sum().backward()
    return [x.grad for x in xs]


# ============================================================== masks select, never multiply
SELECT_CASES = {
    # the distance pattern: clamp at 0, then sqrt; the clamped entry gets 0, not 0 * inf = nan
    "clamp_then_sqrt": (lambda lib, F: grads_of(lib, lambda d: d.clamp(min=0).sqrt(), [-1e-9, 4.0]),
                        [[0.0, 0.25]]),
    "where_then_sqrt": (lambda lib, F: grads_of(
        lib, lambda d: lib.where(d > 0, d, lib.zeros(2, dtype=lib.float64)).sqrt(), [-1e-9, 4.0]),
        [[0.0, 0.25]]),
    "maximum_then_sqrt": (lambda lib, F: grads_of(
        lib, lambda d: lib.maximum(d, lib.zeros(2, dtype=lib.float64)).sqrt(), [-1.0, 4.0]),
        [[0.0, 0.25]]),
    "floor_times_inf": (lambda lib, F: grads_of(lib, lambda x: x.floor() * inf, [1.5]), [[0.0]]),
    "sign_times_inf": (lambda lib, F: grads_of(lib, lambda x: x.sign() * inf, [1.5]), [[0.0]]),
    "full_max_then_sqrt": (lambda lib, F: grads_of(lib, lambda x: (x.max() - 3).sqrt(), [1.0, 3.0]),
                           [[0.0, inf]]),
    "full_min_then_sqrt": (lambda lib, F: grads_of(lib, lambda x: (x.min() - 1).sqrt(), [1.0, 3.0]),
                           [[inf, 0.0]]),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(SELECT_CASES))
def test_masks_select(lib, name):
    case, expected = SELECT_CASES[name]
    with np.errstate(all="ignore"):
        same(case(*lib), expected)


# ============================================================== special points of the gradient
POINT_CASES = {
    "std_of_constant": (lambda lib, F: grads_of(lib, lambda x: x.std(), [2.0, 2.0, 2.0]), [[0.0, 0.0, 0.0]]),
    "pow_zero_exponent_at_zero": (lambda lib, F: grads_of(lib, lambda x: x ** 0, [0.0, 1.0]), [[0.0, 0.0]]),
    "exponent_grad_of_zero_base": (lambda lib, F: grads_of(
        lib, lambda y: lib.tensor([0.0, 0.0], dtype=lib.float64) ** y, [2.0, 0.0]), [[0.0, 0.0]]),
    "exponent_grad_of_zero_base_negative": (lambda lib, F: grads_of(
        lib, lambda y: lib.tensor([0.0], dtype=lib.float64) ** y, [-1.0]), [[-inf]]),
    "max_dim_tie_goes_to_the_index": (lambda lib, F: grads_of(
        lib, lambda x: x.max(dim=0)[0], [1.0, 3.0, 3.0]), [[0.0, 1.0, 0.0]]),
    "min_dim_tie_goes_to_the_index": (lambda lib, F: grads_of(
        lib, lambda x: x.min(0).values, [3.0, 1.0, 1.0]), [[0.0, 1.0, 0.0]]),
    "full_max_tie_is_shared": (lambda lib, F: grads_of(lib, lambda x: x.max(), [1.0, 3.0, 3.0]),
                               [[0.0, 0.5, 0.5]]),
    "relu_at_nan_passes": (lambda lib, F: grads_of(lib, lambda x: x.relu(), [nan, 1.0, -1.0]),
                           [[1.0, 1.0, 0.0]]),
    "maximum_with_nan_gives_both": (lambda lib, F: grads_of(
        lib, lambda a, b: lib.maximum(a, b), [nan, 1.0, 1.0, 2.0], [1.0, nan, 1.0, 0.0]),
        [[1.0, 1.0, 0.5, 1.0], [1.0, 1.0, 0.5, 0.0]]),
    "minimum_with_nan_gives_both": (lambda lib, F: grads_of(
        lib, lambda a, b: lib.minimum(a, b), [nan, 1.0, 1.0, 2.0], [1.0, nan, 1.0, 0.0]),
        [[1.0, 1.0, 0.5, 0.0], [1.0, 1.0, 0.5, 1.0]]),
    "abs_at_nan": (lambda lib, F: grads_of(lib, lambda x: x.abs(), [nan, -2.0]), [[0.0, -1.0]]),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(POINT_CASES))
def test_gradient_at_special_points(lib, name):
    case, expected = POINT_CASES[name]
    with np.errstate(all="ignore"):
        same(case(*lib), expected)


# ============================================================== graph features
def _zero_on_non_leaf(lib, F):
    a = t(lib, [1.0, 2.0])
    y = a * 3
    y.zero_()
    (y + a).sum().backward()
    return a.grad


def _grad_runs_leaf_hooks(lib, F):
    x = t(lib, [1.0, 2.0])
    x.register_hook(lambda g: g * 2)
    return lib.autograd.grad((x * 3).sum(), [x])[0]


def _grad_runs_leaf_hooks_double(lib, F):
    x = t(lib, [1.0, 2.0])
    x.register_hook(lambda g: g * 2)
    (g,) = lib.autograd.grad((x ** 3).sum(), [x], create_graph=True)
    return lib.autograd.grad(g.sum(), [x])[0]  # d(2 * 3x^2)/dx = 12x, doubled by the hook again: 24x


def _retain_grad_follows_inplace(lib, F):
    a = t(lib, [-1.0, 2.0])
    y = a * 1
    y.retain_grad()
    y.relu_()
    (y * 3).sum().backward()
    return [y.grad, a.grad]


def _requires_grad_off_after_graph(lib, F):
    a = t(lib, [1.0, 2.0])
    b = t(lib, [3.0, 4.0])
    y = (a * b).sum()
    a.requires_grad_(False)
    y.backward()
    return [np.zeros(2) if a.grad is None else a.grad + 100, b.grad]


GRAPH_CASES = {
    "zero_on_non_leaf": (_zero_on_non_leaf, [1.0, 1.0]),
    "grad_runs_leaf_hooks": (_grad_runs_leaf_hooks, [6.0, 6.0]),
    "grad_runs_leaf_hooks_double": (_grad_runs_leaf_hooks_double, [24.0, 48.0]),
    "retain_grad_follows_inplace": (_retain_grad_follows_inplace, [[3.0, 3.0], [0.0, 3.0]]),
    "requires_grad_off_after_graph": (_requires_grad_off_after_graph, [[0.0, 0.0], [1.0, 2.0]]),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_features(lib, name):
    case, expected = GRAPH_CASES[name]
    same(case(*lib), expected)


# ============================================================== softmax with -inf (kernel bug)
def _masked_rows(lib, F, fn):
    x = lib.tensor([[-inf, 1.0, 2.0], [1.0, -inf, 2.0]], dtype=lib.float64, requires_grad=True)
    out = getattr(F, fn)(x, dim=1)
    finite = lib.where(lib.isfinite(out), out, lib.zeros_like(out)) if fn == "log_softmax" else out
    (finite * lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64)).sum().backward()
    return [out, x.grad]


P1, P2 = 1 / (1 + math.e), math.e / (1 + math.e)
SOFTMAX_CASES = {
    "softmax": ([[0.0, P1, P2], [P1, 0.0, P2]],
                [[0.0, P1 * (2 - (2 * P1 + 3 * P2)), P2 * (3 - (2 * P1 + 3 * P2))],
                 [P1 * (1 - (P1 + 3 * P2)), 0.0, P2 * (3 - (P1 + 3 * P2))]]),
    "log_softmax": ([[-inf, math.log(P1), math.log(P2)], [math.log(P1), -inf, math.log(P2)]],
                    [[0.0, 2 - 5 * P1, 3 - 5 * P2], [1 - 4 * P1, 0.0, 3 - 4 * P2]]),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("fn", sorted(SOFTMAX_CASES))
def test_softmax_row_with_leading_minus_inf(lib, fn):
    out, grad = _masked_rows(*lib, fn)
    values, grads = SOFTMAX_CASES[fn]
    same(out, values)
    same(grad, grads)


@pytest.mark.parametrize("lib", LIBS)
def test_cross_entropy_row_with_leading_minus_inf(lib):
    m, F = lib
    x = m.tensor([[-inf, 1.0, 2.0]], dtype=m.float64, requires_grad=True)
    loss = F.cross_entropy(x, m.tensor([2]))
    loss.backward()
    same(loss, -math.log(P2))
    same(x.grad, [[0.0, P1, P2 - 1]])


def test_softmax_kernels_and_references_agree_on_minus_inf():
    from autograd_lab.kernels import softmax as K

    for dtype in (np.float32, np.float64):
        x = np.array([[-np.inf, 1.0, 2.0] + [0.5] * 20, [-np.inf] * 2 + [0.0] * 21], dtype=dtype)
        np.testing.assert_allclose(K.softmax_fwd(x), K.softmax_fwd_ref(x), rtol=1e-5)
        np.testing.assert_allclose(K.log_softmax_fwd(x), K.log_softmax_fwd_ref(x), rtol=1e-5)
        assert np.isfinite(K.softmax_fwd(x)).all()
        loss, _ = K.cross_entropy_fwd(x, np.array([1, 5]))
        np.testing.assert_allclose(loss, K.cross_entropy_fwd_ref(x, np.array([1, 5]))[0], rtol=1e-5)


# ============================================================== max/min overloads
@pytest.mark.parametrize("lib", LIBS)
def test_max_min_overloads(lib):
    m, _ = lib
    x = m.tensor([[1.0, 5.0], [7.0, 2.0]], dtype=m.float64)
    r = x.max(dim=1)
    same(r[0], [5.0, 7.0])
    same(r.values, [5.0, 7.0])
    same(r.indices, [1, 0])
    assert r.indices.dtype == (m.int64 if m is torch else np.int64)
    _, pred = m.max(x, 1)
    same(pred, [1, 0])
    values, idx = x.min(1, keepdim=True)
    assert tuple(values.shape) == (2, 1) and tuple(idx.shape) == (2, 1)
    same(values, [[1.0], [2.0]])
    same(m.max(x, m.full((2, 2), 3.0, dtype=m.float64)), [[3.0, 5.0], [7.0, 3.0]])
    same(m.min(x, m.full((2, 2), 3.0, dtype=m.float64)), [[1.0, 3.0], [3.0, 2.0]])
    same(x.amax(0), [7.0, 5.0])
    same(x.amin(dim=1), [1.0, 2.0])
    same(x.argmin(dim=1), [0, 1])
    assert type(r).__name__ == "max" and type(x.min(0)).__name__ == "min"


def test_numpy_axis_spelling_keeps_returning_values():
    x = al.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    x.max(axis=1).sum().backward()  # numpy's spelling: values only, as amax
    np.testing.assert_array_equal(x.grad.data, [[0.0, 1.0], [1.0, 0.0]])


# ============================================================== values, shapes, dtypes
def _sum_empty_dim(lib, F):
    return lib.ones(2, 3, dtype=lib.float64).sum(dim=())


VALUE_CASES = {
    "sum_dim_empty_tuple_sums_all": (_sum_empty_dim, 6.0),
    "var_of_empty_dim_is_nan": (lambda lib, F: lib.zeros(0, 3, dtype=lib.float64).var(0), [nan] * 3),
    "std_of_empty_dim_is_nan": (lambda lib, F: lib.zeros(0, 3, dtype=lib.float64).std(0), [nan] * 3),
    "var_of_one_value_is_nan": (lambda lib, F: lib.ones(1, dtype=lib.float64).var(), nan),
    "sign_of_nan": (lambda lib, F: lib.tensor([nan, -2.0, 0.0], dtype=lib.float64).sign(), [0.0, -1.0, 0.0]),
    "gather_smaller_index": (lambda lib, F: lib.gather(lib.arange(6.0, dtype=lib.float64).reshape(2, 3), 1,
                                                       lib.tensor([[0, 2]])), [[0.0, 2.0]]),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values(lib, name):
    import warnings

    case, expected = VALUE_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns about the degrees of freedom
        same(case(*lib), expected)


@pytest.mark.parametrize("lib", LIBS)
def test_gather_smaller_index_gradient(lib):
    m, _ = lib
    x = t(m, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    m.gather(x, 1, m.tensor([[0, 2]])).sum().backward()
    same(x.grad, [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("lib", LIBS)
def test_gather_larger_index_is_refused(lib):
    m, _ = lib
    with pytest.raises((RuntimeError, ShapeError, IndexError)):
        m.gather(m.zeros(2, 3), 1, m.tensor([[0], [1], [0]]))


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("fn", ["relu", "sigmoid", "tanh"])
def test_activation_of_zero_d_keeps_shape(lib, fn):
    m, F = lib
    x = t(m, 0.5)
    y = getattr(x, fn)()
    assert tuple(y.shape) == ()
    assert tuple(getattr(F, fn)(x).shape) == ()
    y.backward()
    assert tuple(x.grad.shape) == ()


@pytest.mark.parametrize("lib", LIBS)
def test_int_and_index_separated_by_a_slice(lib):
    m, _ = lib
    x = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4).requires_grad_()
    y = x[0, :, m.tensor([0, 1])]
    assert tuple(y.shape) == (3, 2)
    same(y[:, 1], [1.0, 5.0, 9.0])
    (y * m.arange(6.0, dtype=m.float64).reshape(3, 2)).sum().backward()
    expected = np.zeros((2, 3, 4))
    expected[0, :, :2] = np.arange(6.0).reshape(3, 2)
    same(x.grad, expected)
    assert tuple(x[:, 0, m.tensor([0, 1])].shape) == (2, 2)  # adjacent: unchanged
    assert tuple(x[None, 0, :, m.tensor([0, 1])].shape) == (1, 3, 2)


PROMOTION = [  # (left dtype, right dtype, left 0-d?, right 0-d?, expected)
    ("float32", "int64", False, False, "float32"),
    ("int64", "float32", False, False, "float32"),
    ("float32", "float64", False, True, "float32"),   # 0-d tensors do not promote within a category
    ("float64", "float32", True, False, "float32"),
    ("int32", "int64", False, True, "int32"),
    ("int32", "int64", False, False, "int64"),
    ("int64", "float16", True, True, "float16"),
    ("bool", "int64", False, True, "int64"),
    ("int64", "float64", False, True, "float64"),     # a 0-d float promotes an int tensor to the default
    ("float16", "float32", False, False, "float32"),
]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("op", ["add", "mul", "sub", "maximum", "where"])
@pytest.mark.parametrize("a,b,a0,b0,expected", PROMOTION)
def test_type_promotion(lib, op, a, b, a0, b0, expected):
    m, _ = lib
    x = m.ones(() if a0 else (2,), dtype=getattr(m, a))
    y = m.ones(() if b0 else (2,), dtype=getattr(m, b))
    if op == "where":
        r = m.where(m.ones(2, dtype=m.bool), x, y)
    elif op in ("maximum",):
        if "bool" in (a, b):
            pytest.skip("maximum of bool")
        r = getattr(m, op)(x, y)
    else:
        if op == "sub" and "bool" in (a, b):
            pytest.skip("PyTorch refuses bool subtraction")
        r = getattr(x, op)(y)
    assert str(r.dtype).replace("torch.", "") == expected


@pytest.mark.parametrize("lib", LIBS)
def test_python_scalars_keep_the_tensor_dtype(lib):
    m, _ = lib
    name = lambda v: str(v.dtype).replace("torch.", "")  # noqa: E731
    assert name(m.ones(2, dtype=m.float32) * 2.5) == "float32"
    assert name(m.ones(2, dtype=m.int64) * 2.5) == "float32" if m is torch else True
    assert name(m.ones(2, dtype=m.int32) + 2) == "int32"
    assert name(m.ones(2, dtype=m.float32) / m.ones(2, dtype=m.int64)) == "float32"


@pytest.mark.parametrize("lib", LIBS)
def test_all_any_return_tensors(lib):
    m, _ = lib
    r = m.ones(2).all()
    assert not isinstance(r, bool) and bool(r) is True
    assert tuple(r.shape) == () and "bool" in str(r.dtype)
    assert bool(m.zeros(2).any()) is False


@pytest.mark.parametrize("lib", LIBS)
def test_copy_of_a_float_into_an_int_tensor(lib):
    m, _ = lib
    w = t(m, [1.0, 2.0])
    i = m.tensor([1, 2])
    i.copy_(w * 2)
    assert i.requires_grad is False and "int64" in str(i.dtype)
    same(i, [2, 4])


# ============================================================== PyTorch refuses, so do we
def _second_backward(f):
    def run(lib):
        x = t(lib, [1.0, 3.0, 2.0])
        y = f(x)
        y.backward()
        y.backward()
    return run


REFUSED = {
    "mul_float_into_int": lambda m: m.tensor([1, 2]).mul_(1.5),
    "add_float_tensor_into_int": lambda m: m.tensor([1, 2]).add_(m.tensor([0.5, 0.5])),
    "unsqueeze_out_of_range": lambda m: m.ones(2).unsqueeze(3),
    "flatten_start_after_end": lambda m: m.ones(2, 3).flatten(1, 0),
    "mean_of_ints": lambda m: m.tensor([1, 2]).mean(),
    "var_of_ints": lambda m: m.tensor([1, 2]).var(),
    "std_of_ints": lambda m: m.tensor([1, 2]).std(),
    "second_backward_max": _second_backward(lambda x: x.max()),
    "second_backward_min": _second_backward(lambda x: x.min()),
    "second_backward_amax": _second_backward(lambda x: x.amax(0)),
    "second_backward_var": _second_backward(lambda x: x.var()),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_in_pytorch(lib, name):
    m, _ = lib
    with pytest.raises((RuntimeError, IndexError, TypeError, BackwardError, ShapeError)):
        REFUSED[name](m)


@pytest.mark.parametrize("lib", LIBS)
def test_amax_input_changed_in_place_is_detected(lib):
    m, _ = lib
    x = t(m, [1.0, 3.0, 2.0])
    y = x * 1
    z = y.amax()
    y.mul_(2)
    with pytest.raises((RuntimeError, BackwardError), match="modified by an inplace operation"):
        z.backward()


# ============================================================== in-place through views
def _mul_through_slice(lib, F):
    a = t(lib, [1.0, 2.0, 3.0])
    x = a * 1
    x[0:2].mul_(2)
    x.sum().backward()
    return [x, a.grad]


def _mul_through_element(lib, F):
    a = t(lib, [1.0, 2.0, 3.0])
    x = a * 1
    x[0].mul_(10)  # an element is a view too, not a copy
    x.sum().backward()
    return [x, a.grad]


def _write_into_slice_of_slice(lib, F):
    w = t(lib, [5.0, 6.0])
    b = lib.zeros(3, dtype=lib.float64)
    b[:][:2] = w
    assert b.requires_grad
    (b * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
    return [b, w.grad]


def _view_made_before_the_base_changed(lib, F):
    a = t(lib, [1.0, 2.0, 3.0])
    x = a * 1
    v = x[1:]
    x.mul_(2)
    v.sum().backward()  # v shows the changed values, and its gradient goes through the change
    return [v, a.grad]


def _write_through_transpose(lib, F):
    a = t(lib, [[1.0, 2.0], [3.0, 4.0]])
    x = a * 1
    x.T[0].mul_(3)
    x.sum().backward()
    return [x, a.grad]


def _relu_through_view_then_more(lib, F):
    a = t(lib, [[-1.0, 2.0], [3.0, -4.0]])
    x = a * 2
    x[:, 1].relu_()
    (x * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
    return [x, a.grad]


def _no_grad_write_through_view_of_leaf(lib, F):
    a = t(lib, [1.0, 2.0, 3.0])
    with lib.no_grad():
        a[0:2].mul_(2)
    (a * a).sum().backward()
    return [a, a.grad]


VIEW_CASES = {
    "mul_through_slice": (_mul_through_slice, [[2.0, 4.0, 3.0], [2.0, 2.0, 1.0]]),
    "mul_through_element": (_mul_through_element, [[10.0, 2.0, 3.0], [10.0, 1.0, 1.0]]),
    "write_into_slice_of_slice": (_write_into_slice_of_slice, [[5.0, 6.0, 0.0], [1.0, 2.0]]),
    "view_made_before_the_base_changed": (_view_made_before_the_base_changed, [[4.0, 6.0], [0.0, 2.0, 2.0]]),
    "write_through_transpose": (_write_through_transpose, [[[3.0, 2.0], [9.0, 4.0]], [[3.0, 1.0], [3.0, 1.0]]]),
    "relu_through_view_then_more": (_relu_through_view_then_more,
                                    [[[-2.0, 4.0], [6.0, 0.0]], [[2.0, 4.0], [6.0, 0.0]]]),
    "no_grad_write_through_view_of_leaf": (_no_grad_write_through_view_of_leaf,
                                           [[2.0, 4.0, 3.0], [4.0, 8.0, 6.0]]),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_inplace_through_a_view(lib, name):
    case, expected = VIEW_CASES[name]
    same(case(*lib), expected)


LEAF_VIEW_WRITES = {
    "mul_": lambda m, a: a[0:2].mul_(2),
    "setitem": lambda m, a: a[0:2].__setitem__(0, 5.0),
    "fill_": lambda m, a: a[0:2].fill_(2.0),
    "zero_": lambda m, a: a[1:].zero_(),
    "index_add_": lambda m, a: a[0:2].index_add_(0, m.tensor([0]), m.tensor([1.0], dtype=m.float64)),
    "add_of_reshape": lambda m, a: a.reshape(3, 1).add_(1),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(LEAF_VIEW_WRITES))
def test_inplace_on_a_view_of_a_leaf_is_refused(lib, name):
    m, _ = lib
    a = t(m, [1.0, 2.0, 3.0])
    with pytest.raises((RuntimeError, BackwardError), match="view of a leaf"):
        LEAF_VIEW_WRITES[name](m, a)
    same(a, [1.0, 2.0, 3.0])  # and the parameter is unchanged


@pytest.mark.parametrize("lib", LIBS)
def test_a_view_shares_its_base_version_counter(lib):
    m, _ = lib
    a = t(m, [1.0, 2.0, 3.0])
    x = a * 1
    v = x[0:2]
    y = v * v  # saves v
    x.mul_(2)  # changes v's memory
    with pytest.raises((RuntimeError, BackwardError), match="modified by an inplace operation"):
        y.sum().backward()
    x2 = a * 1
    z = x2 * x2  # saves x2
    x2[1:].add_(1)  # through a view
    with pytest.raises((RuntimeError, BackwardError), match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize("lib", LIBS)
def test_double_backward_of_a_quotient_at_infinity(lib):
    m, _ = lib
    x, y = t(m, [inf]), t(m, [1.0])
    gx, gy = m.autograd.grad((y / x).sum(), [x, y], create_graph=True)
    same([gx, gy], [[0.0], [0.0]])
    ggx, ggy = m.autograd.grad(gx.sum(), [x, y])
    same([ggx, ggy], [[0.0], [0.0]])


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("fn", ["floor", "ceil", "round", "trunc", "sign"])
def test_double_backward_through_a_piecewise_constant_op_is_refused(lib, fn):
    m, _ = lib
    x = t(m, [1.5, 2.5])
    (g,) = m.autograd.grad(getattr(x, fn)().sum(), [x], create_graph=True)
    same(g, [0.0, 0.0])
    with pytest.raises((RuntimeError, BackwardError), match="does not require grad"):
        m.autograd.grad(g.sum(), [x])
