"""ch07-relu-function: the Function that puts the fused ReLU kernels behind ``Variable.relu``.
The key's class passes; each typical mistake (one method of the key's class rewritten) fails
with a hint that names its cause."""
from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course.exercises import check

from ._ch07_key import KEY
from ._checker_helpers import SEEDS, failure

Variable = KEY.Variable
ReLU = KEY.ReLU


class FlatOutput(ReLU):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        flat = np.ascontiguousarray(x.data).reshape(-1)
        return Variable(KEY.affine_relu_forward(flat, 1.0, 0.0, np.empty_like(flat)))


class FlatGradient(ReLU):
    @staticmethod
    def backward(ctx, grad_output):
        if KEY.GradMode.enabled:
            return ReLU.backward(ctx, grad_output)
        x, = ctx.saved_tensors
        flat = np.ascontiguousarray(x.data).reshape(-1)
        g = np.ascontiguousarray(grad_output.data).reshape(-1)
        grad_x = np.empty_like(g)
        KEY.affine_relu_backward(flat, 1.0, 0.0, g, grad_x)
        return Variable(grad_x)


class IgnoresGradOutput(ReLU):
    @staticmethod
    def backward(ctx, grad_output):
        if KEY.GradMode.enabled:
            return ReLU.backward(ctx, grad_output)
        x, = ctx.saved_tensors
        flat = np.ascontiguousarray(x.data).reshape(-1)
        grad_x = np.empty_like(flat)
        KEY.affine_relu_backward(flat, 1.0, 0.0, np.ones_like(flat), grad_x)
        return Variable(grad_x.reshape(x.shape))


class SavesNothing(ReLU):
    @staticmethod
    def forward(ctx, x):
        flat = np.ascontiguousarray(x.data).reshape(-1)
        return Variable(KEY.affine_relu_forward(flat, 1.0, 0.0, np.empty_like(flat)).reshape(x.shape))


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_keys_function_passes(seed, hidden, capsys):
    check.ch07_relu_function(ReLU, Variable, seed=seed, hidden=hidden)
    assert "cases of ch07-relu-function passed" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,words", [
    (FlatOutput, "reshape its result to x's shape"),
    (FlatGradient, "a gradient has the shape of its input"),   # the engine's own words
    (IgnoresGradOutput, "Pass grad_output to the backward kernel"),
    (SavesNothing, "forward saves x"),
], ids=lambda v: getattr(v, "__name__", None))
def test_typical_mistakes_get_a_hint_naming_their_cause(wrong, words):
    message = failure(lambda cls, **kw: check.ch07_relu_function(cls, Variable, **kw), wrong)
    assert message.startswith("Exercise ch07-relu-function failed") and words in message, message


def test_a_stub_is_reported_as_not_done():
    class Stub(ReLU):
        @staticmethod
        def forward(ctx, x):
            raise NotImplementedError("Exercise ch07-relu-function: write your code here")
    with pytest.raises(NotImplementedError, match="ch07-relu-function is not done yet"):
        check.ch07_relu_function(Stub, Variable)
