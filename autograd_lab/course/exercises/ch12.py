"""Checkers for chapter 12, the capstone: the bakery loss as a Function.

The loss (from chapter 00): with the residual r = y − t (forecast minus demand),

    L = reduce( w · log cosh(r) ),   w = alpha where r < 0 (too few baked), 1 elsewhere,

reduced by 'mean' (default), 'sum' or 'none'. The checkers compare with a numpy reference
(``np.logaddexp``, stable for every r) and with the engine's gradient of the same formula
composed from Variable operations.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from autograd_lab import Variable, tensor, where
from ._parts import Parts
from ._common import Checker, grad_data
from ._common import library_under_test as _library_of

__all__ = ["log_cosh_reference", "bakery_loss_reference", "bakery_loss_composite",
           "ch12_log_cosh", "ch12_loss_forward", "ch12_bakery_function", "ch12_train_step",
           "ch12_pinball", "mygrad_capstone"]

LOG2 = float(np.log(2.0))


PARTS = {"ch12-pinball": ("values", "gradients")}
"""The pinball loss is scored in two parts, as the chapter's rubric says: its values and its
gradients (:mod:`autograd_lab.course.exercises._parts`)."""


def log_cosh_reference(r: np.ndarray) -> np.ndarray:
    """log cosh r to a few units in the last place for every finite r.

    Near 0 it is log1p(2 sinh²(r/2)) (cosh r = 1 + 2 sinh²(r/2): no subtraction, so no
    cancellation); from |r| = 1 on it is |r| + log1p(e^(−2|r|)) − log 2, which cannot overflow.
    """
    a = np.abs(np.asarray(r, dtype=np.float64))
    near_zero = np.log1p(2 * np.sinh(np.minimum(a, 1.0) / 2) ** 2)
    far = a + np.log1p(np.exp(-2 * a)) - LOG2
    return np.where(a < 1.0, near_zero, far)


def bakery_loss_reference(y: np.ndarray, t: np.ndarray, alpha: float = 3.0,
                          reduction: str = "mean") -> np.ndarray:
    """The bakery loss in numpy (the checkers' reference)."""
    r = np.asarray(y, dtype=np.float64) - np.asarray(t, dtype=np.float64)
    per_item = np.where(r < 0, alpha, 1.0) * log_cosh_reference(r)
    if reduction == "none":
        return per_item
    return np.asarray(per_item.sum() if reduction == "sum" else per_item.mean())


def bakery_loss_gradient(y: np.ndarray, t: np.ndarray, alpha: float = 3.0,
                         reduction: str = "mean") -> np.ndarray:
    """dL/dy for reduction 'mean' or 'sum' (for 'none': the elementwise derivative)."""
    r = np.asarray(y, dtype=np.float64) - np.asarray(t, dtype=np.float64)
    g = np.where(r < 0, alpha, 1.0) * np.tanh(r)
    return g / r.size if reduction == "mean" else g


def bakery_loss_composite(y: Variable, t: Variable, alpha: float = 3.0,
                          reduction: str = "mean") -> Variable:
    """The same loss composed from Variable operations, so the engine derives its gradient.

    Stable for |r| up to about 700 only (cosh overflows beyond)."""
    r = y - t
    per_item = where(r < 0, alpha, 1.0) * ((r.exp() + (-r).exp()) / 2).log()
    if reduction == "none":
        return per_item
    return per_item.sum() if reduction == "sum" else per_item.mean()


def _overflow_free(ck: Checker, fn: Callable[..., Any], *args: Any, hint: str, **kwargs: Any) -> Any:
    """Call ``fn``, failing if numpy warns (overflow, invalid value, divide by zero)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            return fn(*args, **kwargs)
        except RuntimeWarning as warning:
            raise ck.error(f"numpy warned: {warning}.", hint=hint) from None


def _number(ck: Checker, got: Any, what: str) -> Any:
    if isinstance(got, Variable):
        return got.data
    if got is None:
        ck.fail(f"the {what} is None.", hint="Did you forget the `return` statement?")
    return got


# -- ch12-log-cosh ---------------------------------------------------------------------------
_STABLE_HINT = ("cosh(r) overflows for |r| > 710 (and sinh(r/2) for |r| > 1420). For large |r| use "
                "log cosh r = |r| + log(1 + exp(−2|r|)) − log 2 (np.log1p for the middle term): "
                "exp(−2|r|) is at most 1, so nothing overflows. np.where computes both of its "
                "branches for every element, so give a branch that would overflow only arguments "
                "it can take (e.g. np.minimum(|r|, 1)).")
_TINY_HINT = ("Cancellation: near 0, log cosh r ≈ r²/2 is far smaller than log 2, and "
              "|r| + log1p(exp(−2|r|)) − log 2 gets it by subtracting numbers close to log 2 "
              "(log(cosh r) by taking the log of a number that rounds to 1), so what is left is "
              "rounding noise. Near 0 use cosh r = 1 + 2 sinh²(r/2): log cosh r = "
              "log1p(2 sinh²(r/2)) has no subtraction. Keep the |r| form for large |r|.")


def ch12_log_cosh(log_cosh: Callable[[np.ndarray], np.ndarray], *, seed: int = 0,
                  hidden: bool = False) -> None:
    """Check ``log_cosh(r)``: log(cosh(r)) elementwise for a numpy array ``r``, accurate and
    without overflow (or numpy warnings) for any finite r; returns an array of r's shape."""
    ck = Checker("ch12-log-cosh", seed=seed, hidden=hidden)
    rng = ck.rng
    shapes = [(7,), (3, 4)] + ([(2, 2, 5), (1,)] if hidden else [])
    for shape in shapes:
        with ck.case(f"moderate values, shape {shape}"):
            r = np.round(rng.uniform(-5, 5, size=shape), 4)
            r0 = r.copy()
            got = _number(ck, ck.call(log_cosh, r), "result")
            ck.check(np.array_equal(r, r0), "log_cosh changed its input in place.",
                     hint="Compute new arrays (np.abs(r), ...) instead of writing into r.")
            ck.close(got, log_cosh_reference(r), atol=1e-12, rtol=1e-10, what="log cosh",
                     mistakes=[(np.abs(r) + np.log1p(np.exp(-2 * np.abs(r))),
                                "You are off by log 2 everywhere: cosh r = (eʳ + e⁻ʳ)/2, so subtract "
                                "log 2.")],
                     hint=_STABLE_HINT)
    big = [50.0, -50.0, 800.0, -800.0, 1e6, -1e300] + ([3e5, -711.0] if hidden else [])
    with ck.case("huge |r|: no overflow, no warning, |r| - log 2"):
        r = np.array(big)
        got = _number(ck, _overflow_free(ck, log_cosh, r, hint=_STABLE_HINT), "result")
        ck.check(bool(np.all(np.isfinite(np.asarray(got, dtype=float)))),
                 "log_cosh returned inf or nan for a large |r|.", expected=log_cosh_reference(r), received=got, hint=_STABLE_HINT)
        ck.close(got, log_cosh_reference(r), atol=1e-9, rtol=1e-12, what="log cosh", hint=_STABLE_HINT)
    with ck.case("log cosh(0) = 0, and tiny r give r²/2 to 12 digits"):
        r = np.array([0.0, 1e-8, -1e-8, 1e-12, -1e-12, 1e-4, -3e-3])
        got = _number(ck, ck.call(log_cosh, r), "result")
        a = np.abs(r)
        ck.close(got, log_cosh_reference(r), atol=1e-300, rtol=1e-12, what="log cosh",
                 mistakes=[(a + np.log1p(np.exp(-2 * a)) - LOG2, _TINY_HINT),
                           (np.log(np.cosh(r)), _TINY_HINT)],
                 hint=_TINY_HINT)
    with ck.case("log cosh is even: log_cosh(-r) = log_cosh(r)"):
        r = np.round(rng.uniform(0, 30, size=6), 3)
        plus = np.asarray(_number(ck, ck.call(log_cosh, r), "result"), dtype=float)
        minus = np.asarray(_number(ck, ck.call(log_cosh, -r), "result"), dtype=float)
        ck.close(minus, plus, atol=1e-12, what="log_cosh(-r)", hint="Use |r|: cosh(-r) = cosh(r).")
    ck.done()


# -- ch12-loss-forward -------------------------------------------------------------------------
_WEIGHT_HINT = ("The residual is r = y − t (forecast minus demand). Baking too few means y < t, "
                "so r < 0 gets the weight alpha; r ≥ 0 gets weight 1.")


def _forward_mistakes(y: np.ndarray, t: np.ndarray, alpha: float, reduction: str) -> list:
    r = y - t
    lc = log_cosh_reference(r)
    out = []

    def reduce(a: np.ndarray) -> np.ndarray:
        return a if reduction == "none" else np.asarray(a.sum() if reduction == "sum" else a.mean())
    out.append((reduce(np.where(r > 0, alpha, 1.0) * lc), "The weights are on the wrong side. "
                + _WEIGHT_HINT))
    out.append((reduce(lc), "Every residual has weight 1: multiply by alpha where r < 0."))
    if reduction == "mean":
        out.append((reduce(np.where(r < 0, alpha, 1.0) * lc) * r.size, "You summed; "
                    "reduction='mean' divides by the number of elements."))
    if reduction == "sum":
        out.append((np.asarray((np.where(r < 0, alpha, 1.0) * lc).mean()), "You took the mean; "
                    "reduction='sum' adds the elements up."))
    return out


def ch12_loss_forward(bakery_loss_np: Callable[..., Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``bakery_loss_np(y, t, alpha=3.0, reduction="mean")`` on numpy arrays: the weighted
    log cosh of y − t, reduced by 'mean', 'sum' or 'none'; ValueError for an unknown reduction
    or for y and t of different shapes."""
    ck = Checker("ch12-loss-forward", seed=seed, hidden=hidden)
    rng = ck.rng
    configs = [((6,), 3.0, "mean"), ((4, 3), 3.0, "sum"), ((5,), 3.0, "none"), ((2, 3), 10.0, "mean")]
    if hidden:
        configs += [((3, 2, 2), 0.5, "none"), ((9,), 1.0, "sum"), ((1,), 3.0, "mean")]
    for shape, alpha, reduction in configs:
        with ck.case(f"shape {shape}, alpha={alpha:g}, reduction={reduction!r}"):
            y = np.round(rng.uniform(5, 15, size=shape), 3)
            t = np.round(rng.uniform(5, 15, size=shape), 3)
            got = _number(ck, ck.call(bakery_loss_np, y.copy(), t.copy(), alpha=alpha, reduction=reduction),
                          "loss")
            ck.close(got, bakery_loss_reference(y, t, alpha, reduction), atol=1e-10, rtol=1e-9,
                     what="loss", hint=_WEIGHT_HINT, mistakes=_forward_mistakes(y, t, alpha, reduction))
    with ck.case("alpha and reduction have defaults 3.0 and 'mean'"):
        y, t = np.array([8.0, 12.0, 10.0]), np.array([10.0, 11.0, 10.0])
        got = _number(ck, ck.call(bakery_loss_np, y, t, hint="Give the parameters defaults: "
                                  "def bakery_loss_np(y, t, alpha=3.0, reduction='mean')."), "loss")
        ck.close(got, bakery_loss_reference(y, t), atol=1e-12, what="loss", hint=_WEIGHT_HINT,
                 mistakes=_forward_mistakes(y, t, 3.0, "mean"))
    with ck.case("huge residuals give finite losses"):
        y = np.array([0.0, 2000.0, 100.0, 1e5])
        t = np.array([1000.0, 0.0, 100.0, 0.0])
        got = _number(ck, _overflow_free(ck, bakery_loss_np, y, t, reduction="none",
                                         hint="Use your stable log_cosh. " + _STABLE_HINT), "loss")
        ck.close(got, bakery_loss_reference(y, t, 3.0, "none"), atol=1e-9, rtol=1e-12, what="losses",
                 hint=_STABLE_HINT)
    with ck.case("an unknown reduction raises ValueError"):
        y, t = np.ones(3), np.zeros(3)
        ck.raises(ValueError, bakery_loss_np, y, t, reduction="average",
                  hint="Accept 'mean', 'sum' and 'none'; raise ValueError(...) naming them otherwise.")
    with ck.case("y and t of different shapes raise ValueError (no silent broadcasting)"):
        y, t = np.ones((4, 1)), np.zeros(4)
        ck.raises(ValueError, bakery_loss_np, y, t,
                  hint="(4, 1) − (4,) broadcasts to (4, 4): sixteen residuals instead of four. Compare "
                       "y.shape with t.shape and raise ValueError naming both.")
    ck.done()


# -- ch12-bakery-function ----------------------------------------------------------------------
_BACKWARD_HINT = ("d/dr log cosh r = tanh r, so dL/dy = w · tanh(r) (divided by the number of "
                  "elements for 'mean'), times grad_output; dL/dt = −dL/dy. Return one gradient per "
                  "forward argument: (grad_y, grad_t, None, None).")




def _is_function(ck: Checker, cls: Any, lib: SimpleNamespace, name: str = "BakeryLoss") -> None:
    ck.check(isinstance(cls, type) and issubclass(cls, lib.Function), f"{name} is not a "
             f"subclass of {lib.name}.Function.", expected=f"class {name}({lib.name}.Function)",
             received=cls, hint="Pass the class itself (not an instance, not .apply).")


def _grad_of(ck: Checker, v: Variable, what: str) -> np.ndarray:
    grad = v.grad
    if grad is None:
        ck.fail(f"{what} got no gradient.", hint=_BACKWARD_HINT)
    return grad.data


def ch12_bakery_function(BakeryLoss: type[Any], *, seed: int = 0, hidden: bool = False,
                         pkg: Any = None) -> None:
    """Check ``BakeryLoss.apply(y, t, alpha, reduction)``: forward values as the numpy
    reference, a hand-written backward that agrees with gradcheck and with the engine's gradient of
    the composite formula, finite gradients for huge residuals, and ``apply(y, t)`` with the
    default alpha=3.0 and reduction='mean'.

    ``pkg`` is the library BakeryLoss is written for (the learner's ``mygrad`` in the chapter);
    by default autograd_lab. The references are always autograd_lab's and numpy's."""
    ck = Checker("ch12-bakery-function", seed=seed, hidden=hidden)
    rng = ck.rng
    lib = _library_of(pkg)
    _is_function(ck, BakeryLoss, lib)
    configs = [((6,), 3.0, "mean"), ((3, 4), 3.0, "sum"), ((5,), 2.0, "none")]
    if hidden:
        configs += [((2, 3, 2), 0.5, "mean"), ((7,), 10.0, "sum"), ((4, 2), 1.0, "none")]
    for shape, alpha, reduction in configs:
        with ck.case(f"shape {shape}, alpha={alpha:g}, reduction={reduction!r}: values and gradients"):
            yd = np.round(rng.uniform(5, 15, size=shape), 3)
            td = np.round(rng.uniform(5, 15, size=shape), 3)
            y, t = lib.tensor(yd, requires_grad=True), lib.tensor(td, requires_grad=True)
            loss = ck.call(BakeryLoss.apply, y, t, alpha, reduction)
            ck.check(isinstance(loss, lib.Variable) and loss.grad_fn is not None,
                     "apply did not return a Variable recorded in the graph.", received=loss,
                     hint=f"forward returns {lib.name}.Variable(value); call it as BakeryLoss.apply(y, t, alpha, "
                          "reduction).")
            ck.close(loss.data, bakery_loss_reference(yd, td, alpha, reduction), atol=1e-10, rtol=1e-9,
                     what="loss", hint=_WEIGHT_HINT, mistakes=_forward_mistakes(yd, td, alpha, reduction))
            go = (np.round(rng.uniform(0.5, 2.0, size=shape), 3) if reduction == "none"
                  else np.array(float(np.round(rng.uniform(0.5, 2.0), 3))))
            ck.call(loss.backward, lib.tensor(go), hint=_BACKWARD_HINT)
            # the engine's gradient of the same formula, built from Variable operations
            y2, t2 = tensor(yd, requires_grad=True), tensor(td, requires_grad=True)
            bakery_loss_composite(y2, t2, alpha, reduction).backward(tensor(go))
            want = grad_data(y2)
            gy = _grad_of(ck, y, "y")
            r = yd - td
            n = r.size if reduction == "mean" else 1
            mistakes = [(bakery_loss_gradient(yd, td, alpha, reduction),
                         "Multiply by grad_output (the chain rule)."),
                        (np.where(r < 0, alpha, 1.0) * np.sign(r) * go / n,
                         "The derivative of log cosh r is tanh r, not sign r."),
                        (np.where(r > 0, alpha, 1.0) * np.tanh(r) * go / n,
                         "The weights are on the wrong side. " + _WEIGHT_HINT)]
            if reduction == "mean":
                mistakes.insert(0, (want * r.size, "Divide by the number of elements for "
                                                   "reduction='mean'."))
            else:
                mistakes.insert(0, (want / r.size, "Only reduction='mean' divides by the number of "
                                                   "elements."))
            ck.close(gy, want, atol=1e-10, rtol=1e-8, what="gradient of y", hint=_BACKWARD_HINT,
                     mistakes=mistakes)
            ck.close(_grad_of(ck, t, "t"), -want, atol=1e-10, rtol=1e-8, what="gradient of t",
                     mistakes=[(want, "r = y − t, so dL/dt = −dL/dy.")], hint=_BACKWARD_HINT)
    reductions = ["mean", "none"] + (["sum"] if hidden else [])
    for reduction in reductions:
        with ck.case(f"gradcheck passes for y and t (reduction={reduction!r})"):
            y = lib.tensor(rng.uniform(-3, 3, size=5), requires_grad=True)
            t = lib.tensor(rng.uniform(-3, 3, size=5), requires_grad=True)
            ok = ck.call(lib.gradcheck, lambda a, b: BakeryLoss.apply(a, b, 3.0, reduction), (y, t),
                         hint="Your backward disagrees with central differences; the message above "
                              "names the input (0 is y, 1 is t) and the numbers. " + _BACKWARD_HINT)
            ck.check(ok is True, "gradcheck did not pass.", expected=True, received=ok)
    with ck.case("t without requires_grad: y still gets its gradient"):
        yd, td = np.round(rng.uniform(0, 4, size=4), 3), np.round(rng.uniform(0, 4, size=4), 3)
        y = lib.tensor(yd, requires_grad=True)
        ck.call(ck.call(BakeryLoss.apply, y, lib.tensor(td), 3.0, "sum").backward, hint=_BACKWARD_HINT)
        ck.close(_grad_of(ck, y, "y"), bakery_loss_gradient(yd, td, 3.0, "sum"), atol=1e-12,
                 what="gradient of y", hint=_BACKWARD_HINT)
    with ck.case("huge residuals: finite loss, gradients ±w/n (the composite formula gives nan)"):
        yd = np.array([0.0, 2000.0, 100.0, 1e5] + ([-3e4, 800.0] if hidden else []))
        td = np.array([1000.0, 0.0, 100.0, 0.0] + ([0.0, 0.0] if hidden else []))
        y, t = lib.tensor(yd, requires_grad=True), lib.tensor(td, requires_grad=True)
        loss = _overflow_free(ck, BakeryLoss.apply, y, t, 3.0, "mean", hint=_STABLE_HINT)
        ck.close(loss.data, bakery_loss_reference(yd, td), atol=1e-9, rtol=1e-12, what="loss",
                 hint=_STABLE_HINT)
        _overflow_free(ck, loss.backward, hint="tanh never overflows: use np.tanh(r) (or r.tanh()) in "
                       "backward, not a formula with exp(r).")
        want = bakery_loss_gradient(yd, td)
        ck.close(_grad_of(ck, y, "y"), want, atol=1e-12, what="gradient of y", hint=_BACKWARD_HINT)
        ck.close(_grad_of(ck, t, "t"), -want, atol=1e-12, what="gradient of t", hint=_BACKWARD_HINT)
    with ck.case("apply(y, t) uses the defaults alpha=3.0 and reduction='mean'"):
        yd, td = np.round(rng.uniform(0, 4, size=5), 3), np.round(rng.uniform(0, 4, size=5), 3)
        y = lib.tensor(yd, requires_grad=True)
        default_hint = ("Give forward defaults, forward(ctx, y, t, alpha=3.0, reduction=\"mean\"), "
                        "and let backward return (grad_y, grad_t, None, None): the engine drops "
                        "the surplus trailing Nones when alpha and reduction were left out.")
        loss = ck.call(BakeryLoss.apply, y, lib.tensor(td), hint=default_hint)
        ck.close(loss.data, bakery_loss_reference(yd, td), atol=1e-10, rtol=1e-9,
                 what="loss with the default arguments", hint=default_hint)
        ck.call(loss.backward, hint=default_hint)
        ck.close(_grad_of(ck, y, "y"), bakery_loss_gradient(yd, td), atol=1e-12,
                 what="gradient of y with the default arguments", hint=default_hint)
    ck.done()


# -- ch12-train-step ---------------------------------------------------------------------------
def _regression(ck: Checker, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    X = np.round(ck.rng.normal(size=(n, d)), 3)
    w = np.round(ck.rng.normal(size=(d, 1)), 3)
    t = X @ w + 2.0 + np.round(0.3 * ck.rng.normal(size=(n, 1)), 3)
    return X, t


def ch12_train_step(train_step: Callable[..., float], *, seed: int = 0, hidden: bool = False,
                    pkg: Any = None) -> None:
    """Check ``train_step(model, optimizer, X, t) -> float``: zero the gradients, compute
    BakeryLoss.apply(model(X), t, 3.0, "mean"), backward, optimizer step; return the loss
    before the update. Compared step by step with the engine's version of the same loss.

    ``pkg``: the library the model and optimizer come from (the learner's ``mygrad`` in the
    chapter); by default autograd_lab. The reference run is always autograd_lab's."""
    ck = Checker("ch12-train-step", seed=seed, hidden=hidden)
    from autograd_lab import nn, optim
    lib = _library_of(pkg)
    configs = [(32, 3, 0.5, 8)] + ([(50, 5, 0.3, 12), (10, 1, 1.0, 6)] if hidden else [])
    for n, d, lr, steps in configs:
        X, t = _regression(ck, n, d)
        init = int(ck.rng.integers(1000))
        ref = nn.Linear(d, 1, dtype=np.float64, seed=init)
        assert ref.bias is not None  # a Linear has a bias unless made with bias=False
        if pkg is None:
            model = nn.Linear(d, 1, dtype=np.float64, seed=init)
            opt = optim.SGD(model.parameters(), lr=lr)
        else:                                   # the same start in the package's own Linear
            model = pkg.nn.Linear(d, 1, dtype=np.float64)
            model.weight.data[...] = ref.weight.data
            model.bias.data[...] = ref.bias.data
            opt = pkg.optim.SGD(model.parameters(), lr=lr)
        ref_opt = optim.SGD(ref.parameters(), lr=lr)
        want = []
        for _ in range(steps):
            ref_opt.zero_grad()
            loss = bakery_loss_composite(ref(tensor(X)), tensor(t))
            loss.backward()
            ref_opt.step()
            want.append(float(loss.item()))
        w0 = model.weight.data.copy()
        with ck.case(f"one step on {n} points with {d} features (lr={lr:g})"):
            got = ck.call(train_step, model, opt, lib.tensor(X), lib.tensor(t),
                          hint="Inside: optimizer.zero_grad(); loss = BakeryLoss.apply(model(X), t, "
                               "3.0, 'mean'); "
                               "loss.backward(); optimizer.step(); return loss.item().")
            ck.check(got is not None, "train_step returned None.", expected=want[0],
                     hint="Return the loss as a float: loss.item().")
            ck.close(float(got), want[0], atol=1e-10, rtol=1e-8, what="returned loss",
                     mistakes=[(want[1], "You returned the loss after the update; return the one "
                                         "computed before optimizer.step().")],
                     hint="Return BakeryLoss.apply(model(X), t, 3.0, 'mean') before the update. If "
                          "the values differ, check ch12-bakery-function first.")
            ck.check(not np.allclose(model.weight.data, w0), "the model's weights did not change.",
                     hint="Call loss.backward() and then optimizer.step().")
        with ck.case(f"{steps} steps match gradient descent on the bakery loss, and the loss falls"):
            got_all = [float(got)]
            for k in range(1, steps):
                got_all.append(float(ck.call(train_step, model, opt, lib.tensor(X), lib.tensor(t))))
                ck.close(got_all[-1], want[k], atol=1e-10, rtol=1e-8, what=f"loss of step {k + 1}",
                         hint="Gradients accumulate in .grad across backward calls: call "
                              "optimizer.zero_grad() (or model.zero_grad()) every step, before backward.")
            ck.check(got_all[-1] < got_all[0], "the loss did not fall.", expected=f"below {got_all[0]:.4g}",
                     received=got_all[-1], hint="Step against the gradient: optimizer.step().")
    ck.done()


# -- the open-ended extension: the pinball loss --------------------------------------------------
def pinball_reference(y: np.ndarray, t: np.ndarray, tau: float = 0.75,
                      reduction: str = "mean") -> Any:
    """max(tau · (t − y), (tau − 1) · (t − y)) per item, reduced."""
    u = np.asarray(t, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    per_item = np.maximum(tau * u, (tau - 1) * u)
    if reduction == "none":
        return per_item
    return per_item.sum() if reduction == "sum" else per_item.mean()


def ch12_pinball(PinballLoss: type[Any], *, seed: int = 0, pkg: Any = None) -> None:
    """Check ``PinballLoss.apply(y, t, tau=0.75, reduction="mean")`` in two parts, as the
    chapter's rubric scores it: the values (three reductions, the defaults, an unknown reduction
    refused) and the gradients of y and t (against the derivative, −tau where y < t and 1 − tau
    where y > t, and central differences away from the kink)."""
    ck = Checker("ch12-pinball", seed=seed)
    rng = ck.rng
    lib = _library_of(pkg)
    _is_function(ck, PinballLoss, lib, "PinballLoss")
    hint = ("With u = t − y the loss is tau·u where u ≥ 0 (too few baked) and (tau − 1)·u "
            "elsewhere, so dL/dy = −tau where y < t and 1 − tau where y > t (times grad_output, "
            "divided by n for 'mean'); dL/dt = −dL/dy.")
    settings = [(tau, reduction, np.round(rng.uniform(0, 10, size=7), 3),
                 np.round(rng.uniform(0, 10, size=7), 3))
                for tau, reduction in [(0.75, "mean"), (0.3, "sum"), (0.5, "none")]]
    yd0, td0 = np.round(rng.uniform(0, 4, size=5), 3), np.round(rng.uniform(0, 4, size=5), 3)
    defaults_hint = ("forward(ctx, y, t, tau=0.75, reduction=\"mean\"); backward returns "
                     "(grad_y, grad_t, None, None).")
    parts = Parts(ck)
    with parts.part("values"):
        for tau, reduction, yd, td in settings:
            with ck.case(f"tau={tau:g}, reduction={reduction!r}: the loss"):
                loss = ck.call(PinballLoss.apply, lib.tensor(yd), lib.tensor(td), tau, reduction)
                ck.close(loss.data, pinball_reference(yd, td, tau, reduction), atol=1e-12,
                         what="loss", hint=hint)
        with ck.case("apply(y, t) uses the defaults tau=0.75 and reduction='mean'"):
            loss = ck.call(PinballLoss.apply, lib.tensor(yd0), lib.tensor(td0), hint=defaults_hint)
            ck.close(loss.data, pinball_reference(yd0, td0), atol=1e-12, what="loss with defaults")
        with ck.case("an unknown reduction raises ValueError"):
            ck.raises(ValueError, PinballLoss.apply, lib.tensor(np.ones(2)),
                      lib.tensor(np.ones(2)), 0.75, "average",
                      hint="Accept 'mean', 'sum' and 'none' only, as the bakery loss.")
    with parts.part("gradients"):
        for tau, reduction, yd, td in settings:
            with ck.case(f"tau={tau:g}, reduction={reduction!r}: the gradients of y and t"):
                y, t = lib.tensor(yd, requires_grad=True), lib.tensor(td, requires_grad=True)
                loss = ck.call(PinballLoss.apply, y, t, tau, reduction)
                go = np.round(np.linspace(0.5, 2, num=int(np.prod(loss.shape))), 3).reshape(loss.shape)
                ck.call(loss.backward, lib.tensor(go), hint=hint)
                n = yd.size if reduction == "mean" else 1
                want = np.where(yd < td, -tau, 1 - tau) * go / n
                ck.close(_grad_of(ck, y, "y"), want, atol=1e-12, what="gradient of y", hint=hint)
                ck.close(_grad_of(ck, t, "t"), -want, atol=1e-12, what="gradient of t", hint=hint)
        with ck.case("central differences away from the kink"):
            y = lib.tensor(rng.uniform(-3, 3, size=5), requires_grad=True)
            t = lib.tensor(y.data + rng.choice([-1, 1], size=5) * rng.uniform(0.5, 2, size=5),
                           requires_grad=True)
            ok = ck.call(lib.gradcheck, lambda a, b: PinballLoss.apply(a, b, 0.75, "mean"),
                         (y, t), hint=hint)
            ck.check(ok is True, "the gradient check did not pass.", hint=hint)
        with ck.case("the gradient of y with the defaults"):
            y = lib.tensor(yd0, requires_grad=True)
            loss = ck.call(PinballLoss.apply, y, lib.tensor(td0), hint=defaults_hint)
            ck.call(loss.backward)
            ck.close(_grad_of(ck, y, "y"), np.where(yd0 < td0, -0.75, 0.25) / 5, atol=1e-12,
                     what="gradient of y with defaults", hint=hint)
    parts.done()


# -- the loader's check of the learner's mygrad/capstone.py --------------------------------------
def mygrad_capstone(pkg: Any) -> None:
    """``mygrad.capstone``: log_cosh, bakery_loss_np and BakeryLoss (on mygrad's Function)."""
    cap = pkg.capstone
    ch12_log_cosh(cap.log_cosh)
    ch12_loss_forward(cap.bakery_loss_np)
    ch12_bakery_function(cap.BakeryLoss, pkg=pkg)
