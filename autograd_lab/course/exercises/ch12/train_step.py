"""Check ``train_step(model, optimizer, X, t) -> float``: zero the gradients, compute
BakeryLoss.apply(model(X), t, 3.0, "mean"), backward, optimizer step; return the loss before the
update. Compared step by step with the engine's version of the same loss.

``pkg``: the library the model and optimizer come from (the learner's ``mygrad`` in the
chapter); by default autograd_lab. The reference run is always autograd_lab's."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import tensor

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import bakery_loss_composite, course_bakery_loss, course_names, lib_of
from .messages import HINTS

ID = "ch12-train-step"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no zero_grad", ("    optimizer.zero_grad()\n", ""), None, "step.zero-grad"),
    Mistake("no step", ("    optimizer.step()\n", ""), None, "step.moved"),
    Mistake("the loss after the step", ("return loss.item()",
                                        "return BakeryLoss.apply(model(X), t, 3.0, "
                                        "\"mean\").item()"), None, "step.after"),
    Mistake("no return", ("return loss.item()", "loss.item()"), None, "step.float"),
)


def cases(seed: int, hidden: bool) -> list[tuple[int, int, float, int, np.ndarray, np.ndarray,
                                                  int]]:
    """(n, d, lr, steps, X, t, the model's seed) of each configuration."""
    rng = np.random.default_rng(seed)
    configs = [(32, 3, 0.5, 8)] + ([(50, 5, 0.3, 12), (10, 1, 1.0, 6)] if hidden else [])
    found = []
    for n, d, lr, steps in configs:
        X = np.round(rng.normal(size=(n, d)), 3)
        w = np.round(rng.normal(size=(d, 1)), 3)
        t = X @ w + 2.0 + np.round(0.3 * rng.normal(size=(n, 1)), 3)
        found.append((n, d, lr, steps, X, t, int(rng.integers(1000))))
    return found


def _titles(n: int, d: int, lr: float, steps: int) -> tuple[str, str]:
    return (f"one step on {n} points with {d} features (lr={lr:g})",
            f"{steps} steps match gradient descent on the bakery loss, and the loss falls")


def _model(pkg: Any, d: int, lr: float, init: int) -> tuple[Any, Any]:
    from autograd_lab import nn, optim
    if pkg is None:
        model = nn.Linear(d, 1, dtype=np.float64, seed=init)
        return model, optim.SGD(model.parameters(), lr=lr)
    start = nn.Linear(d, 1, dtype=np.float64, seed=init)   # the same start in pkg's own Linear
    assert start.bias is not None
    model = pkg.nn.Linear(d, 1, dtype=np.float64)
    model.weight.data[...] = start.weight.data
    model.bias.data[...] = start.bias.data
    return model, pkg.optim.SGD(model.parameters(), lr=lr)


def _returned(ob: Observer, key: str, got: Any) -> None:
    ob.put(key, got)
    ob.put(key + " as float", ob.attempt(key + " not a float", float, got))


def observe(ob: Observer, train_step: Callable[..., float], *, seed: int, hidden: bool,
            pkg: Any = None) -> None:
    lib = lib_of(pkg)
    with course_names(train_step, {"BakeryLoss": course_bakery_loss(lib)}):
        for n, d, lr, steps, X, t, init in cases(seed, hidden):
            first, rest = _titles(n, d, lr, steps)
            model, opt = _model(pkg, d, lr, init)
            with ob.case(first):
                ob.put("weight before", np.array(model.weight.data, dtype=np.float64))
                _returned(ob, "loss", train_step(model, opt, lib.tensor(X), lib.tensor(t)))
                ob.put("weight after", np.array(model.weight.data, dtype=np.float64))
            with ob.case(rest):
                for k in range(1, steps):
                    _returned(ob, f"loss {k}", train_step(model, opt, lib.tensor(X),
                                                          lib.tensor(t)))


def _reference(d: int, lr: float, steps: int, X: np.ndarray, t: np.ndarray,
               init: int) -> list[float]:
    from autograd_lab import nn, optim
    ref = nn.Linear(d, 1, dtype=np.float64, seed=init)
    ref_opt = optim.SGD(ref.parameters(), lr=lr)
    want = []
    for _ in range(steps):
        ref_opt.zero_grad()
        loss = bakery_loss_composite(ref(tensor(X)), tensor(t))
        loss.backward()
        ref_opt.step()
        want.append(float(loss.item()))
    return want


def judge(ck: Checker, obs: Observations) -> None:
    what = "your train_step"
    for n, d, lr, steps, X, t, init in cases(obs.seed, obs.hidden):
        first, rest = _titles(n, d, lr, steps)
        want = _reference(d, lr, steps, X, t, init)
        with ck.case(first):
            seen = obs.case(ck, first, what=what, hint=HINTS["step.inside"])
            ck.check(seen["loss"] is not None, "train_step returned None.", expected=want[0],
                     hint=HINTS["step.float"])
            got = _float(ck, seen, "loss")
            ck.close(got, want[0], atol=1e-10, rtol=1e-8, what="returned loss",
                     mistakes=[(want[1], HINTS["step.after"])], hint=HINTS["step.loss"])
            before, after = seen["weight before"], seen["weight after"]
            ck.check(not (np.shape(before) == np.shape(after) and np.allclose(after, before)),
                     "the model's weights did not change.", hint=HINTS["step.moved"])
        with ck.case(rest):
            seen = obs.case(ck, rest, what=what)
            got_all = [got]
            for k in range(1, steps):
                got_all.append(_float(ck, seen, f"loss {k}"))
                ck.close(got_all[-1], want[k], atol=1e-10, rtol=1e-8,
                         what=f"loss of step {k + 1}", hint=HINTS["step.zero-grad"])
            ck.check(got_all[-1] < got_all[0], "the loss did not fall.",
                     expected=f"below {got_all[0]:.4g}", received=got_all[-1],
                     hint=HINTS["step.falls"])
    ck.done()


def _float(ck: Checker, seen: Any, key: str) -> float:
    err = seen[key + " not a float"]
    if err is not None:
        ck.fail("train_step should return a number.", received=getattr(seen[key], "repr",
                                                                         seen[key]),
                hint=HINTS["step.float"])
    return float(seen[key + " as float"])
