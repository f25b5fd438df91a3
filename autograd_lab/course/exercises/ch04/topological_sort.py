"""Check ``topological_sort(root)``: every node reachable from ``root`` once, ``root`` first,
each node before all of its ``parents``; iterative, so deep graphs work.

The graphs are the chapter's scalar graphs (``_scalars``); the kernel records each order as the
positions of its nodes in the graph's own listing (``-1`` for anything that is not a node of it)
and how often each node's ``parents`` was read; the judge rebuilds the same graphs and decides.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._common import Checker, deeper_than_recursion
from .._exercise import Mistake
from .._observe import Observations, Observer, Opaque
from ._scalars import (TooMuchWork, _chain, _ladder, _leaf, _named, _random_graph, _reachable, _reset_reads,
                       _reused_graph, _Scalar, work_budget)
from .messages import HINTS

ID = "ch04-topological-sort"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("forward order", ("return order[::-1]", "return order"), None, "sort.forward"),
    Mistake("no visited check", ("if parent not in visited:", "if True:"), None,
            "sort.duplicate"),
    Mistake("labels instead of nodes", ("order.append(node)", "order.append(node.label)"), None,
            "sort.not-node"),
    Mistake("leaves left out", ("order.append(node)",
                                "order.append(node) if node.parents else None"), None,
            "sort.missing"),
    Mistake("no return", ("return order[::-1]", "order.reverse()"), None, "sort.none"),
)

DEEP = "the deep chain"
"""The case name of the chain deeper than the recursion limit (its depth depends on the
kernel's limit, so the kernel records it)."""
_LEAST_DEPTH, _MOST_DEPTH = 10_000, 1_000_000
_BUDGET = 20
"""Reads of ``parents`` per node and edge after which the kernel stops a sort: one that
expands a reused node once per path would take forever on the larger graphs."""


@dataclass
class Graph:
    """One case: its name in the record, its title, its root, how often the sort is called and
    whether the reads of ``parents`` are counted."""

    name: str
    title: str
    root: _Scalar
    calls: int = 1
    work: bool = False
    hint: str | None = None

    @property
    def nodes(self) -> list[_Scalar]:
        return _reachable(self.root)


def graphs(seed: int, hidden: bool, depth: int) -> list[Graph]:
    """Every case's graph, built afresh: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    x = _leaf(0.3, "x")
    chain = _named(_named(x.tanh(), "t") * _leaf(2.0, "y"), "out")
    a, b, c = _leaf(1.0, "a"), _leaf(2.0, "b"), _leaf(3.0, "c")
    sq = _leaf(1.5, "x")
    h = _named(_leaf(0.5, "x").tanh(), "h")
    long = h
    for i in range(4):
        long = _named(long.tanh(), f"t{i + 1}")
    found = [
        Graph("a single leaf", "a single leaf", _leaf(2.0, "x")),
        Graph("chain", "a chain x -> tanh -> *y: only one order is right", chain),
        Graph("a*b + c", "a*b + c", _named(_named(a * b, "a*b") + c, "out")),
        Graph("x*x", "x*x uses the same leaf twice in one operation", _named(sq * sq, "x*x")),
        Graph("reused", "a reused non-leaf: h = x*y; out = h*h + h", _reused_graph(2.0, 3.0)["out"]),
        Graph("paths", "a long and a short path to the same node", _named(long * h, "out")),
        Graph("twice", "sorting the same graph twice gives all nodes both times",
              _reused_graph(1.0, -2.0)["out"], calls=2),
        Graph(DEEP, f"a {depth:,}-deep chain (deeper than Python's recursion limit)",
              _chain(depth)[0], hint=HINTS["sort.recursion"]),
        Graph("ladder", "a ladder of 14 nodes, each used twice by the next: each expanded once",
              _ladder(14)[0], work=True),
    ]
    if hidden:
        for k, (n_leaves, n_ops) in enumerate([(3, 25), (5, 60), (8, 150)]):
            title = f"random graph {k + 1}: {n_leaves} leaves, {n_ops} operations"
            found.append(Graph(title, title, _random_graph(rng, n_leaves, n_ops)[0], work=True))
        found.append(Graph("a 30,000-deep chain", "a 30,000-deep chain", _chain(30_000)[0],
                           hint=HINTS["sort.recursion-short"]))
    return found


def observe(ob: Observer, topological_sort: Callable[[Any], Any], *, seed: int,
            hidden: bool) -> None:
    depth = deeper_than_recursion(_LEAST_DEPTH)
    for graph in graphs(seed, hidden, depth):
        nodes = graph.nodes
        index = {id(n): i for i, n in enumerate(nodes)}
        with ob.case(graph.name):
            if graph.name == DEEP:
                ob.put("depth", depth)
            _reset_reads(nodes)
            edges = sum(len(n._parents) for n in nodes)
            try:
                with work_budget(_BUDGET * (len(nodes) + edges) + 100):
                    for call in range(graph.calls):
                        _observe_order(ob, f"call {call + 1}", topological_sort(graph.root),
                                       index)
            except TooMuchWork:
                ob.put("too much work", True)
            ob.put("reads", np.array([n.reads for n in nodes], dtype=np.int64))


def _observe_order(ob: Observer, key: str, order: Any, index: dict[int, int]) -> None:
    """The order as positions in the graph's listing (-1: not a node of it), or what came."""
    ob.put(f"{key} type", type(order).__name__)
    if order is None:
        return
    try:
        items = list(order)
    except TypeError:
        return
    positions = [index.get(id(item), -1) if type(item) is _Scalar else -1 for item in items]
    ob.put(key, np.array(positions, dtype=np.int64))
    if -1 in positions:
        ob.put(f"{key} stranger", items[positions.index(-1)])


class _Stranger:
    """What the learner's list held that is not a node: shown by its recorded repr."""

    def __init__(self, seen: Any) -> None:
        self.text = seen.repr if isinstance(seen, Opaque) else repr(seen)

    def __repr__(self) -> str:
        return self.text


def _order(ck: Checker, seen: Any, key: str, nodes: list[_Scalar]) -> list[Any]:
    """The learner's order again, as the rebuilt graph's nodes (a stranger where it held
    something else)."""
    kind = seen[f"{key} type"]
    ck.check(kind != "NoneType", "your topological_sort returned None.",
             expected="a list of nodes", received=None, hint=HINTS["sort.none"])
    if key not in seen:
        ck.fail("your topological_sort did not return a list.", expected="a list of nodes",
                received=kind, hint=HINTS["sort.list"])
    stranger = _Stranger(seen.get(f"{key} stranger"))
    positions = _ints(ck, seen[key])
    ck.check(all(-1 <= p < len(nodes) for p in positions),
             "the observation of this case is not readable.")
    return [nodes[p] if p >= 0 else stranger for p in positions]


def _ints(ck: Checker, seen: Any) -> list[int]:
    ck.check(isinstance(seen, np.ndarray) and seen.ndim == 1 and seen.dtype.kind in "iu",
             "the observation of this case is not readable.")
    return [int(v) for v in seen]


def judge(ck: Checker, obs: Observations) -> None:
    for graph in graphs(obs.seed, obs.hidden, _depth(ck, obs)):
        nodes = graph.nodes
        with ck.case(graph.title):
            seen = obs.case(ck, graph.name, what="your topological_sort", hint=graph.hint)
            reads = _ints(ck, seen["reads"])
            ck.check(len(reads) == len(nodes), "the observation of this case is not readable.")
            for node, count in zip(nodes, reads):
                node.reads = count
            if seen.get("too much work"):
                _check_work(ck, nodes, stopped=True)
            orders = [_order(ck, seen, f"call {k + 1}", nodes) for k in range(graph.calls)]
            if graph.calls == 2:
                first, second = orders
                ck.check(len(second) == len(first), "the second sort of the same graph returned "
                         f"{len(second)} nodes, the first {len(first)}.", expected=len(first),
                         received=len(second), hint=HINTS["sort.twice"])
            _check_order(ck, orders[-1], graph.root)
            if graph.work:
                _check_work(ck, nodes)
    ck.done()


def _depth(ck: Checker, obs: Observations) -> int:
    """The deep chain's depth the kernel used (at least 10,000; its recursion limit may be
    higher than the judge's)."""
    try:
        depth = obs.case(ck, DEEP).get("depth")
    except (AssertionError, NotImplementedError):  # the case raised: judged in its turn
        depth = None
    if type(depth) is int and _LEAST_DEPTH <= depth <= _MOST_DEPTH:
        return depth
    return deeper_than_recursion(_LEAST_DEPTH)


def _check_order(ck: Checker, order: list[Any], root: _Scalar) -> None:
    """Fail unless ``order`` holds every node reachable from root once, consumers first."""
    reachable = _reachable(root)
    known = {id(n) for n in reachable}
    counts: dict[int, int] = {}
    for item in order:
        if not isinstance(item, _Scalar) or id(item) not in known:
            ck.fail("the list contains something that is not a node of this graph.",
                    expected="only nodes reachable from root", received=repr(item),
                    hint=HINTS["sort.not-node"])
        counts[id(item)] = counts.get(id(item), 0) + 1
    for item in order:
        if counts[id(item)] > 1:
            ck.fail(f"node {item.label!r} appears {counts[id(item)]} times.",
                    expected="each node exactly once", received=f"{len(order)} entries for "
                    f"{len(reachable)} nodes",
                    hint=HINTS["sort.duplicate"])
    missing = [n for n in reachable if id(n) not in counts]
    if missing:
        ck.fail(f"{len(missing)} of the {len(reachable)} nodes are missing, "
                f"e.g. {missing[0].label!r}.",
                expected=f"{len(reachable)} nodes", received=f"{len(order)} nodes",
                hint=HINTS["sort.missing"])
    pos = {id(n): i for i, n in enumerate(order)}
    if len(order) > 1 and order[-1] is root:
        ck.fail("the root is last: the list is in forward order (leaves first).",
                expected=f"the root {root.label!r} first",
                received=f"the root at index {len(order) - 1}",
                hint=HINTS["sort.forward"])
    for node in order:
        for parent in node._parents:
            if pos[id(parent)] < pos[id(node)]:
                ck.fail(f"node {parent.label!r} (index {pos[id(parent)]}) comes before "
                        f"{node.label!r} (index {pos[id(node)]}), which is computed from it.",
                        expected="every node before the nodes it was computed from",
                        received=f"{parent.label!r} before its consumer {node.label!r}",
                        hint=HINTS["sort.order"])


def _check_work(ck: Checker, nodes: list[_Scalar], stopped: bool = False) -> None:
    """Fail when the sort read ``parents`` more than about three times per node and edge (or
    was ``stopped`` for reading it far more often)."""
    total = sum(n.reads for n in nodes)
    edges = sum(len(n._parents) for n in nodes)
    limit = 3 * (len(nodes) + edges)
    worst = max(nodes, key=lambda n: n.reads)
    ck.check(total <= limit and not stopped, f"your sort read node.parents {total} times on a "
             f"graph of {len(nodes)} nodes and {edges} edges ({worst.reads} times for {worst.label!r}).",
             expected=f"at most about {limit} reads (each node expanded once)",
             received=f"{total} reads",
             hint=HINTS["sort.work"])
