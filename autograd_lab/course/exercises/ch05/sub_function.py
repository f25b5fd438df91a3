"""Check ``Sub``: a - b with broadcasting; gradients g and -g, each summed to its input."""
from __future__ import annotations

from typing import Any

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import grad_of, judge_by_hand, observe_by_hand, pair_cases, reduce_to
from .messages import HINTS

ID = "ch05-sub-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("b's gradient not negated", ("sum_to(-grad_output, ctx.b_shape)",
                                         "sum_to(grad_output, ctx.b_shape)"), None, "sub.b-sign"),
    Mistake("a's gradient negated", ("sum_to(grad_output, ctx.a_shape)",
                                     "sum_to(-grad_output, ctx.a_shape)"), None, "sub.a-sign"),
    Mistake("a's gradient not summed down", ("sum_to(grad_output, ctx.a_shape)", "grad_output"),
            None, "fn.grad-shape.a"),
    Mistake("arrays returned", ("sum_to(-grad_output, ctx.b_shape)\n",
                                "sum_to(-grad_output, ctx.b_shape).data\n"), None, "fn.variables"),
)


def _title(a: Any, b: Any) -> str:
    return f"a {a.shape} - b {b.shape}"


def observe(ob: Observer, Sub: Any, *, seed: int, hidden: bool) -> None:
    for a, b, g in pair_cases(seed, hidden):
        with ob.case(_title(a, b)):
            observe_by_hand(ob, Sub, [a, b], g)


def judge(ck: Checker, obs: Observations) -> None:
    for a, b, g in pair_cases(obs.seed, obs.hidden):
        title = _title(a, b)
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [a, b], g)
            ck.close(out, a - b, what="output", hint=HINTS["sub.forward"])
            grad_of(ck, grads, 0, "a", a.shape, reduce_to(g, a.shape),
                    [(reduce_to(-g, a.shape), HINTS["sub.a-sign"])])
            grad_of(ck, grads, 1, "b", b.shape, reduce_to(-g, b.shape),
                    [(reduce_to(g, b.shape), HINTS["sub.b-sign"])])
    ck.done()
