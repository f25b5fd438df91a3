"""The checkers of chapters 11 (higher-order gradients) and 12 (the capstone loss).

Each checker must pass correct solutions (with and without hidden cases) and fail typical wrong
ones with a message that names the exercise and gives a useful hint. The checkers' own exact
Hessians and loss references are compared with finite differences, the engine and PyTorch.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises import ch11, ch12, check
from autograd_lab.gradcheck import numerical_jacobian

from ._checker_helpers import SEEDS, assert_all_passed, failure
from .._oracle import require_torch


# == chapter 11: correct solutions ===========================================================
def hvp(f, x, v):
    xv = al.tensor(x, requires_grad=True)
    g, = al.grad(f(xv), xv, create_graph=True)
    return al.grad((g * al.tensor(v)).sum(), xv)[0].numpy()


def hvp_backward(f, x, v):
    """The .backward() route, clearing .grad in between; returns a Variable."""
    xv = al.tensor(x, requires_grad=True)
    f(xv).backward(create_graph=True)
    g = xv.grad
    xv.grad = None
    (g * al.tensor(v)).sum().backward()
    return xv.grad


def hessian(f, x):
    return np.stack([hvp(f, x, e) for e in np.eye(x.size)], axis=1)


def hessian_rows(f, x):
    """Row by row from the gradient's components (another correct route)."""
    xv = al.tensor(x, requires_grad=True)
    g, = al.grad(f(xv), xv, create_graph=True)
    return np.stack([al.grad(g[i], xv, retain_graph=True)[0].data for i in range(x.size)])


def newton_step(f, x):
    xv = al.tensor(x, requires_grad=True)
    g, = al.grad(f(xv), xv)
    return x - np.linalg.solve(hessian(f, x), g.numpy())


def newton_step_inverse(f, x):
    xv = al.tensor(x, requires_grad=True)
    g, = al.grad(f(xv), xv)
    return x - np.linalg.inv(hessian(f, x)) @ g.data


def make_tanh(rule="output", once=False):
    class MyTanh(al.Function):
        @staticmethod
        def forward(ctx, x):
            y = al.Variable(np.tanh(x.data))
            if rule in ("fresh", "fresh_leaf"):   # saves a new Variable, not the output itself
                ctx.save_for_backward(al.Variable(y.data.copy(), requires_grad=rule == "fresh_leaf"))
                return y
            ctx.save_for_backward(y if rule in ("output", "numpy", "once") else x)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            s, = ctx.saved_tensors
            if rule in ("output", "fresh", "fresh_leaf"):
                return grad_output * (1 - s * s)
            if rule == "input":
                t = s.tanh()
                return grad_output * (1 - t * t)
            if rule == "numpy":
                return al.Variable(grad_output.data * (1 - s.data ** 2))
            if rule == "copy":   # differentiates only through grad_output, not through y
                y = al.Variable(np.tanh(s.data))
                return grad_output * (1 - y * y)
            if rule == "wrong":
                return grad_output * (1 - s)
            raise AssertionError(rule)

    if once:
        def backward(ctx, grad_output):
            y, = ctx.saved_tensors
            return grad_output.data * (1 - y.data ** 2)
        MyTanh.backward = staticmethod(al.once_differentiable(backward))
    return MyTanh


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch11_correct_solutions_pass(seed, hidden, capsys):
    check.ch11_hvp(hvp, seed=seed, hidden=hidden)
    check.ch11_hvp(hvp_backward, seed=seed, hidden=hidden)
    check.ch11_hessian(hessian, seed=seed, hidden=hidden)
    check.ch11_hessian(hessian_rows, seed=seed, hidden=hidden)
    check.ch11_newton_step(newton_step, seed=seed, hidden=hidden)
    check.ch11_newton_step(newton_step_inverse, seed=seed, hidden=hidden)
    check.ch11_tanh_function(make_tanh("output"), seed=seed, hidden=hidden)
    check.ch11_tanh_function(make_tanh("input"), seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 8, hidden)


# -- the checkers' references are right ------------------------------------------------------
@pytest.mark.parametrize("make", [lambda rng: ch11.quadratic(*_sym(rng)), lambda rng: ch11.lse_quartic(),
                                  lambda rng: ch11.tanh_net(rng.normal(size=(3, 4)), rng.normal(size=3)),
                                  lambda rng: ch11.rosenbrock(), lambda rng: ch11.exp_minus_linear()])
