"""Check ``find_leaves(var)``: the leaf Variables that require grad and that ``var`` was
computed from, each once, found through ``grad_fn.next_functions``."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograd_lab import Variable, ones, tensor
from .._common import Checker, deeper_than_recursion, format_value
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch02-find-leaves"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("no seen set", ("if child is None or id(child) in seen:", "if child is None:"), None,
            "find.example"),
    Mistake("a leaf asked about itself", ("return [var] if var.requires_grad else []", "return []"),
            None, "find.leaf"),
    Mistake("the first level only", ("                stack.append(child)\n", "                pass\n"),
            None, "find.example"),
    Mistake("the nodes, not their Variables", ("leaves.append(child.variable)",
                                               "leaves.append(child)"), None, "find.variables"),
    Mistake("no None check", ("if child is None or id(child) in seen:", "if id(child) in seen:"),
            None, "find.example"),
)


@dataclass
class Graph:
    """One case: ``var``, the leaves the case made (``made``), which of them ``find_leaves``
    must return (``want``, indices into ``made``) and the hint's id."""

    name: str
    var: Any
    made: list[Variable]
    want: list[int]
    hint: str


def cases(seed: int, hidden: bool) -> list[Graph]:
    """The graphs of the cases: the same from the same seed, wherever built."""
    rng = np.random.default_rng(seed)

    def leaf(*shape: int) -> Variable:
        return tensor(np.round(rng.normal(size=shape), 3), requires_grad=True)

    w1, w2, w3 = leaf(), leaf(), leaf()
    l1 = ones(2, 2) * w1
    found = [Graph("the chapter's example: w1, w2, w3 (not input)",
                   ((l1 + w2) * (l1 * w3)).mean(), [w1, w2, w3], [0, 1, 2], "find.example")]
    a = leaf(3)
    found.append(Graph("a leaf used twice: a * a + a", a * a + a, [a], [0], "find.once"))
    b, c = leaf(2), leaf(2)
    found.append(Graph("b.exp() * 3 + c: a Python number in the graph", b.exp() * 3 + c, [b, c],
                       [0, 1], "find.none"))
    d = leaf(4)
    found.append(Graph("the leaf itself", d, [d], [0], "find.leaf"))
    e = leaf(3)
    found.append(Graph("(e.detach() * 2).sum(): no leaves", (e.detach() * 2).sum(), [e], [],
                       "find.detached"))
    found.append(_chain("a chain deeper than Python's recursion limit", leaf(2),
                        deeper_than_recursion(3000), 1.0, "find.deep"))
    if hidden:
        ps = [leaf(2) for _ in range(4)]
        h = ps[0]
        for p in ps[1:]:
            h = (h * p).tanh() + h
        found.append(Graph("four leaves, every step reuses h", h.sum(), ps, [0, 1, 2, 3],
                           "find.reuse"))
        found.append(_chain("a chain of 150 steps", leaf(2), 150, 1.01, "find.chain"))
    return found


def _chain(name: str, x: Variable, steps: int, factor: float, hint: str) -> Graph:
    y = x
    for _ in range(steps):
        y = y * factor
    return Graph(name, y, [x], [0], hint)


def observe(ob: Observer, find_leaves: Callable[[Variable], list], *, seed: int,
            hidden: bool) -> None:
    for graph in cases(seed, hidden):
        with ob.case(graph.name):
            got = find_leaves(graph.var)
            listed = not (got is None or isinstance(got, (str, Variable))
                          or not hasattr(got, "__iter__"))
            ob.put("is a sequence", listed)
            if not listed:
                ob.put("result", format_value(got))
                continue
            items = list(got)
            ob.put("Variables", [isinstance(g, Variable) for g in items])
            ob.put("first other", next((format_value(g) for g in items
                                        if not isinstance(g, Variable)), None))
            first: dict[int, int] = {}
            ob.put("first of its kind", [first.setdefault(id(g), i) for i, g in enumerate(items)])
            made = {id(v): i for i, v in enumerate(graph.made)}
            ob.put("leaf made", [made.get(id(g)) for g in items])

def judge(ck: Checker, obs: Observations) -> None:
    for graph in cases(obs.seed, obs.hidden):
        hint = HINTS[graph.hint]
        with ck.case(graph.name):
            seen = obs.case(ck, graph.name, what="your find_leaves", hint=hint)
            ck.check(seen["is a sequence"] is True, "the result is not a list.",
                     expected="a list of Variables", received=seen.get("result"),
                     hint=HINTS["find.list"])
            ck.check(all(seen["Variables"]), "the list holds something that is not a Variable.",
                     received=seen["first other"], hint=HINTS["find.variables"])
            firsts, made = seen["first of its kind"], seen["leaf made"]
            ck.check(len(set(firsts)) == len(firsts), "a leaf is listed more than once.",
                     expected=f"{len(set(firsts))} leaves", received=f"{len(firsts)} entries",
                     hint=hint)
            names = {i: f"leaf {n} (shape {graph.made[i].shape})"
                     for n, i in enumerate(graph.want)}
            missing = [names[i] for i in graph.want if i not in made]
            extra = [m for m in made if m not in names]
            ck.check(not missing and not extra, "the leaves found are not the right ones.",
                     expected=f"{len(graph.want)} leaves", received=f"{len(made)} Variables"
                     + (f"; missing {missing}" if missing else "")
                     + (f"; {len(extra)} that are not leaves requiring grad" if extra else ""),
                     hint=hint)
    ck.done()
