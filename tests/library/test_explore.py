"""The graph explorer's model (autograd_lab.explore_model) against the engine's own walk.

Each test builds a graph twice: one copy goes through the explorer (whose walk is the engine's
``backward`` watched through ``engine.observe``), the twin goes through plain ``backward`` with
``retain_grad`` on its computed Variables; the order, the gradient at every box and every leaf's
``.grad`` must agree, and PyTorch gives the same leaf gradients.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab import engine
from autograd_lab.explore_model import GraphModel, value_text
from autograd_lab.node import AccumulateGrad
from tests._oracle import needs_torch, torch


def seed_graph(lib=al):
    """The l1…l4 example of chapter 02: input ones(2, 2), w1 = 2, w2 = 3, w3 = 4."""
    inp = lib.tensor(np.ones((2, 2)))
    w1, w2, w3 = (lib.tensor(np.array(v), requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = inp * w1
    l2, l3 = l1 + w2, l1 * w3
    return (l2 * l3).mean(), (w1, w2, w3), {"l1": l1, "l2": l2, "l3": l3}


def box(model: GraphModel, var) -> str:
    return f"leaf:{id(var)}" if var.grad_fn is None else f"out:{id(var.grad_fn)}:{var._output_nr}"


def terms_at(model: GraphModel, key: str) -> list[float]:
    """The gradients sent back along the edges that leave ``key`` (its consumers' terms)."""
    ids = {e["id"] for e in model.edges if e["src"] == key}
    return [float(v) for s in model.steps for i, v in s["sent"].items() if i in ids]


def test_the_seed_example_steps_in_the_engines_order_with_its_numbers():
    loss, leaves, inner = seed_graph()
    model = GraphModel(loss)
    assert len(model.nodes) == 14 and len(model.edges) == 14
    model.walk()
    assert model.error is None
    order = [f"leaf:{id(n.variable)}" if isinstance(n, AccumulateGrad) else f"fn:{id(n)}"
             for n in engine.topological_order([loss.grad_fn])]
    assert [s["node"] for s in model.steps] == order  # every node got a gradient, in that order
    assert [leaf.grad.item() for leaf in leaves] == [28.0, 8.0, 10.0]
    leaf_steps = {s["node"]: s["leaf_grad"] for s in model.steps if s["leaf_grad"] is not None}
    assert leaf_steps == {box(model, w): value_text(w.grad) for w in leaves}


def test_every_box_gets_the_gradient_that_retain_grad_keeps():
    loss, _, inner = seed_graph()
    model = GraphModel(loss, names={v: k for k, v in inner.items()})
    model.walk()
    twin, _, twin_inner = seed_graph()
    for v in twin_inner.values():
        v.retain_grad()
    twin.backward()
    arrived = {k: v for s in model.steps for k, v in s["grads_in"].items()}
    for name, var in inner.items():
        assert arrived[box(model, var)] == value_text(twin_inner[name].grad), name


def test_a_reused_node_runs_once_with_the_sum_of_its_terms():
    x, y = al.tensor(2.0, requires_grad=True), al.tensor(3.0, requires_grad=True)
    h = x * y
    out = h * h + h
    model = GraphModel(out)
    model.walk()
    key = box(model, h)
    assert [s["node"] for s in model.steps].count(f"fn:{id(h.grad_fn)}") == 1
    assert sorted(terms_at(model, key)) == [1.0, 6.0, 6.0]
    assert sum(terms_at(model, key)) == 13.0
    assert next(s for s in model.steps if key in s["grads_in"])["grads_in"][key] == "13"
    assert (x.grad.item(), y.grad.item()) == (39.0, 26.0)


def test_a_leaf_reached_twice_is_one_step_that_adds_its_terms():
    x = al.tensor(3.0, requires_grad=True)
    out = x * x + x
    model = GraphModel(out)
    model.walk()
    key = box(model, x)
    leaf_steps = [s for s in model.steps if s["node"] == key]
    assert len(leaf_steps) == 1
    assert sorted(terms_at(model, key)) == [1.0, 3.0, 3.0]
    assert leaf_steps[0]["grads_in"][key] == leaf_steps[0]["leaf_grad"] == value_text(x.grad) == "7"


def test_retain_graph_is_passed_to_the_engine():
    w = al.tensor(1.5, requires_grad=True)
    loss = 2 * (w * w)
    for _ in range(2):
        kept = GraphModel(loss)
        kept.walk(retain_graph=True)
        assert kept.error is None
    assert w.grad.item() == 12.0           # two walks, 6 each
    loss.backward()                        # the buffers were kept; this frees them ...
    assert w.grad.item() == 18.0
    again = GraphModel(loss)
    again.walk()                           # ... so the next walk raises, on the first node
    assert "retain_graph=True" in again.error
    assert again.steps[-1]["node"] == f"fn:{id(loss.grad_fn)}" and "error" in again.steps[-1]


def test_a_constant_branch_is_drawn_and_gets_no_gradient():
    w = al.tensor(2.0, requires_grad=True)
    c = al.tensor([1.0, 2.0])
    out = (w * c + c.exp()).sum()
    model = GraphModel(out, names={c: "c"})
    kinds = sorted(n["kind"] for n in model.nodes)
    assert kinds.count("const") >= 1 and kinds.count("param") == 1
    model.walk()
    no_grad = {e["id"] for e in model.edges if not e["grad"]}
    assert no_grad and not any(i in no_grad for s in model.steps for i in s["sent"])
    assert value_text(w.grad) == "3"


def test_the_node_whose_saved_tensor_changed_is_marked_with_the_engines_message():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    model = GraphModel((y * x).sum())
    model.walk()
    assert "is at version 1; expected version 0" in model.error
    failed = model.steps[-1]
    assert failed["error"] == model.error
    assert next(n for n in model.nodes if n["key"] == failed["node"])["label"] == "ExpBackward"


def test_a_click_shows_data_versions_and_what_the_ctx_saved():
    w = al.tensor(2.0, requires_grad=True)
    y = w.exp()
    model = GraphModel(y, names={w: "w"})
    info = {n["label"].split("\n")[0]: n["info"] for n in model.nodes}
    assert info["w"]["data"] == "2" and info["w"]["version"] == 0 and info["w"]["dtype"] == "float64"
    assert any(line.startswith("saved[0]: scalar float64, version 0 (saved at 0) = 7.389") for line in info["ExpBackward"]["saved"])


@needs_torch
def test_the_leaf_gradients_are_pytorchs():
    loss, leaves, _ = seed_graph()
    GraphModel(loss).walk()
    t_loss, t_leaves, _ = seed_graph(torch)
    t_loss.backward()
    assert [w.grad.item() for w in leaves] == [t.grad.item() for t in t_leaves]


def test_the_widget_offers_its_view_and_the_static_picture():
    from autograd_lab.viz import explore
    w = al.tensor(2.0, requires_grad=True)
    view = explore((w * w).exp().log(), names={w: "w"})
    data, _ = view._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "image/png", "text/plain"} <= set(data)
    assert data["text/plain"] == "GraphExplorer(7 nodes, 7 edges)"
    assert view.position == 0 and not view.walked and w.grad is None
    view.step()
    assert view.walked and view.position == 1 and len(view.steps) == 4
    view.run_to_end()
    assert view.position == 4 and view.steps[-1]["leaf_grad"] == value_text(w.grad) == "4"
    view.reset()
    assert view.position == 0 and w.grad.item() == 4.0  # Reset rewinds the view, not the gradient
    view._on_message(view, {"action": "end"}, [])
    assert view.position == 4


