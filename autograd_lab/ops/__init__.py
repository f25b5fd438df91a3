"""Built-in operations: every one a Function (in the modules of this package by family) and the
function that applies it (``exp(x)`` is ``Exp.apply(x)``).

Variable's operators and methods, defined in ``variable.py``, call what this package holds; the
package hands itself over when it has loaded, so ``variable`` never imports the ops above it.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from .. import engine
from ..function import Function
from ..grad_mode import STATE
from ..variable import Variable, provide_operations
from . import elementwise as E
from . import reduce  # noqa: F401  (Variable.all and .any call ops.reduce's)
from ..primitives import promoted
from ._util import broadcasting, raw, wrap
from .activation import LogSoftmax, Softmax, relu, sigmoid, softmax_axis, tanh  # noqa: F401
from .extra import (bmm, chunk, cumprod, cumsum, dot, einsum, erf, flip, floor_divide, fmod, logsumexp,  # noqa: F401
                    masked_fill, movedim, nan_to_num, nonzero, outer, prod, remainder, repeat, roll,
                    scatter, scatter_add, split, swapaxes, tile, topk, tril, triu)
from .elementwise import Add, Div, Mul, Sub  # noqa: F401  (the operators' Functions)
from .elementwise import (abs, clone, exp, log, maximum, minimum, mul, neg, pow,  # noqa: F401
                          sqrt, where)
from .indexing import gather, index_add, index_select, sort  # noqa: F401
from .linalg import matmul, mm, t  # noqa: F401
from .reduce import amax, amin, argmax, argmin, max, mean, min, norm, std, sum, var  # noqa: F401
from .unary import (acos, asin, atan, ceil, cos, cosh, expm1, floor, log1p, log2, log10,  # noqa: F401
                    reciprocal, round, rsqrt, sign, sin, sinh, square, tan, trunc)
from .shape import (concatenate, flatten, permute, reshape, squeeze, stack,  # noqa: F401
                    sum_to, transpose, unsqueeze)
from .shape import expand, getitem, transposed, view  # noqa: F401
from .shape import expand as broadcast_to  # as PyTorch's: a view, not a copy
from .inplace import inplace, replaced_by, setitem  # noqa: F401
from .pointwise import (add, addcdiv, addcmul, atan2, bitwise_and, bitwise_not, bitwise_or,  # noqa: F401
                        bitwise_xor, clamp, div, hypot, lerp, logical_not, sub)
from .stats import (count_nonzero, cummax, cummin, kthvalue, median, mode, std_mean,  # noqa: F401
                    var_mean)
from .views import as_strided, diagonal, narrow, select, unbind, unfold  # noqa: F401

cat = concatenate


def isnan(x: Any) -> Variable:
    """Where x is NaN (a bool Variable)."""
    return wrap(np.isnan(raw(x)))


def isinf(x: Any) -> Variable:
    """Where x is +inf or -inf (a bool Variable)."""
    return wrap(np.isinf(raw(x)))


def isfinite(x: Any) -> Variable:
    """Where x is neither inf nor NaN (a bool Variable)."""
    return wrap(np.isfinite(raw(x)))


def compare(op: Callable, a: Any, b: Any) -> Variable:
    """``op(a, b)`` for a comparison operator (``np.less`` for ``<``, …): a bool Variable."""
    return wrap(np.asarray(broadcasting(op, a, b, op.__name__)))


def eq(a: Any, b: Any) -> Variable:
    """a == b elementwise (a bool Variable), as ``torch.eq``; ne, lt, le, gt, ge likewise."""
    return compare(np.equal, a, b)


def ne(a: Any, b: Any) -> Variable:
    return compare(np.not_equal, a, b)


def lt(a: Any, b: Any) -> Variable:
    return compare(np.less, a, b)


def le(a: Any, b: Any) -> Variable:
    return compare(np.less_equal, a, b)


def gt(a: Any, b: Any) -> Variable:
    return compare(np.greater, a, b)


def ge(a: Any, b: Any) -> Variable:
    return compare(np.greater_equal, a, b)


def to(x: Variable, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Variable:
    """``x.to(dtype)``, ``x.to('cpu')``, ``x.to(device, dtype)``, ``x.to(other_variable)``."""
    from ..dtypes import check_device

    for a in args:
        if isinstance(a, Variable):
            dtype = a.dtype
        elif isinstance(a, str) or type(a).__name__ == "device":
            check_device(a)
        else:
            dtype = a
    check_device(device)
    if dtype is None:
        return x
    dtype = np.dtype(dtype)
    return x if dtype == x.dtype else E.Cast.apply(x, dtype)


_NUMPY_FORMS = {E.Add: (np.add, "add"), E.Sub: (np.subtract, "sub"),
                E.Mul: (np.multiply, "mul"), E.Div: (np.true_divide, "div")}


def operator(function: type[Function], a: Any, b: Any) -> Variable:
    """``a + b`` (``a - b``, ``a * b``, ``a / b``) for Variable's operators: ``function.apply(a, b)``
    when grad mode is on and an operand requires grad. Otherwise (grad mode off, as inside
    backward, or nothing to differentiate) numpy computes the result at once: the same numbers,
    without a ctx or a Variable per operand."""
    if STATE.enabled and ((isinstance(a, Variable) and a._requires_grad)
                          or (isinstance(b, Variable) and b._requires_grad)):
        return function.apply(a, b)
    np_op, name = _NUMPY_FORMS[function]
    try:
        return wrap(np_op(*promoted(a, b)))
    except ValueError:  # numpy could not broadcast: the same call again, for the clear error
        return wrap(broadcasting(np_op, a, b, name))


provide_operations(sys.modules[__name__])  # Variable's methods call what this package holds
