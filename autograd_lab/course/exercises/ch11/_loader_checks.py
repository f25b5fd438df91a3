"""The loader's check of the learner's ``mygrad/higher.py``: grad, hvp and newton_step of the
package itself."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of
from .problems import quadratic

__all__ = ["mygrad_higher"]


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
