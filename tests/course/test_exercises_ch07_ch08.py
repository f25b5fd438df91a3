"""The checkers of chapters 07 and 08.

Each checker must pass a correct solution (with and without hidden cases) and fail typical
wrong ones with a message that names the exercise and gives a useful hint. The correct chapter
07 kernels are the key's (course/reference ``mygrad/kernels.py``, see ``_ch07_key.py``),
compiled with numba once; the wrong variants run as plain Python with the "is it a numba
kernel" case switched off, which keeps the tests fast.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba import config, njit

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab import nn
from autograd_lab.course.exercises import ch07, check

from ._ch07_key import KEY, plain, with_range
from ._checker_helpers import (SEEDS, assert_all_passed, assert_calls_own_checker,
                              assert_has_heading_and_solution, failure, graded_cells,
                              solution_cells)


@pytest.fixture
def plain_python(monkeypatch):
    """Accept plain Python functions as kernels (the values are what is tested here)."""
    monkeypatch.setattr(ch07, "_jit_enabled", lambda: False)


CH07_MISTAKES: list = []
CH08_MISTAKES: list = []
"""The checkers' typical mistakes, as cases (checker, exercise, wrong solution, words)."""


def mistakes_of(cases, checker, exercise):
    """``mistake(words, wrong)``, or ``@mistake(words)`` above a wrong solution, adds the case
    "``checker`` fails ``wrong`` with a message naming ``exercise`` and holding ``words``" to
    ``cases``."""
    def mistake(words, wrong=None, name=None):
        def add(wrong):
            cases.append(pytest.param(checker, exercise, wrong, words,
                                      id=f"{exercise}-{name or wrong.__name__}"))
            return wrong
        return add if wrong is None else add(wrong)
    return mistake


def kinds(mistake, make, words_of):
    """``mistake(words, make(kind))`` for each kind of mistake in ``words_of`` = {kind: words}."""
    for kind, words in words_of.items():
        mistake(words, make(kind), name=kind)


# -- chapter 07: correct kernels: the key's ---------------------------------------------------
KERNELS = {
    "forward": KEY.affine_relu_forward,                  # @njit
    "backward": KEY.affine_relu_backward,                # @njit
    "softmax": KEY.softmax_rows,                         # @njit
    "sums": KEY.column_sums_blocked,                     # @njit(parallel=True)
}
# their Python functions, for the tests that run plain Python
_affine_relu_forward = plain(KEY.affine_relu_forward)
_affine_relu_backward = plain(KEY.affine_relu_backward)
_softmax_rows = plain(KEY.softmax_rows)
_column_sums_blocked = plain(KEY.column_sums_blocked)


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch07_correct_kernels_pass(seed, hidden, capsys):
    check.ch07_affine_relu_forward(KERNELS["forward"], seed=seed, hidden=hidden)
    check.ch07_affine_relu_backward(KERNELS["backward"], seed=seed, hidden=hidden)
    check.ch07_softmax_rows(KERNELS["softmax"], seed=seed, hidden=hidden)
    check.ch07_column_sums(KERNELS["sums"], seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 4, hidden)


def test_ch07_checkers_compile_each_kernel_once():
    """Every case uses one signature, so a learner's kernel compiles once per check."""
    if config.DISABLE_JIT:
        pytest.skip("no compilation with NUMBA_DISABLE_JIT=1")
    for seed, hidden in SEEDS:
        check.ch07_affine_relu_forward(KERNELS["forward"], seed=seed, hidden=hidden)
        check.ch07_softmax_rows(KERNELS["softmax"], seed=seed, hidden=hidden)
        check.ch07_column_sums(KERNELS["sums"], seed=seed, hidden=hidden)
    for name in ("forward", "softmax", "sums"):
        assert len(KERNELS[name].signatures) == 1, KERNELS[name].signatures


def test_ch07_plain_python_passes_the_values(plain_python, capsys):
    check.ch07_affine_relu_forward(_affine_relu_forward, hidden=True)
    check.ch07_column_sums(_column_sums_blocked, hidden=True)
    assert_all_passed(capsys.readouterr().out, 2, hidden=True)


