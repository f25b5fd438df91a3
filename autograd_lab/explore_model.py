"""The graph explorer's model: the graph behind a Variable and the engine's backward walk, as data.

``viz.explore`` draws this model in the browser; this module needs no browser, so the tests
compare it with the engine directly. ``GraphModel(root)`` holds

- ``nodes``: one dict per box or ellipse of ``draw_graph``'s picture (same keys, kinds, labels
  and layout): ``key``, ``kind`` (``param``, ``const``, ``computed``, ``function``), ``label``,
  ``x``, ``layer`` and ``info`` (shape, dtype, a preview of the data, the version counter; for
  a Function node what its ctx saved);
- ``edges``: ``id``, ``src``, ``dst`` in the forward direction, ``grad`` (whether a gradient
  flows back along it);
- ``steps`` (after ``walk()``): one dict per node the engine ran, in the engine's order:
  ``node`` (its key), ``grads_in`` (box key → the complete gradient that arrived there),
  ``sent`` (edge id → the gradient sent back along it), ``leaf_grad`` (a leaf's ``.grad`` once
  its gradient was added) and, on the node whose backward raised, ``error`` (the message).

Where the numbers come from (they are never recomputed here):

- ``autograd_lab``: ``walk()`` calls ``root.backward()`` inside ``engine.observe``, the engine's
  stepping hook, which reports each node with its incoming gradients and those it sends.
- the learner's ``mygrad``: ``walk()`` calls the learner's own ``root.backward()`` with a hook
  on every Variable of the graph, registered through the public ``register_hook`` (chapter 04):
  their engine calls it with each Variable's complete gradient, in their engine's order. What
  the Variable's node sends to its inputs is the node's own ``function.backward(node, grad)``,
  called in that hook with the same node and gradient the engine is about to use.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from . import engine
from .node import AccumulateGrad
from .variable import Variable
from .graph_picture import PictureGraph, layout, names_of, PictureNode, shape_text

__all__ = ["GraphModel", "value_text"]


def value_text(value: Any) -> str:
    """A gradient or data as short text: ``28`` for a number, a rounded array otherwise."""
    data = np.asarray(getattr(value, "data", value))
    if data.size == 1:
        return f"{data.item():.4g}"
    return np.array2string(data, precision=4, threshold=12, edgeitems=2, suppress_small=True)


def _key(key: tuple) -> str:
    return ":".join(str(k) for k in key)


def _variable_info(var: Any) -> dict:
    data = np.asarray(var.data)
    return {"shape": shape_text(data.shape), "dtype": str(data.dtype),
            "data": value_text(data), "version": int(getattr(var, "_version", 0) or 0),
            "requires_grad": bool(var.requires_grad), "is_leaf": var.grad_fn is None}


def _versions_text(t: Any, saved_at: Any) -> str:
    """``, version 1 (saved at 0)``: the tensor's version counter now, and when it was saved."""
    counter = getattr(t, "_vc", None)  # an output saved by its own node keeps only its counter
    now = getattr(counter, "value", None) if counter is not None else getattr(t, "_version", None)
    if now is None:
        return ""
    return f", version {now}" + ("" if saved_at is None else f" (saved at {saved_at})")


def _saved_info(ctx: Any) -> list[str]:
    """What a node's ctx holds for backward: each saved tensor, then its plain attributes."""
    saved = ctx.__dict__.get("_saved", None)
    if saved is None and ctx.__dict__.get("_released", False):
        lines = ["saved tensors: freed by backward (retain_graph=False)"]
    else:
        lines = []
        versions = ctx.__dict__.get("_saved_versions")
        if versions is None:  # autograd_lab's node keeps None for "all saved at version 0"
            versions = [0] * len(saved or ()) if hasattr(type(ctx), "_saved_versions") else ()
        for i, t in enumerate(saved or ()):
            if t is None:
                continue
            data = np.asarray(getattr(t, "_data", getattr(t, "data", t)))
            lines.append(f"saved[{i}]: {shape_text(data.shape)} {data.dtype}"
                         f"{_versions_text(t, versions[i] if i < len(versions) else None)} = {value_text(data)}")
    for name, value in sorted(vars(ctx).items()):
        if not name.startswith("_") and name not in ("inputs", "needs_input_grad", "next_functions") \
                and isinstance(value, (int, float, bool, str, tuple)) and len(repr(value)) < 80:
            lines.append(f"ctx.{name} = {value!r}")
    return lines


