"""Check ``topological_order(root)`` on mygrad Variables: each Variable root depends on and
that requires grad, once, root first, each before its inputs; iterative.

The graphs are built with the learner's package in the kernel, which records each graph as
plain data (every Variable reachable through ``grad_fn.inputs``, by position: whether it
requires grad, its inputs' positions, its name in the messages) and each order as positions in
that listing; the judge works out which Variables belong in the order and decides.
"""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .._common import Checker, deeper_than_recursion
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._variables import _h_graph, _mg, _package, _scale_function, _seed_graph
from .messages import HINTS

ID = "ch04-topological-order"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("forward order", ("return order[::-1]            # root first",
                              "return order                  # root first"), None,
            "order.forward"),
    Mistake("no visited check", ("if id(x) not in visited:", "if True:"), None,
            "order.duplicate"),
    Mistake("inputs that need no grad followed",
            ("if isinstance(x, Variable) and x.requires_grad]", "if isinstance(x, Variable)]"),
            None, "order.no-grad"),
    Mistake("leaves left out", ("order.append(v)", "order.append(v) if v.grad_fn else None"),
            None, "order.missing"),
)

DEEP = "the deep chain"
_LEAST_DEPTH, _MOST_DEPTH = 5000, 1_000_000
_TITLES = {
    "leaf": "a single leaf that requires grad",
    "seed": "the l1...l4 example: input needs no grad and is not listed",
    "scale": "an input that is a plain number is not followed: Scale.apply(x, 3.0)",
    "h": "h = x*y used three times: out = h*h + h",
    "twice": "the same graph twice gives all Variables both times",
    "ladder": "a ladder: h = h + h, 12 times (4096 paths, 13 Variables)",
    "random": "a random graph of 40 operations with reuse",
}


def _hint(name: str) -> str | None:
    return {"leaf": HINTS["order.leaf"], "scale": HINTS["order.number"],
            DEEP: HINTS["order.recursion"]}.get(name)


def _graphs(pkg: ModuleType, seed: int, hidden: bool, depth: int
            ) -> list[tuple[str, Any, dict[str, Any], int]]:
    """(name, root, the names of its Variables in the messages, calls) for every case."""
    rng = np.random.default_rng(seed)
    x = _mg(pkg, 1.0, True)
    found: list[tuple[str, Any, dict[str, Any], int]] = [("leaf", x, {"x": x}, 1)]
    g = _seed_graph(pkg)
    found.append(("seed", g["loss"], g, 1))
    x = _mg(pkg, [1.0, -2.0], True)
    y = _scale_function(pkg, lambda ctx, g: (g * ctx.factor, None)).apply(x, 3.0)
    found.append(("scale", y, {"x": x, "y": y}, 1))
    g = _h_graph(pkg)
    found.append(("h", g["out"], g, 1))
    g = _h_graph(pkg, -1.0, 0.5)
    found.append(("twice", g["out"], g, 2))
    x = h = _mg(pkg, 0.5, True)
    for _ in range(12):
        h = h + h
    found.append(("ladder", h, {"x": x}, 1))
    x = y = _mg(pkg, 1.0, True)
    for _ in range(depth):
        y = y * 1.0
    found.append((DEEP, y, {"x": x}, 1))
    if hidden:
        vs = [_mg(pkg, float(v), True) for v in np.round(rng.uniform(-1, 1, 3), 2)]
        for _ in range(40):
            i, j = (int(k) for k in rng.integers(max(0, len(vs) - 6), len(vs), size=2))
            vs.append(vs[i] * vs[j] if rng.random() < 0.5 else vs[i] + vs[j])
        found.append(("random", vs[-1], {}, 1))
    return found


def _title(name: str, depth: int) -> str:
    if name == DEEP:
        return f"a {depth:,}-deep chain (deeper than Python's recursion limit)"
    return _TITLES[name]


# -- the kernel's side ---------------------------------------------------------------------
def observe(ob: Observer, topological_order: Callable[[Any], Any],
            mygrad: ModuleType | None = None, *, seed: int, hidden: bool) -> None:
    pkg = _package(mygrad)
    depth = deeper_than_recursion(_LEAST_DEPTH)
    cases: list[tuple[str, Any, dict[str, Any], int]] = []
    with ob.case("graphs"):
        cases = _graphs(pkg, seed, hidden, depth)
        ob.put("depth", depth)
    for name, root, names, calls in cases:
        with ob.case(name):
            listing = _observe_graph(ob, root, names)
            for call in range(1, calls + 1):
                _observe_order(ob, str(call), topological_order(root), listing)


