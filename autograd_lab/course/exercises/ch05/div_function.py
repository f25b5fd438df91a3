"""Check ``Div``: a / b with broadcasting; gradients g / b and -g a / b**2, summed."""
from __future__ import annotations

from typing import Any

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import grad_of, judge_by_hand, observe_by_hand, pair_cases, reduce_to
from .messages import HINTS

ID = "ch05-div-function"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("a's gradient multiplied by b", ("sum_to(grad_output / b, a.shape)",
                                            "sum_to(grad_output * b, a.shape)"), None,
            "div.a-multiplied"),
    Mistake("no square of b", ("-grad_output * a / (b * b)", "-grad_output * a / b"), None,
            "div.b-square"),
    Mistake("b's gradient not negated", ("-grad_output * a / (b * b)",
                                         "grad_output * a / (b * b)"), None, "div.b-sign"),
    Mistake("a's gradient not summed down", ("sum_to(grad_output / b, a.shape)",
                                             "grad_output / b"), None, "fn.grad-shape.a"),
)


def _title(a: Any, b: Any) -> str:
    return f"a {a.shape} / b {b.shape}"


def observe(ob: Observer, Div: Any, *, seed: int, hidden: bool) -> None:
    for a, b, g in pair_cases(seed, hidden):
        with ob.case(_title(a, b)):
            observe_by_hand(ob, Div, [a, b], g)


def judge(ck: Checker, obs: Observations) -> None:
    for a, b, g in pair_cases(obs.seed, obs.hidden):
        title = _title(a, b)
        with ck.case(title):
            out, grads = judge_by_hand(ck, obs.case(ck, title), [a, b], g)
            ck.close(out, a / b, what="output", hint=HINTS["div.forward"])
            grad_of(ck, grads, 0, "a", a.shape, reduce_to(g / b, a.shape),
                    [(reduce_to(g * b, a.shape), HINTS["div.a-multiplied"])])
            grad_of(ck, grads, 1, "b", b.shape, reduce_to(-g * a / (b * b), b.shape),
                    [(reduce_to(-g * a / b, b.shape), HINTS["div.b-square"]),
                     (reduce_to(g * a / (b * b), b.shape), HINTS["div.b-sign"]),
                     (reduce_to(-a / (b * b) + 0 * g, b.shape), HINTS["div.b-chain"])])
    ck.done()
