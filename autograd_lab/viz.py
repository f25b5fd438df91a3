"""Pictures for the course: the computational graph of a Variable, and training curves.

``draw_graph(loss)`` draws the forward graph behind ``loss`` with matplotlib alone (no
graphviz): Variables as boxes (name and shape), the graph nodes of Functions as ellipses
(``MulBackward``), arrows in the forward direction and, with ``show_backward=True``, the way
gradients flow back. The graph is found the way the engine finds it: through
``grad_fn.next_functions``; a leaf sits behind an ``AccumulateGrad`` node's ``.variable``.

>>> import autograd_lab as al
>>> w = al.tensor(2.0, requires_grad=True)
>>> y = (w * 3).exp()
>>> fig = draw_graph(y, names={w: "w", y: "y"})

A model's parameters are labelled by their ``named_parameters()`` names with ``names=model``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from matplotlib.figure import Figure

from .graph_picture import PictureGraph, names_of, graph_figure
from .variable import Variable

__all__ = ["draw_graph", "explore", "plot_history"]


def __dir__() -> list[str]:
    """``dir(autograd_lab.viz)`` lists the API only, not numpy, matplotlib and helpers."""
    return sorted(__all__)


def draw_graph(var: Variable | Sequence[Variable], show_backward: bool = False,
               names: Mapping[Variable, str] | Any = None, *, max_nodes: int = 200,
               title: str | None = None) -> Figure:
    """Draw the computational graph that produced ``var``; return the matplotlib Figure.

    Boxes are Variables (name and shape): blue for leaves that require grad, grey for
    inputs that do not, white for computed ones. Ellipses are the Functions' graph nodes.
    Solid arrows run forward; ``show_backward=True`` adds dashed red arrows where gradients
    flow back. ``names`` maps Variables to labels, e.g. ``{w1: "w1", loss: "loss"}``;
    computed Variables are only recognised through it. ``names=model`` (a Module) labels its
    parameters as ``model.named_parameters()`` names them (``0.weight``, ``fc.bias``), and so
    do the pairs of ``model.named_parameters()`` itself. An input that does not require grad
    is named when its Function saved it for backward, or, once backward has freed the saved
    tensors, when it is the only named such Variable of its shape; otherwise it shows as "const".
    """
    roots: list[Variable] = list(var) if isinstance(var, (list, tuple)) else [var]  # type: ignore[list-item]
    if not roots:
        raise ValueError("draw_graph needs at least one Variable to draw.")
    graph = PictureGraph(roots, names_of(names), max_nodes)
    return graph_figure(graph, show_backward, title)


def explore(root: Any, names: Mapping[Any, str] | Any = None, *, retain_graph: bool = False,
            create_graph: bool = False, max_nodes: int = 500, title: str | None = None) -> Any:
    """A live view of ``root``'s graph that steps through the engine's backward walk.

    Works on ``autograd_lab``'s Variables and on the learner's ``mygrad``. Where widgets do not
    render (nbval, an HTML export, a terminal) the cell shows ``draw_graph``'s picture. See
    ``autograd_lab.explore.GraphExplorer`` for what it shows and where its numbers come from.
    """
    from .explore import explore as _explore  # anywidget is imported only when it is used
    return _explore(root, names, retain_graph=retain_graph, create_graph=create_graph,
                    max_nodes=max_nodes, title=title)



def plot_history(history: Mapping[str, Sequence[float]] | Any) -> Figure:
    """Loss curves (left) and accuracy curves (right) per epoch; return the Figure.

    ``history`` maps names to one number per epoch, e.g. ``{'loss': [...], 'accuracy': [...],
    'val_loss': [...], 'val_accuracy': [...]}`` (or is an object with such a ``.history``).
    Names containing ``loss`` go left, names containing ``acc`` go right.
    """
    curves = _history_curves(history)
    loss = {k: v for k, v in curves.items() if "loss" in k.lower()}
    acc = {k: v for k, v in curves.items() if "acc" in k.lower()}
    if not loss and not acc:
        raise ValueError(f"plot_history found no curve to draw: expected keys containing 'loss' or "
                         f"'acc' (e.g. 'loss', 'val_accuracy'), got {sorted(curves)}.")
    panels = [(t, c) for t, c in (("loss", loss), ("accuracy", acc)) if c]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, group) in zip(axes[0], panels):
        _draw_panel(ax, title, group)
    fig.tight_layout()
    return fig


def _history_curves(history: Mapping[str, Sequence[float]] | Any) -> dict[str, np.ndarray]:
    """plot_history's input checked: a mapping (or an object's ``.history`` mapping) from names to
    one number per epoch, as float arrays keyed by the names as strings."""
    if not isinstance(history, Mapping) and isinstance(getattr(history, "history", None), Mapping):
        history = history.history
    if not isinstance(history, Mapping):
        raise TypeError(f"plot_history expects a dict of lists like {{'loss': [...], 'accuracy': [...]}}, "
                        f"got {type(history).__name__}.")
    curves = {}
    for name, values in history.items():
        try:
            arr = np.asarray(values, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError(f"plot_history: history[{name!r}] must be a list of numbers (one per epoch), "
                            f"got {type(values).__name__}.") from None
        curves[str(name)] = arr
    return curves


def _draw_panel(ax: Any, title: str, group: dict[str, np.ndarray]) -> None:
    """One panel of plot_history: a curve per name against epochs 1, 2, ... (dashed for
    validation and test curves, a marker per epoch up to 30 epochs), whole-number epoch ticks, and an accuracy axis that reaches 1 when the accuracies are fractions."""
    for name, values in group.items():
        epochs = np.arange(1, len(values) + 1)
        style = "--" if name.lower().startswith(("val", "test")) else "-"
        ax.plot(epochs, values, style, marker="o" if len(values) <= 30 else None, ms=3, label=name)
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no tick at epoch 2.5
    if max(len(v) for v in group.values()) == 1:
        ax.set_xlim(0.5, 1.5)  # one epoch: one tick, at 1 (not 0.6, 0.8, ...)
        ax.set_xticks([1])
    ax.set_ylabel(title)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title == "accuracy":
        top = max(float(np.nanmax(v)) for v in group.values()) if group else 1.0
        if top <= 1.0:
            ax.set_ylim(top=1.0)
