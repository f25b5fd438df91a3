"""Nothing silently wrong: each case either matches PyTorch or raises a clear, typed error."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab.errors import BackwardError, ShapeError

from .._oracle import needs_torch, torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def leaf(values, dtype=np.float64):
    return al.tensor(np.array(values, dtype=dtype), requires_grad=True)


# ---------------------------------------------------------------- complex dtypes
def test_complex_leaf_cannot_require_grad():
    with pytest.raises(TypeError, match="complex Variables cannot require gradients"):
        al.tensor(np.array([1 + 2j]), requires_grad=True)
    with pytest.raises(TypeError, match="complex"):
        al.Variable(np.array([1 + 2j])).requires_grad_()


def test_complex_output_from_real_inputs_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="complex output"):
        x * (1 + 1j)


# ---------------------------------------------------------------- Function.apply by keyword
class MulFn(al.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


def test_variable_passed_by_keyword_is_tracked():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = MulFn.apply(a, b=b)
    assert y.grad_fn is not None and y.grad_fn.needs_input_grad == (True, True)
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.data, [3.0, 4.0])
    np.testing.assert_array_equal(b.grad.data, [1.0, 2.0])


def test_only_keyword_variable_requires_grad_still_records():
    a, b = al.tensor([1.0, 2.0]), leaf([3.0, 4.0])
    MulFn.apply(a=a, b=b).sum().backward()
    np.testing.assert_array_equal(b.grad.data, [1.0, 2.0])


def test_unknown_keyword_names_the_parameters():
    with pytest.raises(TypeError, match=r"MulFn.apply.*\['a', 'b'\]"):
        MulFn.apply(leaf([1.0]), c=leaf([2.0]))


# ---------------------------------------------------------------- hooks and .grad assignment
def test_leaf_hook_returning_wrong_shape_is_refused():
    x = leaf([1.0, 2.0, 3.0])
    x.register_hook(lambda g: al.ones(2))
    with pytest.raises(BackwardError, match="changed the size"):
        (x * 2).sum().backward()
    assert x.grad is None


def test_non_leaf_hook_returning_wrong_dtype_is_refused():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g.to(np.float32))
    with pytest.raises(BackwardError, match="changed the type"):
        y.sum().backward()


def test_hook_returning_same_shape_and_dtype_still_replaces_the_gradient():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [20.0, 20.0])


def test_assigning_an_int_grad_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="dtype int64"):
        x.grad = np.array([1, 2])
    x.grad = np.array([0.5, 0.5])  # the right dtype is fine, and later passes add into it
    (x * 1.25).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.75, 1.75])


# ---------------------------------------------------------------- max/min and NaN
@pytest.mark.parametrize("fn", ["max", "min"])
def test_nan_takes_the_whole_gradient(fn):
    x = leaf([1.0, np.nan, 3.0])
    getattr(x, fn)().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 1.0, 0.0])


@needs_torch
@pytest.mark.parametrize("fn", ["max", "min"])
def test_nan_max_along_dim_matches_torch(fn):
    # a NaN row: the NaN gets the gradient, as with torch.max(dim=...) (whose values carry it)
    data = np.array([[1.0, np.nan, 3.0], [4.0, 2.0, 5.0]])
    x = leaf(data)
    getattr(x, fn)(dim=1).values.sum().backward()
    t = torch.tensor(data, requires_grad=True)
    getattr(t, fn)(dim=1).values.sum().backward()
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())


def test_min_of_bool_variable():
    assert al.tensor([True, False]).min().item() is False
    assert al.tensor([True, True]).min().item() is True


# ---------------------------------------------------------------- __array__ copy
def test_array_copy_true_copies_and_asarray_shares():
    x = al.tensor([1.0, 2.0])
    c = np.array(x, copy=True)
    c[0] = 99.0
    assert x.data[0] == 1.0
    s = np.asarray(x)
    assert np.shares_memory(s, x.data)
    with pytest.raises(ValueError, match="copy=False"):
        x.__array__(np.float32, copy=False)


# ---------------------------------------------------------------- forward returning a non-array
class ReturnsString(al.Function):
    @staticmethod
    def forward(ctx, x):
        return "abc"

    @staticmethod
    def backward(ctx, grad):
        return grad


class ReturnsStringArray(al.Function):
    @staticmethod
    def forward(ctx, x):
        return np.array(["a", "b"])

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_forward_returning_a_string_passes_it_through_like_torch():
    out = ReturnsString.apply(leaf([1.0]))
    assert out == "abc" and not isinstance(out, al.Variable)


def test_forward_returning_a_string_array_is_refused():
    with pytest.raises(TypeError, match="ReturnsStringArray.forward returned an array of dtype <U1"):
        ReturnsStringArray.apply(leaf([1.0]))


# ---------------------------------------------------------------- grad mode per thread
def test_grad_mode_is_per_thread():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def other():
        with al.no_grad():
            entered.set()
            release.wait(5)
            seen["inside"] = al.is_grad_enabled()

    t = threading.Thread(target=other)
    t.start()
    entered.wait(5)
    seen["main"] = al.is_grad_enabled()
    x = leaf([1.0])
    seen["main_records"] = (x * 2).grad_fn is not None
    release.set()
    t.join()
    assert seen == {"main": True, "main_records": True, "inside": False}


def test_new_thread_starts_with_grad_enabled():
    result = []
    with al.no_grad():
        t = threading.Thread(target=lambda: result.append(al.is_grad_enabled()))
        t.start()
        t.join()
    assert result == [True]


def test_threads_training_at_once_do_not_break_each_other():
    errors, grads = [], {}
    barrier = threading.Barrier(3)

    def train(k):
        try:
            barrier.wait(5)
            w = leaf(np.full(4, float(k)))
            for _ in range(300):
                w.grad = None
                loss = ((w * w).sigmoid() * 3.0).sum()
                loss.backward()
            grads[k] = w.grad.data.copy()
        except Exception as exc:  # pragma: no cover - what the test is about
            errors.append(repr(exc))

    threads = [threading.Thread(target=train, args=(k,)) for k in range(1, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k in range(1, 4):
        s = 1 / (1 + np.exp(-k * k))
        np.testing.assert_allclose(grads[k], np.full(4, 3.0 * s * (1 - s) * 2 * k))


# ---------------------------------------------------------------- kernels trust no argument
def test_max_pool_bwd_refuses_out_of_range_indices():
    from autograd_lab.kernels import max_pool2d_bwd
    g = np.ones((1, 1, 2, 2))
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 16\)"):
        max_pool2d_bwd(g, np.array([[[[0, 1], [2, 10**6]]]]), (1, 1, 4, 4))
    with pytest.raises(ValueError, match=r"indices must lie"):
        max_pool2d_bwd(g, np.array([[[[0, -1], [2, 3]]]]), (1, 1, 4, 4))
    with pytest.raises(ValueError, match="agree in"):
        max_pool2d_bwd(g, np.zeros((1, 1, 2, 2), dtype=np.int64), (2, 1, 4, 4))


def test_col2im_refuses_columns_of_the_wrong_shape():
    from autograd_lab.kernels import col2im, im2col
    x = np.arange(2 * 1 * 4 * 4, dtype=np.float64).reshape(2, 1, 4, 4)
    cols = im2col(x, (3, 3), 1, 0)
    assert col2im(cols, x.shape, (3, 3), 1, 0).shape == x.shape
    with pytest.raises(ValueError, match="dcols must have the shape"):
        col2im(cols[:, :3], x.shape, (3, 3), 1, 0)
    with pytest.raises(ValueError, match="dcols must have the shape"):
        col2im(cols, (4, 1, 4, 4), (3, 3), 1, 0)


# ---------------------------------------------------------------- the leaf owns its first gradient
def test_leaf_grad_never_aliases_a_retained_or_hooked_gradient():
    x = leaf([1.0, 2.0])
    y = x * 1.0
    y.retain_grad()
    z = y + 0.0
    z.sum().backward()
    assert not np.shares_memory(x.grad.data, y.grad.data)
    x.grad.data[...] = 5.0
    np.testing.assert_array_equal(y.grad.data, [1.0, 1.0])


def test_leaf_grad_never_aliases_what_a_hook_kept():
    kept = []
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: kept.append(g) or None)
    (x * 3).sum().backward()
    (x * 3).sum().backward()  # accumulates in place
    np.testing.assert_array_equal(x.grad.data, [6.0, 6.0])
    np.testing.assert_array_equal(kept[0].data, [3.0, 3.0])


def test_leaf_grad_of_an_identity_function_is_a_copy():
    class Ident(al.Function):
        g = None

        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            Ident.g = grad
            return grad

    x = leaf([1.0, 2.0])
    Ident.apply(x).backward(al.tensor([1.0, 1.0]))
    x.grad.data[...] = 7.0
    np.testing.assert_array_equal(Ident.g.data, [1.0, 1.0])


def test_engine_does_not_count_references():
    import inspect
    from autograd_lab import engine
    assert "getrefcount" not in inspect.getsource(engine)


# ---------------------------------------------------------------- errors at the edges
@pytest.mark.parametrize("call, exc, match", [
    (lambda: al.exp(2.0), TypeError, r"exp\(\): argument 'input' must be a Variable, not float"),
    (lambda: al.sum([1, 2]), TypeError, r"sum\(\): argument 'input' must be a Variable, not list"),
    (lambda: al.ones(2) < al.ones(3), ShapeError, r"cannot broadcast shapes \(2,\) and \(3,\)"),
    (lambda: al.ones(2) == al.ones(3), ShapeError, r"cannot broadcast"),
    (lambda: al.cat([]), ValueError, "non-empty list"),
    (lambda: al.stack([]), ValueError, "non-empty list"),
    (lambda: al.tensor(1.0).transpose(0, 1), IndexError, r"range of \[-1, 0\], but got 1"),
    (lambda: al.tensor(1.0).squeeze(1), IndexError, "Dimension out of range"),
])
def test_clear_errors_at_the_edges(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_zero_d_transpose_and_squeeze_as_torch():
    x = leaf(3.0)
    assert x.transpose(0, -1).shape == () and x.squeeze(0).shape == ()
    (x.transpose(0, 0) * 2).backward()
    assert x.grad.item() == 2.0


def test_softmax_over_zero_classes_is_empty():
    x = al.zeros(2, 0, requires_grad=True)
    y = F.softmax(x, dim=1)
    assert y.shape == (2, 0)
    y.sum().backward()
    assert x.grad.shape == (2, 0)
    assert F.log_softmax(x, dim=1).shape == (2, 0)


def test_float16_through_relu_sigmoid_tanh():
    for fn in (F.relu, F.sigmoid, F.tanh, al.relu):
        x = leaf([-1.0, 0.5, 2.0], dtype=np.float16)
        y = fn(x)
        assert y.dtype == np.float16, fn
        y.sum().backward()
        assert x.grad.dtype == np.float16
    np.testing.assert_allclose(F.sigmoid(al.tensor(np.float16(0.0))).data, 0.5)


def test_grad_of_a_non_leaf_warns():
    x = leaf([1.0])
    y = x * 2
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None
    y2 = x * 3
    y2.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y2.grad is None and x.grad is None  # retained non-leaves and leaves are silent


def test_numpy_inside_forward_is_allowed():
    class NumpyCube(al.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return al.tensor(x.numpy() ** 3)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    x = leaf([1.0, 2.0])
    NumpyCube.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 12.0])
    with pytest.raises(BackwardError, match="detach"):
        x.numpy()  # outside forward, with grad mode on, it still refuses


# ---------------------------------------------------------------- numba cache and the environment
def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    full.update(env, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-W", "default", "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled or cached")
def test_no_writable_cache_compiles_uncached_with_one_warning():
    # only NUMBA_CACHE_DIR may hold the cache, and it is not set: as on a read-only install
    # with no writable home
    res = _run("""
        import autograd_lab as al, autograd_lab.functional as F
        print(F.relu(al.tensor([1.0, -1.0])).tolist(), F.sigmoid(al.tensor([0.0])).tolist())
        """, NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator", NUMBA_CACHE_DIR="")
    assert res.returncode == 0, res.stderr
    assert "[1.0, 0.0] [0.5]" in res.stdout
    assert res.stderr.count("numba cannot cache compiled kernels") == 1, res.stderr


def test_importing_the_library_leaves_the_environment_alone():
    res = _run("""
        import os
        before = dict(os.environ)
        import autograd_lab as al, autograd_lab.functional as F, autograd_lab.kernels
        F.relu(al.tensor([1.0]))
        print(before == dict(os.environ), 'OMP_WAIT_POLICY' in os.environ)
        """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "False"]


# ---------------------------------------------------------------- a broken torch skips
def test_broken_torch_makes_torch_tests_skip(tmp_path):
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise OSError('libtorch_cpu.so: cannot open shared object file')\n")
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), ROOT])
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:nbval", "-p", "no:cacheprovider", "-rs",
         "tests/library/test_optim.py", "tests/library/test_ops.py", "-k", "torch"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:]
    assert " failed" not in res.stdout and " error" not in res.stdout
    assert "PyTorch is not available (OSError" in res.stdout