def test_ch07_plain_python_function_is_not_a_kernel():
    if config.DISABLE_JIT:
        pytest.skip("with NUMBA_DISABLE_JIT=1 every @njit function is plain Python")
    msg = failure(check.ch07_affine_relu_forward, _affine_relu_forward)
    assert "ch07-affine-relu-forward" in msg and "@njit" in msg
    msg = failure(check.ch07_column_sums, njit(_column_sums_blocked))
    assert "parallel=True" in msg


def test_ch07_stub_reports_not_done():
    @njit
    def stub(x, a, b, out):
        raise NotImplementedError("Exercise ch07-affine-relu-forward: write your code here")
    with pytest.raises(NotImplementedError, match="ch07-affine-relu-forward is not done yet"):
        check.ch07_affine_relu_forward(stub)


def test_ch07_numba_warnings_do_not_reach_stderr(recwarn):
    """nbgrader fails a graded cell that writes to stderr; numba warns about parallel=True
    without a prange loop (the untouched stub, or a serial loop) and must stay quiet. The
    serial loop gives the right values and still fails: the exercise is the parallel loop."""
    @njit(parallel=True)
    def stub(x, partial):
        raise NotImplementedError("Exercise ch07-column-sums: write your code here")
    with pytest.raises(NotImplementedError, match="ch07-column-sums is not done yet"):
        check.ch07_column_sums(stub)

    serial_loop = njit(parallel=True)(with_range(KEY.column_sums_blocked))
    message = failure(check.ch07_column_sums, serial_loop)  # right values, but one thread
    assert "prange" in message and "one thread" in message, message
    assert not [w for w in recwarn if "numba" in type(w.message).__module__]


def test_ch07_compile_error_is_reported_with_the_numba_hint():
    if config.DISABLE_JIT:
        pytest.skip("no compilation with NUMBA_DISABLE_JIT=1")

    @njit
    def untypable(x, a, b, out):
        out[:] = {"a": a}  # a dict cannot go into a float array
        return out
    msg = failure(check.ch07_affine_relu_forward, untypable)
    assert "raised TypingError" in msg and "numba could not compile" in msg


forward_mistake = mistakes_of(CH07_MISTAKES, check.ch07_affine_relu_forward,
                              "ch07-affine-relu-forward")


@forward_mistake("relu is missing")
def _fwd_no_relu(x, a, b, out):
    for i in range(x.size):
        out[i] = a * x[i] + b
    return out


@forward_mistake("apply it last")
def _fwd_relu_first(x, a, b, out):
    for i in range(x.size):
        out[i] = a * max(x[i], 0.0) + b
    return out


@forward_mistake("write every element")
def _fwd_skips_negatives(x, a, b, out):
    for i in range(x.size):
        v = a * x[i] + b
        if v > 0:
            out[i] = v
    return out


@forward_mistake("write every element")
def _fwd_new_array(x, a, b, out):
    return np.maximum(a * x + b, 0.0)


@forward_mistake("did not return out")
def _fwd_no_return(x, a, b, out):
    _affine_relu_forward(x, a, b, out)


@forward_mistake("changed its input")
def _fwd_in_place(x, a, b, out):
    for i in range(x.size):
        x[i] = a * x[i] + b
        out[i] = max(x[i], 0.0)
    return out


backward_mistake = mistakes_of(CH07_MISTAKES, check.ch07_affine_relu_backward,
                               "ch07-affine-relu-backward")


def _bwd(rule):
    def backward(x, a, b, grad_out, grad_x):
        return rule(x, a, b, grad_out, grad_x)
    return backward


@backward_mistake("not z >= 0")
def _bwd_ge(x, a, b, g, gx):
    ga = gb = 0.0
    for i in range(x.size):
        on = a * x[i] + b >= 0
        gx[i] = a * g[i] if on else 0.0
        ga += g[i] * x[i] if on else 0.0
        gb += g[i] if on else 0.0
    return ga, gb


