"""Checkers for chapter 04, The engine.

The chapter builds a tiny scalar autograd: a ``Scalar`` node has ``data``, ``grad``,
``parents`` (the nodes it was computed from) and ``local_grads`` (d self / d parent, one per
parent). The checkers build their graphs from ``_Scalar`` below, which has the same
attributes, so they test the learner's functions on graphs the learner's own class did not
make (and count how often ``parents`` is read, to catch walks that repeat work).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ._common import Checker

__all__ = ["ch04_topological_sort", "ch04_backward", "ch04_reused_node", "ch04_second_backward"]


class _Scalar:
    """A node of the chapter's scalar graph (same attributes as the notebook's ``Scalar``)."""

    def __init__(self, data: float, parents: Iterable[_Scalar] = (),
                 local_grads: Iterable[float] = (), label: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self._parents = tuple(parents)
        self.local_grads = tuple(float(g) for g in local_grads)
        self.label = label
        self.op = label  # the operation that made it ("+", "*", "tanh"); labels may be renamed
        self.reads = 0  # how often .parents was read

    @property
    def parents(self) -> tuple[_Scalar, ...]:
        self.reads += 1
        return self._parents

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


# -- exercise 1: topological sort ------------------------------------------------------------
_ORDER_HINT = ("Do a depth-first search that appends a node only after all its parents have been "
               "appended (post-order), then reverse the list: every node then comes before the "
               "nodes it was computed from.")


def _run_sort(ck: Checker, sort: Callable[[Any], Any], root: _Scalar,
              hint: str | None = None) -> list:
    order = ck.call(sort, root, hint=hint)
    ck.check(order is not None, "your topological_sort returned None.", expected="a list of nodes",
             received=order, hint="Did you forget the `return` statement?")
    try:
        order = list(order)
    except TypeError:
        ck.fail("your topological_sort did not return a list.", expected="a list of nodes",
                received=type(order).__name__, hint="Collect the nodes in a list and return it.")
    return order


def _check_order(ck: Checker, order: list, root: _Scalar) -> None:
    """Fail unless ``order`` holds every node reachable from root once, consumers first."""
    reachable = _reachable(root)
    known = {id(n) for n in reachable}
    counts: dict[int, int] = {}
    for item in order:
        if not isinstance(item, _Scalar) or id(item) not in known:
            ck.fail("the list contains something that is not a node of this graph.",
                    expected="only nodes reachable from root", received=repr(item),
                    hint="Put the nodes themselves in the list (not their data, labels or ids).")
        counts[id(item)] = counts.get(id(item), 0) + 1
    for item in order:
        if counts[id(item)] > 1:
            ck.fail(f"node {item.label!r} appears {counts[id(item)]} times.",
                    expected="each node exactly once", received=f"{len(order)} entries for "
                    f"{len(reachable)} nodes",
                    hint="A node that is used twice is reached along two paths. Keep a set of "
                         "the nodes you have already visited and skip them the second time.")
    missing = [n for n in reachable if id(n) not in counts]
    if missing:
        ck.fail(f"{len(missing)} of the {len(reachable)} nodes are missing, "
                f"e.g. {missing[0].label!r}.",
                expected=f"{len(reachable)} nodes", received=f"{len(order)} nodes",
                hint="Follow node.parents all the way down to the leaves; every node reachable "
                     "from the root belongs in the list, leaves included.")
    pos = {id(n): i for i, n in enumerate(order)}
    if len(order) > 1 and order[-1] is root:
        ck.fail("the root is last: the list is in forward order (leaves first).",
                expected=f"the root {root.label!r} first",
                received=f"the root at index {len(order) - 1}",
                hint="Backward runs from the output to the leaves: reverse your list.")
    for node in order:
        for parent in node._parents:
            if pos[id(parent)] < pos[id(node)]:
                ck.fail(f"node {parent.label!r} (index {pos[id(parent)]}) comes before "
                        f"{node.label!r} (index {pos[id(node)]}), which is computed from it.",
                        expected="every node before the nodes it was computed from",
                        received=f"{parent.label!r} before its consumer {node.label!r}",
                        hint=_ORDER_HINT + " (A breadth-first order is not enough once a node "
                        "is reused along paths of different lengths.)")


def _check_work(ck: Checker, nodes: list[_Scalar]) -> None:
    total = sum(n.reads for n in nodes)
    edges = sum(len(n._parents) for n in nodes)
    limit = 3 * (len(nodes) + edges)
    worst = max(nodes, key=lambda n: n.reads)
    ck.check(total <= limit, f"your sort read node.parents {total} times on a graph of "
             f"{len(nodes)} nodes and {edges} edges ({worst.reads} times for {worst.label!r}).",
             expected=f"at most about {limit} reads (each node expanded once)",
             received=f"{total} reads",
             hint="It walks through a reused node once per path, and the number of paths grows "
                  "exponentially. Expand each node only the first time you reach it (a `visited` "
                  "set), even if you de-duplicate the list afterwards.")


def ch04_topological_sort(topological_sort: Callable[[Any], list], *, seed: int = 0,
                          hidden: bool = False) -> None:
    """Check ``topological_sort(root)``: every node reachable from ``root`` once, ``root``
    first, each node before all of its ``parents``; iterative, so deep graphs work."""
    ck = Checker("ch04-topological-sort", seed=seed, hidden=hidden)
    with ck.case("a single leaf"):
        x = _leaf(2.0, "x")
        _check_order(ck, _run_sort(ck, topological_sort, x), x)
    with ck.case("a chain x -> tanh -> *y: only one order is right"):
        x, y = _leaf(0.3, "x"), _leaf(2.0, "y")
        t = _named(x.tanh(), "t")
        out = _named(t * y, "out")
        order = _run_sort(ck, topological_sort, out)
        _check_order(ck, order, out)
    with ck.case("a*b + c"):
        a, b, c = _leaf(1.0, "a"), _leaf(2.0, "b"), _leaf(3.0, "c")
        out = _named(_named(a * b, "a*b") + c, "out")
        _check_order(ck, _run_sort(ck, topological_sort, out), out)
    with ck.case("x*x uses the same leaf twice in one operation"):
        x = _leaf(1.5, "x")
        sq = _named(x * x, "x*x")
        _check_order(ck, _run_sort(ck, topological_sort, sq), sq)
    with ck.case("a reused non-leaf: h = x*y; out = h*h + h"):
        g = _reused_graph(2.0, 3.0)
        _check_order(ck, _run_sort(ck, topological_sort, g["out"]), g["out"])
    with ck.case("a long and a short path to the same node"):
        x = _leaf(0.5, "x")
        h = _named(x.tanh(), "h")
        long = h
        for i in range(4):
            long = _named(long.tanh(), f"t{i + 1}")
        out = _named(long * h, "out")
        _check_order(ck, _run_sort(ck, topological_sort, out), out)
    with ck.case("sorting the same graph twice gives all nodes both times"):
        g = _reused_graph(1.0, -2.0)
        first = _run_sort(ck, topological_sort, g["out"])
        second = _run_sort(ck, topological_sort, g["out"])
        ck.check(len(second) == len(first), "the second sort of the same graph returned "
                 f"{len(second)} nodes, the first {len(first)}.", expected=len(first),
                 received=len(second), hint="Keep the visited set inside the function (a new "
                 "one per call) instead of marking the nodes themselves.")
        _check_order(ck, second, g["out"])
    depth = 10_000
    with ck.case(f"a {depth:,}-deep chain (deeper than Python's recursion limit)"):
        root, _ = _chain(depth)
        order = _run_sort(ck, topological_sort, root,
                          hint="A recursive function needs one Python frame per level, and Python "
                               "stops at about 1,000 (RecursionError). Use an explicit stack (a "
                               "list you append to and pop from) instead of recursion.")
        _check_order(ck, order, root)
    with ck.case("a ladder of 14 nodes, each used twice by the next: each expanded once"):
        root, _ = _ladder(14)
        nodes = _reachable(root)
        _reset_reads(nodes)
        order = _run_sort(ck, topological_sort, root)
        _check_order(ck, order, root)
        _check_work(ck, nodes)
    if hidden:
        for k, (n_leaves, n_ops) in enumerate([(3, 25), (5, 60), (8, 150)]):
            with ck.case(f"random graph {k + 1}: {n_leaves} leaves, {n_ops} operations"):
                root, _ = _random_graph(ck.rng, n_leaves, n_ops)
                nodes = _reachable(root)
                _reset_reads(nodes)
                _check_order(ck, _run_sort(ck, topological_sort, root), root)
                _check_work(ck, nodes)
        with ck.case("a 30,000-deep chain"):
            root, _ = _chain(30_000)
            _check_order(ck, _run_sort(ck, topological_sort, root, hint="Use an explicit stack, "
                                       "not recursion."), root)
    ck.done()


# -- exercise 2: backward ----------------------------------------------------------------------
def _run_backward(ck: Checker, backward: Callable[[Any], Any], root: _Scalar,
                  hint: str | None = None) -> dict:
    grads = ck.call(backward, root, hint=hint)
    ck.check(isinstance(grads, dict), "your backward did not return a dict.",
             expected="a dict {node: d root / d node}", received=type(grads).__name__,
             hint="Keep the gradients in a dict local to the call and return it at the end.")
    return grads


def _check_grads(ck: Checker, grads: dict, root: _Scalar, names: dict[str, _Scalar],
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
                hint="Start with grads = {root: 1.0} and give every parent an entry as you pass "
                     "the gradient down to it.")
    mistakes = mistakes or {}
    for i, expected in ref.items():
        node = by_id[i]
        ck.close(grads[node], expected, what=f"gradient of {label[i]!r} in the returned dict",
                 hint="Every consumer adds local_grad * (its own gradient) to each parent: "
                      "grads[p] = grads.get(p, 0.0) + local * grads[node].",
                 mistakes=mistakes.get(label[i], []))
    for i, expected in ref.items():
        node = by_id[i]
        if node._parents:
            ck.check(node.grad == (before or {}).get(i, 0.0),
                     f"the .grad of the non-leaf {label[i]!r} was changed.",
                     expected=(before or {}).get(i, 0.0), received=node.grad,
                     hint="Keep non-leaf gradients in the dict (the engine's buffers); only leaves "
                          "add into .grad, as in PyTorch.")
        else:
            start = (before or {}).get(i, 0.0)
            ck.close(node.grad, start + expected, what=f"{label[i]}.grad",
                     hint="A leaf adds its gradient to what .grad already holds: "
                          "leaf.grad += grads[leaf].",
                     mistakes=[(expected, "That is this call's gradient alone: .grad must "
                                "accumulate across calls (leaf.grad += ...), not be overwritten.")]
                     if start else [])


def ch04_backward(backward: Callable[[Any], dict], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``backward(root)``: returns ``{node: d root / d node}`` for every reachable node
    and adds each leaf's gradient into ``leaf.grad`` (non-leaves' ``.grad`` untouched)."""
    ck = Checker("ch04-backward", seed=seed, hidden=hidden)
    with ck.case("out = a*b + c"):
        a, b, c = _leaf(2.0, "a"), _leaf(-3.0, "b"), _leaf(0.5, "c")
        ab = _named(a * b, "a*b")
        out = _named(ab + c, "out")
        grads = _run_backward(ck, backward, out)
        ck.check(any(k is out for k in grads) and grads.get(out) == 1.0,
                 "the root's gradient is not 1.0.", expected=1.0,
                 received=grads.get(out),
                 hint="d root / d root = 1: start with grads = {root: 1.0}.")
        _check_grads(ck, grads, out, {"a": a, "b": b, "c": c, "a*b": ab, "out": out})
    with ck.case("a chain through tanh"):
        x, w = _leaf(0.7, "x"), _leaf(-1.2, "w")
        out = _named(_named(x * w, "x*w").tanh(), "out")
        _check_grads(ck, _run_backward(ck, backward, out), out, {"x": x, "w": w})
    with ck.case("x*x: one operation uses x twice"):
        x = _leaf(1.5, "x")
        sq = _named(x * x, "x*x")
        grads = _run_backward(ck, backward, sq)
        _check_grads(ck, grads, sq, {"x": x}, mistakes={"x": [(1.5, (
            "1.5 is one of the two contributions: x is a parent of x*x twice, and the second "
            "one overwrote the first. Add: grads[p] = grads.get(p, 0.0) + local * g."))]})
    with ck.case("a reused non-leaf: h = x*y; out = h*h + h"):
        g = _reused_graph(2.0, 3.0)
        h = g["h"].data
        grads = _run_backward(ck, backward, g["out"])
        _check_grads(ck, grads, g["out"], g, mistakes={
            "h": [(2 * h, "That is only the contribution of h*h; h also feeds the + directly. "
                   "Sum over every consumer."), (1.0, "That is only the contribution of the +; "
                   "h also feeds h*h. Sum over every consumer.")]})
    with ck.case("a leaf that already has a gradient accumulates into it"):
        x, y = _leaf(2.0, "x"), _leaf(-1.0, "y")
        out = _named(x * y, "out")
        x.grad, y.grad = 0.25, -4.0
        before = {id(x): 0.25, id(y): -4.0}
        _check_grads(ck, _run_backward(ck, backward, out), out, {"x": x, "y": y}, before=before)
    with ck.case("backward twice on the same graph: leaf gradients exactly double"):
        g = _reused_graph(0.5, -2.0)
        _run_backward(ck, backward, g["out"])
        first = {id(n): n.grad for n in _reachable(g["out"])}
        ref = _reference_grads(g["out"])
        grads = _run_backward(ck, backward, g["out"])
        x = g["x"]
        ck.close(x.grad, 2 * ref[id(x)], what="x.grad after two calls",
                 hint="Each call must compute this call's gradients from scratch (a fresh dict) "
                      "and add them to the leaves once. If non-leaf gradients live in .grad, the "
                      "second call starts from the first call's leftovers.")
        _check_grads(ck, grads, g["out"], g, before=first)
    depth = 10_000
    with ck.case(f"a {depth:,}-deep chain, each step multiplies by 1.0001"):
        root, x = _chain(depth, 1.0001)
        grads = _run_backward(ck, backward, root, hint="Your backward (or the topological_sort "
                              "it calls) must not recurse: use an explicit stack.")
        ck.close(x.grad, 1.0001 ** depth, what="x.grad", rtol=1e-9,
                 hint="The gradient of a chain is the product of its local gradients.")
    if hidden:
        for k, (n_leaves, n_ops) in enumerate([(3, 20), (4, 50), (6, 120)]):
            with ck.case(f"random graph {k + 1}: {n_leaves} leaves, {n_ops} operations"):
                root, nodes = _random_graph(ck.rng, n_leaves, n_ops)
                leaves = [n for n in _reachable(root) if not n._parents]
                before = {}
                for leaf in leaves:
                    leaf.grad = round(float(ck.rng.uniform(-1, 1)), 2)
                    before[id(leaf)] = leaf.grad
                _check_grads(ck, _run_backward(ck, backward, root), root, {}, before=before)
    ck.done()


