"""Chapter 07: the checkers enforce what the chapter teaches, and `mygrad/kernels.py` works.

* A "kernel" built from whole-array numpy expressions gives the right values inside @njit and
  must still fail, with a hint that names the temporaries; a serial `range` inside
  @njit(parallel=True) must fail with a hint that names prange. Both with the JIT on and with
  the checks' view of NUMBA_DISABLE_JIT=1 (the whole file also runs with NUMBA_DISABLE_JIT=1).
* The key's `mygrad/kernels.py` (course/reference, the export of solutions/07): every kernel
  agrees with its numpy reference; `Variable.relu` and `softmax_cross_entropy` give the values
  and gradients of the numpy references (and of PyTorch where installed), also under
  create_graph=True; bad targets raise typed errors that say what was expected.
"""
from __future__ import annotations


import numpy as np
import pytest
from numba import config, njit, prange

from autograd_lab.course.learner.loader import _forget_package
from autograd_lab.course.exercises import ch07, check

from ._ch07_key import KEY, build_key, edited, with_range
from ._checker_helpers import failure
from .._oracle import require_torch


@pytest.fixture(params=["jit", "plain"])
def mode(request, monkeypatch):
    """Run each checker test as compiled kernels and as the plain Python NUMBA_DISABLE_JIT=1 gives."""
    if request.param == "plain":
        monkeypatch.setattr(ch07, "_jit_enabled", lambda: False)
    return request.param


def _kernel(fn, mode, parallel=False):
    if mode == "plain" or config.DISABLE_JIT:
        return fn
    return njit(parallel=True)(fn) if parallel else njit(fn)


# -- "kernels" made of numpy temporaries: right values, wrong lesson ---------------------------
def fwd_numpy(x, a, b, out):
    out[:] = np.maximum(a * x + b, 0.0)
    return out


def fwd_numpy_temp_then_loop(x, a, b, out):
    z = a * x + b
    for i in range(x.size):
        out[i] = z[i] if z[i] > 0.0 else 0.0
    return out


def bwd_numpy(x, a, b, grad_out, grad_x):
    gz = grad_out * ((a * x + b) > 0)
    grad_x[:] = a * gz
    return (gz * x).sum(), gz.sum()


def softmax_numpy_rows(x, out):
    for i in range(x.shape[0]):
        e = np.exp(x[i] - x[i].max())
        out[i] = e / e.sum()
    return out


def colsum_numpy(x, partial):
    rows = x.shape[0]
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in prange(nblocks):
        partial[c] = x[min(rows, c * step):min(rows, (c + 1) * step)].sum(axis=0)
    return partial


@pytest.mark.parametrize("checker,wrong,parallel,shown", [
    (check.ch07_affine_relu_forward, fwd_numpy, False, "np.maximum(a * x + b, 0.0)"),
    (check.ch07_affine_relu_forward, fwd_numpy_temp_then_loop, False, "a * x + b"),
    (check.ch07_affine_relu_backward, bwd_numpy, False, "grad_out * (a * x + b > 0)"),
    (check.ch07_softmax_rows, softmax_numpy_rows, False, "np.exp(x[i] - x[i].max())"),
    (check.ch07_column_sums, colsum_numpy, True, ".sum(axis=0)"),
], ids=["forward np.maximum", "forward temporary z", "backward masks", "softmax row arrays",
        "column sums slice.sum"])
def test_numpy_temporaries_fail_with_a_hint_naming_them(checker, wrong, parallel, shown, mode):
    message = failure(checker, _kernel(wrong, mode, parallel))
    assert "computes with whole arrays" in message and "temporary array" in message, message
    assert shown in message, message
    assert "Loop over the elements" in message, message


# the key's column_sums_blocked with `for c in range(nblocks)` instead of prange
colsum_serial_range = with_range(KEY.column_sums_blocked)


def test_serial_range_in_a_parallel_kernel_fails_naming_prange(mode, recwarn):
    message = failure(check.ch07_column_sums, _kernel(colsum_serial_range, mode, parallel=True))
    assert "ch07-column-sums" in message and "prange" in message and "one thread" in message
    assert not [w for w in recwarn if "numba" in type(w.message).__module__]


def colsum_row_adds(x, partial):
    """Whole-row in-place additions allocate nothing: allowed."""
    rows = x.shape[0]
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in prange(nblocks):
        partial[c, :] = 0.0
        for i in range(c * step, min(rows, (c + 1) * step)):
            partial[c, :] += x[i, :]
    return partial


def fwd_math_and_max(x, a, b, out):
    for i in range(x.shape[0]):
        out[i] = max(a * x[i] + b, 0.0)
    return out


def test_loops_over_numbers_and_in_place_row_adds_pass(mode, capsys):
    check.ch07_column_sums(_kernel(colsum_row_adds, mode, parallel=True), hidden=True)
    check.ch07_affine_relu_forward(_kernel(fwd_math_and_max, mode), hidden=True)
    out = capsys.readouterr().out
    assert "is one pass of scalar arithmetic" in out and "splits its loop over threads" in out


