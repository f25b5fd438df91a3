"""Gradients of gradients: backward recorded under create_graph; grad."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .grad_mode import *  # noqa: F401,F403
from .kernels import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .optim import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
__all__ = ['grad', 'hessian', 'hvp', 'newton_step']


# --- section: walk_order ---
def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _walk_order(outputs):
    """Every Variable the outputs depend on, once each, before the Variables it came from."""
    top = Variable(0.0, requires_grad=True)       # a stand-in root above all the outputs
    top.grad_fn = Context()
    top.grad_fn.inputs = tuple(outputs)
    return topological_order(top)[1:]


# --- section: grad ---
def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """d outputs / d inputs as a tuple, one gradient per input; no .grad is touched.

    PyTorch's torch.autograd.grad. With create_graph=True the gradients have a history and can
    be differentiated again:  d1, = grad(y, x, create_graph=True);  d2, = grad(d1, x)
    """
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad got {len(outputs)} output(s) but {len(grad_outputs)} "
                         "grad_outputs: give one per output (None for a single-number output).")
    for i, x in enumerate(inputs):
        if not (isinstance(x, Variable) and x.requires_grad):
            raise RuntimeError(f"input {i} of grad does not require grad: differentiate with "
                               "respect to Variables made with requires_grad=True.")
    grads = {}
    for i, (y, g) in enumerate(zip(outputs, grad_outputs)):
        if not (isinstance(y, Variable) and y.requires_grad):
            raise RuntimeError(f"output {i} of grad does not require grad: nothing was recorded "
                               "for it. Compute it from a Variable with requires_grad=True, "
                               "outside no_grad().")
        if g is None:
            if y.data.size != 1:
                raise RuntimeError(f"output {i} has shape {y.shape}: grad makes the incoming "
                                   "gradient only for a single-number output. Pass "
                                   "grad_outputs= (d loss / d output, of that shape).")
            g = Variable(np.ones_like(y.data))
        g = as_variable(g)
        if g.shape != y.shape:
            raise RuntimeError(f"grad_outputs[{i}] has shape {g.shape}, but output {i} has "
                               f"shape {y.shape}: each grad_output has its output's shape.")
        grads[id(y)] = grads[id(y)] + g if id(y) in grads else g
    wanted = {id(x): i for i, x in enumerate(inputs)}
    found = [None] * len(inputs)
    retain_graph = create_graph if retain_graph is None else retain_graph
    enabled, GradMode.enabled = GradMode.enabled, bool(create_graph)
    try:
        for v in _walk_order(outputs):
            g = grads.pop(id(v))                  # complete: every user of v came earlier
            if id(v) in wanted:
                found[wanted[id(v)]] = g          # keep it; .grad is not touched
            node = v.grad_fn
            if node is None:
                continue
            input_grads = node.function.backward(node, g)
            if not isinstance(input_grads, tuple):
                input_grads = (input_grads,)
            for x, gx, needed in zip(node.inputs, input_grads, node.needs_input_grad):
                if needed and gx is not None:
                    gx = as_variable(gx)
                    grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx
            if not retain_graph:
                node.release()
    finally:
        GradMode.enabled = enabled
    for i, g in enumerate(found):
        if g is None and not allow_unused:
            raise RuntimeError(f"input {i} of grad was not used to compute the outputs, so it has "
                               "no gradient. Pass allow_unused=True to get None for it.")
    return tuple(found)


# --- section: hvp ---
def hvp(f, x, v):
    """H v: the Hessian of the scalar function f at the 1-D numpy array x, times v (numpy in, numpy out).

    (PyTorch's torch.autograd.functional.hvp(f, x, v) computes the same product.)
    """
    xv = Variable(np.array(x, dtype=np.float64), requires_grad=True)
    g, = grad(f(xv), xv, create_graph=True)
    hv, = grad((g * Variable(v)).sum(), xv)
    return hv.numpy()


# --- section: hessian ---
def hessian(f, x):
    """The (n, n) Hessian of the scalar function f at the 1-D numpy array x, from n hvps."""
    n = x.size
    columns = [hvp(f, x, np.eye(n)[i]) for i in range(n)]
    return np.stack(columns, axis=1)


# --- section: newton_step ---
def newton_step(f, x):
    """One step of Newton's method: x - H(x)^-1 ∇f(x), for a 1-D numpy array x."""
    xv = Variable(np.array(x, dtype=np.float64), requires_grad=True)
    g, = grad(f(xv), xv)
    return x - np.linalg.solve(hessian(f, x), g.numpy())
