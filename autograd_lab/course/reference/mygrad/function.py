"""Function, its ctx (the graph's node) and apply; the first operations."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
__all__ = ['Add', 'BroadcastTo', 'Clone', 'Context', 'Exp', 'Function', 'GradMode', 'Mean', 'Mul', 'Neg', 'ReLU', 'Sum', 'SumTo', 'as_variable', 'is_grad_enabled', 'sum_to', 'unbroadcast_array']


# --- section: GradMode ---
class GradMode:
    """Whether operations record the graph; chapter 06 adds no_grad on top of this switch."""

    enabled = True


def is_grad_enabled():
    return GradMode.enabled


# --- section: Context ---
_FREED = ("Trying to backward through {name} a second time, but its saved tensors were freed "
          "after the first backward. Pass retain_graph=True to the first backward() if you need "
          "to call it twice.")


class Context:
    """The ctx of one Function call, and its node in the graph of the output."""

    function = None          # the Function class; set on each Function's node class

    def __init__(self):
        self.inputs = ()
        self.needs_input_grad = ()
        self._saved = ()

    def save_for_backward(self, *tensors):
        """Keep what backward will need (call it once, in forward)."""
        self._saved = tensors

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise RuntimeError(_FREED.format(name=type(self).__name__))
        return tuple(self._saved)

    def release(self):
        """Free the saved tensors (the engine calls this after using the node)."""
        self._saved = None

    def __repr__(self):
        return f"<{type(self).__name__}>"


# --- section: Function ---
class Function:
    """An operation with forward(ctx, *inputs) and backward(ctx, grad_output); use apply."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # each Function gets its own node class, so that y.grad_fn prints as MulBackward
        cls.Node = type(cls.__name__ + "Backward", (Context,), {"function": cls})

    @classmethod
    def apply(cls, *inputs):
        """Run forward on a new node; record the node as the output's grad_fn if needed."""
        ctx = cls.Node()
        ctx.needs_input_grad = tuple(isinstance(x, Variable) and x.requires_grad
                                     for x in inputs)
        enabled = GradMode.enabled
        GradMode.enabled = False             # forward itself is never recorded
        try:
            output = cls.forward(ctx, *inputs)
        finally:
            GradMode.enabled = enabled
        if not isinstance(output, Variable):
            output = Variable(output)
        if enabled and any(ctx.needs_input_grad):
            ctx.inputs = inputs
            output.requires_grad = True
            output.grad_fn = ctx
        return output


# --- section: helpers ---
def as_variable(x):
    """x itself if it is a Variable, else a new Variable holding x (a number or an array)."""
    return x if isinstance(x, Variable) else Variable(x)


def unbroadcast_array(grad, shape):
    """Sum a numpy gradient down to shape: the backward of broadcasting (chapter 05)."""
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead))) if lead > 0 else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad


class SumTo(Function):
    """sum_to(g, shape): g summed over the axes that broadcasting added or stretched"""

    @staticmethod
    def forward(ctx, g, shape):
        ctx.g_shape = g.shape
        return Variable(unbroadcast_array(g.data, shape))

    @staticmethod
    def backward(ctx, grad_output):
        return BroadcastTo.apply(grad_output, ctx.g_shape), None


class BroadcastTo(Function):
    """broadcast_to(x, shape): x repeated along the axes it is stretched to"""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.x_shape = x.shape
        return Variable(np.broadcast_to(x.data, shape).copy())

    @staticmethod
    def backward(ctx, grad_output):
        return SumTo.apply(grad_output, ctx.x_shape), None


def sum_to(grad, shape):
    """The gradient for an input of this shape that broadcasting stretched to grad's shape."""
    return grad if grad.shape == tuple(shape) else SumTo.apply(grad, tuple(shape))


# --- section: Add ---
class Add(Function):
    """add(a, b) = a + b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return Variable(a.data + b.data)

    @staticmethod
    def backward(ctx, grad_output):
        return sum_to(grad_output, ctx.a_shape), sum_to(grad_output, ctx.b_shape)


# --- section: Mul ---
class Mul(Function):
    """mul(a, b) = a * b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return Variable(a.data * b.data)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return sum_to(grad_output * b, a.shape), sum_to(grad_output * a, b.shape)


# --- section: Neg ---
class Neg(Function):
    """neg(x) = -x"""

    @staticmethod
    def forward(ctx, x):
        return Variable(-x.data)

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


# --- section: Exp ---
class Exp(Function):
    """exp(x) = e ** x"""

    @staticmethod
    def forward(ctx, x):
        y = Variable(np.exp(x.data))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y


# --- section: ReLU ---
class ReLU(Function):
    """relu(x) = max(x, 0); its derivative is 1 where x > 0 and 0 elsewhere (0 at x = 0)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return Variable(np.maximum(x.data, 0))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * Variable((x.data > 0).astype(grad_output.dtype))


# --- section: reductions ---
class Sum(Function):
    """sum(x) = the sum of all elements"""

    @staticmethod
    def forward(ctx, x):
        ctx.x_shape = x.shape
        return Variable(x.data.sum())

    @staticmethod
    def backward(ctx, grad_output):
        return BroadcastTo.apply(grad_output, ctx.x_shape)


class Mean(Function):
    """mean(x) = sum(x) / n over all n elements"""

    @staticmethod
    def forward(ctx, x):
        ctx.x_shape = x.shape
        return Variable(x.data.mean())

    @staticmethod
    def backward(ctx, grad_output):
        n = max(int(np.prod(ctx.x_shape)), 1)
        return BroadcastTo.apply(grad_output * Variable(1.0 / n), ctx.x_shape)


# --- section: Clone ---
class Clone(Function):
    """clone(x) = a copy of x that gradients flow through"""

    @staticmethod
    def forward(ctx, x):
        return Variable(x.data.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


# --- section: operators ---
Variable.__add__ = lambda self, other: Add.apply(self, as_variable(other))
Variable.__radd__ = lambda self, other: Add.apply(as_variable(other), self)
Variable.__mul__ = lambda self, other: Mul.apply(self, as_variable(other))
Variable.__rmul__ = lambda self, other: Mul.apply(as_variable(other), self)
Variable.__neg__ = lambda self: Neg.apply(self)
Variable.__sub__ = lambda self, other: Add.apply(self, Neg.apply(as_variable(other)))
Variable.__rsub__ = lambda self, other: Add.apply(as_variable(other), Neg.apply(self))
Variable.exp = lambda self: Exp.apply(self)
Variable.relu = lambda self: ReLU.apply(self)
Variable.sum = lambda self: Sum.apply(self)
Variable.mean = lambda self: Mean.apply(self)
Variable.clone = lambda self: Clone.apply(self)
# comparisons give plain boolean arrays: they have no gradient
Variable.__lt__ = lambda self, other: self.data < as_variable(other).data
Variable.__le__ = lambda self, other: self.data <= as_variable(other).data
Variable.__gt__ = lambda self, other: self.data > as_variable(other).data
Variable.__ge__ = lambda self, other: self.data >= as_variable(other).data


def _setitem(self, key, value):
    """x[mask] = 0 and the like: writes into x.data (not recorded in the graph)."""
    self.data[key] = as_variable(value).data


Variable.__setitem__ = _setitem
