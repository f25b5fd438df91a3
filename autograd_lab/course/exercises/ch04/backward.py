"""Check ``backward(root)``: returns ``{node: d root / d node}`` for every reachable node and
adds each leaf's gradient into ``leaf.grad`` (non-leaves' ``.grad`` untouched).

The learner's backward runs with the course's topological_sort in place of their own (so a
wrong sort costs this exercise nothing). The kernel records, per call and per node of the
graph's listing, the returned gradient (NaN where the dict has none), ``.grad`` before and
after, and how often ``.grad`` was assigned; the judge rebuilds the same graphs and decides.
"""
from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._common import Checker, deeper_than_recursion
from .._exercise import Mistake, decide
from .._observe import Observations, Observer
from . import topological_sort as _sort_exercise
from ._scalars import (_chain, _course_sort_of, _leaf, _named, _random_graph, _reachable,
                       _reference_grads, _reused_graph, _Scalar)
from .messages import HINTS

ID = "ch04-backward"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("a parent's gradient overwritten", (
        "grads[parent] = grads.get(parent, 0.0) + local * g", "grads[parent] = local * g"),
        None, "backward.same-parent"),
    Mistake("a leaf's .grad assigned", ("node.grad += g", "node.grad = g"), None,
            "backward.overwritten"),
    Mistake("no return", ("return grads", "pass"), None, "backward.dict"),
    Mistake("the root's gradient 2", ("grads = {root: 1.0}", "grads = {root: 2.0}"), None,
            "backward.root"),
    Mistake("non-leaves' .grad changed", ("if not node.parents:", "if True:"), None,
            "backward.non-leaf"),
)

DEEP = "the deep chain"
_LEAST_DEPTH, _MOST_DEPTH = 10_000, 1_000_000


@dataclass
class Graph:
    """One case: its name in the record, its title, its root, the names of its nodes in the
    messages, how often backward is called, and the gradients its leaves start with."""

    name: str
    title: str
    root: _Scalar
    names: dict[str, _Scalar] = field(default_factory=dict)
    calls: int = 1
    hint: str | None = None

    @property
    def nodes(self) -> list[_Scalar]:
        return _reachable(self.root)


def graphs(seed: int, hidden: bool, depth: int) -> list[Graph]:
    """Every case's graph, built afresh (leaves' starting .grad set): the same from the same
    seed, wherever run."""
    rng = np.random.default_rng(seed)
    a, b, c = _leaf(2.0, "a"), _leaf(-3.0, "b"), _leaf(0.5, "c")
    ab = _named(a * b, "a*b")
    out = _named(ab + c, "out")
    x, w = _leaf(0.7, "x"), _leaf(-1.2, "w")
    sq = _leaf(1.5, "x")
    px, py = _leaf(2.0, "x"), _leaf(-1.0, "y")
    px.grad, py.grad = 0.25, -4.0
    found = [
        Graph("out = a*b + c", "out = a*b + c", out,
              {"a": a, "b": b, "c": c, "a*b": ab, "out": out}),
        Graph("a chain through tanh", "a chain through tanh",
              _named(_named(x * w, "x*w").tanh(), "out"), {"x": x, "w": w}),
        Graph("x*x", "x*x: one operation uses x twice", _named(sq * sq, "x*x"), {"x": sq}),
        _reused("reused", "a reused non-leaf: h = x*y; out = h*h + h", 2.0, 3.0, 1),
        Graph("accumulates", "a leaf that already has a gradient accumulates into it",
              _named(px * py, "out"), {"x": px, "y": py}),
        _reused("twice", "backward twice on the same graph: leaf gradients exactly double",
                0.5, -2.0, 2),
        Graph(DEEP, f"a {depth:,}-deep chain, each step multiplies by 1.0001",
              _chain(depth, 1.0001)[0], hint=HINTS["backward.recursion"]),
    ]
    if hidden:
        for k, (n_leaves, n_ops) in enumerate([(3, 20), (4, 50), (6, 120)]):
            root, _ = _random_graph(rng, n_leaves, n_ops)
            for leaf in (n for n in _reachable(root) if not n._parents):
                leaf.grad = round(float(rng.uniform(-1, 1)), 2)
            title = f"random graph {k + 1}: {n_leaves} leaves, {n_ops} operations"
            found.append(Graph(title, title, root))
    return found