def test_structure_is_not_checked_without_source(capsys):
    """A kernel whose source cannot be read (built with exec) is checked on its values only."""
    namespace: dict = {}
    exec("def k(x, a, b, out):\n    for i in range(x.size):\n        v = a * x[i] + b\n"
         "        out[i] = v if v > 0.0 else 0.0\n    return out\n", namespace)
    kernel = namespace["k"] if config.DISABLE_JIT else njit(namespace["k"])
    check.ch07_affine_relu_forward(kernel)
    assert "scalar arithmetic" not in capsys.readouterr().out


# -- the key's mygrad/kernels.py -------------------------------------------------------------
@pytest.fixture(scope="module")
def mygrad():
    package = build_key()
    yield package
    _forget_package()


def test_the_key_passes_its_module_check(mygrad, capsys):
    ch07.mygrad_kernels(mygrad)
    assert "All 5 cases of mygrad-kernels passed." in capsys.readouterr().out


def test_the_key_kernels_pass_the_exercise_checkers(mygrad, capsys):
    check.ch07_affine_relu_forward(mygrad.affine_relu_forward, hidden=True)
    check.ch07_affine_relu_backward(mygrad.affine_relu_backward, hidden=True)
    check.ch07_softmax_rows(mygrad.softmax_rows, hidden=True)
    check.ch07_column_sums(mygrad.column_sums_blocked, hidden=True)
    assert capsys.readouterr().out.count("(with hidden cases)") == 4


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 5), (64, 10)])
def test_every_kernel_agrees_with_its_reference(mygrad, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.normal(size=shape) * 3
    flat = x.ravel()
    np.testing.assert_array_equal(mygrad.affine_relu_forward(flat, -1.5, 0.25, np.empty_like(flat)),
                                  mygrad.affine_relu_forward_ref(flat, -1.5, 0.25))
    g = rng.normal(size=flat.shape)
    grad_x = np.empty_like(flat)
    ga, gb = mygrad.affine_relu_backward(flat, -1.5, 0.25, g, grad_x)
    rx, ra, rb = mygrad.affine_relu_backward_ref(flat, -1.5, 0.25, g)
    np.testing.assert_allclose(grad_x, rx, rtol=0, atol=0)
    np.testing.assert_allclose([ga, gb], [ra, rb], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mygrad.softmax_rows(x, np.empty_like(x)), mygrad.softmax_rows_ref(x),
                               rtol=1e-12, atol=1e-15)
    t = rng.integers(0, shape[1], size=shape[0])
    grad = np.empty_like(x)
    loss = mygrad.cross_entropy_rows(x, t, grad)
    ref_loss, ref_grad = mygrad.cross_entropy_rows_ref(x, t)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(mygrad.column_sums(x), mygrad.column_sums_ref(x), rtol=1e-12, atol=1e-12)


def test_column_sums_uses_blocks_per_thread_on_large_arrays(mygrad):
    x = np.random.default_rng(0).normal(size=(1000, 80))   # 80,000 >= PARALLEL_MIN_SIZE
    assert x.size >= mygrad.PARALLEL_MIN_SIZE
    np.testing.assert_allclose(mygrad.column_sums(x), x.sum(axis=0), rtol=1e-12, atol=1e-12)


def test_relu_is_wired_to_the_kernel_and_equals_numpy(mygrad):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(4, 6))
    data[0, :3] = 0.0
    for dtype in (np.float64, np.float32):
        x = mygrad.Variable(data.astype(dtype), requires_grad=True)
        y = x.relu()
        assert type(y.grad_fn).__name__ == "ReLUBackward" and y.grad_fn.function is mygrad.ReLU
        assert y.data.dtype == dtype
        np.testing.assert_array_equal(y.data, np.maximum(x.data, 0))
        g = rng.normal(size=data.shape).astype(dtype)
        y.backward(mygrad.Variable(g))
        np.testing.assert_array_equal(x.grad.data, g * (x.data > 0))   # relu'(0) = 0
    t = x.T                                          # a non-contiguous input
    np.testing.assert_array_equal(t.relu().data, np.maximum(t.data, 0))


