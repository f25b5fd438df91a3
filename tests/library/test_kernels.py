"""Parity of every numba kernel with its plain-numpy reference, on random shapes and edge cases.

Run also with NUMBA_DISABLE_JIT=1: then the same kernels run as Python and must agree too.
The serial/parallel rule is fixed per kernel (``_jit.THRESHOLDS``, ``set_parallel``); the tests
at the end check that both versions give the same numbers and that the rule and its override are
followed, and that importing the kernels leaves the environment alone. See docs/architecture.md,
"Where speed lives".
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd_lab.kernels import activation as A
from autograd_lab.kernels import conv as C
from autograd_lab.kernels import optim as O
from autograd_lab.kernels import pool as P
from autograd_lab.kernels import reduce as R
from autograd_lab.kernels import softmax as S
from autograd_lab.kernels import _jit
from autograd_lab.kernels._jit import PARALLEL_MIN_SIZE, THRESHOLDS

rng = np.random.default_rng(1234)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
SIZES = [0, 1, 7, 1000, PARALLEL_MIN_SIZE + 17]


@pytest.fixture(autouse=True)
def thresholds_mode(monkeypatch):
    """The default mode, whatever AUTOGRAD_LAB_PARALLEL the test run was started with."""
    monkeypatch.setattr(_jit, "_MODE", "auto")


def randn(shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# ------------------------------------------------------------------ activations
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
def test_activation_parity(name, size, dtype):
    fwd, fwd_ref = getattr(A, f"{name}_fwd"), getattr(A, f"{name}_fwd_ref")
    bwd, bwd_ref = getattr(A, f"{name}_bwd"), getattr(A, f"{name}_bwd_ref")
    x, g = randn(size, dtype, 4.0), randn(size, dtype)
    y = fwd(x)
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_allclose(y, fwd_ref(x), **TOL[dtype])
    np.testing.assert_allclose(bwd(y, g), bwd_ref(y, g), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_activations_extreme_and_special_values(dtype):
    x = np.array([-1e4, -100, -30, -1e-7, 0, 1e-7, 30, 100, 1e4, np.inf, -np.inf], dtype=dtype)
    with np.errstate(over="ignore"):
        for name in ["relu", "sigmoid", "tanh"]:
            np.testing.assert_allclose(getattr(A, f"{name}_fwd")(x),
                                       getattr(A, f"{name}_fwd_ref")(x), **TOL[dtype])
    nan = np.array([np.nan], dtype=dtype)
    for name in ["relu", "sigmoid", "tanh"]:
        assert np.isnan(getattr(A, f"{name}_fwd")(nan)[0]), name


def test_activation_accepts_any_shape_and_out():
    x = randn((3, 4, 5), np.float64)
    out = np.empty_like(x)
    assert A.relu_fwd(x, out=out) is out
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    np.testing.assert_array_equal(A.relu_fwd(x.T), np.maximum(x.T, 0))  # non-contiguous input


def test_activation_rejects_integer_input_and_bad_out():
    with pytest.raises(TypeError, match="float32 or float64"):
        A.relu_fwd(np.arange(3))
    with pytest.raises(ValueError, match="out must be"):
        A.relu_fwd(np.zeros(3), out=np.zeros(4))
    with pytest.raises(ValueError, match="grad must match"):
        A.relu_bwd(np.zeros(3), np.zeros(4))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (300, 257)])
@pytest.mark.parametrize("act", sorted(A.ACTIVATIONS))
def test_bias_act_parity(act, shape, dtype):
    z, b, g = randn(shape, dtype, 3.0), randn(shape[1], dtype), randn(shape, dtype)
    y = A.bias_act_fwd(z, b, act)
    np.testing.assert_allclose(y, A.bias_act_fwd_ref(z, b, act), **TOL[dtype])
    gz, gb = A.bias_act_bwd(y, g, act)
    gz_ref, gb_ref = A.bias_act_bwd_ref(y, g, act)
    np.testing.assert_allclose(gz, gz_ref, **TOL[dtype])
    np.testing.assert_allclose(gb, gb_ref, rtol=TOL[dtype]["rtol"] * 10, atol=TOL[dtype]["atol"] * 100)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_act_tanh_and_sigmoid_are_accurate_to_a_few_ulp(dtype):
    # near 0 tanh = (1 - e)/(1 + e) cancels: only a relative check on tiny values catches that
    v = np.concatenate([np.linspace(-3, 3, 6001), [1e-30, -1e-30, 1e-7, -1e-7, 1e-3, 0.1, 0.4]])
    z = v.astype(dtype).reshape(1, -1)
    exact = z.astype(np.longdouble)
    eps = np.finfo(dtype).eps
    for act, ref in [("tanh", np.tanh), ("sigmoid", lambda x: 1 / (1 + np.exp(-x)))]:
        y = A.bias_act_fwd(z, np.zeros(z.shape[1], dtype), act)
        assert y.dtype == dtype
        want = ref(exact)
        rel = np.abs(y - want) / np.maximum(np.abs(want), np.finfo(dtype).tiny)
        assert rel.max() < 8 * eps, (act, rel.max() / eps, z[0, rel.argmax()])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("act", sorted(A.ACTIVATIONS))
def test_bias_act_extreme_and_special_values(act, dtype):
    z = np.array([[-1e4, -100, -30, -1e-7, 0, 1e-7, 30, 100, 1e4, np.inf, -np.inf, np.nan]], dtype=dtype)
    b = np.zeros(z.shape[1], dtype)
    with np.errstate(over="ignore"):  # numpy's exp, and the kernels' without the JIT, overflow
        want = A.bias_act_fwd_ref(z, b, act)
        got = A.bias_act_fwd(z, b, act)
    np.testing.assert_allclose(got[:, :-1], want[:, :-1], **TOL[dtype])
    assert np.isnan(got[0, -1])


@pytest.mark.parametrize("act", sorted(A.ACTIVATIONS))
def test_bias_act_threaded_blocks_match_serial(act):
    from autograd_lab import kernels as K
    z, b, g = randn((403, 301), np.float32, 3.0), randn(301, np.float32), randn((403, 301), np.float32)
    y = A.bias_act_fwd(z, b, act)
    gz, gb = A.bias_act_bwd(y, g, act)
    previous = K.set_parallel(False)
    try:
        y1 = A.bias_act_fwd(z, b, act)
        gz1, gb1 = A.bias_act_bwd(y1, g, act)
    finally:
        K.set_parallel(previous)
    np.testing.assert_array_equal(y, y1)
    np.testing.assert_array_equal(gz, gz1)
    np.testing.assert_allclose(gb, gb1, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(gb, A.bias_act_bwd_ref(y, g, act)[1], rtol=1e-5, atol=1e-4)


def test_bias_act_errors():
    with pytest.raises(ValueError, match="activation must be one of"):
        A.bias_act_fwd(np.zeros((2, 3)), np.zeros(3), "gelu")
    with pytest.raises(ValueError, match=r"bias of shape \(cols,\)"):
        A.bias_act_fwd(np.zeros((2, 3)), np.zeros(2))


# ------------------------------------------------------------------ softmax family
ROW_SHAPES = [(1, 1), (3, 5), (256, 10), (17, 1000), (40, 33)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_softmax_family_parity(shape, dtype):
    x, g = randn(shape, dtype, 5.0), randn(shape, dtype)
    t = rng.integers(0, shape[1], shape[0])
    tol = TOL[dtype]
    y = S.softmax_fwd(x)
    np.testing.assert_allclose(y, S.softmax_fwd_ref(x), **tol)
    np.testing.assert_allclose(S.softmax_bwd(y, g), S.softmax_bwd_ref(y, g), **tol)
    ls = S.log_softmax_fwd(x)
    np.testing.assert_allclose(ls, S.log_softmax_fwd_ref(x), **tol)
    np.testing.assert_allclose(S.log_softmax_bwd(ls, g), S.log_softmax_bwd_ref(ls, g), **tol)
    np.testing.assert_allclose(S.logsumexp(x), S.logsumexp_ref(x), **tol)
    loss, lse = S.cross_entropy_fwd(x, t)
    loss_ref, lse_ref = S.cross_entropy_fwd_ref(x, t)
    np.testing.assert_allclose(loss, loss_ref, **tol)
    np.testing.assert_allclose(lse, lse_ref, **tol)
    gl = randn(shape[0], dtype)
    np.testing.assert_allclose(S.cross_entropy_bwd(x, t, lse, gl),
                               S.cross_entropy_bwd_ref(x, t, lse_ref, gl), **tol)
    np.testing.assert_allclose(S.cross_entropy_bwd(x, t, lse, 0.25),
                               S.cross_entropy_bwd_ref(x, t, lse_ref, 0.25), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_family_is_stable_for_huge_logits(dtype):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4 - 1, 1e4 - 2]], dtype=dtype)
    t = np.array([1, 0, 2])
    for out in (S.softmax_fwd(x), S.log_softmax_fwd(x), S.cross_entropy_fwd(x, t)[0]):
        assert np.all(np.isfinite(out))
    np.testing.assert_allclose(S.softmax_fwd(x), S.softmax_fwd_ref(x.astype(np.float64)), atol=1e-6)
    np.testing.assert_allclose(S.cross_entropy_fwd(x, t)[0],
                               S.cross_entropy_fwd_ref(x.astype(np.float64), t)[0], rtol=1e-6)


def test_softmax_propagates_nan():
    x = np.array([[0.0, np.nan, 1.0], [0.0, 1.0, 2.0]])
    y = S.softmax_fwd(x)
    assert np.all(np.isnan(y[0])) and np.all(np.isfinite(y[1]))


def test_cross_entropy_rejects_bad_targets():
    x = np.zeros((3, 4))
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        S.cross_entropy_fwd(x, np.array([0, 4, 1]))
    with pytest.raises(ValueError, match="integer array of shape"):
        S.cross_entropy_fwd(x, np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="must be 2-d"):
        S.softmax_fwd(np.zeros((2, 3, 4)))


def test_unchecked_cross_entropy_reads_nothing_out_of_range():
    """check=False leaves the range check to the caller: a target outside [0, classes) gives a
    NaN loss in its row (and no read outside the row), the other rows are as checked."""
    x = rng.standard_normal((4, 3))
    t = np.array([0, 3, 2, -1], dtype=np.int64)
    loss, stats = S.cross_entropy_fwd(x, t, check=False)
    assert np.isnan(loss[1]) and np.isnan(loss[3])
    good, good_stats = S.cross_entropy_fwd(x[[0, 2]], t[[0, 2]])
    np.testing.assert_array_equal(loss[[0, 2]], good)
    gx = S.cross_entropy_bwd(x, t, stats, 1.0, check=False)  # writes nothing outside its rows
    assert np.isnan(gx[[1, 3]]).all()
    np.testing.assert_array_equal(gx[[0, 2]], S.cross_entropy_bwd(x[[0, 2]], t[[0, 2]], good_stats, 1.0))


def test_cross_entropy_bwd_takes_one_grad_for_every_row():
    x = rng.standard_normal((5, 4)).astype(np.float32)
    t = np.array([0, 3, 2, 1, 1], dtype=np.int64)
    _, stats = S.cross_entropy_fwd(x, t)
    rows = S.cross_entropy_bwd(x, t, stats, np.full(5, 0.25, np.float32))
    for g in (0.25, np.float32(0.25), np.array(0.25)):
        np.testing.assert_array_equal(S.cross_entropy_bwd(x, t, stats, g), rows)
        np.testing.assert_array_equal(S.cross_entropy_bwd(x, t, stats, g, check=False), rows)
    np.testing.assert_allclose(rows, S.cross_entropy_bwd_ref(x, t, stats, 0.25), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"a number or have shape \(5,\)"):
        S.cross_entropy_bwd(x, t, stats, np.ones(1, np.float32))


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 70), scale=st.sampled_from([0.1, 3.0, 300.0]))
def test_log_softmax_property(rows, cols, scale):
    x = rng.standard_normal((rows, cols)) * scale
    np.testing.assert_allclose(S.log_softmax_fwd(x), S.log_softmax_fwd_ref(x), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(np.exp(S.log_softmax_fwd(x)).sum(axis=1), 1.0, rtol=1e-12)


# ------------------------------------------------------------------ conv2d
CONV_CASES = [
    # (n, c_in, h, w, c_out, kernel, stride, padding)
    (2, 3, 5, 6, 4, (3, 3), 1, 1),
    (1, 1, 1, 1, 1, (1, 1), 1, 0),
    (3, 2, 7, 7, 5, (3, 3), 2, 0),
    (2, 2, 6, 5, 3, (2, 2), 2, 1),
    (2, 3, 9, 9, 2, (3, 2), (2, 1), (0, 2)),
    (64, 1, 8, 8, 8, (3, 3), 1, 1),
    (5, 4, 30, 30, 3, (5, 5), 1, 2),  # more than one chunk of columns
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_parity(case, dtype):
    n, ci, h, w, co, k, s, p = case
    x, wt, b = randn((n, ci, h, w), dtype), randn((co, ci) + k, dtype), randn(co, dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(C.im2col(x, k, s, p), C.im2col_ref(x, k, s, p))
    y = C.conv2d_fwd(x, wt, b, s, p)
    np.testing.assert_allclose(y, C.conv2d_fwd_ref(x, wt, b, s, p), **tol)
    g = randn(y.shape, dtype)
    dx, dw, db = C.conv2d_bwd(g, x, wt, s, p)
    dx_ref, dw_ref, db_ref = C.conv2d_bwd_ref(g, x, wt, s, p)
    np.testing.assert_allclose(dx, dx_ref, **tol)
    np.testing.assert_allclose(dw, dw_ref, **tol)
    np.testing.assert_allclose(db, db_ref, **tol)
    cols = C.im2col_ref(x, k, s, p)
    np.testing.assert_allclose(C.col2im(cols, x.shape, k, s, p), C.col2im_ref(cols, x.shape, k, s, p), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_threaded_split_matches_reference(monkeypatch, dtype):
    """Large convolutions split their chunks across worker threads; force that path here."""
    monkeypatch.setattr(C, "_THREADED_MIN_FLOPS", 0)
    monkeypatch.setattr(C, "_CHUNK_BYTES", 4096)  # many small chunks
    monkeypatch.setattr(C, "num_threads", lambda: 3)
    x, wt, b = randn((7, 3, 9, 8), dtype), randn((4, 3, 3, 3), dtype), randn(4, dtype)
    assert C._workers(len(C._chunks(7, 27 * 72, x.itemsize)), 10**9) == 3
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    y = C.conv2d_fwd(x, wt, b, 1, 1)
    np.testing.assert_allclose(y, C.conv2d_fwd_ref(x, wt, b, 1, 1), **tol)
    g = randn(y.shape, dtype)
    for got, want in zip(C.conv2d_bwd(g, x, wt, 1, 1), C.conv2d_bwd_ref(g, x, wt, 1, 1)):
        np.testing.assert_allclose(got, want, **tol)


def test_conv2d_float32_bias_grad_is_summed_in_float64():
    """db of a float32 conv adds N*H*W terms per channel; with or without the JIT (where it is one
    running sum) it must stay within rounding of the float64 sum, not drift with the count."""
    rng = np.random.default_rng(7)
    x, wt = np.zeros((64, 1, 8, 8), np.float32), np.zeros((2, 1, 3, 3), np.float32)
    for _ in range(20):
        g = rng.standard_normal((64, 2, 8, 8)).astype(np.float32)
        _, _, db = C.conv2d_bwd(g, x, wt, 1, 1, need_input_grad=False)
        want = g.astype(np.float64).sum(axis=(0, 2, 3))
        # one float32 rounding of the exact sum, not sqrt(4096) of them
        np.testing.assert_allclose(db, want, rtol=2 * np.finfo(np.float32).eps, atol=0)


def test_conv2d_without_bias_and_without_input_grad():
    x, wt = randn((2, 2, 5, 5), np.float64), randn((3, 2, 3, 3), np.float64)
    np.testing.assert_allclose(C.conv2d_fwd(x, wt), C.conv2d_fwd_ref(x, wt), rtol=1e-12)
    dx, dw, _ = C.conv2d_bwd(np.ones((2, 3, 3, 3)), x, wt, need_input_grad=False)
    assert dx is None and dw.shape == wt.shape


def test_col2im_is_the_adjoint_of_im2col():
    x = randn((2, 3, 6, 7), np.float64)
    k, s, p = (3, 2), (2, 1), (1, 1)
    cols = C.im2col(x, k, s, p)
    d = randn(cols.shape, np.float64)
    # <im2col(x), d> == <x, col2im(d)>
    assert np.isclose((cols * d).sum(), (x * C.col2im(d, x.shape, k, s, p)).sum(), rtol=1e-12)


def test_conv2d_errors():
    with pytest.raises(ValueError, match="same C_in"):
        C.conv2d_fwd(np.zeros((1, 2, 5, 5)), np.zeros((3, 4, 3, 3)))
    with pytest.raises(ValueError, match="does not fit"):
        C.conv2d_fwd(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 3, 3)))
    with pytest.raises(ValueError, match="stride must be >= 1"):
        C.conv2d_fwd(np.zeros((1, 1, 5, 5)), np.zeros((1, 1, 3, 3)), stride=0)
    with pytest.raises(ValueError, match=r"bias must have shape \(1,\)"):
        C.conv2d_fwd(np.zeros((1, 1, 5, 5)), np.zeros((1, 1, 3, 3)), bias=np.zeros(2))


# ------------------------------------------------------------------ max-pool
POOL_CASES = [((2, 3, 4, 4), 2, None), ((1, 1, 5, 7), 3, 2), ((2, 2, 6, 6), (2, 3), (1, 2)),
              ((1, 1, 1, 1), 1, None), ((4, 8, 28, 28), 2, 2), ((3, 2, 7, 7), 3, 1),
              ((2, 2, 5, 6), 2, 1), ((1, 3, 7, 9), 2, (3, 2))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_parity(case, dtype):
    shape, k, s = case
    x = randn(shape, dtype)
    x.reshape(-1)[:2] = 5.0  # a tie: the first maximum wins
    out, idx = P.max_pool2d_fwd(x, k, s)
    out_ref, idx_ref = P.max_pool2d_fwd_ref(x, k, s)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_array_equal(idx, idx_ref)
    g = randn(out.shape, dtype)
    np.testing.assert_allclose(P.max_pool2d_bwd(g, idx, x.shape),
                               P.max_pool2d_bwd_ref(g, idx_ref, x.shape), **TOL[dtype])


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("shape,stride", [((4, 8, 28, 28), (2, 2)), ((3, 2, 7, 9), (1, 2)), ((2, 3, 6, 5), (1, 1))])
def test_max_pool_kernels_keep_the_nan_and_tie_rules(shape, stride, k, parallel):
    # The kernels scan with plain `>` and rescan only the planes that hold a nan: every plane,
    # with or without nan, inf or ties, must follow the rule of the numpy reference.
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    for value in (np.nan, np.inf, -np.inf):
        flat[rng.integers(0, x.size, 12)] = value
    x[0, 0, :3, :3] = 3.0  # a window of ties: the first wins
    x[1, 0, :3, :3] = np.nan  # a window of nans: the last wins
    x[2 % shape[0], 1, :3, :3] = -np.inf  # every value -inf: the first wins
    ho, wo = (shape[2] - k) // stride[0] + 1, (shape[3] - k) // stride[1] + 1
    out, idx = np.empty(shape[:2] + (ho, wo), np.float32), np.empty(shape[:2] + (ho, wo), np.int32)
    if k == 2:
        P._FWD_2X2[parallel](x, *stride, out, idx)
    else:
        P._FWD[parallel](x, k, k, *stride, out, idx)
    want_out, want_idx = P.max_pool2d_fwd_ref(x, k, stride)
    np.testing.assert_array_equal(out, want_out)  # nan positions compared too
    np.testing.assert_array_equal(idx, want_idx)
    assert np.isnan(out).any() and idx[0, 0, 0, 0] == 0 and idx[1, 0, 0, 0] == (k - 1) * shape[3] + k - 1


def test_max_pool_nan_wins_and_errors():
    x = np.zeros((1, 1, 2, 2))
    x[0, 0, 1, 0] = np.nan
    assert np.isnan(P.max_pool2d_fwd(x, 2)[0][0, 0, 0, 0])
    with pytest.raises(ValueError, match="4-d"):
        P.max_pool2d_fwd(np.zeros((2, 2)), 2)
    with pytest.raises(ValueError, match="larger than the input"):
        P.max_pool2d_fwd(np.zeros((1, 1, 2, 2)), 3)


# ------------------------------------------------------------------ reductions
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (4096, 10), (100_000, 3), (3, 0), (0, 4)])
def test_sum_rows_parity(shape, dtype):
    x = randn(shape, dtype)
    got = R.sum_rows(x)
    assert got.dtype == dtype and got.shape == (shape[1],)
    np.testing.assert_allclose(got, R.sum_rows_ref(x.astype(np.float64)),
                               rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (64, 10), (64, 128), (3, 0), (0, 4)])
def test_sum_rows_serial_adds_rows_in_order_in_float64_and_rounds_once(shape, dtype):
    # the training notebooks' stored outputs were computed with exactly these sums
    x = randn(shape, dtype)
    acc = np.zeros(shape[1])
    for row in x:
        acc += row
    got = R.sum_rows(x, parallel=False)
    assert got.dtype == dtype and got.shape == (shape[1],)
    np.testing.assert_array_equal(got, acc.astype(dtype))


# ------------------------------------------------------------------ SGD's momentum update
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (10,), (128, 64), (3, 4, 5)])
def test_sgd_momentum_equals_numpy_bit_for_bit(shape, dtype):
    # every rounding as numpy's: in the dtype, one at a time (a fused multiply-add fails this)
    p, buf, g = (np.array(randn(shape, dtype, scale)) for scale in (1, 1, 1e-3))  # 0-d: arrays too
    p_ref, buf_ref = p.copy(), buf.copy()
    data = p
    for lr, momentum in ((0.1, 0.9), (0.05, 0.5), (1, 1), (0.003, 0.99), (0.7, 0.3)):
        assert O.sgd_momentum_(p, buf, g, lr, momentum) is True
        O.sgd_momentum_ref(p_ref, buf_ref, g, lr, momentum)
        np.testing.assert_array_equal(buf, buf_ref)
        np.testing.assert_array_equal(p, p_ref)
    assert p is data and p.dtype == dtype and p.shape == shape


def test_sgd_momentum_leaves_what_it_would_compute_differently_to_numpy():
    p, buf, g = randn((4, 3), np.float32), randn((4, 3), np.float32), randn((4, 3), np.float32)
    read_only = p.copy()
    read_only.flags.writeable = False
    refused = {
        "a float64 gradient": (p, buf, g.astype(np.float64), 0.1, 0.9),
        "integer arrays": (p.astype(np.int64), buf.astype(np.int64), g.astype(np.int64), 1, 1),
        "another shape": (p, buf, g[:2], 0.1, 0.9),
        "a column-major parameter": (np.asfortranarray(p), buf, g, 0.1, 0.9),
        "a strided gradient": (p[:, :2], buf[:, :2], g[:, ::2], 0.1, 0.9),
        "a read-only parameter": (read_only, buf, g, 0.1, 0.9),
        "a numpy float64 learning rate": (p, buf, g, np.float64(0.1), 0.9),
        "a numpy momentum": (p, buf, g, 0.1, np.float32(0.9)),
    }
    for why, args in refused.items():
        before = [a.copy() for a in args[:3]]
        assert O.sgd_momentum_(*args) is False, why
        for a, b in zip(args[:3], before):
            np.testing.assert_array_equal(a, b, err_msg=why)


# ------------------------------------------------------------------ serial switch
def test_each_kernel_family_switches_at_its_fixed_threshold():
    pair = ("serial", "parallel")
    for name, size in THRESHOLDS.items():
        assert _jit.pick(pair, size - 1, size) == "serial", name
        for _ in range(3):  # the same answer every time: nothing is measured
            assert _jit.pick(pair, size, size) == "parallel", name
    assert _jit.pick(pair, 1_000) == "serial" and _jit.pick(pair, 1_000_000) == "parallel"  # chapter 07


@pytest.mark.parametrize("mode,small,large", [(False, "serial", "serial"), (True, "parallel", "parallel"),
                                               ("auto", "serial", "parallel")])
def test_set_parallel_override_is_respected_and_returns_the_previous_mode(mode, small, large):
    from autograd_lab import kernels as K
    pair = ("serial", "parallel")
    previous = K.set_parallel(mode)
    try:
        assert previous == "auto" and K.parallel_mode() == mode
        assert K.parallel_enabled() is (mode is not False)
        assert _jit.pick(pair, 1) == small
        assert _jit.pick(pair, 10**9) == large
        assert (_jit.num_threads() == 1) if mode is False else _jit.num_threads() >= 1
    finally:
        assert K.set_parallel(previous) == mode
    assert K.parallel_mode() == "auto"


@pytest.mark.parametrize("bad", ["yes", 1, 0, None, "parallel"])
def test_set_parallel_rejects_anything_but_true_false_or_auto(bad):
    from autograd_lab import kernels as K
    with pytest.raises(ValueError, match="True, False or 'auto'"):
        K.set_parallel(bad)
    assert K.parallel_mode() == "auto"


def _modes(*modes):
    """Run the caller's block once per mode, restoring the mode afterwards."""
    from autograd_lab import kernels as K
    for mode in modes:
        previous = K.set_parallel(mode)
        try:
            yield mode
        finally:
            K.set_parallel(previous)


