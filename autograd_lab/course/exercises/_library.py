"""Checks of the learner's ``mygrad`` modules, one per module, as the chapter loader runs them.

Each takes the package (``mygrad`` built from the modules so far) and raises
``AssertionError`` with expected vs received and a hint on the first failure. They test what
later chapters rely on, on small cases, quickly (the loader runs all of them at the start of
every chapter). ``autograd_lab.course.exercises.chNN.mygrad_<module>`` names them for the loader.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from ._common import Checker


def _var(pkg: ModuleType, data: Any, requires_grad: bool = False) -> Any:
    return pkg.Variable(np.asarray(data, dtype=np.float64), requires_grad=requires_grad)


def variable(pkg: ModuleType) -> None:
    """``mygrad.Variable``: data, grad, requires_grad, grad_fn, is_leaf, shape."""
    ck = Checker("mygrad-variable")
    with ck.case("Variable holds data, grad, requires_grad, grad_fn, is_leaf, shape"):
        v = ck.call(pkg.Variable, [1.0, 2.0], requires_grad=True)
        ck.check(isinstance(getattr(v, "data", None), np.ndarray), "data is not a numpy array.",
                 received=type(getattr(v, "data", None)).__name__,
                 hint="self.data = np.asarray(data) in Variable.__init__.")
        ck.close(v.data, np.array([1.0, 2.0]), what="data")
        ck.check(getattr(v, "grad", 0) is None, "a new Variable's grad is not None.",
                 received=getattr(v, "grad", "no attribute"), hint="self.grad = None.")
        ck.check(getattr(v, "requires_grad", None) is True, "requires_grad was not kept.",
                 received=getattr(v, "requires_grad", "no attribute"),
                 hint="self.requires_grad = bool(requires_grad).")
        ck.check(getattr(v, "grad_fn", 0) is None and getattr(v, "is_leaf", None) is True,
                 "a new Variable should have grad_fn None and be a leaf.",
                 hint="grad_fn = None in __init__; is_leaf is a property: grad_fn is None.")
        ck.check(tuple(getattr(v, "shape", ())) == (2,), "shape is wrong.",
                 expected=(2,), received=getattr(v, "shape", None),
                 hint="shape is a property returning self.data.shape.")
        v.grad_fn = object()
        ck.check(v.is_leaf is False, "is_leaf did not follow grad_fn.",
                 hint="Compute is_leaf from grad_fn each time it is read (a property).")
    ck.done()


def function(pkg: ModuleType) -> None:
    """``mygrad.Function.apply`` records nodes named ``<Function>Backward``; +, *, exp, relu."""
    ck = Checker("mygrad-function")
    with ck.case("a * b records a MulBackward node with the inputs and needs_input_grad"):
        a, b = _var(pkg, [1.0, -2.0], True), _var(pkg, [3.0, 4.0])
        y = ck.call(lambda: a * b)
        ck.close(y.data, np.array([3.0, -8.0]), what="a * b")
        ck.check(type(y.grad_fn).__name__ == "MulBackward",
                 "y.grad_fn is not a MulBackward node.", received=repr(y.grad_fn),
                 hint="apply makes ctx = cls.Node() and sets output.grad_fn = ctx.")
        ck.check(y.requires_grad is True and y.is_leaf is False,
                 "the output of a recorded operation must require grad and not be a leaf.")
        ck.check(tuple(y.grad_fn.needs_input_grad) == (True, False),
                 "needs_input_grad is wrong.", expected=(True, False),
                 received=tuple(y.grad_fn.needs_input_grad))
    with ck.case("nothing is recorded when no input requires grad"):
        y = ck.call(lambda: _var(pkg, [1.0]) + 2.0)
        ck.check(y.grad_fn is None and y.requires_grad is False,
                 "an operation on Variables that need no gradient recorded a node.",
                 hint="Record only if grad mode is on and any(ctx.needs_input_grad).")
    with ck.case("backward formulas of Add, Mul, Exp, ReLU"):
        x = _var(pkg, [-1.0, 0.0, 2.0], True)
        for name, fn, want in [
                ("Mul", pkg.Mul, lambda: (np.array([5.0, 6.0, 7.0]),)),
                ("Exp", pkg.Exp, lambda: (np.exp(x.data),)),
                ("ReLU", pkg.function.ReLU, lambda: (np.array([0.0, 0.0, 1.0]),))]:
            args = (x, _var(pkg, [5.0, 6.0, 7.0])) if name == "Mul" else (x,)
            y = ck.call(fn.apply, *args)
            node = y.grad_fn
            grads = ck.call(lambda: node.function.backward(node, _var(pkg, np.ones(3))))
            grads = grads if isinstance(grads, tuple) else (grads,)
            ck.close(np.asarray(getattr(grads[0], "data", grads[0]), dtype=float), want()[0],
                     what=f"{name}.backward's gradient for x")
    ck.done()


def engine(pkg: ModuleType) -> None:
    """``Variable.backward``: the l1...l4 example, accumulation, reuse, retain_graph."""
    ck = Checker("mygrad-engine")
    with ck.case("the chapter's l1...l4 graph: loss 40, gradients 28, 8, 10"):
        inp = _var(pkg, np.ones((2, 2)))
        w1, w2, w3 = (_var(pkg, v, True) for v in (2.0, 3.0, 4.0))
        l1 = inp * w1
        l4 = (l1 + w2) * (l1 * w3)
        loss = ck.call(l4.mean)
        ck.call(loss.backward)
        ck.close(loss.data, 40.0, what="loss")
        ck.close([w.grad.data for w in (w1, w2, w3)], [28.0, 8.0, 10.0], what="w1, w2, w3 grads",
                 hint="Each node once, in topological order; add the contributions of a "
                      "Variable used twice.")
    with ck.case("a second backward accumulates into .grad"):
        x = _var(pkg, 3.0, True)
        for _ in range(2):
            ck.call((x * x).backward)
        ck.close(x.grad.data, 12.0, what="x.grad after two backward calls",
                 hint="Leaves accumulate: grad = grad + new gradient, never overwrite.")
    with ck.case("a deep chain (3000 operations) needs no recursion"):
        x = _var(pkg, 1.0, True)
        y = x
        for _ in range(3000):
            y = y * 1.0
        ck.call(y.backward)
        ck.close(x.grad.data, 1.0, what="x.grad", hint="Walk the graph with a loop and a stack.")
    ck.done()


def _softmax(x: Any) -> Any:
    """x.softmax(axis=-1) for mygrad; autograd_lab's is a function."""
    if hasattr(x, "softmax"):
        return x.softmax(axis=-1)
    import autograd_lab.functional as F
    return F.softmax(x, axis=-1)


