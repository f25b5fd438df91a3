"""The engine: topological order and backward, wired as Variable.backward."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
__all__ = ['backward', 'register_hook', 'retain_grad', 'topological_order']


# --- section: topological_order ---
def _inputs_to_visit(v):
    """The Variables that v was computed from and that need a gradient."""
    if v.grad_fn is None:
        return []
    return [x for x in v.grad_fn.inputs if isinstance(x, Variable) and x.requires_grad]


def topological_order(root):
    """Every Variable root depends on (that requires grad), once each, root first and every
    Variable before the Variables it came from. Iterative: no recursion limit on deep graphs."""
    order, visited = [], {id(root)}
    stack = [(root, iter(_inputs_to_visit(root)))]
    while stack:
        v, inputs = stack[-1]
        for x in inputs:
            if id(x) not in visited:
                visited.add(id(x))
                stack.append((x, iter(_inputs_to_visit(x))))
                break
        else:                     # all inputs of v are done: v comes after them
            stack.pop()
            order.append(v)
    return order[::-1]            # root first, leaves last


# --- section: backward ---
def _accumulate(v, grad):
    """Add grad into v.grad (a fresh copy the first time, so no two .grad share an array)."""
    if v.grad is None:
        v.grad = Variable(grad.data.copy()) if not GradMode.enabled else grad
    else:
        v.grad = v.grad + grad


def _check_grads(node, grads):
    """The gradients a Function's backward returned, one per input; clear errors if they are wrong.
    PyTorch's rule: surplus trailing Nones are dropped, and missing trailing gradients are fine
    for inputs that need none."""
    if not isinstance(grads, tuple):
        grads = (grads,)
    n = len(node.inputs)
    if len(grads) > n and all(g is None for g in grads[n:]):
        grads = grads[:n]                 # gradients of defaulted arguments that were not passed
    elif len(grads) < n and not any(node.needs_input_grad[len(grads):]):
        grads = grads + (None,) * (n - len(grads))
    if len(grads) != n:
        raise RuntimeError(
            f"{node.function.__name__}.backward returned {len(grads)} gradient(s), but its "
            f"forward took {n} input(s): return one per input (None for inputs that need no "
            "gradient). Only surplus trailing Nones may be added, and only trailing inputs that "
            "need no gradient may be left out.")
    checked = []
    for i, (x, g) in enumerate(zip(node.inputs, grads)):
        if g is not None and isinstance(x, Variable):
            g = as_variable(g)
            if g.shape != x.shape:
                raise RuntimeError(
                    f"{node.function.__name__}.backward returned a gradient of shape {g.shape} "
                    f"for input {i}, which has shape {x.shape}: a gradient has the shape of its "
                    "input.")
        checked.append(g)
    return checked


_NOTHING_RECORDED = (
    "backward() of a Variable that does not require grad: nothing was recorded. Make a leaf "
    "with requires_grad=True before computing the output.")
_NEEDS_GRADIENT = (
    "backward() without a gradient needs a single-number output, but this one has shape {}: "
    "pass gradient= (d loss / d output, of that shape).")


def backward(root, gradient=None, retain_graph=None, create_graph=False):
    """Compute d root / d leaf for every leaf that requires grad; add it into leaf.grad."""
    if not root.requires_grad:
        raise RuntimeError(_NOTHING_RECORDED)
    if gradient is None and root.data.size != 1:
        raise RuntimeError(_NEEDS_GRADIENT.format(root.shape))
    gradient = Variable(np.ones_like(root.data)) if gradient is None else as_variable(gradient)
    retain_graph = create_graph if retain_graph is None else retain_graph
    enabled, GradMode.enabled = GradMode.enabled, bool(create_graph)
    try:
        grads = {id(root): gradient}
        for v in topological_order(root):
            g = _run_hooks(v, grads.pop(id(v)))   # complete: every user of v came earlier
            if v.grad_fn is None or getattr(v, "_retains_grad", False):
                _accumulate(v, g)
            node = v.grad_fn
            if node is None:
                continue
            input_grads = _check_grads(node, node.function.backward(node, g))
            for x, gx, needed in zip(node.inputs, input_grads, node.needs_input_grad):
                if needed and gx is not None:
                    grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx
            if not retain_graph:
                node.release()
    finally:
        GradMode.enabled = enabled


Variable.backward = backward


# --- section: hooks ---
def _run_hooks(v, grad):
    """Pass v's complete gradient through its hooks; a hook's result other than None replaces it."""
    for hook in list(getattr(v, "_hooks", ())):
        changed = hook(grad)
        if changed is not None:
            grad = as_variable(changed)
    return grad


class _HookHandle:
    """What register_hook returns: remove() takes that one hook off again."""

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def retain_grad(self):
    """Keep the gradient of this non-leaf in .grad during backward."""
    self._retains_grad = True


def register_hook(self, hook):
    """Call hook(grad) when this Variable's gradient is complete; a returned value replaces it."""
    if "_hooks" not in self.__dict__:
        self._hooks = []
    self._hooks.append(hook)
    return _HookHandle(self._hooks, hook)


Variable.retain_grad = retain_grad
Variable.register_hook = register_hook