def _reused(name: str, title: str, x: float, y: float, calls: int) -> Graph:
    g = _reused_graph(x, y)
    return Graph(name, title, g["out"], dict(g), calls=calls)


# -- the kernel's side ---------------------------------------------------------------------
def observe(ob: Observer, backward: Callable[[Any], Any], *, seed: int, hidden: bool) -> None:
    depth = deeper_than_recursion(_LEAST_DEPTH)
    with _course_sort(backward):
        for graph in graphs(seed, hidden, depth):
            nodes = graph.nodes
            with ob.case(graph.name):
                if graph.name == DEEP:
                    ob.put("depth", depth)
                for call in range(1, graph.calls + 1):
                    for node in nodes:
                        node.grad_writes, node.grad_before = 0, node.grad
                    ob.put(f"{call} before", _numbers([n.grad for n in nodes]))
                    grads = backward(graph.root)
                    _observe_call(ob, str(call), grads, nodes)


def _observe_call(ob: Observer, key: str, grads: Any, nodes: list[_Scalar]) -> None:
    ob.put(f"{key} type", type(grads).__name__)
    ob.put(f"{key} grad", _numbers([n.grad for n in nodes]))
    ob.put(f"{key} writes", np.array([n.grad_writes for n in nodes], dtype=np.int64))
    if not isinstance(grads, dict):
        return
    ob.put(f"{key} entries", len(grads))
    keys = {id(k) for k in grads}
    ob.put(f"{key} present", np.array([id(n) in keys for n in nodes], dtype=bool))
    ob.put(f"{key} values", _numbers([grads[n] if id(n) in keys else None for n in nodes]))


def _numbers(values: list[Any]) -> np.ndarray:
    return np.array([_number(v) for v in values], dtype=np.float64)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


_SORT_NAMES = ("topological_sort", "sort", "topo_sort", "topological_order")