@pytest.mark.parametrize("dtype", DTYPES)
def test_results_identical_serial_and_parallel_across_the_thresholds(dtype):
    """set_parallel(True) runs the parallel version at every size, 'auto' the serial one below its
    threshold: the numbers are equal bit for bit, so the rule changes the time and nothing else."""
    x = randn((301, 67), dtype, 3.0)
    b = randn(67, dtype)
    g = randn(x.shape, dtype)
    t = rng.integers(0, 67, 301)
    img = randn((3, 2, 9, 8), dtype)

    def everything():
        y = A.bias_act_fwd(x, b, "sigmoid")
        loss, stats = S.cross_entropy_fwd(x, t)
        cols = C.im2col(img, (3, 3), 1, 1)
        out, idx = P.max_pool2d_fwd(img, 2)
        return [A.relu_fwd(x), A.relu_bwd(x, g), A.sigmoid_fwd(x), A.sigmoid_bwd(x, g), A.tanh_bwd(x, g),
                y, *A.bias_act_bwd(y, g, "sigmoid"), *A.bias_act_bwd(x, g, "relu"),
                S.log_softmax_fwd(x), S.log_softmax_bwd(x, g), S.logsumexp(x), loss,
                S.cross_entropy_bwd(x, t, stats, loss), R.sum_rows(x),
                cols, C.col2im(cols, img.shape, (3, 3), 1, 1), out, idx, P.max_pool2d_bwd(out, idx, img.shape)]

    results = {mode: everything() for mode in _modes("auto", True)}
    for k, (a, c) in enumerate(zip(results["auto"], results[True])):
        np.testing.assert_array_equal(a, c, err_msg=f"result {k}")
    # softmax's forward and backward are the exception: their row sums are compiled with 'reassoc',
    # and LLVM vectorises the serial and the parallel copy's loop differently, so the two differ
    # in the last bits (measured: up to 3e-7 relative in float32, 5e-16 in float64).
    y = {mode: S.softmax_fwd(x) for mode in _modes("auto", True)}
    np.testing.assert_allclose(y["auto"], y[True], rtol=8 * np.finfo(dtype).eps, atol=0)
    gy = {mode: S.softmax_bwd(y["auto"], g) for mode in _modes("auto", True)}
    np.testing.assert_allclose(gy["auto"], gy[True], **TOL[dtype])