class _MygradGraph:
    """The same picture as ``viz.PictureGraph`` for a learner's Variable, read through ``grad_fn``,
    ``grad_fn.inputs`` and ``requires_grad`` (mygrad's nodes have no ``next_functions``)."""

    def __init__(self, root: Any, names: Mapping[Any, str], max_nodes: int):
        self.nodes: dict[tuple, PictureNode] = {}
        self.edges: list[tuple[tuple, tuple, bool]] = []
        self.names = {id(v): str(n) for v, n in names.items()}
        self.max_nodes = max_nodes
        self.variables: dict[tuple, Any] = {}
        stack, seen = [root], {id(root)}
        self._box(root)
        while stack:
            v = stack.pop()
            if v.grad_fn is None:
                continue
            fkey = self._add(("fn", id(v.grad_fn)), "function", type(v.grad_fn).__name__)
            self._edge(fkey, self._box(v), True)
            for x in v.grad_fn.inputs:
                if not hasattr(x, "grad_fn") or not hasattr(x, "data"):
                    continue  # a Python number or an option: not drawn
                self._edge(self._box(x), fkey, bool(x.requires_grad))
                if id(x) not in seen:
                    seen.add(id(x))
                    stack.append(x)

    def _add(self, key: tuple, kind: str, label: str) -> tuple:
        if key not in self.nodes:
            if len(self.nodes) >= self.max_nodes:
                raise ValueError(f"explore: the graph has more than max_nodes={self.max_nodes} "
                                 "nodes; explore a smaller part or pass a larger max_nodes=.")
            self.nodes[key] = PictureNode(key, kind, label)
        return key

    def _box(self, v: Any) -> tuple:
        name = self.names.get(id(v))
        shape = shape_text(np.shape(v.data))
        text = f"{name}\n{shape}" if name else shape
        if v.grad_fn is not None:
            key = self._add(("out", id(v.grad_fn), 0), "computed", text)
        elif v.requires_grad:
            key = self._add(("leaf", id(v)), "param", text)
        else:
            const = f"{value_text(v.data)}\n{shape}" if np.size(v.data) == 1 else f"const\n{shape}"
            key = self._add(("leaf", id(v)), "const", text if name else const)
        self.variables[key] = v
        return key

    def _edge(self, src: tuple, dst: tuple, grad_flows: bool) -> None:
        self.edges.append((src, dst, grad_flows))
        self.nodes[src].succs.append(dst)
        self.nodes[dst].preds.append(src)


