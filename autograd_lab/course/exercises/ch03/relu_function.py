"""Check mygrad's ``ReLU``: forward saves the input and returns max(x, 0) as a new
Variable; backward gives grad_output where x > 0 and 0 elsewhere, 0 at x = 0 as in
PyTorch, without changing grad_output."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._functions import course_apply, course_ops, reference_apply
from .._observe import Case, Observations, Observer
from ._note import note_apply
from ._shared import FAILED, apply_and_backward, array_or_type, judge_backward, judge_node, \
    judge_setup, numeric_grads, perturbed, setup
from .messages import HINTS

ID = "ch03-relu-function"
PARTS: tuple[str, ...] = ()

_BACKWARD = "        return grad_output * Variable((x.data > 0).astype(grad_output.dtype))"
MISTAKES = (
    Mistake("the gradient passed at 0", ("(x.data > 0)", "(x.data >= 0)"), None, "relu.at-zero"),
    Mistake("a float64 mask", ("Variable((x.data > 0).astype(grad_output.dtype))",
                               "Variable(x.data > 0)"), None, "relu.float32"),
    Mistake("grad_output zeroed in place", (_BACKWARD, "        grad_output.data[x.data <= 0] = 0"
                                                       "\n        return grad_output"), None,
            "relu.grad-output-changed"),
    Mistake("min instead of max", ("np.maximum(x.data, 0)", "np.minimum(x.data, 0)"), None,
            "relu.min"),
    Mistake("nothing saved", ("        ctx.save_for_backward(x)\n", ""), None,
            "node.saved-nothing.x"),
    Mistake("the mask alone", (_BACKWARD, "        return Variable((x.data > 0).astype("
                                          "grad_output.dtype))"), None, "relu.mask"),
)

C_NUMERIC = "central differences agree with backward (away from 0)"
C_FLOAT32 = "float32 stays float32"


def _relu_data(rng: np.random.Generator, shape: tuple[int, ...],
               dtype: Any = np.float64) -> np.ndarray:
    """Random values with |x| >= 0.1, and exact zeros in some places."""
    x = rng.normal(size=shape)
    x = np.where(np.abs(x) < 0.1, np.sign(x + 1e-12) * 0.1 + x, x)
    x = np.round(x, 4)
    if x.size >= 3:
        x.reshape(-1)[:: 3] = 0.0
    return x.astype(dtype)


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(6,), (3, 4)] + ([(2, 3, 2), ()] if hidden else []):
        data = _relu_data(rng, shape)
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
        found.append((f"forward and backward on a {shape} input (zeros included)", data, g))
    data = rng.normal(size=(4, 3))
    data = np.where(np.abs(data) < 0.1, 0.5, data)
    numeric = (data, rng.normal(size=(4, 3)))
    return {"shapes": found, "numeric": numeric, "float32": _relu_data(rng, (3,), np.float32)}


def observe(ob: Observer, ReLU: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, ReLU, "forward", ("Variable",), ((ReLU, "ReLU"),))
    if ns is None:
        return
    Variable = ns["Variable"]
    apply = reference_apply(ReLU, ns)
    note_apply(ns)
    inputs = cases(seed, hidden)
    with course_ops(ns), course_apply(ReLU, ns):
        for title, data, g in inputs["shapes"]:
            with ob.case(title):
                x, grad_output = Variable(data.copy(), requires_grad=True), Variable(g.copy())
                apply_and_backward(ob, apply, ReLU, Variable, (x,), grad_output)
                ob.put("input after", array_or_type(x.data))
                ob.put("grad_output after", array_or_type(grad_output.data))
        with ob.case(C_NUMERIC):
            data, gd = inputs["numeric"]
            _, grads = apply_and_backward(ob, apply, ReLU, Variable,
                                          (Variable(data.copy(), requires_grad=True),),
                                          Variable(gd.copy()))
            if grads is not FAILED:
                ob.put("perturbed", perturbed(lambda p: apply(Variable(p)).data, [data]))
        with ob.case(C_FLOAT32):
            apply_and_backward(ob, apply, ReLU, Variable,
                               (Variable(inputs["float32"].copy(), requires_grad=True),),
                               Variable(np.ones(3, dtype=np.float32)))


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "forward", HINTS, ("ReLU",))
    inputs = cases(obs.seed, obs.hidden)
    for title, data, g in inputs["shapes"]:
        with ck.case(title):
            _judge_shape(ck, obs.case(ck, title, what="your ReLU"), data, g)
    with ck.case(C_NUMERIC):
        seen = obs.case(ck, C_NUMERIC, what="your ReLU")
        data, gd = inputs["numeric"]
        judge_node(ck, seen, "ReLU", HINTS)
        grads = judge_backward(ck, seen, "ReLU", "x", HINTS)
        num = numeric_grads(seen["perturbed"], [data], gd)
        ck.close(None if grads[0] is None else grads[0]["data"], num[0], atol=1e-6, rtol=1e-5,
                 what="gradient (against central differences)")
    with ck.case(C_FLOAT32):
        seen = obs.case(ck, C_FLOAT32, what="your ReLU")
        judge_node(ck, seen, "ReLU", HINTS)
        ck.check(seen["dtype"] == "float32", "the output is not float32.", expected="float32",
                 received=seen["dtype"], hint=HINTS["relu.keep-dtype"])
        grads = judge_backward(ck, seen, "ReLU", "x", HINTS)
        got = None if grads[0] is None else grads[0]["dtype"]
        ck.check(got == "float32", "backward returned a gradient of another dtype for a float32 "
                 "input and a float32 grad_output.", expected="float32", received=got,
                 hint=HINTS["relu.float32"])
    ck.done()


def _judge_shape(ck: Checker, seen: Case, data: np.ndarray, g: np.ndarray) -> None:
    judge_node(ck, seen, "ReLU", HINTS)
    after = seen["input after"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, data),
             "forward changed its input in place.", hint=HINTS["relu.input-changed"])
    ck.close(seen["output"], np.maximum(data, 0), what="output",
             mistakes=[(np.minimum(data, 0), HINTS["relu.min"])], hint=HINTS["relu.output"])
    grads = judge_backward(ck, seen, "ReLU", "x", HINTS)
    ck.check(len(grads) == 1, "backward did not return one gradient.", expected=1,
             received=len(grads), hint=HINTS["relu.one"])
    after = seen["grad_output after"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, g),
             "backward changed grad_output in place.", expected=g, received=after,
             hint=HINTS["relu.grad-output-changed"])
    ck.check(grads[0] is not None, "the gradient of x is None.", hint=HINTS["relu.none"])
    ck.close(grads[0]["data"], g * (data > 0), what="gradient of x",
             mistakes=[(g * (data >= 0), HINTS["relu.at-zero"]), (g, HINTS["relu.through"]),
                       ((data > 0).astype(float), HINTS["relu.mask"]),
                       (g * (data < 0), HINTS["relu.negative"])],
             hint=HINTS["relu.gradient"])
