"""Tensor operations with broadcasting: un-broadcasting, reductions, shapes, matmul, softmax."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
__all__ = ['Div', 'Index', 'Log', 'LogSoftmax', 'MatMul', 'Mean', 'Pow', 'Reshape', 'Scatter', 'Softmax', 'Sub', 'Sum', 'Transpose', 'Unbroadcast', 'matmul', 'sum_to', 'unbroadcast']


# --- section: unbroadcast ---
def unbroadcast(grad, shape):
    """Sum the numpy array grad down to shape: the backward of broadcasting shape to grad.shape."""
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    out = grad.sum(axis=tuple(range(lead))) if lead > 0 else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and i < out.ndim and out.shape[i] != 1)
    if axes:
        out = out.sum(axis=axes, keepdims=True)
    if out.shape != shape:
        raise ValueError(f"cannot sum a gradient of shape {grad.shape} down to shape {shape}: "
                         f"{shape} does not broadcast to {grad.shape}")
    return out


# --- section: Sub ---
class Sub(Function):
    """sub(a, b) = a - b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return Variable(a.data - b.data)

    @staticmethod
    def backward(ctx, grad_output):
        return sum_to(grad_output, ctx.a_shape), sum_to(-grad_output, ctx.b_shape)


Variable.__sub__ = lambda self, other: Sub.apply(self, as_variable(other))
Variable.__rsub__ = lambda self, other: Sub.apply(as_variable(other), self)


# --- section: Div ---
class Div(Function):
    """div(a, b) = a / b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return Variable(a.data / b.data)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return (sum_to(grad_output / b, a.shape),
                sum_to(-grad_output * a / (b * b), b.shape))


Variable.__truediv__ = lambda self, other: Div.apply(self, as_variable(other))
Variable.__rtruediv__ = lambda self, other: Div.apply(as_variable(other), self)


# --- section: Pow ---
class Pow(Function):
    """pow(x, p) = x ** p for a number p"""

    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        return Variable(x.data ** p)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * ctx.p * x ** (ctx.p - 1), None


Variable.__pow__ = lambda self, p: Pow.apply(self, p)


# --- section: Log ---
class Log(Function):
    """log(x), the natural logarithm"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return Variable(np.log(x.data))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output / x


Variable.log = lambda self: Log.apply(self)


