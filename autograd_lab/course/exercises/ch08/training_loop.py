"""Check ``training_loop(model, opt, X, y, steps) -> list[float]``: ``steps`` full-batch
steps of zero_grad, mean squared error of model(X) against y, backward, opt.step(); returns the
loss of every step (computed before that step's update) as Python floats."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import call, case, seen
from .messages import HINTS

ID = "ch08-training-loop"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no zero_grad", ("        opt.zero_grad()\n", ""), None, "loop.no-zero"),
    Mistake("the loss after the step", ("        losses.append(loss.item())",
                                        "        losses.append(((model(X) - y) ** 2).mean()"
                                        ".item())"), None, "loop.after"),
    Mistake("Variables, not floats", ("losses.append(loss.item())", "losses.append(loss)"),
            None, "loop.floats"),
    Mistake("one loss short", ("    return losses", "    return losses[:-1]"), None,
            "loop.list"),
)


def _linear_setup(kw: dict) -> Callable[[], tuple[Any, Any]]:
    def build() -> tuple[Any, Any]:
        al = library()
        model = al.nn.Linear(3, 1, dtype=np.float64, seed=3)
        opt_cls = al.optim.SGD
        return model, opt_cls(model.parameters(), **kw)
    return build


def _mlp_setup(kw: dict) -> Callable[[], tuple[Any, Any]]:
    def build() -> tuple[Any, Any]:
        nn = library().nn
        model = nn.Sequential(nn.Linear(3, 8, dtype=np.float64, seed=4), nn.Tanh(),
                              nn.Linear(8, 1, dtype=np.float64, seed=5))
        return model, library().optim.Adam(model.parameters(), **kw)
    return build


def cases(seed: int, hidden: bool) -> list[tuple[str, Callable[[], tuple[Any, Any]], int,
                                                   np.ndarray, np.ndarray]]:
    """(name, build, steps, X, y): the same from the same seed, wherever run."""
    setups: list[tuple[str, Callable[[], tuple[Any, Any]], int]] = [
        ("a Linear(3, 1) model with SGD(lr=0.1), 6 steps", _linear_setup(dict(lr=0.1)), 6),
        ("a 3-8-1 MLP with Adam(lr=0.05), 5 steps", _mlp_setup(dict(lr=0.05)), 5),
    ]
    if hidden:
        setups.append(("a Linear(3, 1) model with SGD(lr=0.05, momentum=0.9), 8 steps",
                       _linear_setup(dict(lr=0.05, momentum=0.9)), 8))
    rng = np.random.default_rng(seed)
    found = []
    for name, build, steps in setups:
        X = np.round(rng.normal(size=(16, 3)), 3)
        y = np.round(X @ np.array([[1.0], [-2.0], [0.5]]) + 0.3, 3)
        found.append((name, build, steps, X, y))
    return found


def observe(ob: Observer, training_loop: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    al = library()
    for name, build, steps, X, y in cases(seed, hidden):
        with case(ob, name):
            model, opt = build()
            losses = call(ob, "training_loop", training_loop, model, opt, al.Variable(X),
                          al.Variable(y), steps)
            ob.put("losses", list(losses) if type(losses) is tuple else losses)
            ob.put("is a list", isinstance(losses, (list, tuple)))
            ob.put("state", {k: np.array(v) for k, v in model.state_dict().items()})


def _reference_loop(build: Callable[[], tuple[Any, Any]], X: Any, y: Any,
                    steps: int) -> tuple[list[float], dict[str, np.ndarray]]:
    F = library().functional
    model, opt = build()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(X), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


def _wrong_loops(build: Callable[[], tuple[Any, Any]], X: Any, y: Any,
                 steps: int) -> tuple[list[float], list[float]]:
    """Typical wrong loops: (losses recorded after the step, losses without zero_grad)."""
    al = library()
    F = al.functional
    model, opt = build()
    after = []
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(X), y).backward()
        opt.step()
        with al.no_grad():
            after.append(F.mse_loss(model(X), y).item())
    model, opt = build()
    no_zero = []
    for _ in range(steps):
        loss = F.mse_loss(model(X), y)
        loss.backward()
        opt.step()
        no_zero.append(loss.item())
    return after, no_zero


def judge(ck: Checker, obs: Observations) -> None:
    al = library()
    for name, build, steps, X_data, y_data in cases(obs.seed, obs.hidden):
        with ck.case(name):
            got = seen(ck, obs, name)
            got.called("training_loop", "your training_loop", HINTS["loop.recipe"])
            losses = got["losses"]
            X, y = al.Variable(X_data), al.Variable(y_data)
            expected, want_state = _reference_loop(build, X, y, steps)
            ck.check(bool(got["is a list"]) and isinstance(losses, list)
                     and len(losses) == steps,
                     f"training_loop must return a list of {steps} losses, one per step.",
                     expected=f"a list of {steps} floats", received=losses,
                     hint=HINTS["loop.list"])
            bad = [v for v in losses if not isinstance(v, (float, int, np.floating))]
            ck.check(not bad, "the losses must be Python floats.", received=bad[:1],
                     hint=HINTS["loop.floats"])
            after, no_zero = _wrong_loops(build, X, y, steps)
            ck.close(np.array(losses, dtype=np.float64), np.array(expected), atol=1e-6,
                     rtol=1e-5, what="list of losses", hint=HINTS["loop.recipe"],
                     mistakes=[(np.array(after), HINTS["loop.after"]),
                               (np.array(no_zero), HINTS["loop.no-zero"])])
            got_state = got["state"]
            for key in want_state:
                ck.close(got_state.get(key) if isinstance(got_state, dict) else None,
                         want_state[key], atol=1e-6, rtol=1e-5,
                         what=f"model parameter {key} after training_loop",
                         hint=HINTS["loop.recipe"])
    ck.done()
