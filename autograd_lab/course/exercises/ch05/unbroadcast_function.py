"""Check the Function ``Unbroadcast`` (forward(ctx, g, shape): g summed down to shape;
backward: grad_output copied back up to g's shape) and ``sum_to(grad, shape)`` (grad itself
when it has that shape, else Unbroadcast.apply). The course's numpy unbroadcast, apply and
Mul stand in for the learner's, so only these two pieces are judged."""
from __future__ import annotations

from collections.abc import Callable, Iterator
import contextlib
from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake, checker
from .._functions import course_apply
from .._observe import Observations, Observer
from ._byhand import attempt, judge_attempt, judge_by_hand, observe_by_hand
from . import unbroadcast
from ._shared import fails_quietly, unbroadcast_reference
from .messages import HINTS

ID = "ch05-unbroadcast-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("backward passes grad_output through", (
        "return BroadcastTo.apply(grad_output, ctx.g_shape), None", "return grad_output, None"),
        None, "ubf.backward-shape"),
    Mistake("no shape kept on ctx", ("        ctx.g_shape = g.shape\n", ""), None, "ubf.keep"),
    Mistake("sum_to always adds a node", (
        "return grad if grad.shape == tuple(shape) else Unbroadcast.apply(grad, tuple(shape))",
        "return Unbroadcast.apply(grad, tuple(shape))"), None, "sum_to.same"),
    Mistake("sum_to outside the graph", (
        "else Unbroadcast.apply(grad, tuple(shape))",
        "else Variable(unbroadcast(grad.data, tuple(shape)))"), None, "sum_to.graph"),
)

SETUP = "Unbroadcast has a forward that sees Variable"
SAME = "sum_to of a Variable that has the shape already"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases, by name: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    pairs = [((3, 4), (4,)), ((4, 3), (4, 1)), ((2, 3, 4), (3, 1))]
    if hidden:
        pairs += [((5,), ()), ((2, 1, 3), (1, 1, 3))]
    by_hand = [(big, small, np.round(rng.normal(size=big), 3),
                np.round(rng.normal(size=small), 3)) for big, small in pairs]
    summed = [(big, small, np.round(rng.normal(size=big), 3)) for big, small in pairs]
    return {"by hand": by_hand, "sum_to": summed, "same": np.round(rng.normal(size=(2, 3)), 3)}


def _titles(big: tuple[int, ...], small: tuple[int, ...]) -> tuple[str, str]:
    return f"Unbroadcast of g {big} to {small}", f"sum_to of a Variable {big} to {small}"


@contextlib.contextmanager
def _course_unbroadcast(ns: dict[str, Any]) -> Iterator[None]:
    """The course's numpy ``unbroadcast`` in the learner's namespace, theirs put back after."""
    own = ns.get("unbroadcast")
    if callable(own) and fails_quietly(lambda: checker(unbroadcast)(own)):
        print("note: exercise ch05-unbroadcast fails its own check; this check runs your "
              "Unbroadcast and sum_to with the course's unbroadcast instead.")
    ns["unbroadcast"] = unbroadcast_reference
    try:
        yield
    finally:
        if own is None:
            ns.pop("unbroadcast", None)
        else:
            ns["unbroadcast"] = own


def observe(ob: Observer, Unbroadcast: Any, sum_to: Callable[[Any, tuple], Any], *, seed: int,
            hidden: bool) -> None:
    inputs = cases(seed, hidden)
    ns = getattr(getattr(Unbroadcast, "forward", None), "__globals__", None)
    with ob.case(SETUP):
        ob.put("ok", ns is not None and "Variable" in ns)
    if ns is None or "Variable" not in ns:
        return
    with _course_unbroadcast(ns):
        for big, small, g, up in inputs["by hand"]:
            with ob.case(_titles(big, small)[0]):
                observe_by_hand(ob, Unbroadcast, [g], up, extra=(small,))
        Variable = ns["Variable"]
        with course_apply(Unbroadcast, ns):
            for big, small, data in inputs["sum_to"]:
                with ob.case(_titles(big, small)[1]):
                    v = Variable(data.copy(), requires_grad=True)
                    ok, out = attempt(ob, "raised", lambda: sum_to(v, small))
                    if ok:
                        ob.put("is a Variable", isinstance(out, Variable))
                        ob.put("type", type(out).__name__)
                        ob.put("data", np.asarray(data_of(out)))
                        ob.put("requires_grad", bool(getattr(out, "requires_grad", False)))
            with ob.case(SAME):
                v = Variable(inputs["same"].copy(), requires_grad=True)
                ok, out = attempt(ob, "raised", lambda: sum_to(v, (2, 3)))
                if ok:
                    ob.put("is grad", out is v)


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    if not obs.case(ck, SETUP)["ok"]:
        ck.fail("Unbroadcast has no forward that sees Variable.", hint=HINTS["ubf.setup"])
    for big, small, g, up in inputs["by hand"]:
        title = _titles(big, small)[0]
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [g], up, HINTS["ubf.keep"])
            ck.close(out, unbroadcast_reference(g, small), what="forward result",
                     hint=HINTS["ubf.forward"])
            ck.check(len(grads) >= 1 and grads[0] is not None, "backward returned no "
                     "gradient for g.", hint=HINTS["ubf.none"])
            got = np.asarray(grads[0], dtype=np.float64)
            if got.shape != big:
                ck.fail(f"backward returned a gradient of shape {got.shape}, but g has shape "
                        f"{big}.", expected=f"shape {big}", received=f"shape {got.shape}",
                        hint=HINTS["ubf.backward-shape"])
            ck.close(got, np.broadcast_to(up, big), what="gradient of g",
                     hint=HINTS["ubf.backward"])
            ck.check(len(grads) == 2 and grads[1] is None, "backward must return one "
                     "value per argument of forward.", expected="(grad_g, None)",
                     received=len(grads), hint=HINTS["ubf.arity"])
    for big, small, data in inputs["sum_to"]:
        title = _titles(big, small)[1]
        with ck.case(title):
            seen = obs.case(ck, title)
            judge_attempt(ck, seen, "raised", "sum_to")
            ck.check(bool(seen["is a Variable"]), "sum_to returned no Variable.",
                     received=seen["type"], hint=HINTS["sum_to.variable"])
            ck.close(seen["data"], unbroadcast_reference(data, small), what="result of sum_to",
                     hint=HINTS["sum_to.values"])
            ck.check(bool(seen["requires_grad"]), "the result of sum_to is not part of the "
                     "graph: a gradient built with it could not be differentiated again.",
                     hint=HINTS["sum_to.graph"])
    with ck.case(SAME):
        seen = obs.case(ck, SAME)
        judge_attempt(ck, seen, "raised", "sum_to")
        ck.check(seen["is grad"] is True, "sum_to made a new Variable for a gradient that has "
                 "the shape asked for already.", hint=HINTS["sum_to.same"])
    ck.done()
