"""Convolution and max pooling; Conv2d, MaxPool2d, Flatten."""
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
__all__ = ['Conv2d', 'Convolution', 'Flatten', 'MaxPool', 'MaxPool2d', 'conv2d', 'conv2d_backward', 'conv2d_forward', 'max_pool2d', 'output_size']


# --- section: output_size ---
def output_size(n: int, k: int, stride: int = 1, padding: int = 0) -> int:
    """How many positions a window of size k takes along an axis of length n."""
    return (n + 2 * padding - k) // stride + 1


# --- section: conv2d_forward ---
def conv2d_forward(x, weight, bias, stride=1, padding=0):
    """The cross-correlation of numpy arrays x (N, C_in, H, W) and weight (C_out, C_in, kh, kw),
    plus bias (C_out,) or None: an array (N, C_out, H_out, W_out)."""
    n, c, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out, w_out = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    out = np.zeros((n, c_out, h_out, w_out), dtype=np.result_type(x, weight))
    for di in range(kh):
        for dj in range(kw):
            patch = xp[:, :, di:di + stride * h_out:stride, dj:dj + stride * w_out:stride]
            out += np.einsum("ncij,oc->noij", patch, weight[:, :, di, dj])
    return out if bias is None else out + bias[None, :, None, None]


# --- section: conv2d_backward ---
def conv2d_backward(grad, x, weight, stride=1, padding=0):
    """(dx, dweight, dbias) of conv2d_forward, given the gradient of its output."""
    n, c, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out, w_out = grad.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    dxp = np.zeros_like(xp)
    dweight = np.zeros_like(weight)
    for di in range(kh):
        for dj in range(kw):
            rows = slice(di, di + stride * h_out, stride)
            cols = slice(dj, dj + stride * w_out, stride)
            dweight[:, :, di, dj] = np.einsum("noij,ncij->oc", grad, xp[:, :, rows, cols])
            dxp[:, :, rows, cols] += np.einsum("noij,oc->ncij", grad, weight[:, :, di, dj])
    dbias = grad.sum(axis=(0, 2, 3))
    return dxp[:, :, padding:padding + h, padding:padding + w], dweight, dbias


# --- section: Convolution ---
class Convolution(Function):
    """y = conv2d(x, weight, bias, stride, padding), backward by conv2d_backward"""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding):
        ctx.save_for_backward(x, weight)
        ctx.stride, ctx.padding = stride, padding
        b = None if bias is None else bias.data
        return Variable(conv2d_forward(x.data, weight.data, b, stride, padding))

    @staticmethod
    def backward(ctx, grad_output):
        if GradMode.enabled:
            raise RuntimeError("conv2d's backward works on numpy arrays, so it cannot be "
                               "differentiated again: create_graph=True is not supported here.")
        x, weight = ctx.saved_tensors
        dx, dw, db = conv2d_backward(grad_output.data, x.data, weight.data,
                                     ctx.stride, ctx.padding)
        return Variable(dx), Variable(dw), Variable(db), None, None


def conv2d(x, weight, bias=None, stride=1, padding=0):
    """The 2-d convolution of PyTorch's F.conv2d (NCHW, no dilation, no groups)."""
    if x.ndim != 4 or weight.ndim != 4 or x.shape[1] != weight.shape[1]:
        raise ValueError(f"conv2d expects x (N, C_in, H, W) and weight (C_out, C_in, kh, kw) "
                         f"with the same C_in; got {x.shape} and {weight.shape}")
    return Convolution.apply(x, weight, bias, stride, padding)


# --- section: MaxPool ---
class MaxPool(Function):
    """y = max of each k×k block of x;  the gradient goes to the (first) argmax"""

    @staticmethod
    def forward(ctx, x, k):
        n, c, h, w = x.shape
        ho, wo = h // k, w // k
        blocks = x.data[:, :, :ho * k, :wo * k].reshape(n, c, ho, k, wo, k)
        blocks = blocks.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, ho, wo, k * k)
        arg = blocks.argmax(axis=-1)
        ctx.arg, ctx.k, ctx.x_shape = arg, k, x.shape
        return Variable(np.take_along_axis(blocks, arg[..., None], axis=-1)[..., 0])

    @staticmethod
    def backward(ctx, grad_output):
        n, c, h, w = ctx.x_shape
        k, (ho, wo) = ctx.k, ctx.arg.shape[2:]
        g = grad_output.data
        dblocks = np.zeros((n, c, ho, wo, k * k), dtype=g.dtype)
        np.put_along_axis(dblocks, ctx.arg[..., None], g[..., None], axis=-1)
        grad_x = np.zeros(ctx.x_shape, dtype=g.dtype)
        grad_x[:, :, :ho * k, :wo * k] = dblocks.reshape(n, c, ho, wo, k, k).transpose(
            0, 1, 2, 4, 3, 5).reshape(n, c, ho * k, wo * k)
        return Variable(grad_x), None


def max_pool2d(x, kernel_size):
    """Max pooling with a square window and stride equal to it (PyTorch's default)."""
    return MaxPool.apply(x, kernel_size)


# --- section: layers ---
class Conv2d(Module):
    """A convolution layer: weight (out, in, k, k) and bias (out,), PyTorch's initialisation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        bound = 1.0 / np.sqrt(in_channels * kernel_size * kernel_size)
        shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.weight = Parameter(init_uniform(shape, bound))
        self.bias = Parameter(init_uniform((out_channels,), bound)) if bias else None

    def forward(self, x):
        return conv2d(x, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class MaxPool2d(Module):
    """Max pooling over k×k blocks (stride k)."""

    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size

    def forward(self, x):
        return max_pool2d(x, self.kernel_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}"


class Flatten(Module):
    """(N, ...) -> (N, everything else): the bridge from feature maps to Linear."""

    def forward(self, x):
        return x.reshape(x.shape[0], -1)


def _attach_to_nn():
    """Make the layers reachable as mygrad.nn.Conv2d, ... (as torch.nn.Conv2d is)."""
    import sys
    package = globals().get("__package__")       # None when run in a notebook
    nn = sys.modules.get(f"{package}.nn") if package else None
    if nn is not None:
        nn.Conv2d, nn.MaxPool2d, nn.Flatten = Conv2d, MaxPool2d, Flatten


_attach_to_nn()
