"""Chapter 11's checker not yet written as ``observe`` and ``judge`` (ch11-grad) and the
loader's check of the learner's ``mygrad/higher.py``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


from .._common import Checker, data_of, named
from .problems import quadratic

__all__ = ["ch11_grad", "mygrad_higher"]


# -- the learner's mygrad/higher.py -----------------------------------------------------------
def mygrad_higher(pkg: Any) -> None:
    """The loader's check of ``mygrad/higher.py``: ``grad`` (PyTorch's semantics, exact second
    derivatives, ``.grad`` untouched), ``hvp`` exact, and a Newton step."""
    ck = Checker("mygrad-higher")
    with ck.case("grad twice gives exact second derivatives and leaves .grad alone"):
        x = pkg.Variable(np.array([0.5, 2.0, -1.5]), requires_grad=True)
        y = (x ** 3).sum()
        d1, = ck.call(pkg.grad, y, x, create_graph=True,
                      hint="grad(outputs, inputs, create_graph=True) returns a tuple of gradients.")
        ck.close(d1.data, 3 * x.data ** 2, atol=1e-12, rtol=1e-12, what="first derivative 3x²")
        ck.check(x.grad is None, "grad wrote into x.grad.", received=x.grad,
                 hint="grad returns the gradients it found at the inputs; it never accumulates "
                      "into .grad.")
        ck.check(getattr(d1, "grad_fn", None) is not None,
                 "with create_graph=True the first derivative has no history (grad_fn is None).",
                 hint="Run the backward formulas with GradMode.enabled = True when "
                      "create_graph=True, so that they are recorded.")
        d2, = ck.call(pkg.grad, d1.sum(), x)
        ck.close(d2.data, 6 * x.data, atol=1e-12, rtol=1e-12, what="second derivative 6x")
    with ck.case("grad with grad_outputs, several inputs, allow_unused"):
        a = pkg.Variable(np.array([1.0, 2.0]), requires_grad=True)
        b = pkg.Variable(np.array([3.0, -1.0]), requires_grad=True)
        unused = pkg.Variable(np.array([1.0]), requires_grad=True)
        ga, gb = ck.call(pkg.grad, a * b, (a, b), pkg.Variable(np.array([1.0, 10.0])))
        ck.close(ga.data, np.array([3.0, -10.0]), what="d(a·b)/da weighted by grad_outputs")
        ck.close(gb.data, np.array([1.0, 20.0]), what="d(a·b)/db weighted by grad_outputs")
        got = ck.call(pkg.grad, (a * b).sum(), (a, unused), allow_unused=True)
        ck.check(got[1] is None, "an unused input must get None with allow_unused=True.",
                 received=got[1])
        ck.raises(RuntimeError, pkg.grad, (a * b).sum(), (a, unused),
                  hint="Without allow_unused=True, an input the outputs do not depend on raises "
                       "RuntimeError saying so.")
    with ck.case("hvp and newton_step on a quadratic"):
        fn = quadratic(np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([1.0, -1.0]))
        x0, v0 = np.array([0.3, -0.7]), np.array([1.0, 2.0])
        hv = ck.call(pkg.hvp, fn, x0, v0)
        ck.close(np.asarray(data_of(hv), dtype=float), fn.hessian(x0) @ v0, atol=1e-12,
                 rtol=1e-12, what="hvp on a quadratic")
        step = ck.call(pkg.newton_step, fn, x0)
        ck.close(np.asarray(data_of(step), dtype=float),
                 np.linalg.solve(fn.hessian(x0), -np.array([1.0, -1.0])), atol=1e-10,
                 rtol=1e-10, what="one Newton step on a quadratic (its minimum)")
    ck.done()


# -- ch11-grad ------------------------------------------------------------------------------
class _FailingBackward:
    """Stands in for a node's Function so that the walk fails halfway, inside grad."""

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        raise RuntimeError("a backward that fails on purpose, inside the walk")


