"""The chapter 05 checkers on the learner's own library, mygrad, and the softmax axis hints.

The chapter's exercises are Functions of ``mygrad/ops.py``; the checkers must accept the
course's ops (and autograd_lab Functions, tested in test_exercises_ch05_ch06.py), reject typical
wrong ones with the real cause, and the loader's ops check must gradcheck every operation.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.learner.export import REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package, choose_modules
from autograd_lab.course.exercises import ch05, check

from ._checker_helpers import SEEDS, assert_all_passed, failure
from .._oracle import require_torch

REF = REFERENCE_ROOT / "mygrad"
MODULES = ("variable", "function", "engine", "ops")


def ops_package(tmp_path=None, change=None):
    """mygrad made of the course's modules up to ops, ops.py edited by ``change``."""
    files = {m: REF / f"{m}.py" for m in MODULES}
    if change is not None:
        old, new = change
        text = files["ops"].read_text(encoding="utf-8")
        assert old in text, old
        files["ops"] = tmp_path / "ops.py"
        files["ops"].write_text(text.replace(old, new), encoding="utf-8")
    return build_package(files)


def matmul_function(lib, wrong_backward):
    """A MatMul Function of ``lib`` (mygrad's package or autograd_lab): the right forward and
    the given ``wrong_backward``."""
    class MatMul(lib.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return lib.Variable(a.data @ b.data)

        backward = staticmethod(wrong_backward)
    return MatMul


def backward_without_transpose(ctx, g):
    a, b = ctx.saved_tensors
    return g @ b, a.T @ g          # grad_a lacks the transpose


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_course_ops_pass_the_chapter_checkers(seed, hidden, capsys):
    pkg = ops_package()
    check.ch05_unbroadcast(pkg.unbroadcast, seed=seed, hidden=hidden)
    check.ch05_sum_backward(pkg.Sum, seed=seed, hidden=hidden)
    check.ch05_matmul_backward(pkg.MatMul, seed=seed, hidden=hidden)
    check.ch05_softmax(pkg.Softmax, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 4, hidden)


def test_loader_check_gradchecks_every_op(capsys):
    pkg = ops_package()
    ch05.mygrad_ops(pkg)
    out = capsys.readouterr().out
    for name in ("a - b", "a / b", "a ** 3", "a.log()", "a.sum(axis=0)", "a.mean(axis=1)",
                 "a.reshape(3, 2)", "a.T", "a @ b", "v @ b", "a.softmax(axis=0)",
                 "a.log_softmax(axis=-1)", "a[1:, ::2]", "a[[0, 0, 2]]"):
        assert f"gradcheck of {name}" in out, name


def test_numeric_gradcheck_agrees_with_autograd_lab_and_catches_a_wrong_backward():
    pkg = ops_package()
    rng = np.random.default_rng(3)
    a0, b0 = rng.normal(size=(3, 2)), rng.normal(size=(2, 2))
    f = lambda a, b: (a @ b).softmax(axis=0)  # noqa: E731
    assert ch05.numeric_gradcheck(pkg.Variable, f, (pkg.Variable(a0, requires_grad=True),
                                                    pkg.Variable(b0, requires_grad=True)))
    BadMatMul = matmul_function(pkg, backward_without_transpose)
    inputs = (pkg.Variable(rng.normal(size=(2, 2)), requires_grad=True),
              pkg.Variable(rng.normal(size=(2, 2)), requires_grad=True))
    with pytest.raises(ch05.GradcheckFailed, match="input 0"):
        ch05.numeric_gradcheck(pkg.Variable, BadMatMul.apply, inputs)
    # autograd_lab's gradcheck agrees: the same slip in an autograd_lab Function
    AlBad = matmul_function(al, backward_without_transpose)
    with pytest.raises(al.GradcheckError):
        al.gradcheck(AlBad.apply, tuple(al.tensor(x.data, requires_grad=True) for x in inputs))


@pytest.mark.parametrize("change,words", [
    (("        return (sum_to(grad_output / b, a.shape),",
      "        return (grad_output / b,"), "gradcheck of a / b"),
    (("        return grad_output * ctx.p * x ** (ctx.p - 1), None",
      "        return grad_output * ctx.p * x ** ctx.p, None"), "gradcheck of a ** 3"),
    (("        np.add.at(out, key, g.data)", "        out[key] = g.data"),
     "gradcheck of a[[0, 0, 2]]"),
])
def test_loader_check_names_the_broken_op(tmp_path, change, words):
    pkg = ops_package(tmp_path, change)
    with pytest.raises(AssertionError) as info:
        ch05.mygrad_ops(pkg)
    assert "mygrad-ops" in str(info.value) and words in str(info.value)


def test_loader_falls_back_from_a_broken_ops_module(tmp_path):
    folder = tmp_path / "work"
    (folder / "mygrad").mkdir(parents=True)
    for name in MODULES:
        (folder / "mygrad" / f"{name}.py").write_text((REF / f"{name}.py").read_text())
    ops = (folder / "mygrad" / "ops.py")
    ops.write_text(ops.read_text().replace("        np.add.at(out, key, g.data)",
                                           "        out[key] = g.data"))
    choices = {c.module: c for c in choose_modules(6, folder=folder)}
    assert choices["engine"].yours and not choices["ops"].yours
    assert "Exercise ch05-index-function failed" in choices["ops"].reason  # the exercise it breaks


# -- typical wrong mygrad Functions ----------------------------------------------------------
def test_a_sum_that_broadcasts_without_putting_the_axis_back_gets_the_axis_hint():
    pkg = ops_package()

    class Sum(pkg.Function):
        @staticmethod
        def forward(ctx, x, axis=None, keepdims=False):
            ctx.x_shape = x.shape
            return pkg.Variable(x.data.sum(axis=axis, keepdims=keepdims))

        @staticmethod
        def backward(ctx, g):
            return pkg.BroadcastTo.apply(g, ctx.x_shape), None, None
    msg = failure(check.ch05_sum_backward, Sum)
    assert "ch05-sum-backward" in msg and "lined the gradient up with the wrong axis" in msg


def test_a_stubbed_mygrad_function_is_reported_as_not_done():
    def stub(ctx, g):
        raise NotImplementedError("Exercise ch05-matmul-backward: write your code here")
    MatMul = matmul_function(ops_package(), stub)
    with pytest.raises(NotImplementedError, match="ch05-matmul-backward is not done yet"):
        check.ch05_matmul_backward(MatMul)


def test_something_that_is_not_a_function_class_is_refused_clearly():
    with pytest.raises(TypeError, match="not a Function class"):
        check.ch05_softmax(lambda x, axis=-1: x)


# -- a wrong softmax: the hint names the axis, never "subtract the maximum", unless it overflows
def make_softmax(pkg, max_axis, sum_axis, subtract_max=True):
    """A softmax whose maximum and sum use the given axes (None: the axis argument); without
    ``subtract_max``, the naive one that overflows."""
    class Softmax(pkg.Function):
        @staticmethod
        def forward(ctx, x, axis=-1):
            m_axis = axis if max_axis is None else max_axis
            s_axis = axis if sum_axis is None else sum_axis
            shift = x.data.max(axis=m_axis, keepdims=True) if subtract_max else 0
            e = np.exp(x.data - shift)
            y = pkg.Variable(e / e.sum(axis=s_axis, keepdims=True))
            ctx.save_for_backward(y)
            ctx.axis = axis
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)), None
    return Softmax


