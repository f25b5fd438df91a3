"""Check ``MatMul.apply(a, b)`` for 2-D a (n, k) and b (k, m): grad_a = grad @ b.T (n, k) and
grad_b = a.T @ grad (k, m). The course's apply, engine and every other Function stand in for
the learner's while it runs, so only MatMul is judged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of, shaped_mistakes
from .._exercise import Mistake
from .._observe import Case, Observations, Observer
from ._byhand import attempt, judge_attempt, judge_shapes_call
from ._gradcheck import judge_gradcheck, observe_gradcheck
from ._shared import isolated, library_of, saved_something
from .messages import HINTS

ID = "ch05-matmul-backward"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("grad_a without the transpose", ("return grad_output @ b.T, a.T @ grad_output",
                                             "return grad_output @ b, a.T @ grad_output"), None,
            "mm.a-no-transpose"),
    Mistake("grad_b in the wrong order", ("return grad_output @ b.T, a.T @ grad_output",
                                          "return grad_output @ b.T, grad_output.T @ a"), None,
            "mm.b-order"),
    Mistake("the gradients swapped", ("return grad_output @ b.T, a.T @ grad_output",
                                      "return a.T @ grad_output, grad_output @ b.T"), None,
            "mm.shape"),
    Mistake("nothing saved", ("        ctx.save_for_backward(a, b)\n        return Variable(a.data @",
                              "        return Variable(a.data @"), None, "mm.save"),
)

ONLY_B = "only b requires grad (a is data)"
GRADCHECK = "gradcheck of (3, 2) @ (2, 4)"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases, by name: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[int, ...]] = [(4, 4, 4), (2, 3, 4), (1, 5, 1), (3, 1, 2)]  # square first
    if hidden:
        shapes += [tuple(int(s) for s in rng.integers(1, 6, size=3)) for _ in range(3)]
    found = [(n, k, m, np.round(rng.normal(size=(n, k)), 3), np.round(rng.normal(size=(k, m)), 3),
              np.round(rng.normal(size=(n, m)), 3)) for n, k, m in shapes]
    only_b = (rng.normal(size=(3, 2)), rng.normal(size=(2, 4)), rng.normal(size=(3, 4)))
    checked = (rng.normal(size=(3, 2)), rng.normal(size=(2, 4)))
    return {"products": found, "only b": only_b, "gradcheck": checked}


def _title(n: int, k: int, m: int) -> str:
    return f"a ({n}, {k}) @ b ({k}, {m})"


def observe(ob: Observer, MatMul: Any, *, seed: int, hidden: bool) -> None:
    with isolated(MatMul):
        _observe(ob, MatMul, seed, hidden)


def _observe(ob: Observer, MatMul: Any, seed: int, hidden: bool) -> None:
    al = library_of(MatMul)
    inputs = cases(seed, hidden)
    for n, k, m, A, B, g in inputs["products"]:
        with ob.case(_title(n, k, m)):
            ob.put("class", str(getattr(MatMul, "__name__", MatMul)))
            a = al.Variable(A.copy(), requires_grad=True)
            b = al.Variable(B.copy(), requires_grad=True)
            if _apply_and_backward(ob, al, MatMul, a, b, g):
                for name, v in (("a", a), ("b", b)):
                    ob.put(f"{name}.grad", None if v.grad is None else np.asarray(data_of(v.grad)))
    with ob.case(ONLY_B):
        A, B, g = inputs["only b"]
        ob.put("class", str(getattr(MatMul, "__name__", MatMul)))
        a, b = al.Variable(A.copy()), al.Variable(B.copy(), requires_grad=True)
        if _apply_and_backward(ob, al, MatMul, a, b, g):
            ob.put("b.grad", None if b.grad is None else np.asarray(data_of(b.grad)))
    with ob.case(GRADCHECK):
        a, b = (al.Variable(x.copy(), requires_grad=True) for x in inputs["gradcheck"])
        observe_gradcheck(ob, al.Variable, MatMul.apply, (a, b))


def _apply_and_backward(ob: Observer, al: Any, MatMul: Any, a: Any, b: Any,
                        g: np.ndarray) -> bool:
    ok, y = attempt(ob, "raised", lambda: MatMul.apply(a, b))
    if not ok:
        return False
    ob.put("output", np.asarray(data_of(y)))
    ob.put("saved", y.grad_fn is None or saved_something(y.grad_fn))
    ok, _ = attempt(ob, "backward raised", lambda: y.backward(al.Variable(g)))
    return ok


def judge(ck: Checker, obs: Observations) -> None:
    inputs = cases(obs.seed, obs.hidden)
    for n, k, m, A, B, g in inputs["products"]:
        title = _title(n, k, m)
        with ck.case(title):
            seen = obs.case(ck, title)
            _judge_apply(ck, seen, A, B, with_forward=True)
            ga, gb = g @ B.T, A.T @ g
            ck.check(seen["a.grad"] is not None and seen["b.grad"] is not None,
                     "a.grad or b.grad is None.", hint=HINTS["mm.grad-none"])
            ck.close(seen["a.grad"], ga, what="gradient of a", hint=HINTS["mm.shape"],
                     mistakes=shaped_mistakes(
                         ga.shape, (lambda: g @ B, HINTS["mm.a-no-transpose"]),
                         (lambda: B.T @ g.T, HINTS["mm.a-order"]),
                         (lambda: (A.T @ g).T, "That is grad_b transposed: " + HINTS["mm.swapped"])))
            ck.close(seen["b.grad"], gb, what="gradient of b", hint=HINTS["mm.shape"],
                     mistakes=shaped_mistakes(
                         gb.shape, (lambda: A @ g, HINTS["mm.b-no-transpose"]),
                         (lambda: g.T @ A, HINTS["mm.b-order"]),
                         (lambda: (g @ B.T).T, "That is grad_a transposed: " + HINTS["mm.swapped"])))
    with ck.case(ONLY_B):
        A, B, g = inputs["only b"]
        seen = obs.case(ck, ONLY_B)
        _judge_apply(ck, seen, A, B, with_forward=False)
        ck.close(seen["b.grad"], A.T @ g, what="gradient of b", hint=HINTS["mm.shape"])
    with ck.case(GRADCHECK):
        judge_gradcheck(ck, obs.case(ck, GRADCHECK), [x.shape for x in inputs["gradcheck"]],
                        HINTS["mm.shape"])
    ck.done()


def _judge_apply(ck: Checker, seen: Case, A: np.ndarray, B: np.ndarray, with_forward: bool) -> None:
    name = str(seen["class"])
    judge_attempt(ck, seen, "raised", name)
    if with_forward:
        ck.close(seen["output"], A @ B, what="forward result", hint=HINTS["mm.forward"])
        judge_shapes_call(ck, seen, "backward raised", "MatMul.backward",
                          HINTS["mm.shape"] if seen["saved"] else HINTS["mm.save"])
    else:
        judge_attempt(ck, seen, "backward raised", "MatMul.backward", HINTS["mm.shape"])
