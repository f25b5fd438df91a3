"""Function, ctx and apply: PyTorch's custom-Function API."""
import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.errors import BackwardError, LegacyFunctionError, ShapeError

from .._oracle import require_torch


class MyReLU(al.Function):
    """The course's example, written exactly as in PyTorch's tutorial style."""

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


def test_my_relu_values_grad_fn_and_gradient():
    x = al.tensor([-2.0, -0.5, 0.5, 3.0], requires_grad=True)
    y = MyReLU.apply(x)
    np.testing.assert_array_equal(y.data, [0, 0, 0.5, 3.0])
    assert type(y.grad_fn).__name__ == "MyReLUBackward"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0, 0, 1, 1])
    assert al.gradcheck(MyReLU.apply, (al.randn(6, seed=3, requires_grad=True),))


def test_forward_runs_without_grad_and_gets_variables():
    seen = {}

    class Probe(al.Function):
        @staticmethod
        def forward(ctx, x, k):
            seen["grad"] = al.is_grad_enabled()
            seen["types"] = (type(x), type(k))
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    x = al.ones(2, requires_grad=True)
    Probe.apply(x, 2).sum().backward()
    assert seen == {"grad": False, "types": (al.Variable, int)}
    np.testing.assert_array_equal(x.grad.data, [2, 2])


def test_needs_input_grad_and_non_variable_arguments():
    flags = {}

    class Scale(al.Function):
        @staticmethod
        def forward(ctx, a, b, factor):
            flags["needs"] = ctx.needs_input_grad
            ctx.factor = factor
            return a * b * factor

        @staticmethod
        def backward(ctx, g):
            return None, None, None

    Scale.apply(al.ones(2, requires_grad=True), al.ones(2), 3.0)
    assert flags["needs"] == (True, False, False)


def test_multiple_outputs_and_mark_non_differentiable():
    class MaxWithIndex(al.Function):
        @staticmethod
        def forward(ctx, x):
            idx = np.argmax(x.data)
            ctx.idx, ctx.shape = idx, x.shape
            index = al.Variable(np.array(idx))
            ctx.mark_non_differentiable(index)
            return al.Variable(x.data[idx]), index

        @staticmethod
        def backward(ctx, g_value, g_index):
            out = np.zeros(ctx.shape)
            out[ctx.idx] = g_value.data
            return out

    x = al.tensor([1.0, 5.0, 2.0], requires_grad=True)
    value, index = MaxWithIndex.apply(x)
    assert value.requires_grad and not index.requires_grad
    (value * 3).backward()
    np.testing.assert_array_equal(x.grad.data, [0, 3, 0])


def test_second_output_unused_gets_zero_gradient():
    class Split(al.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is not None and np.all(g2.data == 0)  # materialized as zeros
            return g1 + g2 * 2

    x = al.ones(3, requires_grad=True)
    a, b = Split.apply(x)
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1, 1, 1])


def test_mark_dirty_in_place_function_bumps_version_and_rebases():
    class AddOne_(al.Function):
        @staticmethod
        def forward(ctx, x):
            x.data += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    w = al.ones(2, requires_grad=True)
    h = w * 3
    v0 = h._version
    out = AddOne_.apply(h)
    assert out is h and h._version == v0 + 1 and type(h.grad_fn).__name__ == "AddOne_Backward"
    h.sum().backward()
    np.testing.assert_array_equal(w.grad.data, [3, 3])
    with pytest.raises(BackwardError, match="in-place"):
        AddOne_.apply(w)


def test_wrong_number_of_gradients_names_the_function():
    class Bad(al.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g,) * 3

    with pytest.raises(BackwardError, match=r"BadBackward.*expected 2, got 3"):
        Bad.apply(al.ones(2, requires_grad=True), al.ones(2, requires_grad=True)).sum().backward()


