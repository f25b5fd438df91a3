"""draw_graph and plot_history: the right number of nodes and edges, headless, clear errors."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import autograd_lab as al  # noqa: E402
from autograd_lab.viz import draw_graph, plot_history  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def course_example():
    """The chapter 02 graph: l1 = input*w1; l2 = l1+w2; l3 = l1*w3; l4 = l2*l3; loss = mean(l4)."""
    inp = al.ones(2, 2)
    w1, w2, w3 = (al.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = inp * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    named = dict(input=inp, w1=w1, w2=w2, w3=w3, l1=l1, l2=l2, l3=l3, l4=l4, loss=loss)
    return loss, {v: k for k, v in named.items()}


def gids(fig, prefix):
    return [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith(prefix)]


def labels(fig):
    return sorted(t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == "label")


def test_backend_is_headless():
    assert matplotlib.get_backend().lower() == "agg"


def test_course_example_has_one_node_per_variable_and_function():
    loss, names = course_example()
    fig = draw_graph(loss, names=names)
    assert len(gids(fig, "variable:")) == 9       # input, w1, w2, w3, l1..l4, loss
    assert len(gids(fig, "function:")) == 5       # Mul, Add, Mul, Mul, Mean
    assert len(gids(fig, "edge:forward")) == 14
    assert gids(fig, "edge:backward") == []
    texts = labels(fig)
    assert len(texts) == 14
    assert texts.count("MulBackward") == 3 and "AddBackward" in texts and "MeanBackward" in texts
    for expected in ["w1\nscalar", "input\n(2, 2)", "l4\n(2, 2)", "loss\nscalar"]:
        assert expected in texts


def test_leaves_and_requires_grad_are_marked_by_kind():
    loss, names = course_example()
    fig = draw_graph(loss, names=names)
    kinds = sorted(p.get_gid() for p in gids(fig, "variable:"))
    assert kinds.count("variable:param") == 3     # w1, w2, w3
    assert kinds.count("variable:const") == 1     # input
    assert kinds.count("variable:computed") == 5  # l1..l4, loss
    colours = {p.get_gid(): tuple(p.get_facecolor()) for p in gids(fig, "variable:")}
    assert len(set(colours.values())) == 3


def test_backward_arrows_only_where_gradients_flow():
    loss, names = course_example()
    fig = draw_graph(loss, show_backward=True, names=names)
    assert len(gids(fig, "edge:forward")) == 14
    assert len(gids(fig, "edge:backward")) == 13  # every edge but input -> MulBackward


def test_without_names_intermediates_show_shapes_and_layers_go_forward():
    loss, _ = course_example()
    fig = draw_graph(loss)
    assert len(gids(fig, "variable:")) == 9
    texts = labels(fig)
    assert texts.count("(2, 2)") == 4 and "scalar" in texts and "const\n(2, 2)" in texts
    # forward arrows point down the page: each one ends lower than it starts
    for arrow in gids(fig, "edge:forward"):
        (x0, y0), (x1, y1) = arrow._posA_posB
        assert y1 < y0


def test_layout_layers_by_longest_path_and_spreads_each_row():
    """The course example laid out: w2 and w3 sit just above their first use (not at the top),
    every edge goes down at least one layer, and a row's nodes are at least one unit apart."""
    from autograd_lab.graph_picture import PictureGraph, layout

    loss, names = course_example()
    graph = PictureGraph([loss], names, 200)
    layers = layout(graph)
    layer_of = {n.label.split("\n")[0]: n.layer for row in layers for n in row}
    assert [layer_of[k] for k in ("input", "w1", "l1", "w2", "w3", "l2", "l3", "l4", "loss")] == \
        [0, 0, 2, 2, 2, 4, 4, 6, 8]  # Functions take the odd layers
    assert all(graph.nodes[dst].layer > graph.nodes[src].layer for src, dst, _ in graph.edges)
    for row in layers:
        xs = sorted(n.x for n in row)
        assert all(b - a >= 1.0 - 1e-9 for a, b in zip(xs, xs[1:]))


def test_small_mlp_and_reused_leaf():
    x = al.randn(5, 4, seed=0)
    W1 = al.randn(4, 6, seed=1, requires_grad=True)
    b1 = al.zeros(6, requires_grad=True)
    W2 = al.randn(6, 3, seed=2, requires_grad=True)
    out = (x @ W1 + b1).relu() @ W2
    loss = (out * out).sum() + (W1 * W1).sum()   # W1 used twice: drawn once
    fig = draw_graph(loss, names={x: "x", W1: "W1", b1: "b1", W2: "W2", loss: "loss"})
    # Variables: x W1 b1 W2, x@W1, +b1, relu, @W2, out*out, sum, W1*W1, sum, loss = 13
    # Functions: MatMul Add ReLU MatMul Mul Sum Mul Sum Add = 9
    assert len(gids(fig, "variable:")) == 13
    assert len(gids(fig, "function:")) == 9
    assert labels(fig).count("W1\n(4, 6)") == 1
    fig.canvas.draw()  # renders headless