def _observe_graph(ob: Observer, root: Any, names: dict[str, Any]) -> dict[int, int]:
    """Every Variable reachable from root through grad_fn.inputs, as plain data; returns the
    positions by id."""
    label = {id(v): k for k, v in names.items()}
    index, listing, stack = {id(root): 0}, [root], [root]
    edges: list[tuple[int, int]] = []
    while stack:
        v = stack.pop()
        node = v.grad_fn
        for x in (node.inputs if node is not None else ()):
            if not hasattr(x, "grad_fn"):
                edges.append((index[id(v)], -1))
                continue
            if id(x) not in index:
                index[id(x)] = len(listing)
                listing.append(x)
                stack.append(x)
            edges.append((index[id(v)], index[id(x)]))
    ob.put("requires grad", np.array([getattr(v, "requires_grad", False) is True
                                      for v in listing], dtype=bool))
    ob.put("edges", np.array(edges, dtype=np.int64).reshape(-1, 2))
    ob.put("labels", {str(index[i]): k for i, k in label.items() if i in index})
    ob.put("shapes", {str(i): str(getattr(v, "shape", "?")) for i, v in enumerate(listing)
                      if str(getattr(v, "shape", "?")) != "()"})
    return index


def _observe_order(ob: Observer, key: str, order: Any, index: dict[int, int]) -> None:
    ob.put(f"{key} type", type(order).__name__)
    if order is None:
        return
    try:
        items = list(order)
    except TypeError:
        return
    positions = [index.get(id(item), -1) for item in items]
    ob.put(key, np.array(positions, dtype=np.int64))
    if -1 in positions:
        item = items[positions.index(-1)]
        ob.put(f"{key} stranger", {"no grad": getattr(item, "requires_grad", True) is False,
                                   "repr": repr(item)[:60],
                                   "shape": str(getattr(item, "shape", "?"))})