def test_ch11_exact_hessians_match_finite_differences(make):
    rng = np.random.default_rng(3)
    fn = make(rng)
    n = 2 if fn.name == "the Rosenbrock function" else 4
    x = rng.normal(size=n)
    xv = al.tensor(x, requires_grad=True)
    np.testing.assert_allclose(fn.gradient(x), al.grad(fn(xv), xv)[0].data, rtol=1e-9, atol=1e-10)
    grad_fn = lambda z: al.grad(fn(z), z, create_graph=True)[0]  # noqa: E731
    numerical = numerical_jacobian(grad_fn, (al.tensor(x, requires_grad=True),))
    np.testing.assert_allclose(fn.hessian(x), numerical[0][0], rtol=1e-5, atol=1e-5)


def _sym(rng):
    M = rng.normal(size=(4, 4))
    return (M + M.T) / 2, rng.normal(size=4)


def test_ch11_exact_hessian_matches_pytorch():
    torch = require_torch()
    rng = np.random.default_rng(8)
    W, c, x = rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4)
    fn = ch11.tanh_net(W, c)
    Wt, ct = torch.tensor(W), torch.tensor(c)
    H = torch.autograd.functional.hessian(lambda z: torch.tanh(Wt @ z + ct).sum(), torch.tensor(x))
    np.testing.assert_allclose(fn.hessian(x), H.numpy(), rtol=1e-10, atol=1e-12)
    x2 = rng.normal(size=5)
    H2 = torch.autograd.functional.hessian(lambda z: torch.logsumexp(z, 0) + 0.25 * (z ** 4).sum(),
                                           torch.tensor(x2))
    np.testing.assert_allclose(ch11.lse_quartic().hessian(x2), H2.numpy(), rtol=1e-10, atol=1e-12)


# -- chapter 11: typical mistakes ------------------------------------------------------------
def hvp_no_create_graph(f, x, v):
    xv = al.tensor(x, requires_grad=True)
    g, = al.grad(f(xv), xv)
    return al.grad((g * al.tensor(v)).sum(), xv)[0].numpy()


def hvp_accumulates(f, x, v):
    xv = al.tensor(x, requires_grad=True)
    f(xv).backward(create_graph=True)
    (xv.grad * al.tensor(v)).sum().backward()
    return xv.grad.data


def hvp_gradient(f, x, v):
    xv = al.tensor(x, requires_grad=True)
    return al.grad(f(xv), xv)[0].numpy()


def hvp_in_place(f, x, v):
    out = hvp(f, x, v)
    x += 0.0 * x + 1e-3
    return out


def hvp_returns_none(f, x, v):
    hvp(f, x, v)


@pytest.mark.parametrize("wrong,words", [
    (hvp_no_create_graph, "create_graph=True"),
    (hvp_accumulates, "gradient + H v"),
    (hvp_gradient, "You returned the gradient of f"),
    (hvp_in_place, "changed x or v in place"),
    (hvp_returns_none, "return"),
])
def test_ch11_hvp_rejects_typical_mistakes(wrong, words):
    message = failure(check.ch11_hvp, wrong)
    assert message.startswith("Exercise ch11-hvp failed") and words in message, message


def hessian_outer(f, x):
    xv = al.tensor(x, requires_grad=True)
    g = al.grad(f(xv), xv)[0].data
    return np.outer(g, g)


def hessian_diagonal(f, x):
    return np.diag(np.diag(hessian(f, x)))


def hessian_vector(f, x):
    return np.diag(hessian(f, x))


@pytest.mark.parametrize("wrong,words", [
    (hessian_outer, "outer product"),
    (hessian_diagonal, "Only the diagonal"),
    (hessian_vector, "shape"),
])
def test_ch11_hessian_rejects_typical_mistakes(wrong, words):
    message = failure(check.ch11_hessian, wrong)
    assert message.startswith("Exercise ch11-hessian failed") and words in message, message


def _grad_np(f, x):
    xv = al.tensor(x, requires_grad=True)
    return al.grad(f(xv), xv)[0].data


@pytest.mark.parametrize("wrong,words", [
    (lambda f, x: x - _grad_np(f, x), "gradient-descent step"),
    (lambda f, x: x + np.linalg.solve(hessian(f, x), _grad_np(f, x)), "uphill"),
    (lambda f, x: x - hessian(f, x) @ _grad_np(f, x), "multiplied the gradient by H"),
    (lambda f, x: x - _grad_np(f, x) / np.diag(hessian(f, x)), "diagonal"),
])
def test_ch11_newton_step_rejects_typical_mistakes(wrong, words):
    message = failure(check.ch11_newton_step, wrong)
    assert message.startswith("Exercise ch11-newton-step failed") and words in message, message