# -- exercise 3: gradients through a reused node, by hand ---------------------------------------
def _reused_expected(x: float, y: float) -> dict[str, float]:
    h = x * y
    a = h + x
    d_a = h
    d_h = a + h
    return {"a": d_a, "h": d_h, "x": d_h * y + d_a, "y": d_h * x}


def ch04_reused_node(reused_node_grads: Callable[[float, float], dict], *, seed: int = 0,
                     hidden: bool = False) -> None:
    """Check ``reused_node_grads(x, y)`` for h = x*y; a = h + x; out = h*a: a dict with the
    gradients of out with respect to "a", "h", "x" and "y"."""
    ck = Checker("ch04-reused-node", seed=seed, hidden=hidden)
    points = [(2.0, 3.0), (-1.0, 0.5), (0.5, -2.0)]
    if hidden:
        points += [tuple(round(float(v), 3) for v in ck.rng.uniform(-3, 3, size=2))
                   for _ in range(4)]
    for x, y in points:
        with ck.case(f"x = {x:g}, y = {y:g}"):
            got = ck.call(reused_node_grads, x, y)
            ck.check(isinstance(got, dict), "reused_node_grads did not return a dict.",
                     expected='a dict with keys "a", "h", "x", "y"', received=got,
                     hint='Return {"a": ..., "h": ..., "x": ..., "y": ...}.')
            want = _reused_expected(x, y)
            for key in want:
                ck.check(key in got, f"the dict has no key {key!r}.", expected=sorted(want),
                         received=sorted(map(str, got)), hint="Use the keys 'a', 'h', 'x', 'y'.")
            h, a = x * y, x * y + x
            ck.close(got["a"], want["a"], what='gradient "a"',
                     hint="out = h * a, so d out / d a = h.")
            ck.close(got["h"], want["h"], what='gradient "h"',
                     hint="h has two consumers: out = h * a directly (local gradient a) and "
                          "a = h + x (local gradient 1, times d out / d a = h). Add both.",
                     mistakes=[(a, "That is only the direct path out = h * a; h also reaches out "
                                "through a = h + x. Add h * 1."),
                               (h, "That is only the path through a; h is also a direct factor "
                                "of out = h * a. Add a.")])
            ck.close(got["x"], want["x"], what='gradient "x"',
                     hint="x has two consumers as well: h = x * y (local gradient y) and a = h + x "
                          "(local gradient 1). Use the complete gradients of h and a.",
                     mistakes=[(want["h"] * y, "You followed x only through h; x also feeds "
                                "a = h + x directly. Add d out / d a."),
                               (a * y + h, "Your gradient of h misses one of its consumers; with "
                                "the full d out / d h = a + h the rest follows.")])
            ck.close(got["y"], want["y"], what='gradient "y"',
                     hint="y only reaches out through h = x * y: d out / d y = (d out / d h) * x.",
                     mistakes=[(a * x, "Your gradient of h misses the path through a: "
                                "use d out / d h = a + h.")])
    ck.done()


