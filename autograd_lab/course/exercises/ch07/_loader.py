"""The loader's check of the learner's ``mygrad/kernels.py`` (not a graded exercise: it runs
where the package is loaded, on the learner's own module)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._common import Checker
from ._shared import filled as _filled

__all__ = ["mygrad_kernels"]


def mygrad_kernels(pkg: Any) -> None:
    """The loader's check of ``mygrad/kernels.py``: every kernel agrees with its numpy
    reference, and the operations wired on them (``Variable.relu``, ``softmax_cross_entropy``)
    give the references' values and gradients, also under ``create_graph=True``.

    The kernels are compiled on first use (a few seconds), so the check calls only those the
    operations of later chapters run on, with small float64 inputs (one signature each); the
    exercise checkers of chapter 07 test every kernel on its own."""
    from numba.core.errors import NumbaWarning
    ck = Checker("mygrad-kernels")
    rng = np.random.default_rng(7)
    x2 = np.round(rng.normal(size=(5, 4)), 3)
    targets = np.array([0, 3, 1, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaWarning)
        with ck.case("the kernels behind the operations agree with their numpy references"):
            grad = _filled(x2.shape)
            loss = ck.call(pkg.cross_entropy_rows, x2, targets, grad)
            ref_loss, ref_grad = pkg.cross_entropy_rows_ref(x2, targets)
            ck.close(np.array([loss, *grad.ravel()]), np.array([ref_loss, *ref_grad.ravel()]),
                     atol=1e-12, what="cross_entropy_rows vs cross_entropy_rows_ref")
            ck.close(ck.call(pkg.column_sums, x2), pkg.column_sums_ref(x2), atol=1e-12,
                     what="column_sums vs column_sums_ref")
        with ck.case("Variable.relu runs the kernel: values and gradient of max(x, 0)"):
            x = pkg.Variable(np.array([[-1.5, 0.0, 2.0], [0.5, -0.25, 3.0]]), requires_grad=True)
            y = ck.call(x.relu)
            ck.close(y.data, np.maximum(x.data, 0), what="x.relu()")
            ck.check(type(y.grad_fn).__name__ == "ReLUBackward",
                     "x.relu() is not recorded as a ReLU node.", received=repr(y.grad_fn),
                     hint="Variable.relu = lambda self: ReLU.apply(self), with the ReLU Function "
                          "of section 8 (exercise ch07-relu-function).")
            ck.call(y.sum().backward)
            ck.close(x.grad.data, (x.data > 0) * 1.0, what="x.grad (relu'(0) is 0)")
        with ck.case("SoftmaxRows runs softmax_rows: values and gradient of each row's softmax"):
            ck.check(hasattr(pkg, "SoftmaxRows"), "mygrad/kernels.py has no SoftmaxRows.",
                     hint="Run the cell of section 8 that defines ReLU and SoftmaxRows again: "
                          "it writes them into the module.")
            x = pkg.Variable(x2.copy(), requires_grad=True)
            y = ck.call(pkg.SoftmaxRows.apply, x)
            ck.close(y.data, pkg.softmax_rows_ref(x2), atol=1e-12, what="SoftmaxRows(x)")
            g = np.round(rng.normal(size=x2.shape), 3)
            ck.call(y.backward, pkg.Variable(g))
            p = pkg.softmax_rows_ref(x2)
            ck.close(x.grad.data, p * (g - (g * p).sum(axis=1, keepdims=True)), atol=1e-12,
                     what="gradient of SoftmaxRows",
                     hint="backward: y * (g - (g * y).sum(axis=1, keepdims=True)) with y the "
                          "softmax the forward computed.")
        with ck.case("softmax_cross_entropy: mean loss and gradient of the references"):
            logits = pkg.Variable(x2, requires_grad=True)
            loss = ck.call(pkg.softmax_cross_entropy, logits, targets)
            ck.close(loss.data, ref_loss / 5, atol=1e-12, what="mean cross-entropy")
            ck.call(loss.backward)
            ck.close(logits.grad.data, ref_grad / 5, atol=1e-12, what="gradient of the logits")
            ck.raises(IndexError, pkg.softmax_cross_entropy, pkg.Variable(x2),
                      np.array([0, 4, 1, 1, 2]),
                      hint="Check that every target lies in 0..classes-1 before calling the kernel.")
        with ck.case("under create_graph=True the gradients can be differentiated again"):
            z = pkg.Variable(x2, requires_grad=True)
            loss = pkg.softmax_cross_entropy(z.relu() * 2.0, targets)
            ck.call(loss.backward, create_graph=True,
                    hint="Under create_graph=True (GradMode.enabled in backward) use the "
                         "Variable formula instead of the kernel.")
            ck.check(z.grad is not None and z.grad.grad_fn is not None,
                     "with create_graph=True the gradient has no history: a kernel's numpy "
                     "backward cannot be recorded.",
                     hint="In backward, if GradMode.enabled: return the gradient computed with "
                          "Variable operations (e.g. softmax(logits) - onehot, times "
                          "grad_output / n).")
    ck.done()