def test_ch11_newton_step_must_not_change_x():
    def in_place(f, x):
        x -= np.linalg.solve(hessian(f, x), _grad_np(f, x))
        return x
    assert "changed x in place" in failure(check.ch11_newton_step, in_place)


@pytest.mark.parametrize("rule,once,words", [
    ("numpy", False, "has no grad_fn"),
    ("once", True, "once_differentiable"),
    ("copy", False, "ctx.saved_tensors"),
    ("wrong", False, "1 − tanh²"),
])
def test_ch11_tanh_function_rejects_typical_mistakes(rule, once, words):
    message = failure(check.ch11_tanh_function, make_tanh(rule, once))
    assert message.startswith("Exercise ch11-tanh-function failed") and words in message, message


@pytest.mark.parametrize("rule", ["fresh", "fresh_leaf"])
def test_ch11_tanh_function_names_a_saved_copy_of_the_output(rule):
    """Saving al.Variable(y) instead of y passes the first derivative; the hint must name the cut
    (a new leaf, the path through y lost), not tell a learner who used Variable operations to use them."""
    message = failure(check.ch11_tanh_function, make_tanh(rule))
    assert "first derivative on a (5,) input" not in message
    assert "new leaf" in message and "path through y" in message, message
    assert "Write backward with Variable operations" not in message, message


def test_ch11_tanh_function_rejects_an_instance_or_apply():
    assert "not a subclass of al.Function" in failure(check.ch11_tanh_function, make_tanh().apply)


def test_ch11_stubs_are_reported_as_not_done():
    def stub(*args):
        raise NotImplementedError("Exercise ch11-hvp: write your code here, then run the check cell below")

    with pytest.raises(NotImplementedError, match="ch11-hvp is not done yet"):
        check.ch11_hvp(stub)
    with pytest.raises(NotImplementedError, match="uses exercise ch11-hvp"):
        check.ch11_hessian(stub)
    with pytest.raises(NotImplementedError, match="uses exercise ch11-hvp"):
        check.ch11_newton_step(stub)


# == chapter 12: correct solutions ===========================================================
def log_cosh(r):
    a = np.abs(r)
    near_zero = np.log1p(2 * np.sinh(np.minimum(a, 1.0) / 2) ** 2)
    return np.where(a < 1.0, near_zero, a + np.log1p(np.exp(-2 * a)) - np.log(2.0))


def log_cosh_series(r):
    """Another correct route: the Taylor series r²/2 − r⁴/12 + r⁶/45 − 17 r⁸/2520 near 0, logaddexp
    elsewhere (at |r| = 0.02 both are within 1e-12)."""
    a = np.abs(r)
    s = np.minimum(a, 0.02)
    series = s ** 2 / 2 - s ** 4 / 12 + s ** 6 / 45 - 17 * s ** 8 / 2520
    return np.where(a < 0.02, series, np.logaddexp(a, -a) - np.log(2.0))


def bakery_loss_np(y, t, alpha=3.0, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"unknown reduction {reduction!r}")
    if np.shape(y) != np.shape(t):
        raise ValueError(f"shapes differ: {np.shape(y)} and {np.shape(t)}")
    r = y - t
    per_item = np.where(r < 0, alpha, 1.0) * log_cosh(r)
    if reduction == "none":
        return per_item
    return per_item.sum() if reduction == "sum" else per_item.mean()


def make_bakery(rule="variable"):
    class BakeryLoss(al.Function):
        @staticmethod
        def forward(ctx, y, t, alpha=3.0, reduction="mean"):
            ctx.save_for_backward(y, t)
            ctx.alpha, ctx.reduction = alpha, reduction
            return al.Variable(bakery_loss_np(y.data, t.data, alpha, reduction))

        @staticmethod
        def backward(ctx, grad_output):
            y, t = ctx.saved_tensors
            if rule == "variable":
                r = y - t
                g = al.where(r < 0, ctx.alpha, 1.0) * r.tanh() * grad_output
                g = g / r.size if ctx.reduction == "mean" else g
                return g, -g, None, None
            r = y.data - t.data
            w = np.where(r < 0, ctx.alpha, 1.0)
            go = grad_output.data
            n = r.size if ctx.reduction == "mean" else 1
            g = {"numpy": lambda: w * np.tanh(r) * go / n,
                 "t_sign": lambda: w * np.tanh(r) * go / n,
                 "no_mean": lambda: w * np.tanh(r) * go,
                 "no_grad_output": lambda: w * np.tanh(r) / n,
                 "sign": lambda: w * np.sign(r) * go / n,
                 "swapped": lambda: np.where(r > 0, ctx.alpha, 1.0) * np.tanh(r) * go / n,
                 "exp": lambda: w * (np.exp(r) - np.exp(-r)) / (np.exp(r) + np.exp(-r)) * go / n}[rule]()
            if rule == "t_sign":
                return g, g, None, None
            return g, -g, None, None
    return BakeryLoss


