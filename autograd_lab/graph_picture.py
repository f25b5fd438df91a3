"""The picture of a computational graph: its boxes and ellipses, their layout, and the figure.

``viz.draw_graph`` and the fallback picture of ``viz.explore`` draw with it. ``PictureGraph`` finds
the graph the way the engine does (``grad_fn.next_functions``; a leaf sits behind an
``AccumulateGrad`` node's ``.variable``); ``layout`` places it in layers; ``graph_figure``
draws any graph of ``PictureNode``s with forward edges ``(src, dst, grad_flows)``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Ellipse, FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.lines import Line2D

from .node import AccumulateGrad
from .variable import Variable


# colours: parameters (leaves that require grad), constants, computed Variables, Functions
_PARAM, _CONST, _COMPUTED, _FUNCTION = "#9ecae1", "#e0e0e0", "#ffffff", "#fdd49e"
_FORWARD, _BACKWARD = "#404040", "#d62728"
_X_INCH, _Y_INCH = 1.9, 0.95  # inches per layout unit, across and down


@dataclass
class PictureNode:
    key: tuple
    kind: str  # "param" | "const" | "computed" | "function"
    label: str
    preds: list = field(default_factory=list)
    succs: list = field(default_factory=list)
    layer: int = 0
    x: float = 0.0
    want: float = 0.0


def shape_text(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else str(tuple(int(n) for n in shape))


class PictureGraph:
    """Variables and Function nodes behind ``roots``, with forward edges (src, dst, grad_flows)."""

    def __init__(self, roots: Sequence[Variable], names: Mapping[Variable, str], max_nodes: int):
        self.nodes: dict[tuple, PictureNode] = {}
        self.edges: list[tuple[tuple, tuple, bool]] = []
        self.max_nodes = max_nodes
        self.names = {id(v): str(n) for v, n in names.items()}
        self.named = list(names)  # keeps ids valid while we look them up
        self.computed_names = {(id(v.grad_fn), v._output_nr): str(n)
                               for v, n in names.items() if v.grad_fn is not None}
        for root in roots:
            self._walk(root)

    def _name_of(self, var: Variable) -> str | None:
        return self.names.get(id(var), getattr(var, "name", None))

    def _add(self, key: tuple, kind: str, label: str) -> tuple:
        if key not in self.nodes:
            if len(self.nodes) >= self.max_nodes:
                raise ValueError(
                    f"draw_graph: the graph has more than max_nodes={self.max_nodes} nodes, too many "
                    "to draw readably. Draw a smaller part (e.g. one layer's output), or pass a "
                    "larger max_nodes= if you really want the whole picture.")
            self.nodes[key] = PictureNode(key, kind, label)
        return key

    def _leaf(self, var: Variable) -> tuple:
        name = self._name_of(var)
        shape = shape_text(var.shape)
        if var.requires_grad:
            return self._add(("leaf", id(var)), "param", f"{name}\n{shape}" if name else shape)
        if var.size == 1 and not name:
            name = f"{var.data.item():.4g}"
        return self._add(("leaf", id(var)), "const", f"{name}\n{shape}" if name else f"const\n{shape}")

    def _output(self, fn: Any, nr: int) -> tuple:
        meta = fn._output_meta[nr] if nr < len(fn._output_meta) else None
        shape = shape_text(meta[0]) if meta is not None else "?"
        name = self.computed_names.get((id(fn), nr))
        return self._add(("out", id(fn), nr), "computed", f"{name}\n{shape}" if name else shape)

    def _constant_input(self, fn: Any, index: int) -> tuple | None:
        """The box for forward argument ``index`` of ``fn`` that did not require grad."""
        metas = getattr(fn, "_input_meta", [])
        meta = metas[index] if index < len(metas) else None
        if meta is None:  # not a Variable (a Python number, an axis, ...): not drawn
            return None
        for saved in getattr(fn, "_saved", None) or ():  # a saved input we can identify
            var = saved  # a saved input is kept as itself (a saved output is not a Variable)
            if isinstance(var, Variable) and not var.requires_grad and var.shape == meta[0] \
                    and id(var) in self.names:
                return self._leaf(var)
        if getattr(fn, "_released", False):  # saved tensors freed by backward: match by shape
            same = [v for v in self.named if isinstance(v, Variable) and not v.requires_grad
                    and v.grad_fn is None and v.shape == meta[0]]
            if len(same) == 1:
                return self._leaf(same[0])
        label = f"const\n{shape_text(meta[0])}"
        return self._add(("const", id(fn), index), "const", label)

    def _edge(self, src: tuple, dst: tuple, grad_flows: bool) -> None:
        self.edges.append((src, dst, grad_flows))
        self.nodes[src].succs.append(dst)
        self.nodes[dst].preds.append(src)

    def _walk(self, root: Variable) -> None:
        if not isinstance(root, Variable):
            raise TypeError(f"draw_graph expects a Variable (or a list of Variables), got "
                            f"{type(root).__name__}. Pass the result of a computation, e.g. loss.")
        if root.grad_fn is None:
            self._leaf(root)
            return
        self._output(root.grad_fn, root._output_nr)
        stack, seen = [root.grad_fn], {id(root.grad_fn)}
        while stack:
            fn = stack.pop()
            fkey = self._add(("fn", id(fn)), "function", type(fn).__name__)
            for nr, meta in enumerate(fn._output_meta):
                if meta is not None and ("out", id(fn), nr) in self.nodes:
                    self._edge(fkey, ("out", id(fn), nr), True)
            for index, (child, nr) in enumerate(fn.next_functions):
                if child is None:
                    src = self._constant_input(fn, index)
                    if src is not None:
                        self._edge(src, fkey, False)
                elif isinstance(child, AccumulateGrad):
                    self._edge(self._leaf(child.variable), fkey, True)
                else:
                    src = self._output(child, nr)
                    self._edge(src, fkey, True)
                    if id(child) not in seen:
                        seen.add(id(child))
                        stack.append(child)
        # outputs first discovered after their Function was walked still need their edge
        for key, node in self.nodes.items():
            if key[0] == "out" and not node.preds:
                self._edge(("fn", key[1]), key, True)


def layout(graph: PictureGraph) -> list[list[PictureNode]]:
    """Longest-path layers from the sources, sources pulled down next to their first use,
    then a few barycentre sweeps to order each layer and centre nodes over their neighbours."""
    nodes = list(graph.nodes.values())
    order = _longest_path_layers(graph, nodes)
    for node in nodes:
        if not node.preds and node.succs:
            node.layer = min(graph.nodes[s].layer for s in node.succs) - 1
    depth = max(n.layer for n in nodes) + 1
    layers: list[list[PictureNode]] = [[] for _ in range(depth)]
    for node in order:
        layers[node.layer].append(node)
    for row in layers:
        for i, node in enumerate(row):
            node.x = i - (len(row) - 1) / 2
    _barycentre_sweeps(graph, layers)
    return layers


def _longest_path_layers(graph: PictureGraph, nodes: list[PictureNode]) -> list[PictureNode]:
    """layout's first step: each node's layer is the longest path to it from a source (a
    topological walk, Kahn's, in the order nodes were found); return the nodes in that walk's order."""
    indegree = {n.key: len(n.preds) for n in nodes}
    ready = [n for n in nodes if indegree[n.key] == 0]
    order = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for s in node.succs:
            succ = graph.nodes[s]
            succ.layer = max(succ.layer, node.layer + 1)
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(succ)
    return order


def _barycentre_sweeps(graph: PictureGraph, layers: list[list[PictureNode]]) -> None:
    """layout's last step: ten sweeps, down and up, that move each node towards the mean position
    of its neighbours (the first six over all of them, the last four over its successors, or its
    predecessors when it has none) and keep each row sorted and spread one unit apart."""
    for sweep in range(10):
        downward = sweep % 2 == 0 and sweep < 6
        for row in (layers if downward else layers[::-1]):
            for node in row:
                near = node.preds + node.succs if sweep < 6 else node.succs or node.preds
                node.want = float(np.mean([graph.nodes[k].x for k in near])) if near else node.x
            row.sort(key=lambda n: (n.want, n.kind not in ("param", "const")))
            _spread(row)


def _spread(row: list[PictureNode]) -> None:
    """Place a sorted row near its wanted positions, at least one unit apart; computed nodes
    and Functions (the spine of the graph) get their wish before leaves do."""
    xs = [n.want for n in row]
    for i in range(1, len(xs)):
        xs[i] = max(xs[i], xs[i - 1] + 1.0)
    weights = np.array([1.0 if n.kind in ("param", "const") else 10.0 for n in row])
    shift = np.average([n.want - x for n, x in zip(row, xs)], weights=weights)
    for node, x in zip(row, xs):
        node.x = x + shift


def names_of(names: Any) -> Mapping[Variable, str]:
    """``names`` as a mapping Variable -> label; a Module gives its ``named_parameters()``."""
    if names is None:
        return {}
    if isinstance(names, Mapping):
        return names
    if callable(getattr(names, "named_parameters", None)):
        names = names.named_parameters()
    if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        raise TypeError(f"names must be a dict mapping Variables to labels or a Module, got "
                        f"{type(names).__name__}; for example names={{w1: 'w1', loss: 'loss'}} "
                        "or names=model.")
    mapping: dict[Variable, str] = {}
    for pair in names:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Variable)):
            raise TypeError("names must be a dict mapping Variables to labels, a Module, or "
                            "(name, parameter) pairs as model.named_parameters() gives; got an "
                            f"item {pair!r:.60}.")
        mapping[pair[1]] = str(pair[0])
    return mapping


def graph_figure(graph: Any, show_backward: bool = False, title: str | None = None) -> Figure:
    """The matplotlib Figure of ``graph`` (``nodes``: key -> ``PictureNode``; ``edges``: forward
    edges ``(src, dst, grad_flows)``), laid out by ``layout``."""
    layers = layout(graph)
    xs = [n.x for n in graph.nodes.values()]
    x_lo, x_hi = min(xs) - 0.6, max(xs) + 0.6
    depth = len(layers)
    width = min(max((x_hi - x_lo) * _X_INCH, 5.0), 16.0)
    height = depth * _Y_INCH + 1.1
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_position((0.0, 0.75 / height, 1.0, 1.0 - 0.75 / height - (0.35 if title else 0.05) / height))
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(-depth + 0.5, 0.5)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)
    patches = {}
    for node in graph.nodes.values():
        patches[node.key] = _draw_node(ax, node, width / (x_hi - x_lo))
    for src, dst, grad_flows in graph.edges:
        arrow = FancyArrowPatch(posA=(graph.nodes[src].x, -graph.nodes[src].layer),
                                posB=(graph.nodes[dst].x, -graph.nodes[dst].layer),
                                patchA=patches[src], patchB=patches[dst], arrowstyle="-|>",
                                mutation_scale=11, color=_FORWARD, lw=1.1, shrinkA=1, shrinkB=1)
        arrow.set_gid("edge:forward")
        ax.add_patch(arrow)
        if show_backward and grad_flows:
            back = FancyArrowPatch(posA=(graph.nodes[dst].x, -graph.nodes[dst].layer),
                                   posB=(graph.nodes[src].x, -graph.nodes[src].layer),
                                   patchA=patches[dst], patchB=patches[src], arrowstyle="-|>",
                                   mutation_scale=10, color=_BACKWARD, lw=1.0, ls="--",
                                   connectionstyle="arc3,rad=0.35", shrinkA=2, shrinkB=2)
            back.set_gid("edge:backward")
            ax.add_patch(back)
    _legend(fig, show_backward)
    return fig


def _draw_node(ax: Any, node: PictureNode, inch_per_unit: float) -> Any:
    longest = max(len(line) for line in node.label.split("\n"))
    chars_per_unit = inch_per_unit / 0.075  # ~0.075 inch per character at 9 pt
    w = min(max(0.6, longest / chars_per_unit + 0.22), 0.94)
    x, y = node.x, -node.layer
    patch: Patch
    if node.kind == "function":
        patch = Ellipse((x, y), w + 0.06, 0.46, facecolor=_FUNCTION, edgecolor="#a05a00", lw=1.2)
        weight = "normal"
    else:
        face = {"param": _PARAM, "const": _CONST, "computed": _COMPUTED}[node.kind]
        patch = FancyBboxPatch((x - w / 2, y - 0.22), w, 0.44, boxstyle="round,pad=0,rounding_size=0.06",
                               facecolor=face, edgecolor="#303030", lw=1.8 if node.kind == "param" else 1.0)
        weight = "bold" if node.kind == "param" else "normal"
    patch.set_gid(f"{'function' if node.kind == 'function' else 'variable'}:{node.kind}")
    ax.add_patch(patch)
    text = ax.text(x, y, node.label, ha="center", va="center", fontsize=9, fontweight=weight,
                   linespacing=1.15)
    text.set_gid("label")
    return patch


def _legend(fig: Figure, show_backward: bool) -> None:
    handles = [Patch(facecolor=_PARAM, edgecolor="#303030", lw=1.8, label="leaf, requires_grad"),
               Patch(facecolor=_CONST, edgecolor="#303030", label="leaf, no grad"),
               Patch(facecolor=_COMPUTED, edgecolor="#303030", label="computed Variable"),
               Patch(facecolor=_FUNCTION, edgecolor="#a05a00", label="grad_fn node"),
               Line2D([], [], color=_FORWARD, marker=">", label="forward")]
    if show_backward:
        handles.append(Line2D([], [], color=_BACKWARD, ls="--", marker="<", label="gradient flow"))
    ncol = len(handles) if fig.get_figwidth() >= 8.5 else 3
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False,
               handlelength=1.6, columnspacing=1.2)