def test_wrong_gradient_shape_names_function_index_and_shapes():
    class BadShape(al.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return al.ones(5)

    with pytest.raises(ShapeError, match=r"BadShapeBackward.*index 0.*\(5,\).*\(2, 3\)"):
        BadShape.apply(al.ones(2, 3, requires_grad=True)).sum().backward()


def test_legacy_instance_style_raises_with_the_modern_form():
    class Old(al.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x

        def backward(self, g):
            return g

    with pytest.raises(LegacyFunctionError, match=r"@staticmethod[\s\S]*ctx\.save_for_backward"):
        Old()(al.ones(1))
    with pytest.raises(LegacyFunctionError, match="Old.apply"):
        Old.apply(al.ones(1, requires_grad=True))


def test_save_for_backward_rejects_non_variables():
    class Saves(al.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x.data)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="ctx.my_value"):
        Saves.apply(al.ones(1, requires_grad=True))


def test_once_differentiable_first_order_ok_second_order_raises():
    class Cube(al.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return al.Variable(x.data ** 3)

        @staticmethod
        @al.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g.data * 3 * x.data ** 2

    x = al.tensor(2.0, requires_grad=True)
    (gx,) = al.grad(Cube.apply(x), x, create_graph=True)
    assert gx.item() == 12.0
    with pytest.raises(BackwardError, match="once_differentiable"):
        gx.backward()
    (gx,) = al.grad(Cube.apply(x), x, create_graph=True)
    with pytest.raises(BackwardError, match="CubeBackward is decorated with @once_differentiable"):
        al.grad(gx, x)
    with pytest.raises(BackwardError, match="once_differentiable"):
        al.gradgradcheck(Cube.apply, (al.randn(3, seed=0, requires_grad=True),))


def test_surplus_trailing_none_gradients_are_dropped_as_in_pytorch():
    class Scaled(al.Function):
        @staticmethod
        def forward(ctx, x, factor=2.0, mode="mean"):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None, None   # one per parameter, even when not passed

    x = al.ones(2, requires_grad=True)
    Scaled.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2, 2])

    class Surplus(al.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g   # a real gradient too many is still an error

    with pytest.raises(BackwardError, match="expected 1, got 2"):
        Surplus.apply(al.ones(1, requires_grad=True)).sum().backward()


def test_output_returned_unchanged_is_a_new_variable():
    class Identity(al.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = al.ones(2, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn is not None


def test_tracing_reports_each_recorded_node_in_its_block_and_thread_only():
    import threading

    from autograd_lab import function

    seen = []
    x = al.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum()  # before the block: not reported
    with function.tracing(lambda cls, args, kwargs, out: seen.append((cls.__name__, out))):
        y = (x * x).sum()
        other = threading.Thread(target=lambda: (x + 1).sum())
        other.start()
        other.join()
        with al.no_grad():
            x * 3  # nothing recorded, nothing reported
    (x - 1).sum()  # after the block: not reported
    assert [name for name, _ in seen] == ["Mul", "Sum"]
    assert seen[-1][1] is y  # the output the caller got
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 4.0])  # the same graph as without tracing


def test_tracing_one_block_at_a_time_and_restored_after_an_error():
    from autograd_lab import function

    def fail(*_):
        raise ValueError("from the tracer")

    x = al.tensor([1.0], requires_grad=True)
    with function.tracing(lambda *_: None):
        with pytest.raises(function.TracingError, match="another tracing block is active"):
            with function.tracing(lambda *_: None):
                pass
    with pytest.raises(ValueError, match="from the tracer"):
        with function.tracing(fail):
            x * 2
    seen = []
    with function.tracing(lambda cls, *_: seen.append(cls.__name__)):
        x * 2
    assert seen == ["Mul"]  # the failed block left nothing installed


def test_output_viewing_an_input_shares_its_version_and_other_objects_pass_through():
    """An output that views an input's memory counts that input's in-place changes; a string
    and a None returned beside it stay outside the graph, as in PyTorch."""
    torch = require_torch()

    class Head(al.Function):
        @staticmethod
        def forward(ctx, x):
            return x.data[:2], "tag", None

        @staticmethod
        def backward(ctx, g, *unused):
            out = np.zeros(3)
            out[:2] = g.data
            return al.Variable(out)

    class TorchHead(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2], "tag", None

        @staticmethod
        def backward(ctx, g, *unused):
            out = torch.zeros(3, dtype=g.dtype)
            out[:2] = g
            return out

    def observe(lib, fn, x):
        h = x * 1
        y, tag, nothing = fn.apply(h)
        before = y._version
        with lib.no_grad():
            h.add_(1)
        return y._version - before, tag, nothing, y.requires_grad

    ours = observe(al, Head, al.ones(3, requires_grad=True))
    theirs = observe(torch, TorchHead, torch.ones(3, requires_grad=True))
    assert ours == theirs == (1, "tag", None, True)