# -- the judge's side ----------------------------------------------------------------------
class _Var:
    """A Variable of the observed graph, in the judge: its position, name and inputs."""

    def __init__(self, pos: int, requires_grad: bool, text: str) -> None:
        self.pos, self.requires_grad, self.text = pos, requires_grad, text
        self.inputs: list[_Var] = []

    @property
    def name(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def judge(ck: Checker, obs: Observations) -> None:
    depth = _depth(ck, obs)
    names = ["leaf", "seed", "scale", "h", "twice", "ladder", DEEP] + (["random"] if obs.hidden
                                                                        else [])
    for name in names:
        with ck.case(_title(name, depth)):
            obs.case(ck, "graphs", what="building the graph with your mygrad")
            seen = obs.case(ck, name, what="your topological_order", hint=_hint(name))
            graph = _graph(ck, seen)
            orders = [_order(ck, seen, str(k), graph) for k in range(1, 3 if name == "twice"
                                                                   else 2)]
            _check_variable_order(ck, orders[-1], graph[0])
            if name == "twice":
                ck.check(len(orders[0]) == len(orders[1]), "the second call returned a "
                         "different number of Variables.", hint=HINTS["order.twice"])
    ck.done()


def _graph(ck: Checker, seen: Any) -> list[_Var]:
    rg, edges = seen["requires grad"], seen["edges"]
    labels, shapes = seen["labels"], seen["shapes"]
    ok = (isinstance(rg, np.ndarray) and rg.dtype == bool and rg.ndim == 1 and len(rg) > 0
          and isinstance(edges, np.ndarray) and edges.ndim == 2 and edges.shape[1] == 2
          and isinstance(labels, dict) and isinstance(shapes, dict))
    ck.check(ok, "the observation of this case is not readable.")
    graph = [_Var(i, bool(r), str(labels.get(str(i)) or
                                  f"a Variable of shape {shapes.get(str(i), '()')}"))
             for i, r in enumerate(rg)]
    for a, b in edges.tolist():
        ck.check(0 <= a < len(graph) and -1 <= b < len(graph),
                 "the observation of this case is not readable.")
        if b >= 0:
            graph[a].inputs.append(graph[b])
    return graph


class _Stranger:
    def __init__(self, seen: Any) -> None:
        seen = seen if isinstance(seen, dict) else {}
        self.requires_grad = False if seen.get("no grad") is True else True
        self.text = str(seen.get("repr", "?"))
        self.name = f"a Variable of shape {seen.get('shape', '?')}"
        self.inputs: list[_Var] = []

    def __repr__(self) -> str:
        return self.text


def _order(ck: Checker, seen: Any, key: str, graph: list[_Var]) -> list[Any]:
    kind = seen[f"{key} type"]
    ck.check(kind != "NoneType", "your topological_order returned None.",
             expected="a list of Variables", hint=HINTS["order.none"])
    if key not in seen:
        ck.fail("your topological_order did not return a list.", expected="a list of Variables",
                received=kind, hint=HINTS["order.list"])
    positions = seen[key]
    ck.check(isinstance(positions, np.ndarray) and positions.ndim == 1
             and positions.dtype.kind in "iu" and all(-1 <= int(p) < len(graph)
                                                      for p in positions),
             "the observation of this case is not readable.")
    stranger = _Stranger(seen.get(f"{key} stranger"))
    return [graph[int(p)] if p >= 0 else stranger for p in positions]


def _needs_grad_reachable(root: _Var) -> list[_Var]:
    """Every Variable root depends on that requires grad (root included)."""
    seen, stack, out = {id(root)}, [root], []
    while stack:
        v = stack.pop()
        out.append(v)
        for x in v.inputs:
            if x.requires_grad and id(x) not in seen:
                seen.add(id(x))
                stack.append(x)
    return out


def _depth(ck: Checker, obs: Observations) -> int:
    try:
        depth = obs.case(ck, "graphs").get("depth")
    except (AssertionError, NotImplementedError):
        depth = None
    if type(depth) is int and _LEAST_DEPTH <= depth <= _MOST_DEPTH:
        return depth
    return deeper_than_recursion(_LEAST_DEPTH)


def _check_variable_order(ck: Checker, order: list[Any], root: _Var) -> None:
    """Fail unless order lists each Variable that root needs once, root first, users first."""
    reachable = _needs_grad_reachable(root)
    known = {id(v) for v in reachable}
    counts: dict[int, int] = {}
    for item in order:
        if id(item) not in known:
            if item.requires_grad is False:
                what = (f"{getattr(item, 'name', repr(item))}, a Variable that does not require grad (it gets no "
                        "gradient, so the engine need not visit it)")
            else:
                what = f"{item!r}, which is not a Variable that root depends on"
            ck.fail(f"the list contains {what}.",
                    expected="only the Variables root depends on that require grad",
                    hint=HINTS["order.no-grad"])
        counts[id(item)] = counts.get(id(item), 0) + 1
    for item in order:
        if counts[id(item)] > 1:
            ck.fail(f"{item!r} appears {counts[id(item)]} times.",
                    expected="each Variable exactly once",
                    received=f"{len(order)} entries for {len(reachable)} Variables",
                    hint=HINTS["order.duplicate"])
    missing = [v for v in reachable if id(v) not in counts]
    if missing:
        ck.fail(f"{len(missing)} of the {len(reachable)} Variables are missing, e.g. "
                f"{missing[0]!r}.", expected=f"{len(reachable)} Variables",
                received=f"{len(order)} Variables", hint=HINTS["order.missing"])
    if len(order) > 1 and order[-1] is root:
        ck.fail("the root is last: the list is in forward order.", expected="the root first",
                received=f"the root at index {len(order) - 1}", hint=HINTS["order.forward"])
    pos = {id(v): i for i, v in enumerate(order)}
    for v in order:
        for x in v.inputs:
            if id(x) in pos and pos[id(x)] < pos[id(v)]:
                ck.fail(f"{x!r} (index {pos[id(x)]}) comes before {v!r} (index "
                        f"{pos[id(v)]}), which was computed from it.",
                        expected="every Variable before the Variables it was computed from",
                        received=f"{x!r} before its user {v!r}", hint=HINTS["order.order"])
