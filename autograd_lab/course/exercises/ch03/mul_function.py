"""Check mygrad's ``Mul``: forward(ctx, a, b) saves both inputs and returns a * b;
backward returns (grad_output * b, grad_output * a), each summed to its input's shape."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._functions import course_apply, course_ops, reference_apply, \
    sum_to as sum_to_array
from .._observe import Case, Observations, Observer
from ._note import note_apply
from ._shared import FAILED, apply_and_backward, judge_backward, judge_node, judge_setup, \
    numeric_grads, perturbed, setup
from .messages import HINTS

ID = "ch03-mul-function"
PARTS: tuple[str, ...] = ()

_BACKWARD = "sum_to(grad_output * b, a.shape), sum_to(grad_output * a, b.shape)"
MISTAKES = (
    Mistake("numpy gradients", (_BACKWARD, "sum_to(grad_output * b, a.shape).data, "
                                           "sum_to(grad_output * a, b.shape).data"), None,
            "by-hand.not-variable"),
    Mistake("nothing saved", ("        ctx.save_for_backward(a, b)\n", ""), None,
            "node.saved-nothing.a, b"),
    Mistake("the gradients swapped", (_BACKWARD, "sum_to(grad_output * a, a.shape), "
                                                 "sum_to(grad_output * b, b.shape)"), None,
            "mul.swapped-a"),
    Mistake("no sum_to", (_BACKWARD, "grad_output * b, grad_output * a"), None, "mul.shape-b"),
    Mistake("an addition", ("        return Variable(a.data * b.data)",
                            "        return Variable(a.data + b.data)"), None, "mul.added"),
    Mistake("grad_output forgotten", (_BACKWARD, "sum_to(b, a.shape), sum_to(a, b.shape)"),
            None, "mul.chain-a"),
)

C_NUMERIC = "central differences agree with backward"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes = [((4,), (4,)), ((2, 3), (2, 3)), ((3, 4), (4,))]
    if hidden:
        shapes += [((3, 2, 2), (3, 2, 2)), ((2, 3), (2, 1)), ((), (3,))]
    found = []
    for sa, sb in shapes:
        ad, bd = np.round(rng.normal(size=sa), 3), np.round(rng.normal(size=sb), 3)
        gd = np.round(rng.uniform(0.5, 2.0, size=np.broadcast_shapes(sa, sb)), 3)
        found.append((f"a of shape {sa} times b of shape {sb}", ad, bd, gd))
    numeric = [rng.normal(size=(3, 2)) for _ in range(3)]
    return {"shapes": found, "numeric": numeric}


def observe(ob: Observer, Mul: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, Mul, "forward", ("Variable",), ((Mul, "Mul"),))
    if ns is None:
        return
    Variable = ns["Variable"]
    apply = reference_apply(Mul, ns)
    note_apply(ns)
    inputs = cases(seed, hidden)
    with course_ops(ns, ("as_variable", "sum_to")), course_apply(Mul, ns):
        for title, ad, bd, gd in inputs["shapes"]:
            with ob.case(title):
                apply_and_backward(ob, apply, Mul, Variable, (
                    Variable(ad.copy(), requires_grad=True),
                    Variable(bd.copy(), requires_grad=True)), Variable(gd.copy()))
        with ob.case(C_NUMERIC):
            ad, bd, gd = inputs["numeric"]
            _, grads = apply_and_backward(ob, apply, Mul, Variable, (
                Variable(ad.copy(), requires_grad=True),
                Variable(bd.copy(), requires_grad=True)), Variable(gd.copy()))
            if grads is not FAILED:
                ob.put("perturbed", perturbed(lambda p, q: apply(Variable(p), Variable(q)).data,
                                              [ad, bd]))


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("Mul",))
    inputs = cases(obs.seed, obs.hidden)
    for title, ad, bd, gd in inputs["shapes"]:
        with ck.case(title):
            _judge_shapes(ck, obs.case(ck, title, what="your Mul"), ad, bd, gd)
    with ck.case(C_NUMERIC):
        seen = obs.case(ck, C_NUMERIC, what="your Mul")
        ad, bd, gd = inputs["numeric"]
        judge_node(ck, seen, "Mul", HINTS)
        grads = judge_backward(ck, seen, "Mul", "a, b", HINTS)
        num = numeric_grads(seen["perturbed"], [ad, bd], gd)
        for what, got, want in zip("ab", grads, num):
            ck.close(None if got is None else got["data"], want, atol=1e-6, rtol=1e-5,
                     what=f"gradient of {what} (against central differences)")
    ck.done()


def _judge_shapes(ck: Checker, seen: Case, ad: np.ndarray, bd: np.ndarray,
                  gd: np.ndarray) -> None:
    judge_node(ck, seen, "Mul", HINTS)
    ck.close(seen["output"], ad * bd, what="output", mistakes=[(ad + bd, HINTS["mul.added"])],
             hint=HINTS["mul.output"])
    grads = judge_backward(ck, seen, "Mul", "a, b", HINTS)
    ck.check(len(grads) == 2, "backward did not return two gradients.",
             expected="(gradient of a, gradient of b)", received=len(grads),
             hint=HINTS["mul.two"])
    ga, gb = (None if g is None else np.asarray(g["data"], dtype=float) for g in grads)
    sa, sb, shape_y = ad.shape, bd.shape, gd.shape
    for what, got, want, shape, other_data, mistake in [
            ("a", ga, sum_to_array(gd * bd, sa), sa, bd, gd * ad if sa == sb else None),
            ("b", gb, sum_to_array(gd * ad, sb), sb, ad, gd * bd if sa == sb else None)]:
        if got is None:
            ck.fail(f"the gradient of {what} is None.", hint=HINTS[f"mul.none-{what}"])
        if got.shape != tuple(shape):
            ck.fail(f"the gradient of {what} has shape {got.shape}, but {what} has "
                    f"shape {shape}.", hint=HINTS[f"mul.shape-{what}"])
        mistakes = [(np.broadcast_to(other_data, got.shape), HINTS[f"mul.chain-{what}"])] \
            if shape == shape_y else []
        if mistake is not None:
            mistakes.insert(0, (mistake, HINTS[f"mul.swapped-{what}"]))
        ck.close(got, want, what=f"gradient of {what}", mistakes=mistakes,
                 hint=HINTS[f"mul.gradient-{what}"])
