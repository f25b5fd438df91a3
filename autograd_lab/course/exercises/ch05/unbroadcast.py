"""Check ``unbroadcast(grad, shape)``: sum ``grad`` down to ``shape`` (the inverse of broadcasting).

Sum over the leading axes broadcasting added, and with ``keepdims`` over the axes where
``shape`` has a 1; return exactly ``shape``; raise ValueError if ``shape`` could not have
been broadcast to ``grad.shape``; leave ``grad`` unchanged.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of, format_value
from .._exercise import Mistake
from .._observe import Observations, Observer, Raised
from ._byhand import attempt, judge_shapes_call
from ._shared import random_broadcast, unbroadcast_reference
from .messages import HINTS

ID = "ch05-unbroadcast"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no keepdims", ("out = out.sum(axis=axes, keepdims=True)", "out = out.sum(axis=axes)"),
            None, "unbroadcast.shapes"),
    Mistake("averages the leading axes", ("grad.sum(axis=tuple(range(lead)))",
                                          "grad.mean(axis=tuple(range(lead)))"), None,
            "unbroadcast.averaged"),
    Mistake("no ValueError", ("    if out.shape != shape:\n", "    if False:\n"), None,
            "unbroadcast.raise"),
    Mistake("leading axes never summed", ("lead = grad.ndim - len(shape)", "lead = 0"), None,
            "unbroadcast.shapes"),
    Mistake("no return", ("    return out\n", "    out\n"), None, "unbroadcast.none"),
)

BAD = "(2, 4) cannot have been broadcast to (3, 4): ValueError"


def cases(seed: int, hidden: bool) -> tuple[list[tuple[str, tuple, tuple, np.ndarray]], np.ndarray]:
    """(name, grad's shape, target shape, grad) of the summing cases, and the grad of the
    ValueError case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = [
        ("a bias (3,) added to a batch (4, 3)", (4, 3), (3,)),
        ("a column (4, 1) broadcast across (4, 3)", (4, 3), (4, 1)),
        ("(3, 1) broadcast to (2, 3, 4)", (2, 3, 4), (3, 1)),
        ("a scalar () broadcast to (3, 4)", (3, 4), ()),
        ("no broadcasting: (3, 4) stays (3, 4)", (3, 4), (3, 4)),
        ("(1, 4) broadcast to (5, 1, 4): the middle 1 was never broadcast", (5, 1, 4), (1, 4)),
    ]
    if hidden:
        for _ in range(4):
            small, big = random_broadcast(rng)
            shapes.append((f"{small} broadcast to {big}", big, small))
    found = [(name, big, small, np.round(rng.normal(size=big), 3)) for name, big, small in shapes]
    return found, rng.normal(size=(3, 4))


def observe(ob: Observer, unbroadcast: Callable[[np.ndarray, tuple], np.ndarray], *, seed: int,
            hidden: bool) -> None:
    summing, bad = cases(seed, hidden)
    for name, _, small, grad in summing:
        with ob.case(name):
            ok, got = attempt(ob, "raised", lambda: unbroadcast(grad, small))
            ob.put("grad after the call", grad)
            if ok:
                ob.put("result", data_of(got))
    with ob.case(BAD):
        ob.put("name", str(getattr(unbroadcast, "__name__", repr(unbroadcast))))
        ok, got = attempt(ob, "raised", lambda: unbroadcast(bad, (2, 4)))
        if ok:
            ob.put("returned", got)


def judge(ck: Checker, obs: Observations) -> None:
    summing, _ = cases(obs.seed, obs.hidden)
    for name, big, small, grad in summing:
        with ck.case(name):
            seen = obs.case(ck, name, what="your unbroadcast")
            judge_shapes_call(ck, seen, "raised", "unbroadcast", (
                f"Shapes did not line up while summing {big} down to {small}. "
                + HINTS["unbroadcast.shapes"]))
            got = seen["result"]
            ck.check(got is not None, "your unbroadcast returned None.",
                     hint=HINTS["unbroadcast.none"])
            expected = unbroadcast_reference(grad, small)
            after = seen["grad after the call"]
            ck.check(isinstance(after, np.ndarray) and np.array_equal(after, grad),
                     "your unbroadcast changed the grad it was given.",
                     hint=HINTS["unbroadcast.grad-changed"])
            _check_shape(ck, got, big, small)
            n_summed = grad.size // max(expected.size, 1)
            ck.close(got, expected, atol=1e-9, what="result", hint=HINTS["unbroadcast.sum"],
                     mistakes=[(expected / n_summed, HINTS["unbroadcast.averaged"])]
                     if n_summed > 1 else [])
    with ck.case(BAD):
        seen = obs.case(ck, BAD, what="your unbroadcast")
        message = _expect_value_error(ck, seen["raised"], seen.get("returned"), str(seen["name"]))
        ck.check("(2, 4)" in message and "(3, 4)" in message,
                 "the ValueError message does not name both shapes.",
                 expected="a message containing (2, 4) and (3, 4)", received=message,
                 hint=HINTS["unbroadcast.raise-message"])
    ck.done()


def _expect_value_error(ck: Checker, err: Any, returned: Any, name: str) -> str:
    """The message of the ValueError the learner's call raised; fails as ``ck.raises`` did."""
    hint = HINTS["unbroadcast.raise"]
    if err is None:
        ck.fail(f"your {name} did not raise.", expected="ValueError",
                received=f"it returned {format_value(returned)}", hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError"):
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a("ValueError"):
        ck.fail(f"your {name} raised the wrong kind of error.", expected="ValueError",
                received=f"{err.name}: {err.message}", hint=hint)
    return err.message


def _check_shape(ck: Checker, got: Any, big: tuple[int, ...], small: tuple[int, ...]) -> None:
    shape = np.shape(got)
    if shape == small:
        return
    lead = len(big) - len(small)
    hint = f"Return an array of exactly shape {small}."
    if shape == big:
        hint = ("Nothing was summed: sum over the leading axes that broadcasting added "
                f"({lead} of them here) and over each axis where the target has a 1.")
    elif len(shape) == len(big) and lead:
        hint = (f"Sum away the {lead} leading axis/axes as well (grad.sum(axis=tuple(range("
                f"{lead})))), so the result has {len(small)} dimensions.")
    elif len(shape) < len(small):
        hint = HINTS["unbroadcast.keepdims"]
    elif len(shape) == len(small):
        hint = HINTS["unbroadcast.right-align"]
    ck.fail(f"the result has shape {shape}, expected shape {small}.", expected=f"shape {small}",
            received=f"shape {shape}", hint=hint)
