"""The training fast paths: conv2d through index tables and kept columns, serial BLAS for small
products, max-pool's unchecked backward; and parameters() after changes of a model's structure.

Each test compares the fast path with the plain one (or with the numpy reference) and would fail
if the fast path were wrong or missing.  Run also with NUMBA_DISABLE_JIT=1.
"""
import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.nn as nn
from autograd_lab.kernels import blas as B
from autograd_lab.kernels import conv as C
from autograd_lab.kernels import pool as P

rng = np.random.default_rng(77)

# (n, c_in, h, w, c_out, kernel, stride, padding): the digits CNN's two convolutions, strides,
# rectangular kernels, no padding, a 1x1 kernel, padding larger than the kernel's reach
CASES = [
    (32, 1, 8, 8, 16, (3, 3), 1, 1),
    (32, 16, 4, 4, 32, (3, 3), 1, 1),
    (3, 2, 7, 5, 4, (3, 3), 1, 0),
    (2, 3, 9, 9, 2, (3, 2), (2, 1), (0, 2)),
    (2, 2, 6, 6, 3, (1, 1), 1, 0),
    (2, 1, 5, 5, 2, (2, 2), 2, 2),
]


def randn(shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@pytest.fixture
def no_tables(monkeypatch):
    """Run conv2d through the loop kernels only (tables disabled, cache emptied)."""
    def disable():
        monkeypatch.setattr(C, "_TABLE_MAX", 0)
        monkeypatch.setattr(C, "_tables_cache", {})
    return disable


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_conv2d_tables_give_the_loop_kernels_results_exactly(case, dtype, no_tables):
    n, ci, h, w, co, k, s, p = case
    x, wt, b = randn((n, ci, h, w), dtype), randn((co, ci) + k, dtype), randn(co, dtype)
    C._tables_cache.clear()
    y = C.conv2d_fwd(x, wt, b, s, p)
    g = randn(y.shape, dtype)
    grads = C.conv2d_bwd(g, x, wt, s, p)
    assert any(t is not None for t in C._tables_cache.values()), "the tables path did not run"
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(y, C.conv2d_fwd_ref(x, wt, b, s, p), **tol)
    for got, want in zip(grads, C.conv2d_bwd_ref(g, x, wt, s, p)):
        np.testing.assert_allclose(got, want, **tol)
    no_tables()
    np.testing.assert_array_equal(C.conv2d_fwd(x, wt, b, s, p), y)
    for got, want in zip(C.conv2d_bwd(g, x, wt, s, p), grads):
        np.testing.assert_array_equal(got, want)
    assert all(t is None for t in C._tables_cache.values())


def test_tables_are_bounded_and_skipped_when_too_large(monkeypatch):
    monkeypatch.setattr(C, "_tables_cache", {})
    monkeypatch.setattr(C, "_TABLE_MAX", 100)
    assert C._tables(1, 1, 5, 5, 3, 3, 1, 1, 1, 1) is None  # 9 * 25 entries > 100
    monkeypatch.setattr(C, "_TABLE_MAX", 1 << 20)
    for m in range(1, C._TABLE_CACHE_SIZE + 5):
        C._tables(m, 1, 4, 4, 3, 3, 1, 1, 1, 1)
    assert len(C._tables_cache) <= C._TABLE_CACHE_SIZE


@pytest.mark.parametrize("case", CASES)
def test_kept_columns_are_im2col_and_give_the_same_gradients(case):
    n, ci, h, w, co, k, s, p = case
    x, wt, b = randn((n, ci, h, w), np.float64), randn((co, ci) + k, np.float64), randn(co, np.float64)
    y, cols = C.conv2d_fwd(x, wt, b, s, p, keep_cols=True)
    np.testing.assert_array_equal(y, C.conv2d_fwd(x, wt, b, s, p))
    np.testing.assert_array_equal(cols, C.im2col_ref(x, k, s, p))
    kept = cols.copy()
    g = randn(y.shape, np.float64)
    for got, want in zip(C.conv2d_bwd(g, x, wt, s, p, cols=cols), C.conv2d_bwd(g, x, wt, s, p)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(cols, kept)  # backward reads the kept columns, never writes them


def test_columns_of_another_shape_are_not_used():
    x, wt = randn((2, 2, 5, 5), np.float64), randn((3, 2, 3, 3), np.float64)
    g = randn((2, 3, 5, 5), np.float64)
    wrong = np.zeros((18, 2 * 9))
    for got, want in zip(C.conv2d_bwd(g, x, wt, 1, 1, cols=wrong), C.conv2d_bwd_ref(g, x, wt, 1, 1)):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_many_chunks_keep_no_columns(monkeypatch):
    monkeypatch.setattr(C, "_CHUNK_BYTES", 4096)
    x, wt = randn((6, 3, 9, 8), np.float64), randn((4, 3, 3, 3), np.float64)
    y, cols = C.conv2d_fwd(x, wt, None, 1, 1, keep_cols=True)
    assert cols is None
    np.testing.assert_allclose(y, C.conv2d_fwd_ref(x, wt, None, 1, 1), rtol=1e-11, atol=1e-11)


def test_conv2d_op_backward_twice_with_retain_graph_gives_the_same_gradients():
    x = al.Variable(randn((4, 2, 6, 6), np.float64), requires_grad=True)
    conv = nn.Conv2d(2, 3, 3, padding=1, dtype=np.float64, seed=0)
    out = (conv(x) ** 2).sum()
    out.backward(retain_graph=True)
    first = [x.grad.data.copy(), conv.weight.grad.data.copy(), conv.bias.grad.data.copy()]
    out.backward()
    for got, once in zip((x.grad, conv.weight.grad, conv.bias.grad), first):
        np.testing.assert_allclose(got.data, 2 * once, rtol=1e-12)
    assert al.gradcheck(lambda a: (conv(a) ** 2).sum(), (x,))


def test_conv2d_op_keeps_columns_only_when_the_weight_needs_a_gradient():
    from autograd_lab.ops.conv import Conv2d as Conv2dOp

    x = al.Variable(randn((2, 1, 5, 5), np.float32), requires_grad=True)
    w = al.Variable(randn((2, 1, 3, 3), np.float32), requires_grad=True)
    assert Conv2dOp.apply(x, w, None, 1, 1).grad_fn.cols is not None
    w.requires_grad = False
    assert Conv2dOp.apply(x, w, None, 1, 1).grad_fn.cols is None


# ------------------------------------------------------------------ serial BLAS
def _blas_threads():
    """Thread counts of the BLAS libraries serial_blas switches (numpy's)."""
    from threadpoolctl import threadpool_info

    ours = {lib.path for lib in B._blas_libraries()}
    return [i["num_threads"] for i in threadpool_info() if i["filepath"] in ours]


def _two_blas_threads():
    """threadpool_limits(2) on BLAS, or a skip when numpy's BLAS cannot run two threads here."""
    pytest.importorskip("threadpoolctl")
    from threadpoolctl import threadpool_limits

    limit = threadpool_limits(2, user_api="blas")
    before = _blas_threads()
    if not before or 1 in before:
        limit.restore_original_limits()
        pytest.skip("numpy's BLAS runs one thread here already (or threadpoolctl cannot see it)")
    return limit, before


def test_serial_blas_uses_one_thread_for_small_products_and_restores():
    limit, before = _two_blas_threads()
    with limit:
        with B.serial_blas(1000):
            assert set(_blas_threads()) <= {1}
            with B.serial_blas(10):  # nested: the outer one restores
                pass
            assert set(_blas_threads()) <= {1}
        assert _blas_threads() == before
        with B.serial_blas(B.SERIAL_GEMM_FLOPS):  # large: BLAS keeps its threads
            assert _blas_threads() == before
        with pytest.raises(RuntimeError):
            with B.serial_blas(0):
                raise RuntimeError("inside")
        assert _blas_threads() == before
        assert B._depth == 0


def test_serial_blas_changes_nothing_when_blas_runs_one_thread(monkeypatch):
    limit, before = _two_blas_threads()
    calls = []
    for lib in B._libraries:  # count the switches (the thread-count queries stay as they are)
        monkeypatch.setattr(lib, "set", lambda n, set_=lib.set: calls.append(n) or set_(n))
    with limit:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, user_api="blas"):
            with B.serial_blas(1000):
                assert set(_blas_threads()) == {1}
                with B.serial_blas(10):
                    assert set(_blas_threads()) == {1}
                assert set(_blas_threads()) == {1}
            assert set(_blas_threads()) == {1}
            assert calls == []  # nothing to switch, nothing switched
        assert _blas_threads() == before  # the outer limit of 2 comes back
        with B.serial_blas(1000):  # and is switched again
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before
        assert calls == [1] * len(before) + before


def test_serial_blas_from_two_threads_restores_the_count_once():
    import threading

    limit, before = _two_blas_threads()
    inside, errors = [], []
    start = threading.Barrier(2)

    def work(flops):
        try:
            start.wait()
            for i in range(300):
                with B.serial_blas(flops):
                    inside.append(_blas_threads())
                    if i % 3 == 0:
                        with B.serial_blas(10):  # nested inside a block the other thread may close
                            inside.append(_blas_threads())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with limit:
        threads = [threading.Thread(target=work, args=(f,)) for f in (1000, 20_000)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(inside) == 800
        assert all(set(counts) == {1} for counts in inside)  # every block ran with one thread
        assert _blas_threads() == before  # and the count came back once both had finished
        assert B._depth == 0


def test_serial_blas_without_blas_libraries_does_nothing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # an import of it now fails
    assert B._find_libraries() == ()
    monkeypatch.setattr(B, "_libraries", ())  # what threadpoolctl missing or failing leaves
    with B.serial_blas(10):
        assert B._depth == 0


def test_linear_results_do_not_change_with_serial_blas():
    x = al.Variable(randn((64, 64), np.float32), requires_grad=True)
    lin = nn.Linear(64, 128, seed=0)
    y = lin(x)
    np.testing.assert_allclose(y.data, x.data @ lin.weight.data.T + lin.bias.data, rtol=1e-5, atol=1e-5)
    g = randn(y.shape, np.float32)
    y.backward(al.Variable(g))
    np.testing.assert_allclose(x.grad.data, g @ lin.weight.data, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lin.weight.grad.data, g.T @ x.data, rtol=1e-5, atol=1e-4)


# ------------------------------------------------------------------ max-pool
def test_max_pool_backward_without_the_index_check_gives_the_same_result():
    x = randn((3, 4, 8, 8), np.float32)
    out, idx = P.max_pool2d_fwd(x, 2)
    g = randn(out.shape, np.float32)
    np.testing.assert_array_equal(P.max_pool2d_bwd(g, idx, x.shape, check=False),
                                  P.max_pool2d_bwd_ref(g, idx, x.shape))
    with pytest.raises(ValueError, match="indices must lie"):
        P.max_pool2d_bwd(g, idx + 1000, x.shape)  # the check stays on by default


# ------------------------------------------------------------------ parameters()
def test_parameters_follow_every_change_of_the_structure():
    model = nn.Sequential(nn.Linear(3, 4, seed=0), nn.ReLU(), nn.Linear(4, 2, seed=1))
    first = list(model.parameters())
    assert [id(p) for p in first] == [id(p) for _, p in model.named_parameters()]

    model[2].bias = nn.Parameter(np.zeros(2, np.float32))  # a new parameter ...
    second = list(model.parameters())
    assert second[-1] is model[2].bias and second[:3] == first[:3]
    model.append(nn.Linear(2, 5, seed=2))  # ... a new sub-module ...
    assert len(list(model.parameters())) == 6
    model[0].bias = None  # ... a parameter removed ...
    assert len(list(model.parameters())) == 5
    del model[2].weight  # ... or deleted: each time the list is rebuilt
    assert len(list(model.parameters())) == 4
    inner = model[3]
    inner.register_parameter("extra", nn.Parameter(np.ones(1, np.float32)))
    assert any(p is inner.extra for p in model.parameters())


def test_parameters_of_a_copied_model_are_the_copy_s():
    import copy

    model = nn.Sequential(nn.Linear(3, 4, seed=0))
    list(model.parameters())
    twin = copy.deepcopy(model)
    assert [p is q for p, q in zip(twin.parameters(), model.parameters())] == [False, False]
    assert list(twin.parameters())[0] is twin[0].weight


def test_zero_grad_reaches_parameters_added_later():
    model = nn.Sequential(nn.Linear(3, 2, seed=0))
    model.zero_grad()
    model.append(nn.Linear(2, 2, seed=1))
    model(al.Variable(np.ones((1, 3), np.float32))).sum().backward()
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