@backward_mistake("factor a is missing")
def _bwd_no_a(x, a, b, g, gx):
    ga, gb = _affine_relu_backward(x, a, b, g, gx)
    for i in range(x.size):
        gx[i] = gx[i] / a if a != 0 else gx[i]
    return ga, gb


@backward_mistake("mask is missing")
def _bwd_no_mask(x, a, b, g, gx):
    ga, gb = _affine_relu_backward(x, a, b, g, gx)
    gx[:] = a * g
    return ga, gb


@backward_mistake("write every element")
def _bwd_no_zero(x, a, b, g, gx):
    ga = gb = 0.0
    for i in range(x.size):
        if a * x[i] + b > 0:
            gx[i] = a * g[i]
            ga += g[i] * x[i]
            gb += g[i]
    return ga, gb


@backward_mistake("swapped")
def _bwd_swapped(x, a, b, g, gx):
    ga, gb = _affine_relu_backward(x, a, b, g, gx)
    return gb, ga


@backward_mistake("not g")
def _bwd_ga_without_x(x, a, b, g, gx):
    _, gb = _affine_relu_backward(x, a, b, g, gx)
    return gb, gb


@backward_mistake("only where z > 0")
def _bwd_gb_unmasked(x, a, b, g, gx):
    ga, _ = _affine_relu_backward(x, a, b, g, gx)
    return ga, float(g.sum())


backward_mistake("two numbers", lambda x, a, b, g, gx: None, name="returns_None")


def test_ch07_backward_matches_autograd_lab():
    """The checker's numpy reference is the library's own gradient."""
    rng = np.random.default_rng(3)
    x, g = rng.normal(size=20), rng.normal(size=20)
    ref = ch07._backward_reference(x, 0.7, -0.2, g)
    auto = ch07._backward_autograd(x, 0.7, -0.2, g)
    np.testing.assert_allclose(ref[0], auto[0])
    np.testing.assert_allclose(ref[1:], auto[1:])


softmax_mistake = mistakes_of(CH07_MISTAKES, check.ch07_softmax_rows, "ch07-softmax-rows")


@softmax_mistake("subtract the row maximum")
def _sm_unstable(x, out):
    with np.errstate(all="ignore"):
        e = np.exp(x)
        out[...] = e / e.sum(axis=1, keepdims=True)
    return out


@softmax_mistake("softmax of each column")
def _sm_columns(x, out):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    out[...] = e / e.sum(axis=0, keepdims=True)
    return out


@softmax_mistake("sum of the whole array")
def _sm_global(x, out):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    out[...] = e / e.sum()
    return out


@softmax_mistake("maximum of the whole array, not of each row")
def _sm_global_max(x, out):
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max()) if x.size else x.copy()
        out[...] = e / e.sum(axis=1, keepdims=True)
    return out


@softmax_mistake("not normalised")
def _sm_unnormalised(x, out):
    out[...] = np.exp(x - x.max(axis=1, keepdims=True))
    return out


@softmax_mistake("changed its input")
def _sm_in_place(x, out):
    x -= x.max(axis=1, keepdims=True)
    e = np.exp(x)
    out[...] = e / e.sum(axis=1, keepdims=True)
    return out


softmax_mistake("write every element", lambda x, out: _softmax_rows(x, out.copy()),
                name="writes_a_copy")


column_sums_mistake = mistakes_of(CH07_MISTAKES, check.ch07_column_sums, "ch07-column-sums")


@column_sums_mistake("summed all the rows")
def _cs_all_rows(x, partial):
    partial[...] = x.sum(axis=0)
    return partial


