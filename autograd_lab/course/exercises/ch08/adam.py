"""Check ``MyAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)`` with ``step()`` and
``zero_grad()``, step by step against ``autograd_lab.optim.Adam``: per parameter,
t += 1; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
p -= lr * (m / (1 - b1**t)) / (sqrt(v / (1 - b2**t)) + eps)."""
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

ID = "ch08-adam"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("m not corrected", ("step_size = self.lr / (1 - beta1 ** t)",
                                "step_size = self.lr"), None, "adam.recipe"),
    Mistake("eps inside the root", ("np.sqrt(v) / np.sqrt(1 - beta2 ** t) + self.eps",
                                    "np.sqrt(v / (1 - beta2 ** t) + self.eps)"), None,
            "adam.eps-inside"),
    Mistake("t one ahead", ("t = state[\"step\"]", "t = state[\"step\"] + 1"), None,
            "adam.t-plus-one"),
    Mistake("no correction of v", ("np.sqrt(v) / np.sqrt(1 - beta2 ** t) + self.eps",
                                   "np.sqrt(v) + self.eps"), None, "adam.first-only"),
)

SKIP = "a parameter skipped in a step keeps its own step count t"
SKIP_KW: dict[str, Any] = dict(lr=0.1, betas=(0.5, 0.9), eps=1e-3)


def cases(seed: int, hidden: bool) -> list[tuple[str, dict[str, Any], list[np.ndarray],
                                                  optim.Grads]]:
    """(title, keywords, start data, gradients of each step): the same from the same seed."""
    rng = np.random.default_rng(seed)
    configs: list[tuple[str, dict[str, Any], int]] = [
        ("default hyper-parameters, 1 step", dict(), 1),
        ("lr=0.01, 10 steps", dict(lr=0.01), 10),
        ("betas=(0.5, 0.9) and eps=0.1, 4 steps", dict(lr=0.1, betas=(0.5, 0.9), eps=0.1), 4)]
    if hidden:
        configs += [("betas=(0.8, 0.99) and eps=0.01, 8 steps",
                     dict(lr=0.05, betas=(0.8, 0.99), eps=0.01), 8)]
    found = []
    for name, kw, steps in configs:
        data = optim.start_data(rng)
        found.append((f"{name}: matches optim.Adam", kw, data, optim.grad_sequence(rng, steps)))
    data = optim.start_data(rng)
    found.append((SKIP, SKIP_KW, data, optim.grad_sequence(rng, 4, skip=((0, 1), (1, 1)))))
    return found


def observe(ob: Observer, MyAdam: type[Any], *, seed: int, hidden: bool) -> None:
    put_class_name(ob, MyAdam)

    def make(params: Any, **kw: Any) -> Any:
        return call(ob, "build", lambda: MyAdam(params, **kw))

    for title, kw, data, grads in cases(seed, hidden):
        with case(ob, title):
            ours = optim.parameters(data)
            before = list(ours)
            opt = make(ours, **kw)
            optim.observe_steps(ob, opt, ours, grads)
            optim.observe_in_place(ob, ours, before)
    optim.observe_zero_grad(ob, lambda ps: make(ps, lr=0.1))


_VARIANTS = ("no-correction", "eps-inside", "global-t", "first-only", "t-plus-one")


def _simulations(start: list[np.ndarray], lr: float, betas: tuple[float, float],
                 eps: float) -> Callable[[optim.Grads], list[tuple[list, str]]]:
    b1, b2 = betas

    def run(grads: optim.Grads) -> list[tuple[list, str]]:
        out = []
        for kind in _VARIANTS:
            params = [s.copy() for s in start]
            m = [np.zeros_like(s) for s in start]
            v = [np.zeros_like(s) for s in start]
            t = [0] * len(start)
            t_global = 0
            for step_grads in grads:
                t_global += 1
                for i, g in enumerate(step_grads):
                    if g is None:
                        continue
                    t[i] += 1
                    tt = t_global if kind == "global-t" else t[i] + (kind == "t-plus-one")
                    m[i] = b1 * m[i] + (1 - b1) * g
                    v[i] = b2 * v[i] + (1 - b2) * g * g
                    mh = m[i] if kind == "no-correction" else m[i] / (1 - b1 ** tt)
                    vh = v[i] if kind in ("no-correction", "first-only") else v[i] / (1 - b2 ** tt)
                    den = np.sqrt(vh + eps) if kind == "eps-inside" else np.sqrt(vh) + eps
                    params[i] = params[i] - lr * mh / den
            out.append((params, HINTS[f"adam.{kind}"]))
        return out
    return run


def judge(ck: Checker, obs: Observations) -> None:
    al = library()
    name = class_name(ck, obs, "Adam")
    init = HINTS["adam.init"].format(name=name)
    hint = HINTS["adam.recipe"]
    for title, kw, data, grads in cases(obs.seed, obs.hidden):
        with ck.case(title):
            got = seen(ck, obs, title)
            got.called("build", f"your {name}", init)
            theirs = optim.parameters(data)
            ref = al.optim.Adam(theirs, **kw)
            sim = _simulations(data, kw.get("lr", 1e-3), kw.get("betas", (0.9, 0.999)),
                               kw.get("eps", 1e-8))
            optim.judge_steps(ck, got, ref, theirs, grads, hint, sim)
            if title != SKIP:
                optim.judge_in_place(ck, got)
    with ck.case(optim.ZERO_GRAD):
        got = seen(ck, obs, optim.ZERO_GRAD)
        got.called("build", f"your {name}", init)
        optim.judge_zero_grad(ck, got)
    ck.done()