# -- exercise 4: what a second backward does -----------------------------------------------------
def ch04_second_backward(predict_x_grad: Callable[[float, int], float], *, seed: int = 0,
                         hidden: bool = False) -> None:
    """Check ``predict_x_grad(x0, calls)``: x.grad after ``calls`` backward calls (with
    retain_graph=True) of out = 3 * (x * x) + x, starting from no gradient."""
    ck = Checker("ch04-second-backward", seed=seed, hidden=hidden)
    cases = [(2.0, 1), (2.0, 2), (-0.5, 3)]
    if hidden:
        cases += [(round(float(ck.rng.uniform(-3, 3)), 2), int(ck.rng.integers(1, 6)))
                  for _ in range(4)]
    for x0, calls in cases:
        with ck.case(f"x0 = {x0:g}, {calls} call{'s' if calls > 1 else ''}"):
            got = ck.call(predict_x_grad, x0, calls)
            once = 6 * x0 + 1
            ck.close(got, calls * once, what="predicted x.grad",
                     hint="One backward gives d out / d x = 6 x0 + 1. Each further call adds the "
                          "same amount into x.grad.",
                     mistakes=[(once, "That is the gradient of one call: backward adds into "
                                "x.grad, it does not overwrite it."),
                               (calls * 6 * x0, "The + x term contributes 1 to the gradient too."),
                               (calls * (3 * x0 * x0 + x0), "That is calls * out, not the "
                                "gradient; d out / d x = 6 x0 + 1."),
                               (once * 2 ** (calls - 1), "Each call adds one gradient; it "
                                "does not double what is there.")])
    ck.done()


# The loader checks the learner's mygrad/engine.py with this (see exercises/_library.py).
from ._library import engine as mygrad_engine  # noqa: E402
