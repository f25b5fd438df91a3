"""The checkers of chapters 02 and 03: each passes a correct solution (with and without hidden
cases) and fails typical wrong ones with a message naming the exercise and giving a hint."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.exercises import check

from ._checker_helpers import SEEDS, failure
from ._oracle import require_torch


# ---------------------------------------------------------------- chapter 02: solutions
class MyVariable:
    def __init__(self, data, requires_grad=False, grad_fn=None):
        self.data = np.asarray(data)
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self.grad_fn = grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def shape(self):
        return self.data.shape


def output_requires_grad(inputs, grad_enabled=True):
    return grad_enabled and any(getattr(a, "requires_grad", False) for a in inputs)


def hand_gradients(w1, w2, w3):
    d_l4 = np.full((2, 2), 0.25)
    d_l3 = d_l4 * (w1 + w2)
    d_l2 = d_l4 * (w1 * w3)
    d_l1 = d_l2 + w3 * d_l3
    return {"l4": d_l4, "l3": d_l3, "l2": d_l2, "l1": d_l1,
            "w1": d_l1.sum(), "w2": d_l2.sum(), "w3": (d_l3 * w1).sum()}


def find_leaves(var):
    if var.grad_fn is None:
        return [var] if var.requires_grad else []
    leaves, seen, stack = [], {id(var.grad_fn)}, [var.grad_fn]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None or id(child) in seen:
                continue
            seen.add(id(child))
            if hasattr(child, "variable"):
                leaves.append(child.variable)
            else:
                stack.append(child)
    return leaves


@pytest.mark.parametrize("seed,hidden", SEEDS)
@pytest.mark.parametrize("name,solution", [
    ("ch02_variable_class", MyVariable), ("ch02_propagation_rule", output_requires_grad),
    ("ch02_hand_gradients", hand_gradients), ("ch02_find_leaves", find_leaves)])
def test_ch02_correct_solutions_pass(name, solution, seed, hidden, capsys):
    getattr(check, name)(solution, seed=seed, hidden=hidden)
    assert "passed" in capsys.readouterr().out.splitlines()[-1]


def test_ch02_variable_class_wrong_ones():
    class MethodLeaf(MyVariable):
        def is_leaf(self):  # a method, not a property
            return self.grad_fn is None

    class StoredLeaf(MyVariable):
        def __init__(self, data, requires_grad=False, grad_fn=None):
            super().__init__(data, requires_grad, grad_fn)
            self.__dict__["_leaf"] = grad_fn is None

        is_leaf = property(lambda self: self._leaf)

    class NoGrad:
        def __init__(self, data, requires_grad=False, grad_fn=None):
            self.data = np.asarray(data)
            self.requires_grad = requires_grad
            self.grad_fn = grad_fn

    class ListData(MyVariable):
        def __init__(self, data, requires_grad=False, grad_fn=None):
            super().__init__(data, requires_grad, grad_fn)
            self.data = data

    class Stub:
        def __init__(self, data, requires_grad=False, grad_fn=None):
            raise NotImplementedError("Exercise ch02-variable-class: write your code here")

    msg = failure(check.ch02_variable_class, MethodLeaf)
    assert "ch02-variable-class" in msg and "@property" in msg
    assert "Compute is_leaf from grad_fn" in failure(check.ch02_variable_class, StoredLeaf)
    assert "no attribute 'grad'" in failure(check.ch02_variable_class, NoGrad)
    assert "np.asarray" in failure(check.ch02_variable_class, ListData)
    with pytest.raises(NotImplementedError, match="ch02-variable-class is not done yet"):
        check.ch02_variable_class(Stub)


def test_ch02_propagation_rule_wrong_ones():
    def uses_all(inputs, grad_enabled=True):
        return grad_enabled and all(getattr(a, "requires_grad", False) for a in inputs)

    def ignores_mode(inputs, grad_enabled=True):
        return any(getattr(a, "requires_grad", False) for a in inputs)

    def crashes_on_numbers(inputs, grad_enabled=True):
        return grad_enabled and any(a.requires_grad for a in inputs)

    assert "any(...), not all(...)" in failure(check.ch02_propagation_rule, uses_all)
    assert "no_grad" in failure(check.ch02_propagation_rule, ignores_mode)
    msg = failure(check.ch02_propagation_rule, crashes_on_numbers)
    assert "raised AttributeError" in msg and "getattr" in msg


def test_ch02_hand_gradients_wrong_ones():
    def forgets_mean(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        return {k: v * 4 for k, v in d.items()}

    def one_path(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        d["l1"] = d["l2"]
        d["w1"] = d["l1"].sum()
        return d

    def scalar_l(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        d["l4"] = 0.25
        return d

    def missing(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        del d["w3"]
        return d

    assert "1/4" in failure(check.ch02_hand_gradients, forgets_mean)
    assert "AND the path through l3" in failure(check.ch02_hand_gradients, one_path)
    assert "np.full((2, 2)" in failure(check.ch02_hand_gradients, scalar_l)
    assert "no entry for ['w3']" in failure(check.ch02_hand_gradients, missing)


def test_ch02_hand_gradients_agree_with_pen_and_paper_numbers():
    d = hand_gradients(2.0, 3.0, 4.0)
    assert (float(d["w1"]), float(d["w2"]), float(d["w3"])) == (28.0, 8.0, 10.0)


def test_ch02_find_leaves_wrong_ones():
    def duplicates(var):  # no seen set over leaves: a leaf used twice is listed twice
        if var.grad_fn is None:
            return [var] if var.requires_grad else []
        leaves, stack = [], [var.grad_fn]
        while stack:
            node = stack.pop()
            for child, _ in node.next_functions:
                if child is None:
                    continue
                if hasattr(child, "variable"):
                    leaves.append(child.variable)
                else:
                    stack.append(child)
        return leaves

    def first_edge_only(var):
        node, leaves = var.grad_fn, []
        while node is not None:
            child = node.next_functions[0][0]
            if child is not None and hasattr(child, "variable"):
                leaves.append(child.variable)
                break
            node = child
        return leaves

    def returns_nodes(var):
        return [n for n in [var.grad_fn] if n is not None]

    def no_none_check(var):
        out = []
        for child, _ in var.grad_fn.next_functions:
            out.append(child.variable)
        return out

    assert "more than once" in failure(check.ch02_find_leaves, duplicates)
    assert "not the right ones" in failure(check.ch02_find_leaves, first_edge_only)
    assert "not a Variable" in failure(check.ch02_find_leaves, returns_nodes)
    assert "raised AttributeError" in failure(check.ch02_find_leaves, no_none_check)


# ---------------------------------------------------------------- chapter 03: solutions
class MyReLU(al.Function):
    @staticmethod
    def forward(ctx, input_):
        ctx.save_for_backward(input_)
        return input_.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input_, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input_ < 0] = 0
        return grad_input


class MyMul(al.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b, grad_output * a


class MyNode:
    def __init__(self, fn_cls):
        self.fn_cls = fn_cls
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self.inputs = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def backward(self, *grads):
        return self.fn_cls.backward(self, *grads)


def new_node(fn_cls, args):
    """The node of one call: its inputs and which of them need a gradient."""
    ctx = MyNode(fn_cls)
    ctx.inputs = args
    ctx.needs_input_grad = tuple(isinstance(a, al.Variable) and a.requires_grad for a in args)
    return ctx


def my_apply(fn_cls, *args):
    ctx = new_node(fn_cls, args)
    record = al.is_grad_enabled() and any(ctx.needs_input_grad)
    with al.no_grad():
        out = fn_cls.forward(ctx, *args)
    if record:
        out.requires_grad = True
        out.grad_fn = ctx
    return out


@pytest.mark.parametrize("seed,hidden", SEEDS)
@pytest.mark.parametrize("name,solution", [
    ("ch03_relu_function", MyReLU), ("ch03_mul_function", MyMul), ("ch03_own_apply", my_apply)])
def test_ch03_correct_solutions_pass(name, solution, seed, hidden, capsys):
    getattr(check, name)(solution, seed=seed, hidden=hidden)
    assert "passed" in capsys.readouterr().out.splitlines()[-1]


def test_ch03_relu_wrong_ones():
    class NoClone(MyReLU):
        @staticmethod
        def backward(ctx, grad_output):
            input_, = ctx.saved_tensors
            grad_output[input_ < 0] = 0
            return grad_output

    class PassThrough(MyReLU):
        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    class MaskOnly(MyReLU):
        @staticmethod
        def backward(ctx, grad_output):
            input_, = ctx.saved_tensors
            return (input_ > 0) * 1.0

    class InPlaceForward(MyReLU):
        @staticmethod
        def forward(ctx, input_):
            ctx.save_for_backward(input_)
            input_.data[input_.data < 0] = 0
            return al.Variable(input_.data.copy())

    class OldStyle(al.Function):
        def forward(self, input_):
            self.save_for_backward(input_)
            return input_.clamp(min=0)

        def backward(self, grad_output):
            return grad_output

    assert "grad_output.clone()" in failure(check.ch03_relu_function, NoClone)
    assert "zero it where the input was negative" in failure(check.ch03_relu_function, PassThrough)
    assert "multiply it by grad_output" in failure(check.ch03_relu_function, MaskOnly)
    assert "changed its input in place" in failure(check.ch03_relu_function, InPlaceForward)
    msg = failure(check.ch03_relu_function, OldStyle)
    assert "LegacyFunctionError" in msg and "@staticmethod" in msg
    assert "subclass of al.Function" in failure(check.ch03_relu_function, MyReLU.apply)


def test_ch03_mul_wrong_ones():
    class Swapped(MyMul):
        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return grad_output * a, grad_output * b

    class OneGradient(MyMul):
        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return grad_output * b

    class NoChain(MyMul):
        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return b, a

    assert "a's gradient is grad_output * b" in failure(check.ch03_mul_function, Swapped)
    msg = failure(check.ch03_mul_function, OneGradient)
    assert "incorrect number of gradients" in msg and "two gradients" in msg
    assert "Multiply by grad_output" in failure(check.ch03_mul_function, NoChain)


def test_ch03_own_apply_wrong_ones():
    def grad_mode_on(fn_cls, *args):
        ctx = new_node(fn_cls, args)
        out = fn_cls.forward(ctx, *args)
        if any(ctx.needs_input_grad):
            out.requires_grad = True
            out.grad_fn = ctx
        return out

    def wrong_order(fn_cls, *args):
        ctx = new_node(fn_cls, args)
        with al.no_grad():
            out = fn_cls.forward(ctx, *args)
        out.grad_fn = ctx
        out.requires_grad = True
        return out

    def always_records(fn_cls, *args):
        ctx = new_node(fn_cls, args)
        with al.no_grad():
            out = fn_cls.forward(ctx, *args)
        out.requires_grad = True
        out.grad_fn = ctx
        return out

    def ignores_no_grad(fn_cls, *args):
        ctx = new_node(fn_cls, args)
        with al.no_grad():
            out = fn_cls.forward(ctx, *args)
        if any(ctx.needs_input_grad):
            out.requires_grad = True
            out.grad_fn = ctx
        return out

    def no_inputs(fn_cls, *args):
        out = my_apply(fn_cls, *args)
        if out.grad_fn is not None:
            out.grad_fn.inputs = ()
        return out

    assert "with al.no_grad()" in failure(check.ch03_own_apply, grad_mode_on)
    assert "before out.grad_fn = ctx" in failure(check.ch03_own_apply, wrong_order)
    assert "any(ctx.needs_input_grad)" in failure(check.ch03_own_apply, always_records)
    assert "is_grad_enabled() before" in failure(check.ch03_own_apply, ignores_no_grad)
    assert "ctx.inputs = args" in failure(check.ch03_own_apply, no_inputs)


@pytest.mark.parametrize("w", [(2.0, 3.0, 4.0), (1.0, -1.0, 0.5), (-2.23, 0.0, 0.61)])
def test_ch02_reference_gradients_match_pytorch(w):
    torch = require_torch()
    from autograd_lab.exercises.ch02 import _example
    ws = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in w]
    l1 = torch.ones(2, 2, dtype=torch.float64) * ws[0]
    l2, l3 = l1 + ws[1], l1 * ws[2]
    l4 = l2 * l3
    for v in (l1, l2, l3, l4):
        v.retain_grad()
    l4.mean().backward()
    got = _example(*w)
    for name, v in zip(["l1", "l2", "l3", "l4", "w1", "w2", "w3"], [l1, l2, l3, l4, *ws]):
        np.testing.assert_allclose(got[name], v.grad.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(hand_gradients(*w)[name], v.grad.numpy(), rtol=1e-12, atol=1e-12)