def test_importing_the_library_does_not_import_anywidget():
    code = "import sys, autograd_lab, autograd_lab.viz; print('anywidget' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("bad", [3.0, np.ones(2)])
def test_explore_says_what_it_expects(bad):
    with pytest.raises(TypeError, match="explore expects a Variable"):
        GraphModel(bad)


def test_observe_reports_each_node_once_with_what_it_sends_and_then_stops():
    x = al.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    seen = []
    with engine.observe(lambda node, grads_in, sent: seen.append(
            (node.name(), [g.data.tolist() for g in grads_in], [(i, g.data.tolist()) for i, g in sent]))):
        y.backward(retain_graph=True)
    assert seen == [("SumBackward", [1.0], [(0, [1.0, 1.0])]),
                    ("MulBackward", [[1.0, 1.0]], [(0, [1.0, 2.0]), (1, [1.0, 2.0])]),
                    ("AccumulateGrad", [[2.0, 4.0]], [])]
    y.backward()                          # no observer any more
    assert len(seen) == 3 and x.grad.data.tolist() == [4.0, 8.0]


def test_an_observer_that_raises_stops_the_walk_and_is_removed():
    x = al.tensor(2.0, requires_grad=True)

    def broken(node, grads_in, sent):
        raise ValueError("observer failed")
    with pytest.raises(ValueError, match="observer failed"):
        with engine.observe(broken):
            (x * 3).backward()
    (x * 3).backward()
    assert x.grad.item() == 3.0           # the first walk stopped before the leaf