def test_softmax_rows_go_parallel_by_the_same_rule(monkeypatch):
    ran, asked = [], []
    pair = (lambda *args: ran.append(("serial", args[-1])), lambda *args: ran.append(("parallel", args[-1])))
    monkeypatch.setattr(S, "num_threads", lambda: asked.append(1) or 2)
    S._run(pair, (1000, THRESHOLDS["rows"] // 1000 - 1))
    assert not asked  # small rows do not ask numba for its threads: that costs more than their loss
    S._run(pair, (1000, THRESHOLDS["rows"] // 1000))
    assert ran == [("serial", 1), ("parallel", 8)]  # blocks of rows: four per thread


def _spied(pair, ran, blocks):
    """The pair's kernels, each noting in ``ran`` which one ran and over how many blocks of rows."""
    def spy(kind, kernel):
        def run(*args):
            ran.append((kind, blocks(args)))
            return kernel(*args)
        return run
    return spy("serial", pair[0]), spy("parallel", pair[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_column_sums_keep_their_blocks_and_numbers_whether_threads_run_them(monkeypatch, dtype):
    """The reductions' blocks (one per thread from PARALLEL_MIN_SIZE) set their numbers; below
    their thresholds the same blocks run on one thread, so sums and gradients stay bit for bit.
    The fused backward does more per value than the sums, so threads pay for it sooner."""
    ran = []
    for module in (R, A):
        monkeypatch.setattr(module, "num_threads", lambda: 2)
    monkeypatch.setattr(R, "_SUM_ROWS", _spied(R._SUM_ROWS, ran, lambda args: args[1]))  # (x, blocks, out)
    monkeypatch.setattr(A, "_BIAS_ACT_BWD",  # (y, g, code, gz, partial): a partial row per block
                        _spied(A._BIAS_ACT_BWD, ran, lambda args: args[-1].shape[0]))
    x = randn((PARALLEL_MIN_SIZE // 64 + 1, 64), dtype, scale=3.0)
    y, g = A.sigmoid_fwd(x), randn(x.shape, dtype)
    results = {mode: [R.sum_rows(x), *A.bias_act_bwd(y, g, "sigmoid")] for mode in _modes("auto", True)}
    assert ran == [("serial", 2)] * 2 + [("parallel", 2)] * 2
    for a, b in zip(results["auto"], results[True]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results["auto"][0], R.sum_rows_ref(x.astype(np.float64)),  # float64 sums, rounded once
                               rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-3)
    mid = randn((THRESHOLDS["bias_act_bwd"] // 64 + 1, 64), dtype)  # above the fused backward's threshold
    A.bias_act_bwd(A.sigmoid_fwd(mid), mid, "sigmoid")
    assert ran[4:] == [("parallel", 2)]


def test_set_parallel_false_keeps_every_kernel_serial_and_results_equal():
    from autograd_lab import kernels as K
    from autograd_lab.kernels._jit import pick
    x = randn((400, 300), np.float64)
    t = rng.integers(0, 300, 400)
    before = [K.relu_fwd(x), K.softmax_fwd(x), K.sum_rows(x), K.cross_entropy_fwd(x, t)[0]]
    previous = K.set_parallel(False)
    try:
        assert not K.parallel_enabled()
        assert pick(("serial", "parallel"), 10**9) == "serial"
        after = [K.relu_fwd(x), K.softmax_fwd(x), K.sum_rows(x), K.cross_entropy_fwd(x, t)[0]]
    finally:
        K.set_parallel(previous)
    assert pick(("serial", "parallel"), 10**9) == "parallel"
    for a, b in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


_IMPORT_CHECK = """
import json, os
before = dict(os.environ)
import numpy as np
import autograd_lab, autograd_lab.kernels as K
after_import = dict(os.environ)
mode = K.parallel_mode()
K.set_parallel(True)
K.relu_fwd(np.ones(10))  # the first parallel call starts numba's threads
print(json.dumps({"import": after_import == before, "call": dict(os.environ) == before,
                  "mode": mode}))
"""


@pytest.mark.parametrize("setting,mode", [(None, "auto"), ("0", False), ("always", True), ("1", "auto")])
def test_import_leaves_the_environment_alone_and_reads_autograd_lab_parallel(setting, mode):
    import json
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRAD_LAB_PARALLEL", "OMP_WAIT_POLICY")}
    if setting is not None:
        env["AUTOGRAD_LAB_PARALLEL"] = setting
    out = subprocess.run([sys.executable, "-c", _IMPORT_CHECK], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"import": True, "call": True, "mode": mode}


def test_numba_private_names_are_used_in_one_module_only():
    import pathlib
    import autograd_lab
    root = pathlib.Path(autograd_lab.__file__).parent / "kernels"
    private = ("from numba.np.ufunc.parallel import", "from numba.core.caching import",
               "import numba.np.ufunc.parallel", "import numba.core.caching", "_launch_threads(")
    users = sorted(p.name for p in root.rglob("*.py")
                   if any(name in p.read_text(encoding="utf-8") for name in private))
    assert users == ["_numba_private.py"]