def one_row_wrong(pkg):
    """A softmax right on batches of several rows, but reducing over axis 0 when there is one
    row: on the (1, 3) large inputs its result is finite and wrong."""
    right = make_softmax(pkg, None, None)

    class OneRowWrong(pkg.Function):
        @staticmethod
        def forward(ctx, x, axis=-1):
            use = 0 if x.ndim == 2 and x.shape[0] == 1 else axis
            return right.forward(ctx, x, use)

        @staticmethod
        def backward(ctx, g):
            return right.backward(ctx, g)
    return OneRowWrong


@pytest.mark.parametrize("make,present,absent", [
    # subtracts the right maximum, sums the wrong axis
    (lambda pkg: make_softmax(pkg, None, 0), ["ch05-softmax", "wrong axis", "the sum along axis 0"],
     ["Subtract the maximum"]),
    # subtracts the maximum of the wrong axis
    (lambda pkg: make_softmax(pkg, 0, None),
     ["ch05-softmax", "wrong axis", "the maximum along axis 0"], ["Subtract the maximum"]),
    (lambda pkg: make_softmax(pkg, 0, 0),
     ["ch05-softmax", "wrong axis", "both the maximum and the sum along axis 0"],
     ["Subtract the maximum"]),
    # the maximum was subtracted: the hint names the axis, not an overflow
    (one_row_wrong, ["large inputs", "wrong axis"], ["Subtract the maximum"]),
    # a real overflow still gets the stability hint
    (lambda pkg: make_softmax(pkg, None, None, subtract_max=False),
     ["not finite", "Subtract the maximum"], []),
], ids=["sum axis 0", "maximum axis 0", "both axis 0", "one row, axis 0", "no maximum subtracted"])
def test_a_wrong_softmax_gets_the_hint_of_its_cause(make, present, absent):
    with np.errstate(all="ignore"):
        msg = failure(check.ch05_softmax, make(ops_package()))
    for words in present:
        assert words in msg, (words, msg)
    for words in absent:
        assert words not in msg, (words, msg)