@column_sums_mistake("rounds down")
def _cs_floor(x, partial):
    rows, nblocks = x.shape[0], partial.shape[0]
    step = max(rows // nblocks, 1)
    for c in range(nblocks):
        partial[c] = x[c * step:(c + 1) * step].sum(axis=0)
    return partial


@column_sums_mistake("must still be set to 0")
def _cs_no_zero(x, partial):
    rows, nblocks = x.shape[0], partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in range(nblocks):
        lo, hi = c * step, min(rows, (c + 1) * step)
        if hi > lo:
            partial[c] = x[lo:hi].sum(axis=0)
    return partial


@column_sums_mistake("do not assign")
def _cs_assign(x, partial):
    rows, nblocks = x.shape[0], partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    partial[...] = 0
    for c in range(nblocks):
        for i in range(c * step, min(rows, (c + 1) * step)):
            partial[c] = x[i]
    return partial


@pytest.mark.parametrize("checker,exercise,wrong,words", CH07_MISTAKES)
def test_ch07_checkers_reject_typical_mistakes(plain_python, checker, exercise, wrong, words):
    msg = failure(checker, wrong)
    assert exercise in msg and words in msg


def test_ch07_column_sums_must_return_partial(plain_python):
    def no_return(x, partial):
        _column_sums_blocked(x, partial)
    assert "did not return partial" in failure(check.ch07_column_sums, no_return)


# -- chapter 08: correct solutions ----------------------------------------------------------
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features, bias=True, seed=None):
        super().__init__()
        rng = np.random.default_rng(seed)
        k = 1 / np.sqrt(in_features)
        self.weight = nn.Parameter(rng.uniform(-k, k, size=(out_features, in_features)))
        self.bias = nn.Parameter(rng.uniform(-k, k, size=out_features)) if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


class SGDMomentum:
    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            d = p.grad.data + self.weight_decay * p.data
            if self.momentum:
                if self.buffers[i] is None:
                    self.buffers[i] = d.copy()
                else:
                    self.buffers[i] = self.momentum * self.buffers[i] + d
                d = self.buffers[i]
            with al.no_grad():
                p -= self.lr * d