def ops(pkg: ModuleType) -> None:
    """Broadcasting gradients, sum/mean with an axis, reshape, transpose, matmul, softmax."""
    ck = Checker("mygrad-ops")
    rng = np.random.default_rng(5)
    a_data, b_data = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    cases = [
        ("(a - b) / (b * b + 1) with b broadcast", lambda a, b: ((a - b) / (b * b + 1)).sum()),
        ("sum over axis 0 and mean over axis 1",
         lambda a, b: (a.sum(axis=0) * b).sum() + a.mean(axis=1).sum()),
        ("reshape, transpose and matmul", lambda a, b: (a.reshape(4, 3).T @ b).sum()),
        ("softmax over the last axis", lambda a, b: (_softmax(a + b) * a).sum()),
        ("log, ** and indexing", lambda a, b: ((a * a + b * b).log() ** 2)[1:, ::2].sum()),
    ]
    import autograd_lab as al
    for name, f in cases:
        with ck.case(name):
            a, b = _var(pkg, a_data, True), _var(pkg, b_data, True)
            out = ck.call(f, a, b)
            ck.call(out.backward)
            ra, rb = al.tensor(a_data, requires_grad=True), al.tensor(b_data, requires_grad=True)
            ref = f(ra, rb)
            ref.backward()
            ck.close(out.data, ref.data, what="value")
            for name_, mine, theirs in (("a", a, ra), ("b", b, rb)):
                ck.check(mine.grad is not None, f"{name_}.grad is None after backward.",
                         hint="Every input that requires grad must get a gradient.")
                ck.close(mine.grad.data, theirs.grad.data,  # type: ignore[union-attr]  # checked above
                         what=f"gradient of {name_}",
                         hint="A broadcast input gets the gradient summed down to its shape.")
    ck.done()


def grad_mode(pkg: ModuleType) -> None:
    """no_grad, detach, and in-place changes that make a stale saved tensor raise."""
    ck = Checker("mygrad-grad-mode")
    with ck.case("no_grad records nothing, and restores recording afterwards"):
        x = _var(pkg, [1.0, 2.0], True)
        with pkg.no_grad():
            y = x * 2
        ck.check(y.grad_fn is None and not y.requires_grad, "no_grad recorded a node.")
        ck.check((x * 2).grad_fn is not None, "recording is not back on after no_grad.")
    with ck.case("detach gives a leaf sharing the data"):
        d = ck.call((x * 2).detach)
        ck.check(d.is_leaf and not d.requires_grad, "detach() must give a leaf without grad.")
    with ck.case("an in-place change of a saved tensor makes backward raise"):
        a, c = _var(pkg, np.ones(3), True), _var(pkg, np.ones(3))
        y = a * c
        ck.call(c.mul_, 2.0)
        ck.raises(RuntimeError, y.sum().backward,
                  hint="save_for_backward records each tensor's _version; saved_tensors "
                       "compares them and raises if one changed.")
    ck.done()
