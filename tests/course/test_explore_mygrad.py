"""The graph explorer on the key's ``mygrad``: its model equals the learner's engine's own walk.

The explorer watches mygrad's ``backward`` through ``register_hook`` (chapter 04's hooks) and
reads what each node sends from the node's own ``function.backward``; these tests compare the
result with mygrad's ``.grad`` (and ``retain_grad``), and with the same graph on autograd_lab.
"""
from __future__ import annotations

import numpy as np

import autograd_lab as al
from autograd_lab.explore_model import GraphModel, value_text

from ._mygrad_key import mygrad  # noqa: F401  (a fixture)


def seed_graph(lib):
    inp = lib.Variable(np.ones((2, 2)))
    w1, w2, w3 = (lib.Variable(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = inp * w1
    l2, l3 = l1 + w2, l1 * w3
    return (l2 * l3).mean(), (w1, w2, w3), {"l1": l1, "l2": l2, "l3": l3}


def box(var) -> str:
    return f"leaf:{id(var)}" if var.grad_fn is None else f"out:{id(var.grad_fn)}:0"


def terms_at(model: GraphModel, key: str) -> list[float]:
    ids = {e["id"] for e in model.edges if e["src"] == key}
    return sorted(float(v) for s in model.steps for i, v in s["sent"].items() if i in ids)


def test_the_seed_example_on_mygrad_gives_28_8_10_step_by_step(mygrad):
    loss, leaves, inner = seed_graph(mygrad)
    model = GraphModel(loss, names={v: k for k, v in inner.items()})
    assert model.is_mygrad and len(model.nodes) == 14 and len(model.edges) == 14
    model.walk()
    assert model.error is None
    assert [w.grad.item() for w in leaves] == [28.0, 8.0, 10.0]
    leaf_steps = {s["node"]: s["leaf_grad"] for s in model.steps if s["leaf_grad"] is not None}
    assert leaf_steps == {box(w): value_text(w.grad) for w in leaves}
    # the same boxes receive the same gradients as on autograd_lab (the order may differ)
    twin, _, twin_inner = seed_graph(al)
    reference = GraphModel(twin)
    reference.walk()
    ours = {k: v for s in model.steps for k, v in s["grads_in"].items()}
    theirs = {k: v for s in reference.steps for k, v in s["grads_in"].items()}
    for name in inner:
        assert ours[box(inner[name])] == theirs[f"out:{id(twin_inner[name].grad_fn)}:0"], name


def test_the_steps_follow_mygrads_topological_order(mygrad):
    loss, _, _ = seed_graph(mygrad)
    model = GraphModel(loss)
    model.walk()
    order = [box(v) for v in mygrad.topological_order(loss) if v.requires_grad]
    as_boxes = [s["node"] if s["node"].startswith("leaf") else f"out:{s['node'][3:]}:0"
                for s in model.steps]
    assert as_boxes == order


def test_a_reused_node_and_a_leaf_reached_twice_on_mygrad(mygrad):
    x = mygrad.Variable(3.0, requires_grad=True)
    h = x * x                             # x reached twice
    out = h * h + h                       # h reused
    h.retain_grad()
    model = GraphModel(out)
    model.walk()
    assert terms_at(model, box(x)) == [57.0, 57.0]    # 19 * x from each side of x * x
    assert terms_at(model, box(h)) == [1.0, 9.0, 9.0]
    assert next(s for s in model.steps if box(h) in s["grads_in"])["grads_in"][box(h)] \
        == value_text(h.grad) == "19"
    assert [s["node"] for s in model.steps].count(box(x)) == 1
    assert value_text(x.grad) == "114"    # 19 * 2x


def test_retain_graph_on_mygrad(mygrad):
    w = mygrad.Variable(1.5, requires_grad=True)
    loss = (w * w) * 2
    GraphModel(loss).walk(retain_graph=True)
    GraphModel(loss).walk()
    assert w.grad.item() == 12.0
    again = GraphModel(loss)
    again.walk()
    assert "retain_graph=True" in again.error and again.steps[-1]["error"] == again.error


def test_a_constant_branch_on_mygrad(mygrad):
    w = mygrad.Variable(2.0, requires_grad=True)
    c = mygrad.Variable([1.0, 2.0])
    out = (w * c + c.exp()).sum()
    model = GraphModel(out, names={c: "c"})
    assert [n["kind"] for n in model.nodes].count("const") == 2   # c, and c.exp() (not recorded)
    model.walk()
    no_grad = {e["id"] for e in model.edges if not e["grad"]}
    assert len(no_grad) == 2 and not any(i in no_grad for s in model.steps for i in s["sent"])
    assert value_text(w.grad) == "3"


def test_a_stale_saved_tensor_on_mygrad_is_marked(mygrad):
    x = mygrad.Variable([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y * y
    with mygrad.no_grad():
        y.add_(1)                         # MulBackward of y * y saved y at version 0
    model = GraphModel(z.sum())
    model.walk()
    assert "version" in model.error
    failed = model.steps[-1]
    assert failed["error"] == model.error and failed["node"] == f"fn:{id(z.grad_fn)}"


def test_a_mygrad_without_an_engine_yet_gets_a_clear_message():
    class Variable:  # a chapter-03 Variable: a graph, but no backward and no hooks yet
        def __init__(self, data, requires_grad=False, grad_fn=None):
            self.data, self.requires_grad, self.grad_fn, self.grad = np.asarray(data), requires_grad, grad_fn, None

    class MulBackward:
        def __init__(self, inputs):
            self.inputs = inputs
    w = Variable(2.0, requires_grad=True)
    y = Variable(4.0, requires_grad=True, grad_fn=MulBackward((w, w)))
    model = GraphModel(y)
    assert len(model.nodes) == 3
    model.walk()
    assert "no backward and no register_hook yet" in model.error and "chapter 04" in model.error
