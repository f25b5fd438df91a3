"""SGD's momentum update in one pass over a parameter, where numpy makes four.

``sgd_momentum_(p, buf, g, lr, momentum)`` changes ``buf`` and ``p`` in place, element by element::

    buf = momentum * buf + g
    p   = p - lr * buf

numpy needs four calls and a temporary for it (``buf *= momentum; buf += g; p -= lr * buf``).
On small parameters, such as the digits MLP's (8,192 values at most), each call costs more than
its arithmetic; the kernel is one call. It rounds every step in the arrays' dtype and in numpy's
order, and it is compiled without fast-math, so no multiply and add are fused into one rounding:
its numbers equal ``sgd_momentum_ref``'s bit for bit. Where they would not, or where it cannot
write, it does nothing and says so, and the caller runs the reference.
"""
from __future__ import annotations

import numpy as np

from ._jit import CACHE, njit
from .activation import FLOAT_DTYPES

_PLAIN = (float, int)


# no fastmath: 'contract' would fuse ``p - lr * b`` into one rounding, and numpy rounds twice
@njit(cache=CACHE, error_model="numpy", nogil=True)
def _sgd_momentum_k(p, buf, g, lr, momentum):  # 1-d arrays
    lr, momentum = p.dtype.type(lr), p.dtype.type(momentum)  # a float32 array makes them float32
    for i in range(p.size):
        b = buf[i] * momentum
        b = b + g[i]
        buf[i] = b
        p[i] = p[i] - lr * b


def sgd_momentum_(p: np.ndarray, buf: np.ndarray, g: np.ndarray, lr: float, momentum: float) -> bool:
    """``buf = momentum * buf + g; p -= lr * buf`` in place, and True; or False, with nothing
    changed, where the kernel would not give numpy's numbers or cannot write: the caller then
    runs ``sgd_momentum_ref``.

    It takes three C-contiguous arrays of one float dtype and one shape, ``p`` and ``buf``
    writable, and ``lr`` and ``momentum`` as Python numbers (numpy rounds those to the arrays'
    dtype, and so does this; a numpy float64 scalar would make numpy compute in float64)."""
    dtype, shape = p.dtype, p.shape
    if not (dtype in FLOAT_DTYPES and buf.dtype == dtype and g.dtype == dtype
            and buf.shape == shape and g.shape == shape
            and type(lr) in _PLAIN and type(momentum) in _PLAIN):
        return False
    pf, bf = p.flags, buf.flags
    if not (pf.c_contiguous and bf.c_contiguous and g.flags.c_contiguous and pf.writeable and bf.writeable):
        return False
    if p.ndim != 1:  # views of the same memory: one compiled kernel per dtype
        p, buf, g = p.reshape(-1), buf.reshape(-1), g.reshape(-1)
    _sgd_momentum_k(p, buf, g, float(lr), float(momentum))
    return True


def sgd_momentum_ref(p: np.ndarray, buf: np.ndarray, g: np.ndarray, lr: float, momentum: float) -> None:
    """Reference for sgd_momentum_: the same update with numpy."""
    buf *= momentum
    buf += g
    p -= lr * buf
