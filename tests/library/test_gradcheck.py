"""gradcheck catches wrong backward formulas and says where."""
import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.errors import GradcheckError


class WrongSquare(al.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return al.Variable(x.data ** 2)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # should be 2 x


def test_gradcheck_passes_on_correct_and_reports_wrong():
    x = al.randn(3, seed=0, requires_grad=True)
    assert al.gradcheck(lambda v: v * v, (x,))
    with pytest.raises(GradcheckError, match=r"Jacobian mismatch for output 0 with respect to input 0[\s\S]*numerical[\s\S]*analytical"):
        al.gradcheck(WrongSquare.apply, (x,))
    assert al.gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_gradcheck_names_the_input_index():
    a = al.randn(2, seed=1, requires_grad=True)
    b = al.randn(2, seed=2, requires_grad=True)
    with pytest.raises(GradcheckError, match="with respect to input 1"):
        al.gradcheck(lambda p, q: p + WrongSquare.apply(q), (a, b))


def test_gradcheck_works_in_float64_for_float32_inputs():
    x = al.randn(4, seed=3, dtype=np.float32, requires_grad=True)
    assert al.gradcheck(lambda v: (v * v).sum(), (x,))


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class FirstOnlyRight(al.Function):
        """y = x^3 whose backward is right in value but built from a constant: 2nd derivative 0."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return al.Variable(x.data ** 3)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * al.Variable(3 * x.data ** 2)

    x = al.randn(3, seed=4, requires_grad=True)
    assert al.gradcheck(FirstOnlyRight.apply, (x,))
    with pytest.raises(GradcheckError):
        al.gradgradcheck(FirstOnlyRight.apply, (x,))
    assert al.gradgradcheck(lambda v: v ** 3, (x,))


def test_gradcheck_needs_an_input_requiring_grad():
    with pytest.raises(GradcheckError, match="requires_grad=True"):
        al.gradcheck(lambda v: v * 2, (al.ones(2),))