def test_ops_match_pytorch():
    torch = require_torch()
    pkg = ops_package()
    rng = np.random.default_rng(11)
    x0, w0, b0 = rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), rng.normal(size=(3,))
    labels = rng.integers(0, 3, size=5)
    mine = [pkg.Variable(v, requires_grad=True) for v in (w0, b0)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (w0, b0)]
    logp = (pkg.Variable(x0) @ mine[0] + mine[1]).log_softmax(axis=-1)
    (-(logp[np.arange(5), labels]).mean() / 2.0 + (mine[0] ** 2).sum(axis=0).mean()).backward()
    tlogp = (torch.tensor(x0) @ theirs[0] + theirs[1]).log_softmax(dim=-1)
    (-(tlogp[np.arange(5), labels]).mean() / 2.0 + (theirs[0] ** 2).sum(dim=0).mean()).backward()
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.grad.data, t.grad.numpy(), rtol=1e-10, atol=1e-12)


# -- keepdims mistakes: the hint names the dropped axis, not "read the traceback" ----------------
def softmax_with(pkg, forward_keepdims=True, backward_keepdims=True):
    """The key's softmax with keepdims=True left out of forward's sum or backward's sum."""
    class Softmax(pkg.Function):
        @staticmethod
        def forward(ctx, x, axis=-1):
            e = np.exp(x.data - x.data.max(axis=axis, keepdims=True))
            y = pkg.Variable(e / e.sum(axis=axis, keepdims=forward_keepdims))
            ctx.save_for_backward(y)
            ctx.axis = axis
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return y * (g - (g * y).sum(axis=ctx.axis, keepdims=backward_keepdims)), None
    return Softmax


@pytest.mark.parametrize("kwargs,words", [
    ({"forward_keepdims": False}, "keepdims=True in every reduction of forward"),
    ({"backward_keepdims": False}, "must keep that axis (keepdims=True)"),
])
def test_a_softmax_without_keepdims_gets_the_keepdims_hint(kwargs, words):
    msg = failure(check.ch05_softmax, softmax_with(ops_package(), **kwargs))
    assert msg.startswith("Exercise ch05-softmax failed") and words in msg, msg
    assert "Read the traceback" not in msg


def _unbroadcast_numbering_from_the_big_shape(grad, shape):
    """Sums the leading axes away, then uses axis numbers of the big shape on the rest."""
    lead = grad.ndim - len(shape)
    out = grad.sum(axis=tuple(range(lead))) if lead else grad
    axes = tuple(i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1)
    return out.sum(axis=axes, keepdims=True) if axes else out


def _unbroadcast_without_keepdims(grad, shape):
    """Sums the size-1 axes without keepdims, then reshapes as if nothing happened."""
    lead = grad.ndim - len(shape)
    out = grad.sum(axis=tuple(range(lead))) if lead else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and out.shape[i] != 1)
    out = out.sum(axis=axes) if axes else out
    return out.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and i < out.ndim))


@pytest.mark.parametrize("wrong,words", [
    (_unbroadcast_numbering_from_the_big_shape, "numbered like the target's"),
    (_unbroadcast_without_keepdims, "keepdims"),
])
def test_an_unbroadcast_with_axis_mistakes_gets_an_axis_hint(wrong, words):
    msg = failure(check.ch05_unbroadcast, wrong)
    assert msg.startswith("Exercise ch05-unbroadcast failed") and words in msg, msg
    assert "Read the traceback" not in msg


def test_a_matmul_whose_forward_saves_nothing_is_told_so():
    """The forward is now the learner's too: forgetting save_for_backward must not be blamed
    on the formula."""
    pkg = ops_package()

    class MatMul(pkg.Function):
        @staticmethod
        def forward(ctx, a, b):
            return pkg.Variable(a.data @ b.data)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g @ b.T, a.T @ g
    msg = failure(check.ch05_matmul_backward, MatMul)
    assert msg.startswith("Exercise ch05-matmul-backward failed")
    assert "ctx.save_for_backward(a, b)" in msg and "Read the formula" not in msg
