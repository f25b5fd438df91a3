"""Matrix multiplication with numpy's rules (1-D operands, batched stacks that broadcast)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DtypeError, ShapeError
from ..function import Function
from ..variable import Variable
from ._util import wrap
from .shape import reshape, sum_to, transpose


class MatMul(Function):
    """a @ b;  grad_a = grad @ b^T,  grad_b = a^T @ grad (batch axes summed back)"""

    @staticmethod
    def forward(ctx, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ShapeError(f"matmul needs at least 1-D operands; got shapes {a.shape} and {b.shape}. "
                             "Use * to multiply by a scalar.")
        k_a = a.shape[-1]
        k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if k_a != k_b:
            raise ShapeError(
                f"matmul: shapes {a.shape} and {b.shape} are not aligned: the last dimension of the "
                f"first ({k_a}) must equal the {'second-to-last' if b.ndim > 1 else 'only'} dimension "
                f"of the second ({k_b}). Did you mean to transpose one of them (x.T)?"
            )
        need = ctx.needs_input_grad  # (empty when nothing is recorded)
        if need:  # keep what each gradient reads, as PyTorch does: b for a's, a for b's
            ctx.shapes = (a.shape, b.shape)
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        try:
            return wrap(np.matmul(a.data, b.data))
        except ValueError:
            raise ShapeError(f"matmul: the batch dimensions of {a.shape} and {b.shape} do not broadcast.") from None

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # b if a needs a gradient, a if b does
        sa, sb = ctx.shapes
        sa2 = sa if len(sa) > 1 else (1, sa[0])  # 1-d operands as a row and a column
        sb2 = sb if len(sb) > 1 else (sb[0], 1)
        g = reshape(grad, np.broadcast_shapes(sa2[:-2], sb2[:-2]) + (sa2[-2], sb2[-1]))
        ga = gb = None
        if ctx.needs_input_grad[0]:
            b2 = b if len(sb) > 1 else reshape(b, sb2)
            ga = reshape(sum_to(g @ transpose(b2, -1, -2), sa2), sa)
        if ctx.needs_input_grad[1]:
            a2 = a if len(sa) > 1 else reshape(a, sa2)
            gb = reshape(sum_to(transpose(a2, -1, -2) @ g, sb2), sb)
        return ga, gb


def same_dtype(a: Variable, b: Variable, name: str) -> None:
    """A matrix product takes operands of one dtype, as in PyTorch (no promotion, which would hide
    a float32 model fed float64 data)."""
    if a.dtype != b.dtype:
        raise DtypeError(
            f"{name}: expected both operands to have the same dtype, but got {a.dtype} and {b.dtype}. "
            f"Convert one of them first, e.g. b.to(al.{a.dtype}) (or a model: model.to(al.{b.dtype}))."
        )


def matmul(a: Any, b: Any) -> Variable:
    a = a if isinstance(a, Variable) else Variable(a)
    b = b if isinstance(b, Variable) else Variable(b)
    same_dtype(a, b, "matmul")
    return MatMul.apply(a, b)


def mm(a: Any, b: Any) -> Variable:
    """Matrix product of two 2-d Variables (``torch.mm``; ``matmul`` also broadcasts)."""
    a = a if isinstance(a, Variable) else Variable(a)
    b = b if isinstance(b, Variable) else Variable(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"mm needs two 2-d Variables, got shapes {a.shape} and {b.shape}; use matmul "
                         "(or @) for 1-d or batched operands.")
    same_dtype(a, b, "mm")
    return MatMul.apply(a, b)


def t(x: Variable) -> Variable:
    """Transpose of a Variable with at most 2 dimensions (``x.t()``); 0-d and 1-d come back as they are."""
    if x.ndim > 2:
        raise ShapeError(f"t() expects a Variable with at most 2 dimensions, got shape {x.shape}; "
                         "use transpose(dim0, dim1) or permute(...) instead.")
    return x if x.ndim < 2 else transpose(x, 0, 1)
