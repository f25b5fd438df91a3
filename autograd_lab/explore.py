"""The graph you can watch: ``explore(root)``, a Jupyter widget that steps through backward.

``GraphExplorer`` is an anywidget: its view is ``explore.js`` and ``explore.css``, shipped inside
this package (no CDN, no graphviz), and it draws in SVG what ``explore_model.GraphModel`` holds:
``draw_graph``'s boxes, ellipses, colours and layout, with forward edges. *Step* (key ``s`` or
→), *Run to end* (``e``) and *Reset* (``r``) move through the engine's walk one node at a time:
the node being run is outlined in red, the gradient it sends is written on each edge, a box
reached more than once shows the sum of its terms, a leaf's ``.grad`` fills in, and the node
whose backward raised is marked with the error's message. Clicking a node shows its shape,
dtype, data and version counter, or what its ctx saved.

The first *Step* runs the library's own ``root.backward()`` once (so leaves' ``.grad`` change as
after ``root.backward()``, and saved tensors are freed unless ``retain_graph=True``) and records
it: on ``autograd_lab`` through ``engine.observe``, on the learner's ``mygrad`` through hooks on
every Variable (see ``explore_model``); the view replays that record. *Reset* rewinds the view,
not the gradients.

Where widgets do not render (nbval, nbconvert to HTML, a terminal), the output also carries
the static ``draw_graph`` picture as ``image/png``, which those front ends show instead.
A 200-node graph stays usable: after the first step (backward, in the kernel) a step redraws in
20-40 ms in headless Chromium on a loaded 2-core machine, one animation frame included
(measured by tests/course/test_browser.py).
"""
from __future__ import annotations

import base64
import io
import pathlib
from collections.abc import Mapping
from typing import Any

import anywidget
import matplotlib.pyplot as plt
import traitlets

from .explore_model import GraphModel
from .graph_picture import graph_figure

__all__ = ["GraphExplorer", "explore"]

_HERE = pathlib.Path(__file__).parent


class GraphExplorer(anywidget.AnyWidget):
    """The widget ``explore`` returns; ``step()``, ``run_to_end()`` and ``reset()`` do what its
    buttons do, from Python."""

    _esm = (_HERE / "explore.js").read_text(encoding="utf-8")
    _css = (_HERE / "explore.css").read_text(encoding="utf-8")
    nodes: traitlets.List[dict] = traitlets.List().tag(sync=True)
    edges: traitlets.List[dict] = traitlets.List().tag(sync=True)
    steps: traitlets.List[dict] = traitlets.List().tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    walked = traitlets.Bool(False).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, model: GraphModel, *, retain_graph: bool = False,
                 create_graph: bool = False, title: str | None = None) -> None:
        super().__init__(nodes=model.nodes, edges=model.edges, title=title or "")
        self.model = model
        self._walk_options = {"retain_graph": retain_graph, "create_graph": create_graph}
        self.on_msg(self._on_message)

    def _walk(self) -> None:
        if not self.model.walked:
            self.model.walk(**self._walk_options)
            self.error = self.model.error or ""
            self.steps = self.model.steps
            self.walked = True

    def step(self) -> None:
        """Show one more node of the walk (running backward first if it has not run)."""
        self._walk()
        self.position = min(self.position + 1, len(self.steps))

    def run_to_end(self) -> None:
        self._walk()
        self.position = len(self.steps)

    def reset(self) -> None:
        self.position = 0

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        {"step": self.step, "end": self.run_to_end, "reset": self.reset}.get(str(action), lambda: None)()

    def __repr__(self) -> str:
        return f"GraphExplorer({len(self.nodes)} nodes, {len(self.edges)} edges)"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data = dict(data)
        data["image/png"] = self.picture_png()
        return data, metadata

    def picture_png(self) -> str:
        """``draw_graph``'s picture of the graph, base64-encoded PNG (the static fallback)."""
        fig = graph_figure(self.model.graph, title=self.title or None)
        try:
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=72, metadata={"Software": None})
        finally:
            plt.close(fig)
        return base64.b64encode(buffer.getvalue()).decode("ascii")


def explore(root: Any, names: Mapping[Any, str] | Any = None, *, retain_graph: bool = False,
            create_graph: bool = False, max_nodes: int = 500,
            title: str | None = None) -> GraphExplorer:
    """A widget that shows ``root``'s graph and steps through the engine's backward walk.

    ``root`` is a Variable of ``autograd_lab`` or of the learner's ``mygrad``; ``names`` labels
    Variables as in ``draw_graph`` (``{w1: "w1", loss: "loss"}`` or a Module);
    ``retain_graph``/``create_graph`` are passed to the ``backward()`` that the first *Step* runs.

    >>> import autograd_lab as al
    >>> w = al.tensor(2.0, requires_grad=True)
    >>> view = explore(w * w, names={w: "w"})
    >>> view.run_to_end(); view.steps[-1]["leaf_grad"]
    '4'
    """
    return GraphExplorer(GraphModel(root, names, max_nodes), retain_graph=retain_graph,
                         create_graph=create_graph, title=title)
