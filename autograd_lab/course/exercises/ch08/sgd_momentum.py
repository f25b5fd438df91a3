"""Check ``SGDMomentum(params, lr, momentum=0.0, weight_decay=0.0)`` with ``step()`` and
``zero_grad()``, step by step against ``autograd_lab.optim.SGD`` (PyTorch's rule:
g += wd * p; b = g on the first step, else b = momentum * b + g; p -= lr * b)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from . import _optim as optim
from ._shared import call, case, class_name, put_class_name, seen
from .messages import HINTS

ID = "ch08-sgd-momentum"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("an average as momentum", ("                if self.momentum != 0:\n",
                                       "                if self.momentum != 0:\n"
                                       "                    d = (1 - self.momentum) * d\n"),
            None, "sgd.ema"),
    Mistake("no buffer kept", ("buf = state.get(\"momentum_buffer\")", "buf = None"), None,
            "sgd.no-memory"),
    Mistake("weight decay ignored", ("                    d = d + self.weight_decay * p.data\n",
                                     "                    pass\n"), None, "sgd.no-wd"),
    Mistake("rebinds the parameter", ("p.data -= self.lr * d", "p = p - self.lr * d"), None,
            "optim.unchanged"),
)

SKIP = "a parameter whose grad is None is skipped (momentum=0.9)"
GENERATOR = "params given as a generator (like model.parameters())"


def cases(seed: int, hidden: bool) -> list[tuple[str, dict[str, Any], list[np.ndarray],
                                                  optim.Grads]]:
    """(title, keywords, start data, gradients of each step): the same from the same seed."""
    rng = np.random.default_rng(seed)
    configs: list[tuple[str, dict[str, Any], int]] = [
        ("lr=0.1 without momentum, 1 step", dict(lr=0.1), 1),
        ("momentum=0.9, 5 steps", dict(lr=0.05, momentum=0.9), 5),
        ("momentum=0.5 and weight_decay=0.1, 4 steps",
         dict(lr=0.1, momentum=0.5, weight_decay=0.1), 4)]
    if hidden:
        configs += [("weight_decay=0.2 without momentum, 3 steps",
                     dict(lr=0.2, weight_decay=0.2), 3),
                    ("random lr and momentum, 6 steps",
                     dict(lr=float(np.round(rng.uniform(0.01, 0.2), 3)),
                          momentum=float(np.round(rng.uniform(0.5, 0.95), 3))), 6)]
    found = []
    for name, kw, steps in configs:
        data = optim.start_data(rng)
        found.append((f"{name}: matches optim.SGD", kw, data, optim.grad_sequence(rng, steps)))
    data = optim.start_data(rng)
    found.append((SKIP, dict(lr=0.1, momentum=0.9), data,
                  optim.grad_sequence(rng, 4, skip=((0, 1), (2, 0)))))
    data = optim.start_data(rng)
    found.append((GENERATOR, dict(lr=0.1, momentum=0.9), data, optim.grad_sequence(rng, 2)))
    return found


def observe(ob: Observer, SGDMomentum: type[Any], *, seed: int, hidden: bool) -> None:
    put_class_name(ob, SGDMomentum)

    def make(params: Any, **kw: Any) -> Any:
        return call(ob, "build", lambda: SGDMomentum(params, **kw))

    for title, kw, data, grads in cases(seed, hidden):
        with case(ob, title):
            ours = optim.parameters(data)
            before = list(ours)
            opt = make((p for p in ours) if title == GENERATOR else ours, **kw)
            optim.observe_steps(ob, opt, ours, grads)
            optim.observe_in_place(ob, ours, before)
    optim.observe_zero_grad(ob, lambda ps: make(ps, lr=0.1, momentum=0.9))


def _simulations(start: list[np.ndarray], lr: float, momentum: float, wd: float
                 ) -> Callable[[optim.Grads], list[tuple[list, str]]]:
    def run(grads: optim.Grads) -> list[tuple[list, str]]:
        out = []
        for kind in ("ema", "no-memory", "wd-after", "no-wd"):
            params = [s.copy() for s in start]
            bufs: list[np.ndarray | None] = [None] * len(params)
            for step_grads in grads:
                for i, g in enumerate(step_grads):
                    if g is None:
                        continue
                    p = params[i]
                    d = g if kind in ("wd-after", "no-wd") else g + wd * p
                    if momentum:
                        b = bufs[i]
                        if b is None or kind == "no-memory":
                            bufs[i] = d.copy() if kind != "ema" else (1 - momentum) * d
                        else:
                            bufs[i] = momentum * b + ((1 - momentum) * d if kind == "ema" else d)
                        d = bufs[i]
                    if kind == "wd-after":
                        d = d + wd * p
                    params[i] = p - lr * d
            out.append((params, HINTS[f"sgd.{kind}"]))
        return out
    return run


def judge(ck: Checker, obs: Observations) -> None:
    al = library()
    name = class_name(ck, obs, "SGD")
    init = HINTS["sgd.init"].format(name=name)
    hint = HINTS["sgd.recipe"]
    for title, kw, data, grads in cases(obs.seed, obs.hidden):
        with ck.case(title):
            got = seen(ck, obs, title)
            got.called("build", f"your {name}", init)
            theirs = optim.parameters(data)
            ref = al.optim.SGD(theirs, **kw)
            if title == SKIP:
                optim.judge_steps(ck, got, ref, theirs, grads, HINTS["sgd.skip"] + hint)
                continue
            sim = None if title == GENERATOR else _simulations(
                data, kw["lr"], kw.get("momentum", 0.0), kw.get("weight_decay", 0.0))
            optim.judge_steps(ck, got, ref, theirs, grads, hint, sim)
            if title != GENERATOR:
                optim.judge_in_place(ck, got)
    with ck.case(optim.ZERO_GRAD):
        got = seen(ck, obs, optim.ZERO_GRAD)
        got.called("build", f"your {name}", init)
        optim.judge_zero_grad(ck, got)
    ck.done()
