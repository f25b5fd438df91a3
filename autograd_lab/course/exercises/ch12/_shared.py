"""What the chapter 12 exercises share: the numpy references of the bakery loss, the library
under test, and the observing of calls that must not make numpy warn or that must raise."""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from autograd_lab import Variable, where

from .._common import Checker, library_under_test, swapped_names
from .._observe import Observer, Raised, raise_learner_error

LOG2 = float(np.log(2.0))


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


def pinball_reference(y: np.ndarray, t: np.ndarray, tau: float = 0.75,
                      reduction: str = "mean") -> Any:
    """max(tau · (t − y), (tau − 1) · (t − y)) per item, reduced."""
    u = np.asarray(t, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    per_item = np.maximum(tau * u, (tau - 1) * u)
    if reduction == "none":
        return per_item
    return per_item.sum() if reduction == "sum" else per_item.mean()


def lib_of(pkg: Any) -> Any:
    """Function, Variable and tensor of the library under test (autograd_lab's by default)."""
    return library_under_test(pkg)


def number(value: Any) -> Any:
    """The data of a Variable of any library, anything else unchanged (kernel side)."""
    return value.data if hasattr(value, "data") and hasattr(value, "grad_fn") else value


def quiet(ob: Observer, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``ob.attempt`` with numpy's warnings (overflow, invalid value, ...) raised as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return ob.attempt(key, fn, *args, **kwargs)


def no_warning(ck: Checker, err: Any, what: str, hint: str) -> None:
    """Fail as the checker did when numpy warned; raise what else the learner's call raised."""
    if err is None:
        return
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("RuntimeWarning"):
        ck.fail(f"numpy warned: {err.message}.", hint=hint)
    raise_learner_error(ck, err, what)


_EPS = 1e-6


def _output_grad(reduction: str, size: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(0.5, 1.5, size=(size,) if reduction == "none" else ())


def observe_differences(ob: Observer, lib: Any, loss_of: Callable[[Any, Any], Any],
                        yd: np.ndarray, td: np.ndarray, reduction: str) -> None:
    """The learner's gradients of y and t for an output gradient g, and its losses with each
    element of y and t moved by ±1e-6: the judge takes the central differences."""
    y, t = lib.tensor(yd.copy(), requires_grad=True), lib.tensor(td.copy(), requires_grad=True)
    loss_of(y, t).backward(lib.tensor(_output_grad(reduction, yd.size)))
    for name, v in (("y", y), ("t", t)):
        ob.put(f"grad of {name}", None if v.grad is None else number(v.grad))
    moved = []
    for which in range(2):
        for i in range(yd.size):
            for step in (_EPS, -_EPS):
                args = [yd.copy(), td.copy()]
                args[which][i] += step
                moved.append(number(loss_of(lib.tensor(args[0]), lib.tensor(args[1]))))
    ob.put("moved losses", moved)


def judge_differences(ck: Checker, seen: Any, yd: np.ndarray, td: np.ndarray, reduction: str,
                      hint: str) -> None:
    """The gradients :func:`observe_differences` saw against central differences of its
    losses (as a gradcheck does)."""
    g = _output_grad(reduction, yd.size)
    moved = seen["moved losses"]
    ck.check(isinstance(moved, list) and len(moved) == 4 * yd.size and all(
        isinstance(v, (np.ndarray, np.generic, float)) and np.shape(v) == g.shape for v in moved),
        f"the losses of the moved inputs are not all of shape {g.shape}.", hint=hint)
    for which, name in enumerate(("y", "t")):
        numeric = np.zeros(yd.size)
        for i in range(yd.size):
            k = 2 * (which * yd.size + i)
            numeric[i] = (float((np.asarray(moved[k]) * g).sum())
                          - float((np.asarray(moved[k + 1]) * g).sum())) / (2 * _EPS)
        grad = seen[f"grad of {name}"]
        analytic = np.zeros(yd.size) if grad is None else grad
        ck.close(analytic, numeric, atol=1e-5, rtol=1e-3,
                 what=f"gradient of input {which} ({name}) against central differences",
                 hint=hint)


def course_bakery_loss(lib: Any) -> type:
    """The course's BakeryLoss as a Function of the library under test (for the check of an
    exercise that uses it: a wrong BakeryLoss costs its own exercise only)."""
    def forward(ctx: Any, y: Any, t: Any, alpha: float = 3.0, reduction: str = "mean") -> Any:
        ctx.course_r = np.asarray(y.data, dtype=np.float64) - np.asarray(t.data, dtype=np.float64)
        ctx.course_alpha, ctx.course_reduction = alpha, reduction
        return lib.Variable(bakery_loss_reference(y.data, t.data, alpha, reduction))

    def backward(ctx: Any, grad_output: Any) -> tuple:
        r = ctx.course_r
        g = np.where(r < 0, ctx.course_alpha, 1.0) * np.tanh(r) * np.asarray(grad_output.data)
        g = g / r.size if ctx.course_reduction == "mean" else g
        return lib.Variable(g), lib.Variable(-g), None, None

    return type("BakeryLoss", (lib.Function,), {"forward": staticmethod(forward),
                                                "backward": staticmethod(backward)})


def bakery_loss_np(y: np.ndarray, t: np.ndarray, alpha: float = 3.0,
                   reduction: str = "mean") -> np.ndarray:
    """The course's bakery_loss_np (exercise ch12-loss-forward)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if np.shape(y) != np.shape(t):
        raise ValueError(f"y and t must have the same shape; got {np.shape(y)} and {np.shape(t)}")
    return bakery_loss_reference(y, t, alpha, reduction)


@contextlib.contextmanager
def course_names(fn: Any, values: dict[str, Any]) -> Iterator[None]:
    """The globals the learner's ``fn`` runs in hold the course's ``values`` for the names they
    define (log_cosh, bakery_loss_np, BakeryLoss): only the exercise under check is the
    learner's. Names they do not define are left alone."""
    ns = getattr(fn, "__globals__", None)
    present = {k: v for k, v in values.items() if isinstance(ns, dict) and k in ns}
    if not present or not isinstance(ns, dict):
        yield
        return
    with swapped_names(ns, present):
        yield
