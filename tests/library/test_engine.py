"""The engine: order, accumulation, retain_graph, create_graph, hooks, al.grad."""
import gc
import weakref

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.engine import topological_order
from autograd_lab.errors import BackwardError, ShapeError


def l_graph():
    """The course's example: l1 = input*w1; l2 = l1+w2; l3 = l1*w3; l4 = l2*l3; loss = mean(l4)."""
    input_ = al.ones(2, 2)
    w1, w2, w3 = (al.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = input_ * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    return input_, (w1, w2, w3), (l1, l2, l3, l4), loss


def test_course_example_gradients():
    input_, (w1, w2, w3), (l1, *_), loss = l_graph()
    assert loss.item() == 40.0
    loss.backward()
    assert (w1.grad.item(), w2.grad.item(), w3.grad.item()) == (28.0, 8.0, 10.0)
    assert input_.grad is None and not input_.requires_grad
    assert not l1.is_leaf
    with pytest.warns(UserWarning, match="not a leaf"):
        assert l1.grad is None  # non-leaves keep no grad, and reading it warns as in PyTorch


def test_retain_grad_keeps_non_leaf_gradient():
    _, _, (l1, l2, l3, l4), loss = l_graph()
    l1.retain_grad()
    loss.backward()
    np.testing.assert_allclose(l1.grad.data, np.full((2, 2), 7.0))  # d/dl1 = (2*l1*w3 + w2*w3)/4


def test_topological_order_visits_each_node_once_consumers_first():
    x = al.tensor(1.0, requires_grad=True)
    a = x * 2
    b = a * a            # a reused
    c = b + a
    order = topological_order([c.grad_fn])
    ids = [id(n) for n in order]
    assert len(ids) == len(set(ids))
    pos = {id(n): i for i, n in enumerate(order)}
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                assert pos[id(node)] < pos[id(child)]


def test_reused_non_leaf_gets_all_contributions():
    x = al.tensor(3.0, requires_grad=True)
    a = x * 2
    y = a * a + a  # dy/dx = (2a + 1) * 2 = 26
    y.backward()
    assert x.grad.item() == 26.0


def test_deep_chain_is_iterative():
    x = al.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_gradients_accumulate_across_backward_calls():
    x = al.tensor(2.0, requires_grad=True)
    (x * x).backward()
    (x * x).backward()
    assert x.grad.item() == 8.0
    x.grad.zero_()
    (x * 3).backward()
    assert x.grad.item() == 3.0


def test_second_backward_without_retain_graph_raises():
    x = al.tensor(2.0, requires_grad=True)
    y = (x * x).exp()
    y.backward()
    with pytest.raises(BackwardError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = al.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 8.0


def test_backward_of_non_scalar_needs_gradient():
    x = al.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(BackwardError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(gradient=al.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad.data, [2, 4, 6])
    with pytest.raises(ShapeError, match="Mismatch in shape"):
        (x * 2).backward(gradient=al.ones(2))


def test_backward_of_variable_without_grad_raises():
    with pytest.raises(BackwardError, match="does not require grad and does not have a grad_fn"):
        al.ones(1).sum().backward()


def test_create_graph_gives_second_derivative():
    x = al.tensor(3.0, requires_grad=True)
    y = x ** 3
    (g,) = al.grad(y, x, create_graph=True)
    assert g.item() == 27.0 and g.requires_grad
    (h,) = al.grad(g, x)
    assert h.item() == 18.0


def test_create_graph_backward_leaves_differentiable_grad():
    x = al.tensor(2.0, requires_grad=True)
    (x.exp() * x).backward(create_graph=True)
    assert x.grad.grad_fn is not None
    g = x.grad
    x.grad = None
    g.backward()  # d2/dx2 of x e^x = (x + 2) e^x
    np.testing.assert_allclose(x.grad.item(), 4 * np.exp(2.0))


def test_hooks_on_leaf_and_non_leaf():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    y = x * 3
    y.register_hook(lambda g: seen.append(g.data.copy()))
    handle = x.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_array_equal(seen[0], [1, 1])
    np.testing.assert_array_equal(x.grad.data, [30, 30])
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3, 3])
    with pytest.raises(BackwardError, match="doesn't require gradient"):
        al.ones(1).register_hook(lambda g: g)


def test_al_grad_returns_without_touching_dot_grad():
    x = al.tensor(2.0, requires_grad=True)
    z = al.tensor(5.0, requires_grad=True)
    y = x * x
    (gx,) = al.grad(y, [x])
    assert gx.item() == 4.0 and x.grad is None
    with pytest.raises(BackwardError, match="allow_unused=True"):
        al.grad(x * 2, [x, z])
    gx, gz = al.grad(x * 2, [x, z], allow_unused=True)
    assert gx.item() == 2.0 and gz is None


def test_al_grad_wrt_non_leaf_and_grad_outputs():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = h * h
    (gh,) = al.grad(y, h, grad_outputs=al.tensor([1.0, 0.5]))
    np.testing.assert_array_equal(gh.data, [4.0, 4.0])


def test_al_grad_does_not_free_unrelated_branches():
    x = al.tensor(1.0, requires_grad=True)
    w = al.tensor(2.0, requires_grad=True)
    a = (x * 3).exp()          # does not depend on w
    b = a + w.exp()
    al.grad(b, w)              # runs only the nodes on paths to w
    a.exp().backward()         # so a's saved values are still there
    np.testing.assert_allclose(x.grad.item(), 3 * np.exp(3.0) * np.exp(np.exp(3.0)))


def test_graph_is_freed_without_reference_cycles():
    gc.disable()
    try:
        x = al.randn(3, seed=0, requires_grad=True)
        y = (x.exp() * x).sigmoid()   # saves outputs: must not create cycles
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None, "a node survived its output: the graph holds a reference cycle"
    finally:
        gc.enable()


def test_grad_dtype_matches_float32_leaf():
    x = al.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    (x * 2.0).sum().backward()
    assert x.grad.dtype == np.float32


def test_leaf_gradients_never_alias_memory_something_else_holds():
    """A fresh gradient becomes .grad without a copy; anything else seen by others is copied."""
    a = al.randn(3, seed=0, requires_grad=True)
    b = al.randn(3, seed=1, requires_grad=True)
    (a + b).sum().backward()                       # AddBackward hands one gradient to both
    assert not np.shares_memory(a.grad.data, b.grad.data)
    c = al.randn(3, seed=2, requires_grad=True)
    seed = al.ones(3)
    (c * 1).backward(seed)
    assert not np.shares_memory(c.grad.data, seed.data)

    class ReturnsSaved(al.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return x

    d = al.randn(3, seed=3, requires_grad=True)
    ReturnsSaved.apply(d).sum().backward()
    assert not np.shares_memory(d.grad.data, d.data)
    kept = []
    h = al.randn(3, seed=4, requires_grad=True)
    h.register_hook(lambda g: kept.append(g))
    (h * 2).sum().backward()
    assert not np.shares_memory(h.grad.data, kept[0].data)
    h.grad.zero_()                                  # zeroing one must not touch the other
    assert kept[0].data.tolist() == [2.0, 2.0, 2.0]


def test_one_gradient_per_output_is_required():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(BackwardError, match="got 1 gradient.*2 output"):
        al.grad([x * 2, x * 3], x, grad_outputs=[al.ones(2)])
    gx, = al.grad([x * 2, x * 3], x, grad_outputs=[al.ones(2), al.ones(2)])
    np.testing.assert_array_equal(gx.data, [5, 5])