def test_leaf_alone_and_list_of_roots():
    w = al.tensor([1.0, 2.0], requires_grad=True)
    fig = draw_graph(w, names={w: "w"})
    assert len(gids(fig, "variable:param")) == 1 and gids(fig, "function:") == []
    a, b = w * 2, w.exp()
    fig = draw_graph([a, b])
    assert len(gids(fig, "function:")) == 2 and len(gids(fig, "variable:")) == 3


def test_bad_input_and_too_many_nodes():
    with pytest.raises(TypeError, match="expects a Variable"):
        draw_graph(np.ones(3))
    w = al.tensor(1.0, requires_grad=True)
    with pytest.raises(TypeError, match="names must be a dict"):
        draw_graph(w * 2, names=["w"])
    y = w
    for _ in range(30):
        y = y * 1.0
    with pytest.raises(ValueError, match="max_nodes=20"):
        draw_graph(y, max_nodes=20)


def test_plot_history_two_axes_with_curves():
    hist = {"loss": [1.0, 0.6, 0.4], "accuracy": [0.5, 0.7, 0.8],
            "val_loss": [1.1, 0.7, 0.5], "val_accuracy": [0.45, 0.65, 0.75]}
    fig = plot_history(hist)
    assert len(fig.axes) == 2
    loss_ax, acc_ax = fig.axes
    assert sorted(line.get_label() for line in loss_ax.lines) == ["loss", "val_loss"]
    assert sorted(line.get_label() for line in acc_ax.lines) == ["accuracy", "val_accuracy"]
    np.testing.assert_allclose(loss_ax.lines[0].get_xdata(), [1, 2, 3])
    np.testing.assert_allclose(acc_ax.lines[0].get_ydata(), [0.5, 0.7, 0.8])


def test_plot_history_reads_a_history_object_and_styles_its_panels():
    class Run:
        history = {"loss": [0.9], "val_accuracy": [0.4], "accuracy": [0.5]}

    loss_ax, acc_ax = plot_history(Run()).axes
    assert list(loss_ax.get_xticks()) == [1] and loss_ax.get_xlim() == (0.5, 1.5)  # one epoch
    styles = {line.get_label(): line.get_linestyle() for line in acc_ax.lines}
    assert styles == {"val_accuracy": "--", "accuracy": "-"}
    assert acc_ax.get_ylim()[1] == 1.0  # fractions: the axis reaches 1
    many = plot_history({"accuracy": list(np.linspace(10, 90, 40))}).axes[0]
    assert many.get_ylim()[1] < 95 and many.lines[0].get_marker() in (None, "None")


def test_plot_history_loss_only_and_errors():
    assert len(plot_history({"loss": [3.0, 2.0]}).axes) == 1
    with pytest.raises(TypeError, match="dict of lists"):
        plot_history([1.0, 2.0])
    with pytest.raises(ValueError, match="no curve"):
        plot_history({"lr": [0.1, 0.1]})
    with pytest.raises(TypeError, match="list of numbers"):
        plot_history({"loss": ["a", object()]})


def test_named_constant_still_named_after_backward():
    loss, names = course_example()
    loss.backward()
    texts = labels(draw_graph(loss, names=names))
    assert "input\n(2, 2)" in texts and "const\n(2, 2)" not in texts


def test_names_can_be_a_model_and_label_its_parameters():
    import autograd_lab.nn as nn
    model = nn.Sequential(nn.Linear(3, 4, seed=0), nn.ReLU(), nn.Linear(4, 2, seed=1))
    x = al.ones(5, 3)
    loss = model(x).sum()
    by_model = labels(draw_graph(loss, names=model))
    expected = [f"{name}\n{tuple(p.shape)}" for name, p in model.named_parameters()]
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for text in expected:
        assert by_model.count(text) == 1
    by_pairs = labels(draw_graph(loss, names=model.named_parameters()))
    assert by_pairs == by_model
    by_dict = labels(draw_graph(loss, names={p: n for n, p in model.named_parameters()}))
    assert by_dict == by_model
    unnamed = labels(draw_graph(loss))
    assert not any(text in unnamed for text in expected)  # the names come from the model
    with pytest.raises(TypeError, match=r"named_parameters\(\) gives"):
        draw_graph(loss, names=[("w", 3.0)])


@pytest.mark.parametrize("module", ["viz", "functional", "data", "optim", "nn"])
def test_public_modules_export_only_their_api(module):
    import importlib
    import inspect
    import types

    mod = importlib.import_module(f"autograd_lab.{module}")
    api = set(mod.__all__)
    for name in api:  # each exported name exists and is not a module borrowed from elsewhere
        obj = getattr(mod, name)
        assert not isinstance(obj, types.ModuleType) or obj.__name__.startswith("autograd_lab.")
    defined_here = {name for name, obj in vars(mod).items()
                    if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
                    and getattr(obj, "__module__", "").startswith(mod.__name__)}
    assert defined_here <= api  # nothing public is left out
    assert not api & {"np", "plt", "Ellipse", "Any", "Variable", "annotations", "math"}
    namespace: dict = {}
    exec(f"from autograd_lab.{module} import *", namespace)
    assert set(namespace) - {"__builtins__"} == api


def test_dir_of_viz_shows_the_api_only():
    import autograd_lab.viz as viz
    assert dir(viz) == ["draw_graph", "explore", "plot_history"]
    assert dir(al.viz) == dir(viz)