def _sort_fails(sort: Callable[[Any], Any]) -> bool:
    """Whether the learner's sort fails its own check (run quietly)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            decide(_sort_exercise, sort)  # decided here, in the grader's sandbox too
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return True
    return False


@contextlib.contextmanager
def _course_sort(backward: Callable[[Any], Any]) -> Iterator[None]:
    """Run with the sort the learner's ``backward`` calls (found by name, as a global or a
    closure variable) replaced by the course's, then put it back; if the learner's own sort
    fails its exercise (ch04-topological-sort), say so in one line."""
    swaps: list[tuple[Any, str, Any]] = []      # (a namespace dict or a cell, name, own value)
    fn = inspect.unwrap(backward) if callable(backward) else backward
    code = getattr(fn, "__code__", None)
    if code is not None:
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            if name in _SORT_NAMES and callable(getattr(cell, "cell_contents", None)):
                swaps.append((cell, name, cell.cell_contents))
        ns = getattr(fn, "__globals__", {})
        for name in code.co_names:
            if name in _SORT_NAMES and callable(ns.get(name)):
                swaps.append((ns, name, ns[name]))
    if any(_sort_fails(own) for _, _, own in swaps[:1]):
        print("note: exercise ch04-topological-sort fails its own check; this check runs your "
              "backward with the course's topological_sort.")
    for where, name, _ in swaps:
        if isinstance(where, dict):
            where[name] = _course_sort_of
        else:
            where.cell_contents = _course_sort_of
    try:
        yield
    finally:
        for where, name, own in swaps:
            if isinstance(where, dict):
                where[name] = own
            else:
                where.cell_contents = own


# -- the judge's side ----------------------------------------------------------------------
def judge(ck: Checker, obs: Observations) -> None:
    for graph in graphs(obs.seed, obs.hidden, _depth(ck, obs)):
        nodes = graph.nodes
        preset = {id(n): n.grad for n in nodes if n.grad}
        with ck.case(graph.title):
            seen = obs.case(ck, graph.name, what="your backward", hint=graph.hint)
            for call in range(1, graph.calls + 1):
                grads = _call(ck, seen, str(call), graph.root, nodes)
                if graph.name == "out = a*b + c":
                    out = graph.root
                    ck.check(any(k is out for k in grads) and grads.get(out) == 1.0,
                             "the root's gradient is not 1.0.", expected=1.0,
                             received=grads.get(out), hint=HINTS["backward.root"])
                if graph.name == DEEP:
                    x = nodes[-1]
                    ck.close(x.grad, 1.0001 ** (len(nodes) - 1), what="x.grad", rtol=1e-9,
                             hint=HINTS["backward.chain"])
                    continue
                if graph.calls == 2 and call == 1:
                    first = {id(n): n.grad for n in nodes}
                    continue
                if graph.calls == 2:
                    x = graph.names["x"]
                    ck.close(x.grad, 2 * _reference_grads(graph.root)[id(x)],
                             what="x.grad after two calls", hint=HINTS["backward.twice"])
                    preset = first
                mistaken = _MISTAKEN.get(graph.name)
                _check_grads(ck, grads, graph.root, graph.names, before=preset or None,
                             mistakes=mistaken(graph) if mistaken else None)
    ck.done()


def _x_mistakes(graph: Graph) -> dict[str, list]:
    return {"x": [(1.5, HINTS["backward.same-parent"])]}


def _h_mistakes(graph: Graph) -> dict[str, list]:
    h = graph.names["h"].data
    return {"h": [(2 * h, HINTS["backward.h-square-only"]),
                  (1.0, HINTS["backward.h-plus-only"])]}


_MISTAKEN: dict[str, Callable[[Graph], dict[str, list]]] = {"x*x": _x_mistakes,
                                                             "reused": _h_mistakes}


def _call(ck: Checker, seen: Any, key: str, root: _Scalar, nodes: list[_Scalar]
          ) -> dict[_Scalar, float]:
    """One observed call on the rebuilt graph: its nodes' .grad as they were, and the
    returned dict (only its entries for nodes of the graph) after the checks of the call."""
    before, after = _floats(ck, seen[f"{key} before"], nodes), _floats(ck, seen[f"{key} grad"],
                                                                       nodes)
    writes = seen[f"{key} writes"]
    ck.check(isinstance(writes, np.ndarray) and writes.shape == (len(nodes),)
             and writes.dtype.kind in "iu", "the observation of this case is not readable.")
    for node, b, a, count in zip(nodes, before, after, writes):
        node.grad_before, node._grad, node.grad_writes = float(b), float(a), int(count)
    grads: dict[_Scalar, float] | None = None
    if f"{key} values" in seen:
        present = seen[f"{key} present"]
        ck.check(isinstance(present, np.ndarray) and present.shape == (len(nodes),),
                 "the observation of this case is not readable.")
        values = _floats(ck, seen[f"{key} values"], nodes)
        grads = {n: float(v) for n, v, p in zip(nodes, values, present) if p}
    _check_visits(ck, root, nodes, grads)
    ck.check(grads is not None, "your backward did not return a dict.",
             expected="a dict {node: d root / d node}", received=seen[f"{key} type"],
             hint=HINTS["backward.dict"])
    assert grads is not None
    return _Grads(grads, seen[f"{key} entries"])


class _Grads(dict[_Scalar, float]):
    """The returned dict's entries for the graph's nodes; ``len`` is the learner's dict's."""

    def __init__(self, entries: dict[_Scalar, float], count: Any) -> None:
        super().__init__(entries)
        self.count = count if type(count) is int else len(entries)

    def __len__(self) -> int:
        return self.count


def _floats(ck: Checker, seen: Any, nodes: list[_Scalar]) -> np.ndarray:
    ck.check(isinstance(seen, np.ndarray) and seen.shape == (len(nodes),)
             and seen.dtype.kind == "f", "the observation of this case is not readable.")
    return seen


def _check_visits(ck: Checker, root: _Scalar, nodes: list[_Scalar],
                  grads: dict[_Scalar, float] | None) -> None:
    """If the gradients are wrong because backward visited nodes more than once, say so.

    A topological sort without a visited set lists a reused node once per path; backward then
    handles it several times, and the leaves' .grad come out too large. The comparisons below
    would blame the accumulation (``leaf.grad += ...``), although that line is right; this
    names the real cause instead. Only wrong results are diagnosed: a backward that updates a
    leaf once per consumer but gets the right total is fine.
    """
    ref = _reference_grads(root)
    repeated = [n for n in nodes if not n._parents and n.grad_writes > 1]
    if not repeated:
        return
    wrong_dict = grads is not None and any(
        not np.isclose(grads[n], ref[id(n)]) for n in nodes if n in grads)
    # a leaf visited k times in one call ends with k times its gradient added
    too_large = [n for n in repeated if ref[id(n)] != 0 and np.isclose(
        n.grad - n.grad_before, n.grad_writes * ref[id(n)])]
    if not too_large and not wrong_dict:
        return
    leaf = (too_large or repeated)[0]
    ck.fail(f"backward visited the leaf {leaf.label!r} {leaf.grad_writes} times in one call, so "
            "its gradient was added that many times: the order it walks lists some nodes more "
            "than once.",
            expected="each node once in the order (one update of .grad per leaf and call)",
            received=f"{leaf.grad_writes} updates of {leaf.label}.grad",
            hint=HINTS["backward.visits"])


def _depth(ck: Checker, obs: Observations) -> int:
    """The deep chain's depth the kernel used (at least 10,000)."""
    try:
        depth = obs.case(ck, DEEP).get("depth")
    except (AssertionError, NotImplementedError):  # the case raised: judged in its turn
        depth = None
    if type(depth) is int and _LEAST_DEPTH <= depth <= _MOST_DEPTH:
        return depth
    return deeper_than_recursion(_LEAST_DEPTH)