class MyAdam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = [{"t": 0, "m": np.zeros_like(p.data), "v": np.zeros_like(p.data)}
                      for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        b1, b2 = self.betas
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad.data
            s["t"] += 1
            s["m"] = b1 * s["m"] + (1 - b1) * g
            s["v"] = b2 * s["v"] + (1 - b2) * g * g
            m_hat = s["m"] / (1 - b1 ** s["t"])
            v_hat = s["v"] / (1 - b2 ** s["t"])
            p.data -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def training_loop(model, opt, X, y, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(X), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch08_correct_solutions_pass(seed, hidden, capsys):
    check.ch08_linear(MyLinear, seed=seed, hidden=hidden)
    check.ch08_sgd_momentum(SGDMomentum, seed=seed, hidden=hidden)
    check.ch08_adam(MyAdam, seed=seed, hidden=hidden)
    check.ch08_training_loop(training_loop, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 4, hidden)


def test_ch08_library_classes_pass_too(capsys):
    """The library's own Linear, SGD and Adam are correct solutions of the same contracts."""
    check.ch08_sgd_momentum(lambda params, lr, momentum=0.0, weight_decay=0.0: al.optim.SGD(
        params, lr=lr, momentum=momentum, weight_decay=weight_decay), hidden=True)
    check.ch08_adam(al.optim.Adam, hidden=True)
    assert_all_passed(capsys.readouterr().out, 2, hidden=True)


def test_ch08_linear_matches_the_library_initialisation():
    """Same bound as nn.Linear: U(-1/sqrt(in), 1/sqrt(in))."""
    ours = MyLinear(50, 400, seed=0).weight.data
    lib = nn.Linear(50, 400, seed=0, dtype=np.float64).weight.data
    assert abs(ours.std() - lib.std()) < 0.01 * lib.std() * 10
    assert np.abs(ours).max() <= 1 / np.sqrt(50) and np.abs(lib).max() <= 1 / np.sqrt(50)


def _linear_variant(kind):
    class Variant(nn.Module):
        def __init__(self, in_features, out_features, bias=True, seed=None):
            if kind != "no_super":
                super().__init__()
            rng = np.random.default_rng(seed)
            k = 1 / np.sqrt(in_features)
            shape = (in_features, out_features) if kind == "transposed" else (out_features,
                                                                              in_features)
            if kind == "normal":
                w = rng.normal(0, 1 / np.sqrt(in_features), size=shape)
            elif kind == "fan_out":
                k2 = 1 / np.sqrt(out_features)
                w = rng.uniform(-k2, k2, size=shape)
            elif kind == "positive":
                w = rng.uniform(0, k, size=shape)
            else:
                w = rng.uniform(-k, k, size=shape)
            wrap = al.Variable if kind == "plain_variable" else nn.Parameter
            self.weight = wrap(w, requires_grad=True) if kind == "plain_variable" else wrap(w)
            self.bias = nn.Parameter(rng.uniform(-k, k, size=out_features)) if bias else None
            if kind == "zero_bias" and bias:
                self.bias = nn.Parameter(np.zeros(out_features))

        def forward(self, x):
            W = self.weight
            if kind == "numpy":
                out = x.data @ W.data.T + (0 if self.bias is None else self.bias.data)
                return al.Variable(out)
            y = x @ W if kind == "transposed" else x @ W.T
            return y if self.bias is None else y + self.bias
    Variant.__name__ = "MyLinear"
    return Variant


def test_ch08_linear_unseeded_layers_fail_the_seed_case():
    class Unseeded(MyLinear):
        def __init__(self, in_features, out_features, bias=True, seed=None):
            super().__init__(in_features, out_features, bias, seed=None)
    assert "seed=7" in failure(check.ch08_linear, Unseeded)


def _sgd_variant(kind):
    class Variant(SGDMomentum):
        def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
            super().__init__(params, lr, momentum, weight_decay)
            if kind == "generator":
                self.params = params

        def step(self):
            if kind == "generator":
                self.params = list(self.params)
                return super().step()
            for i, p in enumerate(self.params):
                if p.grad is None:
                    continue
                g = p.grad.data
                d = g if kind in ("wd_after", "no_wd") else g + self.weight_decay * p.data
                if self.momentum:
                    if self.buffers[i] is None or kind == "no_memory":
                        self.buffers[i] = (1 - self.momentum) * d if kind == "ema" else d.copy()
                    elif kind == "ema":
                        self.buffers[i] = self.momentum * self.buffers[i] + (1 - self.momentum) * d
                    else:
                        self.buffers[i] = self.momentum * self.buffers[i] + d
                    d = self.buffers[i]
                if kind == "wd_after":
                    d = d + self.weight_decay * p.data
                if kind == "rebind":
                    p = p - self.lr * d  # noqa: PLW2901 - the mistake under test
                elif kind == "recorded":
                    p.sub_(al.Variable(self.lr * d))
                else:
                    p.data -= self.lr * d
    return Variant


def test_ch08_sgd_must_skip_parameters_without_grad():
    class NoSkip(SGDMomentum):
        def step(self):
            for p in self.params:
                if p.grad is None:
                    p.grad = al.Variable(np.zeros_like(p.data))
            super().step()
    msg = failure(check.ch08_sgd_momentum, NoSkip)
    assert "grad is None" in msg


def test_ch08_zero_grad_is_checked():
    class NoZero(SGDMomentum):
        def zero_grad(self):
            pass
    assert "zero_grad()" in failure(check.ch08_sgd_momentum, NoZero)


def _adam_variant(kind):
    class Variant(MyAdam):
        def step(self):
            b1, b2 = self.betas
            self.t_global = getattr(self, "t_global", 0) + 1
            for p, s in zip(self.params, self.state):
                if p.grad is None:
                    continue
                g = p.grad.data
                s["t"] += 1
                t = self.t_global if kind == "global_t" else s["t"] + (kind == "t_plus_one")
                s["m"] = b1 * s["m"] + (1 - b1) * g
                s["v"] = b2 * s["v"] + (1 - b2) * g * g
                m_hat = s["m"] if kind == "no_correction" else s["m"] / (1 - b1 ** t)
                v_hat = s["v"] if kind in ("no_correction", "first_only") else s["v"] / (
                    1 - b2 ** t)
                den = np.sqrt(v_hat + self.eps) if kind == "eps_inside" else (
                    np.sqrt(v_hat) + self.eps)
                p.data -= self.lr * m_hat / den
    return Variant


# the kinds of mistake of the three classes above, and the words their messages must hold
kinds(mistakes_of(CH08_MISTAKES, check.ch08_linear, "ch08-linear"), _linear_variant, {
    "no_super": "super().__init__()",
    "plain_variable": "nn.Parameter",
    "transposed": "(out_features, in_features)",
    "numpy": "no grad_fn",
    "normal": "uniform",
    "fan_out": "fan_in",
    "positive": "centred",
    "zero_bias": "same interval",
})
kinds(mistakes_of(CH08_MISTAKES, check.ch08_sgd_momentum, "ch08-sgd-momentum"), _sgd_variant, {
    "ema": "b = mu * b + g",
    "no_memory": "does not carry over",
    "wd_after": "before the buffer",
    "no_wd": "weight_decay is ignored",
    "rebind": "Rebinding",
    "recorded": "raised BackwardError",
    "generator": "generator",
})
kinds(mistakes_of(CH08_MISTAKES, check.ch08_adam, "ch08-adam"), _adam_variant, {
    "no_correction": "bias correction is missing",
    "eps_inside": "outside the square root",
    "global_t": "Count steps per parameter",
    "first_only": "Both moments",
    "t_plus_one": "one step ahead",
})


def _loop_variant(kind):
    def loop(model, opt, X, y, steps):
        losses = []
        for _ in range(steps):
            if kind != "no_zero":
                opt.zero_grad()
            loss = F.mse_loss(model(X), y)
            loss.backward()
            opt.step()
            if kind == "loss_after":
                with al.no_grad():
                    loss = F.mse_loss(model(X), y)
            losses.append(loss if kind == "variables" else loss.item())
        return losses
    return loop


training_loop_mistake = mistakes_of(CH08_MISTAKES, check.ch08_training_loop,
                                    "ch08-training-loop")
kinds(training_loop_mistake, _loop_variant, {
    "no_zero": "zero_grad",
    "loss_after": "before opt.step()",
    "variables": "loss.item()",
})
training_loop_mistake("list of", lambda model, opt, X, y, steps:
                      training_loop(model, opt, X, y, steps)[:-1], name="one_loss_short")
training_loop_mistake("list of", lambda model, opt, X, y, steps: None, name="returns_None")


@pytest.mark.parametrize("checker,exercise,wrong,words", CH08_MISTAKES)
def test_ch08_checkers_reject_typical_mistakes(checker, exercise, wrong, words):
    msg = failure(checker, wrong)
    assert exercise in msg and words in msg


# -- the notebooks use these checkers consistently ------------------------------------------
NOTEBOOKS = {"07_fast_kernels.ipynb": {"ch07-affine-relu-forward", "ch07-affine-relu-backward",
                                       "ch07-softmax-rows", "ch07-cross-entropy-rows",
                                       "ch07-column-sums", "ch07-column-sums-wrapper",
                                       "ch07-softmax-ce-function", "ch07-relu-function"},
             "08_modules_optimizers.ipynb": {"ch08-module", "ch08-linear", "ch08-sequential",
                                             "ch08-dropout", "ch08-sgd-momentum", "ch08-adam",
                                             "ch08-training-loop"}}


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_graded_cells_call_their_own_checker(name):
    cells = solution_cells(name)
    graded = graded_cells(cells)
    assert {c["metadata"]["nbgrader"]["grade_id"] for c in graded} == NOTEBOOKS[name]
    for cell in graded:
        assert_calls_own_checker(cell)
        assert_has_heading_and_solution(cell, cells)


def test_chapter_07_timing_cells_are_ignored_by_nbval():
    """A cell that measures time prints numbers that change from run to run."""
    cells = solution_cells("07_fast_kernels.ipynb")
    timing = [c for c in cells if c["cell_type"] == "code"
              and re.search(r"best_time\(|perf_counter\(", "".join(c["source"]))
              and "def best_time" not in "".join(c["source"])]
    assert len(timing) >= 4
    for cell in timing:
        assert "".join(cell["source"]).startswith("# NBVAL_IGNORE_OUTPUT"), cell["source"][:3]
