"""Check ``bakery_loss_np(y, t, alpha=3.0, reduction="mean")`` on numpy arrays: the weighted
log cosh of y − t, reduced by 'mean', 'sum' or 'none'; ValueError for an unknown reduction
or for y and t of different shapes."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._observe import expect_raised
from ._shared import bakery_loss_reference, course_names, log_cosh_reference, \
    no_warning, number, quiet
from .messages import HINTS

ID = "ch12-loss-forward"
PARTS: tuple[str, ...] = ()

_WEIGHT = "per_item = np.where(r < 0, alpha, 1.0) * log_cosh(r)"
MISTAKES = (
    Mistake("weights on the wrong side", (_WEIGHT, "per_item = np.where(r > 0, alpha, 1.0) * "
                                                   "log_cosh(r)"), None, "loss.wrong-side"),
    Mistake("no alpha", (_WEIGHT, "per_item = log_cosh(r)"), None, "loss.no-alpha"),
    Mistake("a sum for 'mean'", ("per_item.sum() if reduction == \"sum\" else per_item.mean()",
                                 "per_item.sum()"), None, "loss.summed"),
    Mistake("no default alpha", ("alpha: float = 3.0", "alpha: float"), None, "loss.defaults"),
    Mistake("no shape check", ("if np.shape(y) != np.shape(t):", "if False:"), None,
            "loss.shapes"),
    Mistake("no reduction check", ("if reduction not in (\"mean\", \"sum\", \"none\"):",
                                   "if False:"), None, "loss.reduction"),
)

DEFAULTS = "alpha and reduction have defaults 3.0 and 'mean'"
HUGE = "huge residuals give finite losses"
REDUCTION = "an unknown reduction raises ValueError"
SHAPES = "y and t of different shapes raise ValueError (no silent broadcasting)"
_DEFAULT_Y, _DEFAULT_T = np.array([8.0, 12.0, 10.0]), np.array([10.0, 11.0, 10.0])
_HUGE_Y, _HUGE_T = np.array([0.0, 2000.0, 100.0, 1e5]), np.array([1000.0, 0.0, 100.0, 0.0])


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray, float, str]]:
    rng = np.random.default_rng(seed)
    configs = [((6,), 3.0, "mean"), ((4, 3), 3.0, "sum"), ((5,), 3.0, "none"),
               ((2, 3), 10.0, "mean")]
    if hidden:
        configs += [((3, 2, 2), 0.5, "none"), ((9,), 1.0, "sum"), ((1,), 3.0, "mean")]
    found = []
    for shape, alpha, reduction in configs:
        y = np.round(rng.uniform(5, 15, size=shape), 3)
        t = np.round(rng.uniform(5, 15, size=shape), 3)
        found.append((f"shape {shape}, alpha={alpha:g}, reduction={reduction!r}", y, t, alpha,
                      reduction))
    return found


def observe(ob: Observer, bakery_loss_np: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    with course_names(bakery_loss_np, {"log_cosh": log_cosh_reference}):
        for name, y, t, alpha, reduction in cases(seed, hidden):
            with ob.case(name):
                ob.put("loss", number(bakery_loss_np(y.copy(), t.copy(), alpha=alpha,
                                                     reduction=reduction)))
        with ob.case(DEFAULTS):
            ob.put("loss", number(bakery_loss_np(_DEFAULT_Y.copy(), _DEFAULT_T.copy())))
        with ob.case(HUGE):
            ob.put("loss", number(quiet(ob, "raised", bakery_loss_np, _HUGE_Y.copy(),
                                        _HUGE_T.copy(), reduction="none")))
        with ob.case(REDUCTION):
            ob.put("returned", number(ob.attempt("raised", bakery_loss_np, np.ones(3), np.zeros(3),
                                                 reduction="average")))
        with ob.case(SHAPES):
            ob.put("returned", number(ob.attempt("raised", bakery_loss_np, np.ones((4, 1)),
                                                 np.zeros(4))))


def forward_mistakes(y: np.ndarray, t: np.ndarray, alpha: float, reduction: str) -> list:
    """(value, hint) of the typical wrong losses."""
    r = y - t
    lc = log_cosh_reference(r)

    def reduce(a: np.ndarray) -> np.ndarray:
        return a if reduction == "none" else np.asarray(a.sum() if reduction == "sum"
                                                        else a.mean())
    out = [(reduce(np.where(r > 0, alpha, 1.0) * lc), HINTS["loss.wrong-side"]),
           (reduce(lc), HINTS["loss.no-alpha"])]
    if reduction == "mean":
        out.append((reduce(np.where(r < 0, alpha, 1.0) * lc) * r.size, HINTS["loss.summed"]))
    if reduction == "sum":
        out.append((np.asarray((np.where(r < 0, alpha, 1.0) * lc).mean()),
                    HINTS["loss.averaged"]))
    return out


def judge(ck: Checker, obs: Observations) -> None:
    what = "your bakery_loss_np"
    for name, y, t, alpha, reduction in cases(obs.seed, obs.hidden):
        with ck.case(name):
            got = _loss(ck, obs.case(ck, name, what=what)["loss"])
            ck.close(got, bakery_loss_reference(y, t, alpha, reduction), atol=1e-10, rtol=1e-9,
                     what="loss", hint=HINTS["loss.weight"],
                     mistakes=forward_mistakes(y, t, alpha, reduction))
    with ck.case(DEFAULTS):
        got = _loss(ck, obs.case(ck, DEFAULTS, what=what, hint=HINTS["loss.defaults"])["loss"])
        ck.close(got, bakery_loss_reference(_DEFAULT_Y, _DEFAULT_T), atol=1e-12, what="loss",
                 hint=HINTS["loss.weight"],
                 mistakes=forward_mistakes(_DEFAULT_Y, _DEFAULT_T, 3.0, "mean"))
    with ck.case(HUGE):
        seen = obs.case(ck, HUGE, what=what)
        no_warning(ck, seen["raised"], what, HINTS["loss.stable"])
        ck.close(_loss(ck, seen["loss"]), bakery_loss_reference(_HUGE_Y, _HUGE_T, 3.0, "none"),
                 atol=1e-9, rtol=1e-12, what="losses", hint=HINTS["cosh.stable"])
    for title, hint in ((REDUCTION, "loss.reduction"), (SHAPES, "loss.shapes")):
        with ck.case(title):
            seen = obs.case(ck, title, what=what)
            expect_raised(ck, seen["raised"], seen.get("returned"), "ValueError", what,
                          HINTS[hint])
    ck.done()


def _loss(ck: Checker, got: Any) -> Any:
    if got is None:
        ck.fail("the loss is None.", hint=HINTS["return"])
    return got