# --- section: Sum ---
def _kept_shape(shape, axis):
    """shape with the summed axes set to 1 (what keepdims=True would give)."""
    if axis is None:
        return (1,) * len(shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    kept = list(shape)
    for a in axes:
        kept[a % len(shape)] = 1
    return tuple(kept)


class Sum(Function):
    """y = x.sum(axis, keepdims)"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        ctx.x_shape, ctx.axis = x.shape, axis
        return Variable(x.data.sum(axis=axis, keepdims=keepdims))

    @staticmethod
    def backward(ctx, grad_output):
        g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))
        return BroadcastTo.apply(g, ctx.x_shape), None, None


Variable.sum = lambda self, axis=None, keepdims=False: Sum.apply(self, axis, keepdims)


# --- section: Reshape ---
class Reshape(Function):
    """reshape(x, shape): the same elements, another shape"""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.x_shape = x.shape
        return Variable(x.data.reshape(shape))

    @staticmethod
    def backward(ctx, grad_output):
        return Reshape.apply(grad_output, ctx.x_shape), None


class Transpose(Function):
    """transpose(x, axes): the axes permuted (reversed when axes is None)"""

    @staticmethod
    def forward(ctx, x, axes=None):
        ctx.axes = axes
        return Variable(np.transpose(x.data, axes))

    @staticmethod
    def backward(ctx, grad_output):
        inverse = None if ctx.axes is None else tuple(np.argsort(ctx.axes))
        return Transpose.apply(grad_output, inverse), None


def _reshape(self, *shape):
    """x.reshape(2, 3) or x.reshape((2, 3)), as in numpy and PyTorch."""
    return Reshape.apply(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                         else shape)


def _transpose(self, dim0, dim1):
    """x.transpose(dim0, dim1): swap two axes, as PyTorch's transpose does."""
    axes = list(range(self.ndim))
    axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
    return Transpose.apply(self, tuple(axes))


Variable.reshape = _reshape
Variable.transpose = _transpose
Variable.T = property(lambda self: Transpose.apply(self, None))


# --- section: MatMul ---
class MatMul(Function):
    """y = a @ b for a of shape (n, k) and b of shape (k, m)"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return Variable(a.data @ b.data)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b.T, a.T @ grad_output


Variable.__matmul__ = lambda self, other: MatMul.apply(self, as_variable(other))


# --- section: Softmax ---
class Softmax(Function):
    """y = exp(x) / exp(x).sum(axis, keepdims=True)"""

    @staticmethod
    def forward(ctx, x, axis=-1):
        z = x.data - x.data.max(axis=axis, keepdims=True)     # no overflow: the largest is e**0
        e = np.exp(z)
        y = Variable(e / e.sum(axis=axis, keepdims=True))
        ctx.axis = axis
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        g = grad_output
        return y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)), None


Variable.softmax = lambda self, axis=-1: Softmax.apply(self, axis)


# --- section: Index ---
class Index(Function):
    """index(x, key) = x[key]; the gradient goes back to the positions that were read"""

    @staticmethod
    def forward(ctx, x, key):
        ctx.x_shape, ctx.key = x.shape, key
        return Variable(x.data[key])

    @staticmethod
    def backward(ctx, grad_output):
        return Scatter.apply(grad_output, ctx.x_shape, ctx.key), None


class Scatter(Function):
    """scatter(g, shape, key): zeros of shape with g added at key (the backward of x[key])"""

    @staticmethod
    def forward(ctx, g, shape, key):
        ctx.key = key
        out = np.zeros(shape, dtype=g.data.dtype)
        np.add.at(out, key, g.data)           # a position given twice receives both
        return Variable(out)

    @staticmethod
    def backward(ctx, grad_output):
        return Index.apply(grad_output, ctx.key), None, None


Variable.__getitem__ = lambda self, key: Index.apply(self, key)


# --- section: methods ---
def matmul(a, b):
    """a @ b for 1-D and 2-D operands (a 1-D operand is a row or a column, as in numpy)."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim > 2 or b.ndim > 2 or a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"mygrad's matmul takes 1-D or 2-D operands, not shapes {a.shape} "
                         f"and {b.shape}; reshape them first.")
    out = MatMul.apply(a.reshape(1, -1) if a.ndim == 1 else a,
                       b.reshape(-1, 1) if b.ndim == 1 else b)
    shape = out.shape[:a.ndim - 1] + out.shape[1:b.ndim]      # drop the added axes again
    return out.reshape(shape) if out.shape != shape else out


Variable.__matmul__ = lambda self, other: matmul(self, other)
Variable.__rmatmul__ = lambda self, other: matmul(other, self)


# --- section: Mean ---
class Mean(Function):
    """y = x.mean(axis, keepdims) = x.sum(axis, keepdims) / (number of elements summed)"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        ctx.x_shape, ctx.axis = x.shape, axis
        ctx.n = x.data.size // max(int(np.prod(_kept_shape(x.shape, axis))), 1) if x.ndim else 1
        return Variable(x.data.mean(axis=axis, keepdims=keepdims))

    @staticmethod
    def backward(ctx, grad_output):
        g = Reshape.apply(grad_output, _kept_shape(ctx.x_shape, ctx.axis))
        return BroadcastTo.apply(g * (1.0 / max(ctx.n, 1)), ctx.x_shape), None, None


Variable.mean = lambda self, axis=None, keepdims=False: Mean.apply(self, axis, keepdims)


# --- section: LogSoftmax ---
class LogSoftmax(Function):
    """y = x - log(exp(x).sum(axis, keepdims=True)), computed stably"""

    @staticmethod
    def forward(ctx, x, axis=-1):
        z = x.data - x.data.max(axis=axis, keepdims=True)
        y = Variable(z - np.log(np.exp(z).sum(axis=axis, keepdims=True)))
        ctx.axis = axis
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output - y.exp() * grad_output.sum(axis=ctx.axis, keepdims=True), None


Variable.log_softmax = lambda self, axis=-1: LogSoftmax.apply(self, axis)


# --- section: sum_to ---
class Unbroadcast(Function):
    """unbroadcast(g, shape): g summed down to shape (differentiable, for create_graph)"""

    @staticmethod
    def forward(ctx, g, shape):
        ctx.g_shape = g.shape
        return Variable(unbroadcast(g.data, shape))

    @staticmethod
    def backward(ctx, grad_output):
        return BroadcastTo.apply(grad_output, ctx.g_shape), None


def sum_to(grad, shape):
    """grad (a Variable) summed down to shape; grad itself when it has that shape already."""
    return grad if grad.shape == tuple(shape) else Unbroadcast.apply(grad, tuple(shape))
