"""gradcheck: compare backward's derivatives with central differences, in float64.

>>> import autograd_lab as al
>>> x = al.randn(3, seed=0, requires_grad=True)
>>> al.gradcheck(lambda x: (x * x).sum(), (x,))
True
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .engine import grad as autograd_grad
from .errors import GradcheckError
from .variable import Variable


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _to_float64(inputs: Sequence[Any]) -> tuple:
    out = []
    for x in inputs:
        if isinstance(x, Variable) and x.dtype.kind == "f":
            out.append(Variable(x.data.astype(np.float64), requires_grad=x.requires_grad))
        else:
            out.append(x)
    return tuple(out)


def _outputs(fn: Callable, inputs: tuple) -> tuple[Variable, ...]:
    outs = _as_tuple(fn(*inputs))
    for i, o in enumerate(outs):
        if not isinstance(o, Variable):
            raise TypeError(f"gradcheck: fn must return a Variable or a tuple of Variables; output {i} "
                            f"is a {type(o).__name__}.")
    return outs


def numerical_jacobian(fn: Callable, inputs: tuple, eps: float = 1e-6) -> list[list[np.ndarray]]:
    """J[i][j] of shape (inputs[j].size, outputs[i].size) by central differences.

    fn runs with grad mode on (it may itself differentiate, as in gradgradcheck); the inputs are
    perturbed through their numpy data, which autograd does not see."""
    n_out = [o.data.size for o in _outputs(fn, inputs)]
    jac = [[np.zeros((x.data.size if isinstance(x, Variable) else 0, n)) for x in inputs] for n in n_out]
    for j, x in enumerate(inputs):
        if not (isinstance(x, Variable) and x.requires_grad):
            continue
        data = x.data  # indexed in place (a reshape of a non-contiguous array would be a copy)
        for k, at in enumerate(np.ndindex(data.shape)):
            orig = data[at]
            data[at] = orig + eps
            plus = [o.data.astype(np.float64).ravel().copy() for o in _outputs(fn, inputs)]
            data[at] = orig - eps
            minus = [o.data.astype(np.float64).ravel().copy() for o in _outputs(fn, inputs)]
            data[at] = orig
            for i in range(len(n_out)):
                jac[i][j][k] = (plus[i] - minus[i]) / (2 * eps)
    return jac


def analytical_jacobian(fn: Callable, inputs: tuple) -> list[list[np.ndarray]]:
    """J[i][j] computed by running backward once per output element."""
    diff = [x for x in inputs if isinstance(x, Variable) and x.requires_grad]
    outs = _outputs(fn, inputs)
    jac = [[np.zeros((x.data.size if isinstance(x, Variable) else 0, o.data.size)) for x in inputs]
           for o in outs]
    for i, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for m in range(o.data.size):
            seed = np.zeros(o.data.size, dtype=o.dtype)
            seed[m] = 1
            grads = autograd_grad(o, diff, Variable(seed.reshape(o.shape)), retain_graph=True,
                                  allow_unused=True)
            g_iter = iter(grads)
            for j, x in enumerate(inputs):
                if isinstance(x, Variable) and x.requires_grad:
                    g = next(g_iter)
                    if g is not None:
                        jac[i][j][:, m] = g.data.astype(np.float64).ravel()
    return jac


def gradcheck(fn: Callable[..., Any], inputs: Any, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """True when backward agrees with central differences for every output and input.

    Inputs that are floating point are copied to float64 first (float32 differences are too
    coarse for eps=1e-6). On a mismatch, raises GradcheckError (or returns False)."""
    inputs = _to_float64(_as_tuple(inputs))
    if not any(isinstance(x, Variable) and x.requires_grad for x in inputs):
        raise GradcheckError("gradcheck: no input requires grad, so there is nothing to check. "
                             "Create the inputs with requires_grad=True.")
    analytical = analytical_jacobian(fn, inputs)
    numerical = numerical_jacobian(fn, inputs, eps)
    for i, (a_row, n_row) in enumerate(zip(analytical, numerical)):
        for j, (a, n) in enumerate(zip(a_row, n_row)):
            if not (isinstance(inputs[j], Variable) and inputs[j].requires_grad):
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                if not raise_exception:
                    return False
                with np.printoptions(precision=6, suppress=True, threshold=200):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {i} with respect to input {j},\n"
                        f"numerical:{n}\nanalytical:{a}\n"
                        f"(largest difference {np.max(np.abs(a - n)):.3g}; rows index the input's "
                        "elements, columns the output's). Check the backward formula for this input."
                    )
    return True


def gradgradcheck(fn: Callable[..., Any], inputs: Any, grad_outputs: Any = None, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  seed: int = 0) -> bool:
    """gradcheck of the first derivative: checks second derivatives (needs create_graph support)."""
    inputs = _to_float64(_as_tuple(inputs))
    outs = _outputs(fn, inputs)
    rng = np.random.default_rng(seed)
    if grad_outputs is None:
        grad_outputs = tuple(Variable(rng.standard_normal(o.shape), requires_grad=True) for o in outs)
    else:
        grad_outputs = _to_float64(_as_tuple(grad_outputs))
    n_in = len(inputs)
    diff_idx = [k for k, x in enumerate(inputs) if isinstance(x, Variable) and x.requires_grad]

    def first_derivative(*args: Any) -> tuple:
        xs, gos = args[:n_in], args[n_in:]
        ys = [o for o in _outputs(fn, xs) if o.requires_grad]
        grads = autograd_grad(ys, [xs[k] for k in diff_idx], list(gos[:len(ys)]), create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
