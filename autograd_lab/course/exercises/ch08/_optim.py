"""What the optimizer exercises (ch08-sgd-momentum, ch08-adam) share.

``observe`` gives the learner's optimizer float64 Parameters and the same gradients step after
step, and keeps the parameters' data after every step; ``judge`` runs ``autograd_lab.optim``
(which follows PyTorch's update rules) on the same data and gradients and compares step by
step, naming the typical wrong rule a result matches.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .._observe import Observer
from ._shared import Seen, call, case
from .messages import HINTS

SHAPES = ((3,), (2, 2))

Grads = list[list[np.ndarray | None]]
Simulate = Callable[[Grads], list[tuple[list, str]]]


def start_data(rng: np.random.Generator) -> list[np.ndarray]:
    return [np.round(rng.normal(size=s), 3) for s in SHAPES]


def grad_sequence(rng: np.random.Generator, steps: int,
                  skip: tuple[tuple[int, int], ...] = ()) -> Grads:
    seq: Grads = []
    for step in range(steps):
        row: list[np.ndarray | None] = [np.round(rng.normal(size=s), 3) for s in SHAPES]
        for k, i in skip:
            if k == step:
                row[i] = None
        seq.append(row)
    return seq


def parameters(data: list[np.ndarray]) -> list[Any]:
    return [library().nn.Parameter(d.copy()) for d in data]


def set_grads(params: list[Any], grads: list[np.ndarray | None]) -> None:
    al = library()
    for p, g in zip(params, grads):
        p.grad = None if g is None else al.Variable(g.copy())


def observe_steps(ob: Observer, opt: Any, params: list[Any], grads: Grads) -> None:
    """Kernel side: give the optimizer each step's gradients, keep the data after each step."""
    for step, step_grads in enumerate(grads, start=1):
        set_grads(params, step_grads)
        call(ob, f"step {step}", opt.step)
        ob.put(f"after step {step}", [np.array(p.data) for p in params])


def observe_in_place(ob: Observer, params: list[Any], before: list[Any]) -> None:
    ob.put("same objects", all(p is q for p, q in zip(params, before)))
    ob.put("leaves", all(p.is_leaf and p.requires_grad for p in params))


def judge_steps(ck: Checker, got: Seen, ref: Any, theirs: list[Any], grads: Grads, hint: str,
                simulate: Simulate | None = None) -> None:
    """Judge side: the reference optimizer on the same data, compared after every step."""
    previous = [np.array(q.data) for q in theirs]
    for step, step_grads in enumerate(grads, start=1):
        set_grads(theirs, step_grads)
        got.called(f"step {step}", "your step", hint)
        ref.step()
        ours = got[f"after step {step}"]
        if not isinstance(ours, list) or len(ours) != len(theirs):
            ck.fail(f"the parameters could not be read after step {step}.", hint=hint)
        for i, (p, q) in enumerate(zip(ours, theirs)):
            if (isinstance(p, np.ndarray) and np.array_equal(p, previous[i])
                    and not np.array_equal(q.data, previous[i])):
                ck.fail(f"parameter {i} did not change in step {step}.", expected=q.data,
                        received=p, hint=HINTS["optim.unchanged"])
            mistakes = []
            if simulate is not None:
                for values, why in simulate(grads[:step]):
                    mistakes.append((values[i], why))
            ck.close(p, q.data, atol=1e-10, rtol=1e-8,
                     what=f"parameter {i} (shape {q.shape}) after step {step}", hint=hint,
                     mistakes=mistakes)
        previous = [p if isinstance(p, np.ndarray) else previous[i] for i, p in enumerate(ours)]


def judge_in_place(ck: Checker, got: Seen) -> None:
    ck.check(got["same objects"] is True, "the parameters were replaced.",
             hint=HINTS["optim.replaced"])
    ck.check(got["leaves"] is True,
             "after step() a parameter is no longer a leaf that requires grad.",
             hint=HINTS["optim.leaf"])


ZERO_GRAD = "zero_grad() clears every gradient"


def observe_zero_grad(ob: Observer, make: Callable[[list[Any]], Any]) -> None:
    with case(ob, ZERO_GRAD):
        params = [library().nn.Parameter(np.ones(s)) for s in SHAPES]
        opt = make(params)
        set_grads(params, [np.ones(s) for s in SHAPES])
        call(ob, "zero_grad", opt.zero_grad)
        ob.put("grads", [None if p.grad is None else np.array(getattr(p.grad, "data", p.grad))
                         for p in params])


def judge_zero_grad(ck: Checker, got: Seen) -> None:
    got.called("zero_grad", "your zero_grad")
    grads = got["grads"]
    cleared = isinstance(grads, list) and all(
        g is None or (isinstance(g, np.ndarray) and not np.any(g)) for g in grads)
    ck.check(cleared, "after zero_grad() a parameter still has a non-zero gradient.",
             hint=HINTS["optim.zero-grad"])