def train_step(model, optimizer, X, t):
    optimizer.zero_grad()
    loss = make_bakery().apply(model(X), t, 3.0, "mean")
    loss.backward()
    optimizer.step()
    return loss.item()


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch12_correct_solutions_pass(seed, hidden, capsys):
    check.ch12_log_cosh(log_cosh, seed=seed, hidden=hidden)
    check.ch12_log_cosh(log_cosh_series, seed=seed, hidden=hidden)
    check.ch12_loss_forward(bakery_loss_np, seed=seed, hidden=hidden)
    check.ch12_bakery_function(make_bakery("variable"), seed=seed, hidden=hidden)
    check.ch12_bakery_function(make_bakery("numpy"), seed=seed, hidden=hidden)
    check.ch12_train_step(train_step, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 6, hidden)


def test_ch12_references_agree_with_the_engine_and_by_hand():
    rng = np.random.default_rng(4)
    y, t = rng.normal(size=(3, 4)) * 3, rng.normal(size=(3, 4)) * 3
    # log(cosh y) itself loses digits near 0 (cosh y rounds near 1), hence rtol 1e-10 here
    np.testing.assert_allclose(ch12.log_cosh_reference(y), np.log(np.cosh(y)), rtol=1e-10)
    for reduction in ("mean", "sum", "none"):
        yv = al.tensor(y, requires_grad=True)
        loss = ch12.bakery_loss_composite(yv, al.tensor(t), 2.5, reduction)
        np.testing.assert_allclose(loss.data, ch12.bakery_loss_reference(y, t, 2.5, reduction), rtol=1e-12)
        if reduction != "none":
            loss.backward()
            np.testing.assert_allclose(yv.grad.data, ch12.bakery_loss_gradient(y, t, 2.5, reduction),
                                       rtol=1e-10, atol=1e-14)


def test_ch12_log_cosh_reference_is_accurate_from_tiny_to_huge():
    """Against 60-digit arithmetic: relative error near rounding for tiny, moderate and huge |r|."""
    mpmath = pytest.importorskip("mpmath")
    r = np.array([1e-12, 1e-8, 1e-4, 0.03, 0.5, 0.999, 1.0, 1.001, 3.0, 20.0, 50.0, 711.0, 1e5])
    r = np.concatenate([r, -r])
    with mpmath.workdps(60):
        exact = np.array([float(mpmath.log(mpmath.cosh(mpmath.mpf(float(v))))) for v in r])
    np.testing.assert_allclose(ch12.log_cosh_reference(r), exact, rtol=2e-15, atol=0)


def test_ch12_reference_matches_pytorch():
    torch = require_torch()
    rng = np.random.default_rng(5)
    y, t = rng.normal(size=7) * 4, rng.normal(size=7) * 4
    yt = torch.tensor(y, requires_grad=True)
    r = yt - torch.tensor(t)
    loss = (torch.where(r < 0, 3.0, 1.0) * (torch.logaddexp(r, -r) - np.log(2.0))).mean()
    loss.backward()
    np.testing.assert_allclose(ch12.bakery_loss_reference(y, t), loss.item(), rtol=1e-12)
    np.testing.assert_allclose(ch12.bakery_loss_gradient(y, t), yt.grad.numpy(), rtol=1e-10)


# -- chapter 12: typical mistakes ------------------------------------------------------------
@pytest.mark.parametrize("wrong,words", [
    (lambda r: np.log(np.cosh(r)), "numpy warned"),
    (lambda r: np.abs(r) + np.log1p(np.exp(-2 * np.abs(r))), "off by log 2"),
    (lambda r: r + np.log1p(np.exp(-2 * r)) - np.log(2.0), "numpy warned"),
    (lambda r: np.where(np.abs(r) > 20, np.abs(r) - np.log(2.0), np.log(np.cosh(r))), "numpy warned"),
    (lambda r: np.log(np.cosh(np.clip(r, -700, 700))), "log cosh"),
    # right for large |r|, but cancels near 0 (122 % off at r = 1e-8)
    (lambda r: np.abs(r) + np.log1p(np.exp(-2 * np.abs(r))) - np.log(2.0), "Cancellation"),
    (lambda r: np.logaddexp(r, -r) - np.log(2.0), "Cancellation"),
    (lambda r: np.log(np.cosh(np.clip(r, -20, 20))) + np.maximum(np.abs(r) - 20, 0), "Cancellation"),
    # the two branches combined, but the sinh of huge |r| overflows in the branch not taken
    (lambda r: np.where(np.abs(r) < 1, np.log1p(2 * np.sinh(r / 2) ** 2),
                        np.abs(r) + np.log1p(np.exp(-2 * np.abs(r))) - np.log(2.0)), "both of its branches"),
])
def test_ch12_log_cosh_rejects_typical_mistakes(wrong, words):
    message = failure(check.ch12_log_cosh, wrong)
    assert message.startswith("Exercise ch12-log-cosh failed") and words in message, message