def test_softmax_cross_entropy_equals_the_numpy_reference_and_pytorch(mygrad):
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(32, 10)) * 4
    targets = rng.integers(0, 10, size=32)
    z = mygrad.Variable(logits, requires_grad=True)
    loss = mygrad.softmax_cross_entropy(z, targets)
    loss.backward()
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss.item(), -log_p[np.arange(32), targets].mean(), rtol=1e-13)
    onehot = np.eye(10)[targets]
    np.testing.assert_allclose(z.grad.data, (np.exp(log_p) - onehot) / 32, rtol=1e-12, atol=1e-15)
    # targets as a Variable (mygrad stores numbers as floats) give the same
    again = mygrad.softmax_cross_entropy(mygrad.Variable(logits), mygrad.Variable(targets))
    assert again.item() == loss.item()
    torch = require_torch()
    zt = torch.tensor(logits, requires_grad=True)
    lt = torch.nn.functional.cross_entropy(zt, torch.tensor(targets))
    lt.backward()
    np.testing.assert_allclose(loss.item(), lt.item(), rtol=1e-12)
    np.testing.assert_allclose(z.grad.data, zt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_kernel_operations_are_differentiable_twice_under_create_graph(mygrad):
    """The fast Functions fall back to Variable formulas when backward is recorded."""
    rng = np.random.default_rng(3)
    x0, w0 = rng.normal(size=(6, 4)), rng.normal(size=(4, 3))
    targets = np.array([0, 1, 2, 2, 1, 0])

    def loss_of(w, fused):
        h = mygrad.Variable(x0) @ w
        if fused:
            return mygrad.softmax_cross_entropy(h.relu() * 1.5 + h, targets)
        a = mygrad.function.ReLU.apply(h) * 1.5 + h
        return -(a.log_softmax(axis=1)[np.arange(6), targets]).mean()

    results = []
    for fused in (True, False):
        w = mygrad.Variable(w0, requires_grad=True)
        loss_of(w, fused).backward(create_graph=True)
        g = w.grad
        assert g.grad_fn is not None
        w.grad = None
        (g * g).sum().backward()
        results.append((g.data, w.grad.data))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("logits,targets,error,words", [
    (np.zeros((3, 4)), np.array([0, 4, 1]), IndexError, "target 4 is out of bounds"),
    (np.zeros((3, 4)), np.array([0, -1, 1]), IndexError, "0..3"),
    (np.zeros((3, 4)), np.array([0, 1]), ValueError, "one class index per row"),
    (np.zeros(4), np.array([1]), ValueError, "(batch, classes)"),
    (np.zeros((2, 4)), np.array([0.5, 0.5]), TypeError, "class indices"),
    (np.zeros((2, 4)), np.array([True, False]), TypeError, "class indices"),
])
def test_bad_targets_raise_typed_errors_saying_what_was_expected(mygrad, logits, targets, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        mygrad.softmax_cross_entropy(mygrad.Variable(logits), targets)


def test_empty_batch_gives_nan_and_an_empty_gradient(mygrad):
    z = mygrad.Variable(np.zeros((0, 5)), requires_grad=True)
    loss = mygrad.softmax_cross_entropy(z, np.zeros(0, dtype=int))
    assert np.isnan(loss.item())
    loss.backward()
    assert z.grad.shape == (0, 5)


def test_the_module_check_fails_without_softmax_rows_behind_a_function(mygrad, monkeypatch):
    """An old kernels.py (before SoftmaxRows) is caught and named, so the loader falls back."""
    monkeypatch.delattr(mygrad, "SoftmaxRows")
    with pytest.raises(AssertionError, match="has no SoftmaxRows"):
        ch07.mygrad_kernels(mygrad)


def test_softmax_rows_function_gives_the_gradient_of_each_rows_softmax(mygrad):
    torch = require_torch()
    rng = np.random.default_rng(21)
    data, g = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
    x = mygrad.Variable(data.copy(), requires_grad=True)
    y = mygrad.SoftmaxRows.apply(x)
    y.backward(mygrad.Variable(g))
    ref = torch.tensor(data, requires_grad=True)
    torch.softmax(ref, dim=1).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.data, ref.grad.numpy(), rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="2-d input"):
        mygrad.SoftmaxRows.apply(mygrad.Variable(np.zeros(4)))


# -- ch07-cross-entropy-rows: the fused loss kernel the learner now writes ------------------------
def test_the_key_passes_the_cross_entropy_rows_check(mygrad, capsys):
    for seed, hidden in ((0, False), (11, True)):
        check.ch07_cross_entropy_rows(mygrad.cross_entropy_rows, seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert "All 5 cases of ch07-cross-entropy-rows passed." in out
    assert "All 7 cases of ch07-cross-entropy-rows passed (with hidden cases)." in out


# typical mistakes, each the key's kernel with one edit
ce_rows_unshifted = edited(KEY.cross_entropy_rows, ("math.exp(x[i, j] - m)", "math.exp(x[i, j])"),
                           ("math.log(s) + m - x[i, t]", "math.log(s) - x[i, t]"), label="unshifted")
ce_rows_no_onehot = edited(KEY.cross_entropy_rows, ("grad[i, t] -= 1.0", "pass"), label="no onehot")
ce_rows_mean = edited(KEY.cross_entropy_rows, ("return total", "return total / rows"), label="mean")


@pytest.mark.parametrize("wrong,words", [
    (ce_rows_unshifted, "subtract the row maximum"),
    (ce_rows_no_onehot, "grad is the softmax: subtract 1"),
    (ce_rows_mean, "You returned the mean"),
], ids=["no max shift", "no onehot", "mean"])
def test_cross_entropy_rows_mistakes_get_hints_naming_the_cause(wrong, words, mode):
    message = failure(check.ch07_cross_entropy_rows, _kernel(wrong, mode))
    assert "ch07-cross-entropy-rows" in message and words in message, message
