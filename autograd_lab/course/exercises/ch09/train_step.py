"""Check ``train_step(model, loss_fn, optimizer, x, y) -> float``: forward, loss,
``loss.backward()``, ``optimizer.step()``, with ``optimizer.zero_grad()`` anywhere before
``backward``; returns the loss of this batch (before the update) as a Python float."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch09-train-step"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no zero_grad", ("    optimizer.zero_grad()\n", ""), None, "step.zero-grad"),
    Mistake("no step", ("    optimizer.step()\n", ""), None, "step.unchanged"),
    Mistake("zero_grad between backward and step", (
        "    optimizer.zero_grad()\n    loss = loss_fn(model(x), y)\n    loss.backward()\n",
        "    loss = loss_fn(model(x), y)\n    loss.backward()\n    optimizer.zero_grad()\n"),
        None, "step.unchanged"),
    Mistake("returns the Variable", ("return loss.item()", "return loss"), None, "step.float"),
)


def course_train_step(model: Any, loss_fn: Callable[..., Any], optimizer: Any, x: Any,
                      y: Any) -> float:
    """The course's train_step (what the exercise asks for), for the checks of the exercises
    that use it."""
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return float(loss.item())


def _optimizer(kind: str, params: Any) -> Any:
    from autograd_lab.optim import SGD, Adam
    if kind == "Adam":
        return Adam(params, lr=0.01)
    return SGD(params, lr=0.1, momentum=0.9) if kind == "SGD with momentum" else \
        SGD(params, lr=0.3)


def model(seed: int) -> Any:
    """The course's small classifier, the same from the same seed."""
    import autograd_lab.nn as nn
    g = library().Generator(seed)
    return nn.Sequential(nn.Linear(6, 8, generator=g, dtype=np.float64), nn.ReLU(),
                         nn.Linear(8, 3, generator=g, dtype=np.float64))


def cases(seed: int, hidden: bool) -> list[tuple[str, int, list[np.ndarray], list[np.ndarray]]]:
    """(optimizer, the model's seed, the batches' x, the batches' y) of each configuration."""
    rng = np.random.default_rng(seed)
    configs = [("SGD with momentum", 4)]
    if hidden:
        configs += [("Adam", 5), ("plain SGD", 3)]
    found = []
    for name, steps in configs:
        model_seed = int(rng.integers(0, 1000))
        xs = [rng.normal(size=(5, 6)) for _ in range(steps)]
        ys = [rng.integers(0, 3, size=5) for _ in range(steps)]
        found.append((name, model_seed, xs, ys))
    return found


def _titles(name: str, steps: int) -> tuple[str, str]:
    return f"{name}: one step", f"{name}: {steps - 1} more steps"


def observe(ob: Observer, train_step: Callable[..., float], *, seed: int, hidden: bool) -> None:
    al = library()
    import autograd_lab.nn as nn
    for name, model_seed, xs, ys in cases(seed, hidden):
        mine = model(model_seed)
        opt, loss_fn = _optimizer(name, mine.parameters()), nn.CrossEntropyLoss()
        for title, steps in zip(_titles(name, len(xs)), (range(1), range(1, len(xs)))):
            with ob.case(title):
                ob.put("names", [n for n, _ in mine.named_parameters()])
                for step in steps:
                    got = train_step(mine, loss_fn, opt, al.Variable(xs[step]),
                                     al.Variable(ys[step]))
                    ob.put(f"type {step}", type(got).__name__)
                    ob.put(f"loss {step}", got)
                    ob.put(f"params {step}", [np.array(p.data) for p in mine.parameters()])


def judge(ck: Checker, obs: Observations) -> None:
    al = library()
    import autograd_lab.nn as nn
    for name, model_seed, xs, ys in cases(obs.seed, obs.hidden):
        ref = model(model_seed)
        opt_ref, loss_fn = _optimizer(name, ref.parameters()), nn.CrossEntropyLoss()
        start = [np.array(p.data) for p in ref.parameters()]
        for title, steps in zip(_titles(name, len(xs)), (range(1), range(1, len(xs)))):
            with ck.case(title):
                seen = obs.case(ck, title, what="your train_step", hint=HINTS["step.order"])
                for step in steps:
                    loss = loss_fn(ref(al.Variable(xs[step])), al.Variable(ys[step]))
                    opt_ref.zero_grad()
                    loss.backward()
                    opt_ref.step()
                    start = _judge_step(ck, seen, step, float(loss.item()), start,
                                        [np.array(p.data) for p in ref.parameters()])
    ck.done()


def _judge_step(ck: Checker, seen: Any, step: int, want: float, start: list[np.ndarray],
                ref: list[np.ndarray]) -> list[np.ndarray]:
    """Judge one step; return the learner's parameters after it."""
    got = seen[f"loss {step}"]
    ck.check(got is not None, "train_step returned None.", expected=want,
             hint=HINTS["step.none"])
    ck.check(isinstance(got, (float, np.floating)), "train_step should return a Python float.",
             expected="a float", received=seen[f"type {step}"], hint=HINTS["step.float"])
    ck.close(float(got), want, atol=1e-10, what=f"loss of step {step + 1}",
             hint=HINTS["step.loss"])
    params, names = seen[f"params {step}"], seen["names"]
    ck.check(isinstance(params, list) and len(params) == len(ref) and all(
        isinstance(p, np.ndarray) for p in params), "the model's parameters were not observed.")
    ck.check(any(not (a.shape == b.shape and np.array_equal(a, b))
                 for a, b in zip(start, params)),
             f"step {step + 1} did not change the parameters.",
             hint=HINTS["step.unchanged"] + HINTS["step.order"])
    for pname, p, r in zip(names, params, ref):
        ck.close(p, r, atol=1e-10, what=f"{pname} after step {step + 1}",
                 hint=(HINTS["step.zero-grad"] if step else "") + HINTS["step.order"])
    return params