def _check_grads(ck: Checker, grads: dict[_Scalar, float], root: _Scalar, names: dict[str, _Scalar],
                 before: dict[int, float] | None = None,
                 mistakes: dict[str, list] | None = None) -> None:
    """Compare the returned dict with the reference, and leaf .grad with before + reference."""
    ref = _reference_grads(root)
    nodes = _reachable(root)
    by_id = {id(n): n for n in nodes}
    label = {id(n): n.label for n in nodes}
    for name, node in names.items():
        label[id(node)] = name
    keys = {id(k) for k in grads}
    missing = [label[i] for i in ref if i not in keys]
    if missing:
        ck.fail(f"the returned dict has no gradient for {missing[0]!r}.",
                expected="a gradient for every node reachable from the root (root: 1.0)",
                received=f"{len(grads)} entries for {len(ref)} nodes",
                hint=HINTS["backward.missing"])
    mistakes = mistakes or {}
    for i, expected in ref.items():
        node = by_id[i]
        ck.close(grads[node], expected, what=f"gradient of {label[i]!r} in the returned dict",
                 hint=HINTS["backward.sum"],
                 mistakes=mistakes.get(label[i], []))
    for i, expected in ref.items():
        node = by_id[i]
        if node._parents:
            ck.check(node.grad == (before or {}).get(i, 0.0),
                     f"the .grad of the non-leaf {label[i]!r} was changed.",
                     expected=(before or {}).get(i, 0.0), received=node.grad,
                     hint=HINTS["backward.non-leaf"])
        else:
            start = (before or {}).get(i, 0.0)
            ck.close(node.grad, start + expected, what=f"{label[i]}.grad",
                     hint=HINTS["backward.leaf"],
                     mistakes=[(expected, HINTS["backward.overwritten"])]
                     if start else [])


