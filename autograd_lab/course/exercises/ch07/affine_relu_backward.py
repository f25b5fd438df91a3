"""Check ``affine_relu_backward(x, a, b, grad_out, grad_x) -> (grad_a, grad_b)`` for
y = relu(a * x + b): writes dL/dx into ``grad_x`` and returns dL/da and dL/db, where
``grad_out`` is dL/dy; the derivative of relu at 0 is taken as 0 (as in PyTorch)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, grad_data
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import (filled, judge_kernel, judge_structure, observe_kernel, quiet_call, shown,
                      unwritten_hint)
from .affine_relu_forward import forward_cases
from .messages import HINTS

ID = "ch07-affine-relu-backward"
PARTS: tuple[str, ...] = ()
NAME = "affine_relu_backward"
AGREES = "agrees with autograd_lab's backward"

MISTAKES = (
    Mistake("relu'(0) taken as 1", ("(a * x[i] + b > 0.0)", "(a * x[i] + b >= 0.0)"), None,
            "bwd.at-zero"),
    Mistake("no factor a", ("grad_x[i] = a * g", "grad_x[i] = g"), None, "bwd.no-a"),
    Mistake("grad_a and grad_b swapped", ("return grad_a, grad_b", "return grad_b, grad_a"),
            None, "bwd.swapped"),
    Mistake("grad_a without x", ("grad_a += g * x[i]", "grad_a += g"), None, "bwd.grad-a"),
    Mistake("grad_b without the mask", ("grad_b += g", "grad_b += grad_out[i]"), None,
            "bwd.grad-b"),
)


def backward_reference(x: np.ndarray, a: float, b: float, g: np.ndarray
                       ) -> tuple[np.ndarray, float, float]:
    mask = (a * x + b) > 0
    gm = g * mask
    return a * gm + 0.0, float((gm * x).sum()), float(gm.sum())  # + 0.0: no -0 in messages


def backward_autograd(x: np.ndarray, a: float, b: float, g: np.ndarray
                      ) -> tuple[np.ndarray, float, float]:
    import autograd_lab as al
    xv = al.Variable(x.copy(), requires_grad=True)
    av = al.Variable(np.array(a), requires_grad=True)
    bv = al.Variable(np.array(b), requires_grad=True)
    ((av * xv + bv).relu() * al.Variable(g)).sum().backward()
    return grad_data(xv), float(grad_data(av)), float(grad_data(bv))


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, float, float, np.ndarray]]:
    """(name, x, a, b, grad_out): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    renamed = {"a * x + b exactly 0 gives 0": "a * x + b exactly 0: relu'(0) is taken as 0"}
    found = [(renamed.get(name, name), x, a, b) for name, x, a, b in forward_cases(rng, hidden)]
    found.insert(1, (AGREES, np.round(rng.normal(size=6), 3), 1.25, 0.5))
    return [(name, x, a, b, np.ascontiguousarray(np.round(rng.normal(size=x.shape), 3)))
            for name, x, a, b in found]


def observe(ob: Observer, affine_relu_backward: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    observe_kernel(ob, affine_relu_backward, NAME)
    for name, x, a, b, g in cases(seed, hidden):
        with ob.case(name):
            grad_x = filled(x.shape)
            result = quiet_call(affine_relu_backward, x, a, b, g, grad_x)
            ob.put("x after the call", x)
            ob.put("grad_out after the call", g)
            ob.put("grad_x", grad_x)
            ob.put("result", result)
            if isinstance(result, (tuple, list)) and len(result) == 2:
                ob.put("grad_a", float(result[0]))
                ob.put("grad_b", float(result[1]))


def judge(ck: Checker, obs: Observations) -> None:
    kernel = judge_kernel(ck, obs, NAME)
    for name, x, a, b, g in cases(obs.seed, obs.hidden):
        with ck.case(name):
            seen = obs.case(ck, name, what=f"your {NAME}", hint=HINTS["kernel.numba"])
            reference = backward_autograd if name == AGREES else backward_reference
            gx, ga, gb = reference(x, a, b, g)
            ck.check(np.array_equal(seen["x after the call"], x)
                     and np.array_equal(seen["grad_out after the call"], g),
                     "your kernel changed x or grad_out.", hint=HINTS["bwd.changed"])
            ck.check("grad_a" in seen, "your kernel must return two numbers, (grad_a, grad_b).",
                     expected="a tuple (grad_a, grad_b)", received=shown(seen["result"]),
                     hint=HINTS["bwd.two-numbers"])
            z = a * x + b
            mistakes = [(a * g, HINTS["bwd.no-mask"]), (g * (z > 0), HINTS["bwd.no-a"])]
            if (z == 0).any():
                mistakes.insert(0, (a * g * (z >= 0), HINTS["bwd.at-zero"]))
            grad_x = seen["grad_x"]
            ck.close(grad_x, gx, atol=1e-12, rtol=1e-9, what="grad_x",
                     hint=unwritten_hint(grad_x, gx) or HINTS["bwd.formula"], mistakes=mistakes)
            got_a, got_b = seen["grad_a"], seen["grad_b"]
            swapped = np.allclose([got_b, got_a], [ga, gb], atol=1e-9, rtol=1e-9)
            if swapped and not np.isclose(ga, gb):
                ck.fail("grad_a and grad_b look swapped.", expected=(ga, gb),
                        received=(got_a, got_b), hint=HINTS["bwd.swapped"])
            ck.close(got_a, ga, atol=1e-9, rtol=1e-9, what="grad_a (first returned value)",
                     hint=HINTS["bwd.formula"],
                     mistakes=[(float(g[z > 0].sum()), HINTS["bwd.grad-a"])])
            ck.close(got_b, gb, atol=1e-9, rtol=1e-9, what="grad_b (second returned value)",
                     hint=HINTS["bwd.formula"], mistakes=[(float(g.sum()), HINTS["bwd.grad-b"])])
    judge_structure(ck, kernel.get("source"), NAME, {"x": 1, "grad_out": 1, "grad_x": 1})
    ck.done()