def ch11_grad(my_grad: Callable[..., Any], MyVariable: type[Any], *, seed: int = 0,
              hidden: bool = False) -> None:
    """Check ``grad(outputs, inputs, create_graph=False)``: one gradient per input, the sums over
    every path (a Variable used twice gets both contributions), without touching any ``.grad``;
    with ``create_graph=False`` the gradients have no history, with ``create_graph=True`` they
    have one, so that grad of a gradient is the second derivative; the recording switch is
    restored afterwards, also when the walk fails. Only the learner's ``grad`` and their
    Variable's operations (chapters 02-05) are used."""
    ck = Checker("ch11-grad", seed=seed, hidden=hidden)
    rng = ck.rng
    n = 4 if not hidden else 6
    x0 = np.round(rng.uniform(0.5, 1.5, size=n), 3)
    w0 = np.round(rng.normal(size=n), 3)
    walk = ("Walk the graph from the outputs in _walk_order (each Variable after all its "
            "users); pop its complete gradient, keep it if it is an input, call its node's "
            "backward and ADD each input's share into the dict of gradients.")

    def var(a: np.ndarray) -> Any:
        return ck.call(named(lambda: MyVariable(a.copy(), requires_grad=True), "Variable"))

    def grads_of(outputs: Any, inputs: Any, **kw: Any) -> tuple:
        out = ck.call(named(lambda: my_grad(outputs, inputs, **kw), "grad"), hint=walk)
        ck.check(isinstance(out, tuple), "grad does not return a tuple.", received=type(out),
                 hint="Return tuple(found): one gradient per input, as torch.autograd.grad.")
        return out

    with ck.case("y = sum(w * x * x): dy/dx = 2 w x, dy/dw = x * x (x is used twice)"):
        x, w = var(x0), var(w0)
        y = (w * x * x).sum()
        gx, gw = grads_of(y, (x, w))
        ck.check(getattr(x * x, "grad_fn", None) is not None,
                 "after grad(...) new operations are not recorded any more.",
                 hint="Save GradMode.enabled before the walk and restore it in a finally: "
                      "block at its end.")
        got = np.asarray(data_of(gx), dtype=np.float64)
        ck.close(got, 2 * w0 * x0, rtol=1e-9, atol=1e-12, what="dy/dx",
                 hint=walk, mistakes=[(w0 * x0, "Only one of the two paths through x arrived: "
                                      "when a gradient for a Variable is already in the dict, "
                                      "add the new share to it instead of replacing it.")])
        ck.close(np.asarray(data_of(gw), dtype=np.float64), x0 * x0, rtol=1e-9, atol=1e-12,
                 what="dy/dw", hint=walk)
        ck.check(x.grad is None and w.grad is None, "grad changed the inputs' .grad.",
                 expected=None, received="a gradient in x.grad or w.grad",
                 hint="grad returns the gradients and leaves .grad alone: do not call "
                      "backward(); keep the gradients in your own dict.")
        ck.check(not getattr(gx, "requires_grad", False) and getattr(gx, "grad_fn", None) is None,
                 "with create_graph=False the gradient has a history.",
                 hint="Record the backward only when create_graph is True: set "
                      "GradMode.enabled = bool(create_graph) during the walk.")
    with ck.case("create_graph=True: the gradient has a history; grad of it is the second "
                 "derivative, d2/dx2 sum(x ** 3) = 6 x"):
        x = var(x0)
        y = (x * x * x).sum()
        g, = grads_of(y, x, create_graph=True)
        ck.close(np.asarray(data_of(g), dtype=np.float64), 3 * x0 ** 2, rtol=1e-9, atol=1e-12,
                 what="dy/dx", hint=walk)
        ck.check(getattr(g, "grad_fn", None) is not None,
                 "with create_graph=True the gradient has no grad_fn: its computation was not "
                 "recorded.",
                 hint="Turn recording ON during the walk when create_graph is True: enabled, "
                      "GradMode.enabled = GradMode.enabled, bool(create_graph), and call the "
                      "backward of each node on Variables, so that the engine records it.")
        h, = grads_of(g.sum(), x)
        ck.close(np.asarray(data_of(h), dtype=np.float64), 6 * x0, rtol=1e-9, atol=1e-12,
                 what="d2y/dx2", hint="The second grad differentiates the recorded first "
                 "one: keep the graph (retain_graph follows create_graph) and record with "
                 "Variable operations only.")
    with ck.case("the recording switch is restored, also after a failing walk"):
        x = var(x0)
        y = (x * x).sum()
        grads_of(y, x, create_graph=True)
        z = x * x
        ck.check(getattr(z, "grad_fn", None) is not None,
                 "after grad(..., create_graph=True) new operations are not recorded any more.",
                 hint="Restore GradMode.enabled to its old value in a finally: block at the "
                      "end of the walk.")
        unused = var(w0)
        y = (x * x).sum()
        try:
            my_grad(y, (x, unused))
        except Exception:          # noqa: BLE001  (the error itself is checked by the library)
            pass
        y = (x * x).sum()          # and a walk that fails halfway (left off, y has no graph)
        if getattr(x * x, "grad_fn", None) is not None and hasattr(y.grad_fn, "inputs"):
            inner = y.grad_fn.inputs[0].grad_fn   # the product's node: make its backward fail
            try:
                inner.function = _FailingBackward
            except (AttributeError, TypeError):  # a node that takes no attribute: skip this part
                inner = None
            if inner is not None:
                try:
                    my_grad(y, (x,))
                except Exception:      # noqa: BLE001  (it fails on purpose, inside the walk)
                    pass
        z = x * x
        ck.check(getattr(z, "grad_fn", None) is not None,
                 "after a grad call that raised, new operations are not recorded any more.",
                 hint="Restore GradMode.enabled in a finally: block, so that an error inside "
                      "the walk cannot leave recording switched off.")
        y = (x * x).sum()
        gx, gu = grads_of(y, (x, unused), allow_unused=True)
        ck.check(gu is None, "an unused input with allow_unused=True does not get None.",
                 received=gu, hint="An input the walk never reached keeps None in found.")
    ck.done()