class GraphModel:
    """The graph behind ``root`` and, after ``walk()``, the steps of the engine's backward walk."""

    def __init__(self, root: Any, names: Mapping[Any, str] | Any = None, max_nodes: int = 500):
        if not hasattr(root, "grad_fn") or not hasattr(root, "data"):
            raise TypeError(f"explore expects a Variable (autograd_lab's or your mygrad's), got "
                            f"{type(root).__name__}. Pass the result of a computation, e.g. loss.")
        self.root = root
        self.is_mygrad = not isinstance(root, Variable)
        names = names_of(names)
        self.graph: Any = (_MygradGraph(root, names, max_nodes) if self.is_mygrad
                            else PictureGraph([root], names, max_nodes))
        self._known = {id(v): v for v in names} | {id(root): root}
        layout(cast(PictureGraph, self.graph))  # a _MygradGraph has the same nodes and edges
        self.edges: list[dict[str, Any]] = [{"id": f"e{i}", "src": _key(s), "dst": _key(d), "grad": g}
                      for i, (s, d, g) in enumerate(self.graph.edges)]
        self._edge_ids: dict[tuple[str, str], list[str]] = {}
        for e in self.edges:
            self._edge_ids.setdefault((e["src"], e["dst"]), []).append(e["id"])
        self.nodes: list[dict[str, Any]] = [{"key": _key(n.key), "kind": n.kind, "label": n.label, "x": float(n.x),
                       "layer": int(n.layer), "info": self._info(n.key)}
                      for n in self.graph.nodes.values()]
        self.steps: list[dict] = []
        self.error: str | None = None
        self.walked = False

    # ---- what a click on a node shows
    def _info(self, key: tuple) -> dict:
        var = self._variable_of(key)
        if var is not None:
            return _variable_info(var)
        fn = self._function_of(key)
        if key[0] == "fn" and fn is not None:
            return {"saved": _saved_info(fn)}
        if key[0] == "out" and fn is not None and not self.is_mygrad:
            shape, dtype = fn._output_meta[key[2]]
            return {"shape": shape_text(shape), "dtype": str(dtype), "is_leaf": False}
        return {}

    def _variable_of(self, key: tuple) -> Any:
        if self.is_mygrad:
            return self.graph.variables.get(key)
        if key[0] == "leaf":
            return self._leaves().get(key[1])
        if key[0] == "out":
            for v in self._known.values():
                if v.grad_fn is not None and id(v.grad_fn) == key[1] and v._output_nr == key[2]:
                    return v
        return None

    def _functions(self) -> dict[int, Any]:
        if self.is_mygrad:
            return {id(v.grad_fn): v.grad_fn for v in self.graph.variables.values()
                    if v.grad_fn is not None}
        found: dict[int, Any] = {}
        stack = [self.root.grad_fn] if self.root.grad_fn is not None else []
        while stack:
            fn = stack.pop()
            if id(fn) in found:
                continue
            found[id(fn)] = fn
            stack.extend(c for c, _ in fn.next_functions if c is not None)
        return found

    def _function_of(self, key: tuple) -> Any:
        return self._functions().get(key[1]) if key[0] in ("fn", "out") else None

    def _leaves(self) -> dict[int, Any]:
        leaves = {id(fn.variable): fn.variable for fn in self._functions().values()
                  if isinstance(fn, AccumulateGrad)}
        if self.root.grad_fn is None:
            leaves[id(self.root)] = self.root
        return leaves

    # ---- the walk
    def walk(self, retain_graph: bool = False, create_graph: bool = False) -> list[dict]:
        """Run the library's own ``root.backward()`` once and record its steps (see the module's
        docstring). Leaves' ``.grad`` change as with ``root.backward()``; an error raised by a
        node's backward is kept in ``error`` and marked on that step instead of propagating."""
        self.steps, self.error, self.walked = [], None, True
        try:
            if self.is_mygrad:
                self._walk_mygrad(retain_graph, create_graph)
            else:
                self._walk_autograd_lab(retain_graph, create_graph)
        except Exception as err:  # shown on the node whose backward raised
            self.error = f"{type(err).__name__}: {err}"
            if not self.steps or "error" not in self.steps[-1]:
                self.steps.append({"node": self._failed_node(), "grads_in": {}, "sent": {},
                                   "leaf_grad": None, "error": self.error})
        return self.steps

    def _edge_id(self, src: tuple, dst: tuple, used: dict) -> str | None:
        ids = self._edge_ids.get((_key(src), _key(dst)), [])
        n = used.get((src, dst), 0)
        used[(src, dst)] = n + 1
        return ids[n] if n < len(ids) else None

    def _walk_autograd_lab(self, retain_graph: bool, create_graph: bool) -> None:
        def seen(node: Any, grads_in: list, sent: list) -> None:
            if isinstance(node, AccumulateGrad):
                key = ("leaf", id(node.variable))
                grad = node.variable.grad
                self.steps.append({"node": _key(key), "grads_in": {_key(key): value_text(grads_in[0])},
                                   "sent": {}, "leaf_grad": None if grad is None else value_text(grad)})
                return
            fkey = ("fn", id(node))
            used: dict = {}
            out: dict[str, str] = {}
            for nr, g in enumerate(grads_in):
                if g is not None and ("out", id(node), nr) in self.graph.nodes:
                    out[_key(("out", id(node), nr))] = value_text(g)
            edges = {}
            for index, g in sent:
                child, nr = node.next_functions[index]
                src = ("leaf", id(child.variable)) if isinstance(child, AccumulateGrad) \
                    else ("out", id(child), nr)
                eid = self._edge_id(src, fkey, used)
                if eid is not None:
                    edges[eid] = value_text(g)
            self.steps.append({"node": _key(fkey), "grads_in": out, "sent": edges, "leaf_grad": None})

        with engine.observe(seen):
            self.root.backward(retain_graph=retain_graph, create_graph=create_graph)

    def _failed_node(self) -> str:
        """The node the engine was running when it raised: the first node of its order that a
        gradient reached and that has no step yet."""
        if self.is_mygrad:
            return _key(("out", id(self.root.grad_fn), 0)) if self.root.grad_fn else ""
        done = {s["node"] for s in self.steps}
        reached: set[str] = {e["src"] for s in self.steps for e in self.edges if e["id"] in s["sent"]}
        for node in engine.topological_order([self.root.grad_fn]):
            key = _key(("leaf", id(node.variable)) if isinstance(node, AccumulateGrad) else ("fn", id(node)))
            if key not in done and (not self.steps or key in reached
                                    or any(k.startswith(f"out:{id(node)}:") for k in reached)):
                return key
        return ""

    def _walk_mygrad(self, retain_graph: bool, create_graph: bool) -> None:
        missing = [name for name in ("backward", "register_hook") if not hasattr(self.root, name)]
        if missing:
            raise TypeError(
                f"this mygrad Variable has no {' and no '.join(missing)} yet: the explorer steps "
                "through your engine with them, and chapter 04 writes them. Until then, "
                "draw the graph with draw_graph or explore an autograd_lab Variable.")
        handles = []
        for key, v in self.graph.variables.items():
            if v.requires_grad:
                handles.append(v.register_hook(self._mygrad_hook(key, v)))
        try:
            self.root.backward(retain_graph=retain_graph, create_graph=create_graph)
        finally:
            for handle in handles:
                handle.remove()
        for step in self.steps:  # a leaf's .grad is added after its hooks ran: read it now
            v = self.graph.variables.get(tuple(step.pop("_leaf", ())))
            if v is not None and v.grad is not None:
                step["leaf_grad"] = value_text(v.grad)

    def _mygrad_hook(self, key: tuple, v: Any) -> Any:
        def hook(grad: Any) -> None:
            step: dict = {"grads_in": {_key(key): value_text(grad)}, "sent": {}, "leaf_grad": None}
            self.steps.append(step)
            node = v.grad_fn
            if node is None:
                step["node"], step["_leaf"] = _key(key), key
                return
            step["node"] = _key(("fn", id(node)))
            try:
                grads = node.function.backward(node, grad)  # what the engine calls next, same inputs
            except Exception as err:
                step["error"] = f"{type(err).__name__}: {err}"
                raise
            used: dict = {}
            for x, g in zip(node.inputs, grads if isinstance(grads, tuple) else (grads,)):
                if g is None or not hasattr(x, "grad_fn"):
                    continue
                src = ("out", id(x.grad_fn), 0) if x.grad_fn is not None else ("leaf", id(x))
                eid = self._edge_id(src, ("fn", id(node)), used)
                if eid is not None and x.requires_grad:
                    step["sent"][eid] = value_text(g)
        return hook
