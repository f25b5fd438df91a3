"""The chapter's scalar graphs, as the checkers of ch04-topological-sort and ch04-backward
build them.

The chapter builds a tiny scalar autograd: a ``Scalar`` node has ``data``, ``grad``,
``parents`` (the nodes it was computed from) and ``local_grads`` (d self / d parent, one per
parent). The checkers build their graphs from ``_Scalar`` below, which has the same
attributes, so they test the learner's functions on graphs the learner's own class did not
make (and count how often ``parents`` is read, to catch walks that repeat work). The same seed
builds the same graphs, node for node, in the learner's kernel and in the judge.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["_Scalar", "_leaf", "_named", "_chain", "_ladder", "_reused_graph", "_random_graph",
           "_reachable", "_reference_grads", "_reset_reads", "_course_sort_of", "TooMuchWork", "work_budget"]


class TooMuchWork(Exception):
    """Raised by ``parents`` once a walk has read it more often than :func:`work_budget`
    allows: a walk that expands a reused node once per path could take forever."""


@contextlib.contextmanager
def work_budget(reads: int) -> Iterator[None]:
    """Let the nodes' ``parents`` be read at most ``reads`` times in all, then raise."""
    _Scalar.budget = [reads]
    try:
        yield
    finally:
        _Scalar.budget = None


class _Scalar:
    """A node of the chapter's scalar graph (same attributes as the notebook's ``Scalar``)."""

    def __init__(self, data: float, parents: Iterable[_Scalar] = (),
                 local_grads: Iterable[float] = (), label: str = "") -> None:
        self.data = float(data)
        self._grad = 0.0
        self.grad_writes = 0  # how often .grad was assigned (reset before each backward call)
        self.grad_before = 0.0  # .grad when the current backward call started
        self._parents = tuple(parents)
        self.local_grads = tuple(float(g) for g in local_grads)
        self.label = label
        self.op = label  # the operation that made it ("+", "*", "tanh"); labels may be renamed
        self.reads = 0  # how often .parents was read

    budget: list[int] | None = None
    """Reads of ``parents`` left, over every node, while :func:`work_budget` is on."""

    @property
    def parents(self) -> tuple[_Scalar, ...]:
        self.reads += 1
        left = _Scalar.budget
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise TooMuchWork("the walk read node.parents far more often than the graph has "
                                  "edges; stopped.")
        return self._parents

    @property
    def grad(self) -> float:
        return self._grad

    @grad.setter
    def grad(self, value: float) -> None:
        self.grad_writes += 1
        self._grad = value

    def __add__(self, other: _Scalar) -> _Scalar:
        return _Scalar(self.data + other.data, (self, other), (1.0, 1.0), "+")

    def __mul__(self, other: _Scalar) -> _Scalar:
        return _Scalar(self.data * other.data, (self, other), (other.data, self.data), "*")

    def tanh(self) -> _Scalar:
        t = math.tanh(self.data)
        return _Scalar(t, (self,), (1 - t * t,), "tanh")

    def __repr__(self) -> str:
        return f"Scalar({self.label!r}, data={self.data:.4g})"


# -- graphs the cases use ----------------------------------------------------------------------
def _leaf(value: float, label: str) -> _Scalar:
    return _Scalar(value, label=label)


def _named(node: _Scalar, label: str) -> _Scalar:
    node.label = label
    return node


def _chain(depth: int, factor: float = 1.0) -> tuple[_Scalar, _Scalar]:
    """x -> x*factor -> ... (depth steps); returns (root, x)."""
    x = node = _leaf(1.0, "x")
    for i in range(depth):
        node = _Scalar(node.data * factor, (node,), (factor,), f"step{i + 1}")
    return node, x


def _ladder(depth: int) -> tuple[_Scalar, _Scalar]:
    """h = x; then h = h + h, depth times: each node feeds the next one twice."""
    x = node = _leaf(0.5, "x")
    for i in range(depth):
        node = _named(node + node, f"h{i + 1}")
    return node, x


def _reused_graph(xv: float, yv: float) -> dict[str, _Scalar]:
    """h = x*y is used twice: out = h*h + h."""
    x, y = _leaf(xv, "x"), _leaf(yv, "y")
    h = _named(x * y, "h")
    hh = _named(h * h, "h*h")
    out = _named(hh + h, "out")
    return {"x": x, "y": y, "h": h, "h*h": hh, "out": out}


def _random_graph(rng: np.random.Generator, n_leaves: int, n_ops: int) -> tuple[_Scalar, list]:
    """A random expression DAG with reused nodes; the root sums the nodes nobody consumed."""
    nodes = [_leaf(round(float(rng.uniform(-1.5, 1.5)), 3), f"x{i}") for i in range(n_leaves)]
    used: set[int] = set()
    for k in range(n_ops):
        lo = max(0, len(nodes) - 8)  # mostly recent nodes: deep graphs with many reuses
        i, j = (int(v) for v in rng.integers(lo, len(nodes), size=2))
        op = int(rng.integers(0, 3))
        a, b = nodes[i], nodes[j]
        new = a.tanh() if op == 2 else (a + b if op == 0 else a * b)
        new.label = f"n{k}"
        used.update({id(a)} if op == 2 else {id(a), id(b)})
        nodes.append(new)
    root = None
    for node in nodes[n_leaves:]:
        if id(node) not in used:
            root = node if root is None else root + node
    assert root is not None
    root.label = "root"
    return root, nodes


def _reachable(root: _Scalar) -> list[_Scalar]:
    seen, stack, out = {id(root)}, [root], []
    while stack:
        node = stack.pop()
        out.append(node)
        for p in node._parents:
            if id(p) not in seen:
                seen.add(id(p))
                stack.append(p)
    return out


def _reference_grads(root: _Scalar) -> dict[int, float]:
    """d root / d node for every reachable node, by Kahn's algorithm over consumer counts."""
    nodes = _reachable(root)
    pending = {id(n): 0 for n in nodes}
    for n in nodes:
        for p in n._parents:
            pending[id(p)] += 1
    grads = {id(n): 0.0 for n in nodes}
    grads[id(root)] = 1.0
    ready = [root]
    while ready:
        node = ready.pop()
        for p, local in zip(node._parents, node.local_grads):
            grads[id(p)] += local * grads[id(node)]
            pending[id(p)] -= 1
            if pending[id(p)] == 0:
                ready.append(p)
    return grads


def _reset_reads(nodes: Iterable[_Scalar]) -> None:
    for n in nodes:
        n.reads = 0


def _course_sort_of(root: _Scalar) -> list[_Scalar]:
    """Every node reachable from root once, root first, each before the nodes it came from."""
    order, seen = [], {id(root)}
    stack = [(root, iter(root._parents))]
    while stack:
        node, parents = stack[-1]
        for p in parents:
            if id(p) not in seen:
                seen.add(id(p))
                stack.append((p, iter(p._parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]