def test_ch12_log_cosh_must_not_change_its_input():
    def in_place(r):
        np.abs(r, out=r)
        return log_cosh(r)
    assert "changed its input in place" in failure(check.ch12_log_cosh, in_place)


def _forward_variant(kind):
    def fn(y, t, alpha=3.0, reduction="mean"):
        if kind == "broadcasts":
            r = y - t
        else:
            if reduction not in ("mean", "sum", "none"):
                raise ValueError(reduction)
            if np.shape(y) != np.shape(t):
                raise ValueError("shapes")
            r = (t - y) if kind == "swapped" else y - t
        w = np.ones_like(r) if kind == "unweighted" else np.where(r < 0, alpha, 1.0)
        per_item = w * log_cosh(r)
        if kind == "mean_is_sum" and reduction == "mean":
            return per_item.sum()
        if reduction == "none":
            return per_item
        return per_item.sum() if reduction == "sum" else per_item.mean()
    return fn


@pytest.mark.parametrize("kind,words", [
    ("swapped", "wrong side"),
    ("unweighted", "weight 1"),
    ("mean_is_sum", "divides by the number"),
    ("broadcasts", "ValueError"),
])
def test_ch12_loss_forward_rejects_typical_mistakes(kind, words):
    message = failure(check.ch12_loss_forward, _forward_variant(kind))
    assert message.startswith("Exercise ch12-loss-forward failed") and words in message, message


@pytest.mark.parametrize("rule,words", [
    ("no_mean", "Divide by the number of elements"),
    ("no_grad_output", "grad_output"),
    ("sign", "tanh r, not sign r"),
    ("swapped", "wrong side"),
    ("t_sign", "dL/dt = −dL/dy"),
    ("exp", "numpy warned"),
])
def test_ch12_bakery_function_rejects_typical_mistakes(rule, words):
    message = failure(check.ch12_bakery_function, make_bakery(rule))
    assert message.startswith("Exercise ch12-bakery-function failed") and words in message, message


def test_ch12_bakery_function_with_defaults_only_is_reported():
    """A backward returning only two gradients still passes on autograd_lab, whose engine (as
    PyTorch's) accepts fewer gradients than inputs when the rest would be None."""
    base = make_bakery()

    class TwoGrads(base):
        @staticmethod
        def backward(ctx, grad_output):
            return base.backward(ctx, grad_output)[:2]
    check.ch12_bakery_function(TwoGrads)


def _step_variant(kind):
    def step(model, optimizer, X, t):
        if kind != "no_zero":
            optimizer.zero_grad()
        loss = make_bakery().apply(model(X), t, 3.0, "mean")
        loss.backward()
        if kind != "no_step":
            optimizer.step()
        if kind == "after":
            return make_bakery().apply(model(X), t, 3.0, "mean").item()
        return loss.item()
    return step


@pytest.mark.parametrize("kind,words", [
    ("no_zero", "zero_grad"),
    ("no_step", "did not change"),
    ("after", "after the update"),
])
def test_ch12_train_step_rejects_typical_mistakes(kind, words):
    message = failure(check.ch12_train_step, _step_variant(kind))
    assert message.startswith("Exercise ch12-train-step failed") and words in message, message


def test_ch12_stubs_are_reported_as_not_done():
    def stub(*args, **kwargs):
        raise NotImplementedError("Exercise ch12-log-cosh: write your code here, then run the check cell below")

    with pytest.raises(NotImplementedError, match="ch12-log-cosh is not done yet"):
        check.ch12_log_cosh(stub)
    with pytest.raises(NotImplementedError, match="uses exercise ch12-log-cosh"):
        check.ch12_loss_forward(stub)
    with pytest.raises(NotImplementedError, match="uses exercise ch12-log-cosh"):
        check.ch12_train_step(stub)
