"""ch07-softmax-ce-function: the Function that puts the fused softmax + cross-entropy kernel
behind mygrad's ``softmax_cross_entropy``. The key's class passes; each typical mistake (one
method of the key's class rewritten) fails with a hint that names its cause."""
from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course.exercises import check

from ._ch07_key import KEY
from ._checker_helpers import SEEDS, failure

Variable = KEY.Variable
SCE = KEY.SoftmaxCrossEntropy
kernel = KEY.cross_entropy_rows


def _forward(ctx, logits, targets, *, mean=True, per_mean=True, keep_targets=True):
    x = np.ascontiguousarray(logits.data)
    grad = np.empty_like(x)
    n = x.shape[0]
    total = kernel(x, targets, grad)
    ctx.save_for_backward(logits)
    if keep_targets:
        ctx.targets = targets
    ctx.grad = grad / n if per_mean else grad
    return Variable(np.array(total / n if mean else total))


class ReturnsTheSum(SCE):
    @staticmethod
    def forward(ctx, logits, targets):
        return _forward(ctx, logits, targets, mean=False)


class GradientNotDividedByN(SCE):
    @staticmethod
    def forward(ctx, logits, targets):
        return _forward(ctx, logits, targets, per_mean=False)


class IgnoresGradOutput(SCE):
    @staticmethod
    def backward(ctx, grad_output):
        if KEY.GradMode.enabled:
            return SCE.backward(ctx, grad_output)
        return Variable(ctx.grad), None


class ForgetsTheTargets(SCE):
    @staticmethod
    def forward(ctx, logits, targets):
        return _forward(ctx, logits, targets, keep_targets=False)


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_keys_function_passes(seed, hidden, capsys):
    check.ch07_softmax_ce_function(SCE, Variable, seed=seed, hidden=hidden)
    assert "cases of ch07-softmax-ce-function passed" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,words", [
    (ReturnsTheSum, "divide it by N"),
    (GradientNotDividedByN, "not divided by N"),
    (IgnoresGradOutput, "Multiply by grad_output"),
    (ForgetsTheTargets, "ctx.targets = targets"),
], ids=lambda v: getattr(v, "__name__", None))
def test_typical_mistakes_get_a_hint_naming_their_cause(wrong, words):
    message = failure(lambda cls, **kw: check.ch07_softmax_ce_function(cls, Variable, **kw), wrong)
    assert message.startswith("Exercise ch07-softmax-ce-function failed") and words in message, message


def test_an_instance_or_apply_is_refused():
    message = failure(lambda obj, **kw: check.ch07_softmax_ce_function(obj, Variable, **kw), SCE.apply)
    assert "not a Function class" in message


def test_a_stub_is_reported_as_not_done():
    class Stub(SCE):
        @staticmethod
        def forward(ctx, logits, targets):
            raise NotImplementedError("Exercise ch07-softmax-ce-function: write your code here")
    with pytest.raises(NotImplementedError, match="ch07-softmax-ce-function is not done yet"):
        check.ch07_softmax_ce_function(Stub, Variable)
