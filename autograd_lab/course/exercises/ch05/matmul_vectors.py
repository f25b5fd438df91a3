"""Check ``matmul(a, b)`` for 1-D and 2-D operands, as numpy's ``@``: a 1-D left operand is a
row (1, k), a 1-D right operand a column (k, 1), and the axes added for them are dropped from
the result, all through MatMul and reshape so that gradients flow. The course's MatMul, Reshape
and engine stand in for the learner's, so only matmul is judged."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of, swapped_attributes, swapped_names
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._byhand import attempt, judge_attempt, judge_shapes_call
from ._shared import course_pieces, recording
from .messages import HINTS

ID = "ch05-matmul-vectors"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("the added axis kept", ("    return out.reshape(shape) if out.shape != shape else out",
                                    "    return out"), None, "mv.drop"),
    Mistake("a 1-D left operand made a column", ("a.reshape(1, -1) if a.ndim == 1",
                                                 "a.reshape(-1, 1) if a.ndim == 1"), None,
            "mv.row-column"),
    Mistake("the axes dropped outside the graph", (
        "    return out.reshape(shape) if out.shape != shape else out",
        "    return Variable(out.data.reshape(shape))"), None, "mv.graph"),
)

SETUP = "matmul is a function of your library"


def cases(seed: int, hidden: bool) -> list[tuple[tuple, tuple, np.ndarray, np.ndarray, np.ndarray]]:
    """(a's shape, b's shape, A, B, upstream gradient): the same from the same seed."""
    rng = np.random.default_rng(seed)
    shapes = [((3,), (3, 2)), ((2, 3), (3,)), ((4,), (4,)), ((2, 3), (3, 4))]
    if hidden:
        shapes += [((1,), (1, 3)), ((5, 1), (1,)), ((2,), (2,))]
    found = []
    for sa, sb in shapes:
        A, B = np.round(rng.normal(size=sa), 3), np.round(rng.normal(size=sb), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=(A @ B).shape), 3)
        found.append((sa, sb, A, B, g))
    return found


def _title(sa: tuple, sb: tuple) -> str:
    return f"a {sa} @ b {sb}"


def observe(ob: Observer, matmul: Callable[[Any, Any], Any], *, seed: int, hidden: bool) -> None:
    ns = getattr(matmul, "__globals__", None)
    with ob.case(SETUP):
        ob.put("ok", ns is not None and "Variable" in ns)
        ob.put("text", repr(matmul))
    if ns is None or "Variable" not in ns:
        return
    Variable = ns["Variable"]
    mm = recording(Variable, np.matmul, lambda g, a, b: (g @ b.T, a.T @ g))
    rs = recording(Variable, lambda x, shape: x.reshape(shape),
                    lambda g, x, shape: (g.reshape(x.shape), None))

    def reshape(self: Any, *shape: Any) -> Any:
        return rs.apply(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                        else shape)

    with course_pieces(ns, ()), swapped_names(ns, {"MatMul": mm, "Reshape": rs}), \
            swapped_attributes(Variable, {"reshape": reshape}):
        for sa, sb, A, B, g in cases(seed, hidden):
            with ob.case(_title(sa, sb)):
                _observe_case(ob, matmul, Variable, A, B, g)


def _observe_case(ob: Observer, matmul: Callable[[Any, Any], Any], Variable: type[Any],
                  A: np.ndarray, B: np.ndarray, g: np.ndarray) -> None:
    a, b = Variable(A.copy(), requires_grad=True), Variable(B.copy(), requires_grad=True)
    ok, out = attempt(ob, "raised", lambda: matmul(a, b))
    if not ok:
        return
    ob.put("result", np.asarray(data_of(out), dtype=np.float64))
    ob.put("in the graph", getattr(out, "grad_fn", None) is not None)
    ok, _ = attempt(ob, "backward raised", lambda: out.backward(Variable(g)))
    if not ok:
        return
    for name, v in (("a", a), ("b", b)):
        ob.put(f"{name}.grad", None if v.grad is None else np.asarray(data_of(v.grad)))


def judge(ck: Checker, obs: Observations) -> None:
    setup = obs.case(ck, SETUP)
    if not setup["ok"]:
        ck.fail("matmul is not a function of your library.", received=setup["text"],
                hint=HINTS["mv.setup"])
    for sa, sb, A, B, g in cases(obs.seed, obs.hidden):
        title = _title(sa, sb)
        with ck.case(title):
            seen = obs.case(ck, title, what="your matmul")
            judge_shapes_call(ck, seen, "raised", "matmul", HINTS["mv.row-column"])
            want = A @ B
            got = seen["result"]
            if got.shape != want.shape:
                added = [n for n, s in (("left", sa), ("right", sb)) if len(s) == 1]
                ck.fail(f"the result has shape {got.shape}; numpy's a @ b has shape {want.shape}.",
                        expected=f"shape {want.shape}", received=f"shape {got.shape}", hint=(
                            f"The axis added for the 1-D {' and the 1-D '.join(added)} operand "
                            "was not dropped again: " + HINTS["mv.drop"] if added else
                            HINTS["mv.matrices"]))
            ck.close(got, want, what="result", hint=HINTS["mv.values"])
            ck.check(bool(seen["in the graph"]), "the result is not part of the graph: no "
                     "gradient can flow back to a and b.", hint=HINTS["mv.graph"])
            judge_attempt(ck, seen, "backward raised", "backward")
            a2 = A.reshape(1, -1) if A.ndim == 1 else A
            b2 = B.reshape(-1, 1) if B.ndim == 1 else B
            g2 = g.reshape(a2.shape[0], b2.shape[1])
            for name, expect in (("a", (g2 @ b2.T).reshape(sa)), ("b", (a2.T @ g2).reshape(sb))):
                grad = seen[f"{name}.grad"]
                ck.check(grad is not None, f"{name}.grad is None after backward.",
                         hint=HINTS["mv.grad-none"])
                ck.close(grad, expect, what=f"gradient of {name}", hint=HINTS["mv.grads"])
    ck.done()
