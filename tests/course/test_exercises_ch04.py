"""The checkers of chapter 04 (the engine).

Each checker must pass correct solutions (with and without hidden cases) and fail typical
wrong ones with a message that names the exercise and gives a useful hint. The checkers'
own reference gradients are compared with autograd_lab's engine and with PyTorch.
"""
from __future__ import annotations

import re
import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises import check
from autograd_lab.course.exercises import ch04

from ._checker_helpers import SEEDS, failure
from .._oracle import require_torch


# -- correct solutions -------------------------------------------------------------------
def topological_sort(root):
    """Iterative DFS with an iterator per stack entry (the engine's way)."""
    order, visited = [], {root}
    stack = [(root, iter(root.parents))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            if parent not in visited:
                visited.add(parent)
                stack.append((parent, iter(parent.parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]


def topological_sort_flags(root):
    """Iterative DFS with 'expanded' markers on the stack."""
    order, visited, stack = [], set(), [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif node not in visited:
            visited.add(node)
            stack.append((node, True))
            stack.extend((p, False) for p in node.parents if p not in visited)
    return list(reversed(order))


def topological_sort_kahn(root):
    """Kahn's algorithm: count consumers first, release a node when all have been listed."""
    consumers, stack, seen = {}, [root], {root}
    while stack:
        node = stack.pop()
        for p in node.parents:
            consumers[p] = consumers.get(p, 0) + 1
            if p not in seen:
                seen.add(p)
                stack.append(p)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for p in node.parents:
            consumers[p] -= 1
            if consumers[p] == 0:
                ready.append(p)
    return order


def make_backward(sort=topological_sort):
    def backward(root):
        grads = {root: 1.0}
        for node in sort(root):
            g = grads[node]
            if not node.parents:
                node.grad += g
            for parent, local in zip(node.parents, node.local_grads):
                grads[parent] = grads.get(parent, 0.0) + local * g
        return grads
    return backward


def reused_node_grads(x, y):
    h = x * y
    a = h + x
    d_a = h
    d_h = a + d_a * 1.0
    return {"a": d_a, "h": d_h, "x": d_h * y + d_a * 1.0, "y": d_h * x}


def reused_node_grads_by_engine(x, y):
    """The same numbers from autograd_lab's engine (retain_grad on the non-leaves)."""
    xv, yv = al.tensor(x, requires_grad=True), al.tensor(y, requires_grad=True)
    h = xv * yv
    a = h + xv
    h.retain_grad()
    a.retain_grad()
    (h * a).backward()
    return {"a": a.grad.item(), "h": h.grad.item(), "x": xv.grad.item(), "y": yv.grad.item()}


def predict_x_grad(x0, calls):
    return calls * (6 * x0 + 1)


def predict_x_grad_by_engine(x0, calls):
    x = al.tensor(x0, requires_grad=True)
    out = 3 * (x * x) + x
    for _ in range(calls):
        out.backward(retain_graph=True)
    return x.grad.item()


@pytest.mark.parametrize("seed,hidden", SEEDS)
@pytest.mark.parametrize("sort", [topological_sort, topological_sort_flags, topological_sort_kahn])
def test_topological_sort_accepts_correct_sorts(sort, seed, hidden, capsys):
    check.ch04_topological_sort(sort, seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert "All" in out and "ch04-topological-sort passed" in out
    assert ("hidden" in out) == hidden


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_backward_accepts_correct_backward(seed, hidden, capsys):
    check.ch04_backward(make_backward(), seed=seed, hidden=hidden)
    check.ch04_backward(make_backward(topological_sort_kahn), seed=seed, hidden=hidden)
    assert "ch04-backward passed" in capsys.readouterr().out


@pytest.mark.parametrize("seed,hidden", SEEDS)
@pytest.mark.parametrize("fn", [reused_node_grads, reused_node_grads_by_engine])
def test_reused_node_accepts_hand_and_engine_answers(fn, seed, hidden, capsys):
    check.ch04_reused_node(fn, seed=seed, hidden=hidden)
    assert "ch04-reused-node passed" in capsys.readouterr().out


@pytest.mark.parametrize("seed,hidden", SEEDS)
@pytest.mark.parametrize("fn", [predict_x_grad, predict_x_grad_by_engine])
def test_second_backward_accepts_prediction_and_engine(fn, seed, hidden, capsys):
    check.ch04_second_backward(fn, seed=seed, hidden=hidden)
    assert "ch04-second-backward passed" in capsys.readouterr().out


def test_stubs_are_reported_as_not_done():
    def stub(*args):
        raise NotImplementedError("Exercise ch04-topological-sort: write your code here")
    for checker in (check.ch04_topological_sort, check.ch04_backward, check.ch04_reused_node,
                    check.ch04_second_backward):
        with pytest.raises(NotImplementedError, match="is not done yet"):
            checker(stub)


# -- typical wrong topological sorts -------------------------------------------------------
def sort_recursive(root):
    order, visited = [], set()

    def visit(node):
        if node in visited:
            return
        visited.add(node)
        for p in node.parents:
            visit(p)
        order.append(node)
    visit(root)
    return order[::-1]


def sort_without_visited(root):
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.parents)
    return order


def sort_breadth_first(root):
    order, seen, queue = [], {root}, [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        for p in node.parents:
            if p not in seen:
                seen.add(p)
                queue.append(p)
    return order


def sort_forward_order(root):
    return topological_sort(root)[::-1]


def sort_marking_nodes(root):
    order, stack = [], [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif not getattr(node, "visited", False):
            node.visited = True
            stack.append((node, True))
            stack.extend((p, False) for p in node.parents)
    return order[::-1]


def sort_exponential_dedupe(root):
    """Every path walked (no visited set), duplicates removed at the end, last one kept."""
    order, stack = [], [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((p, False) for p in node.parents)
    last = {id(n): i for i, n in enumerate(order)}
    return [n for i, n in enumerate(order) if last[id(n)] == i][::-1]


def sort_without_leaves(root):
    return [n for n in topological_sort(root) if n.parents]


def sort_of_labels(root):
    return [n.label for n in topological_sort(root)]


@pytest.mark.parametrize("wrong,words", [
    (sort_recursive, "explicit stack"),
    (sort_without_visited, "appears 2 times"),
    (sort_breadth_first, "breadth-first order is not enough"),
    (sort_forward_order, "reverse your list"),
    (sort_marking_nodes, "instead of marking the nodes"),
    (sort_exponential_dedupe, "exponentially"),
    (sort_without_leaves, "missing"),
    (sort_of_labels, "not a node"),
    (lambda root: None, "return"),
])
def test_topological_sort_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch04_topological_sort, wrong)
    assert "ch04-topological-sort" in msg and words in msg


def test_recursive_sort_fails_only_on_the_deep_chain():
    msg = failure(check.ch04_topological_sort, sort_recursive)
    assert re.search(r"[\d,]+-deep chain", msg) and "RecursionError" in msg


def test_hidden_cases_catch_a_sort_that_only_handles_small_graphs():
    def sort_small_only(root):  # breadth-first on big graphs, right on small ones
        small = len(sort_breadth_first(root)) < 20
        return topological_sort(root) if small else sort_breadth_first(root)
    check.ch04_topological_sort(sort_small_only)  # the visible cases are all small or chains
    msg = failure(check.ch04_topological_sort, sort_small_only, seed=1, hidden=True)
    assert "random graph" in msg


# -- typical wrong backwards ---------------------------------------------------------------
def backward_overwrites(root):
    grads = {root: 1.0}
    for node in topological_sort(root):
        if not node.parents:
            node.grad += grads[node]
        for parent, local in zip(node.parents, node.local_grads):
            grads[parent] = local * grads[node]
    return grads


def backward_assigns_leaf_grad(root):
    grads = {root: 1.0}
    for node in topological_sort(root):
        if not node.parents:
            node.grad = grads[node]
        for parent, local in zip(node.parents, node.local_grads):
            grads[parent] = grads.get(parent, 0.0) + local * grads[node]
    return grads


def backward_micrograd_style(root):
    """Gradients kept in every node's .grad; a second call starts from the leftovers."""
    root.grad = 1.0
    order = topological_sort(root)
    for node in order:
        for parent, local in zip(node.parents, node.local_grads):
            parent.grad += local * node.grad
    return {n: n.grad for n in order}


def backward_per_path(root):
    """Pushes every contribution down at once, recursively (right values, recursion limit)."""
    grads = {}

    def push(node, g):
        grads[node] = grads.get(node, 0.0) + g
        if not node.parents:
            node.grad += g
        for parent, local in zip(node.parents, node.local_grads):
            push(parent, local * g)
    push(root, 1.0)
    return grads


def backward_no_return(root):
    make_backward()(root)


def backward_wrong_order(root):
    return make_backward(sort_breadth_first)(root)


@pytest.mark.parametrize("wrong,words", [
    (backward_overwrites, "overwrote the first"),
    (backward_assigns_leaf_grad, "accumulate across calls"),
    (backward_micrograd_style, "non-leaf"),
    (backward_per_path, "must not recurse"),
    (backward_no_return, "did not return a dict"),
])
def test_backward_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch04_backward, wrong)
    assert "ch04-backward" in msg and words in msg


def test_backward_in_wrong_order_fails_on_hidden_graphs():
    msg = failure(check.ch04_backward, backward_wrong_order, seed=1, hidden=True)
    assert "ch04-backward" in msg and "random graph" in msg


def test_micrograd_style_second_call_is_off_by_the_leftovers():
    g = ch04._reused_graph(0.5, -2.0)
    ref = ch04._reference_grads(g["out"])[id(g["x"])]
    backward_micrograd_style(g["out"])
    backward_micrograd_style(g["out"])
    assert g["x"].grad != pytest.approx(2 * ref)


# -- typical wrong answers for the reused node and the second backward -----------------------
@pytest.mark.parametrize("wrong,words", [
    (lambda x, y: {"a": x * y, "h": x * y + x, "x": (x * y + x) * y + x * y, "y": (x * y + x) * x},
     "only the direct path"),
    (lambda x, y: {"a": x * y, "h": 2 * x * y + x, "x": (2 * x * y + x) * y,
                   "y": (2 * x * y + x) * x},
     "feeds a = h + x directly"),
    (lambda x, y: (1.0, 2.0), "did not return a dict"),
    (lambda x, y: {"h": 1.0}, "no key"),
])
def test_reused_node_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch04_reused_node, wrong)
    assert "ch04-reused-node" in msg and words in msg


@pytest.mark.parametrize("wrong,words", [
    (lambda x0, calls: 6 * x0 + 1, "does not overwrite"),
    (lambda x0, calls: calls * 6 * x0, "contributes 1"),
    (lambda x0, calls: (6 * x0 + 1) * 2 ** (calls - 1), "does not double"),
])
def test_second_backward_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch04_second_backward, wrong)
    assert "ch04-second-backward" in msg and words in msg


# -- the checkers' reference against the engine and PyTorch ----------------------------------
def _replay(root, lib):
    """Rebuild a checker graph with ``lib`` ('al' or torch); return (root, {leaf id: var})."""
    order = topological_sort(root)[::-1]  # parents before consumers
    made, leaves = {}, {}
    for node in order:
        ps = [made[id(p)] for p in node._parents]
        if not ps:
            var = (al.tensor(node.data, requires_grad=True) if lib == "al" else
                   lib.tensor(node.data, dtype=lib.float64, requires_grad=True))
            leaves[id(node)] = var
        elif node.op == "+":
            var = ps[0] + ps[1]
        elif node.op == "*":
            var = ps[0] * ps[1]
        else:
            assert node.op == "tanh"
            var = ps[0].tanh()
        made[id(node)] = var
    return made[id(root)], leaves


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_gradients_match_autograd_lab(seed):
    root, _ = ch04._random_graph(np.random.default_rng(seed), 5, 80)
    ref = ch04._reference_grads(root)
    out, leaves = _replay(root, "al")
    assert out.item() == pytest.approx(root.data, rel=1e-12)
    out.backward()
    for i, var in leaves.items():
        assert var.grad.item() == pytest.approx(ref[i], rel=1e-9, abs=1e-12)


def test_reference_gradients_match_pytorch():
    torch = require_torch()
    root, _ = ch04._random_graph(np.random.default_rng(7), 4, 60)
    ref = ch04._reference_grads(root)
    out, leaves = _replay(root, torch)
    out.backward()
    for i, var in leaves.items():
        assert var.grad.item() == pytest.approx(ref[i], rel=1e-9, abs=1e-12)


def test_checker_nodes_count_parent_reads_and_hash_by_identity():
    x = ch04._leaf(1.0, "x")
    y = x * x
    assert y.parents == (x, x) and y.reads == 1
    assert len({x, y, ch04._leaf(1.0, "x")}) == 3


# -- a sort without a visited set: the backward check names the repeated visits ----------------
def sort_without_visited(root):
    """The iterative DFS with the visited set left out: a reused node is listed once per path."""
    order, stack = [], [(root, iter(root.parents))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            stack.append((parent, iter(parent.parents)))
            break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]


def test_backward_on_a_sort_without_visited_set_costs_only_the_sort(capsys):
    """Checks isolate: the backward check runs the learner's backward on the course's sort, so
    a sort that repeats nodes costs ch04-topological-sort alone, named in one line."""
    check.ch04_backward(make_backward(sort_without_visited), hidden=True)
    out = capsys.readouterr().out
    assert "passed (with hidden cases)" in out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "exercise ch04-topological-sort fails" in notes[0]
    assert "already visited" in failure(check.ch04_topological_sort, sort_without_visited)


def test_backward_on_a_sort_that_is_not_reversed_costs_only_the_sort(capsys):
    """The issue's case: a sort that lists the leaves first used to make the backward check
    blame the accumulation formula."""
    def leaves_first(root):
        return topological_sort(root)[::-1]
    check.ch04_backward(make_backward(leaves_first))
    assert "note: exercise ch04-topological-sort fails" in capsys.readouterr().out
    assert "ch04-topological-sort failed" in failure(check.ch04_topological_sort, leaves_first)


def test_backward_check_puts_the_learners_sort_back(capsys):
    backward = make_backward(sort_without_visited)
    check.ch04_backward(backward)
    cell = backward.__closure__[backward.__code__.co_freevars.index("sort")]
    assert cell.cell_contents is sort_without_visited


def test_backward_check_still_fails_the_learners_own_walk_on_the_course_sort():
    """With a right sort, a wrong walk is still the backward's fault: it must fail there."""
    def overwrite(root):
        grads = {root: 1.0}
        for node in topological_sort(root):
            if not node.parents:
                node.grad += grads[node]
            for parent, local in zip(node.parents, node.local_grads):
                grads[parent] = local * grads[node]
        return grads
    msg = failure(check.ch04_backward, overwrite)
    assert msg.startswith("Exercise ch04-backward failed")


def test_backward_that_updates_a_leaf_per_consumer_is_not_blamed_for_revisits(capsys):
    """Adding into a leaf's .grad once per consumer gives the right totals: no false alarm."""
    def per_edge(root):
        grads = {root: 1.0}
        for node in topological_sort(root):
            for parent, local in zip(node.parents, node.local_grads):
                grads[parent] = grads.get(parent, 0.0) + local * grads[node]
                if not parent.parents:
                    parent.grad += local * grads[node]
        return grads
    check.ch04_backward(per_edge, seed=1, hidden=True)
    assert "passed (with hidden cases)" in capsys.readouterr().out


# -- mygrad's engine: topological_order and backward on the learner's Variables ----------------

from autograd_lab.course.learner.export import REFERENCE_ROOT  # noqa: E402
from autograd_lab.course.learner.loader import build_package, choose_modules  # noqa: E402

from ._checker_helpers import (assert_calls_own_checker, assert_has_heading_and_solution,  # noqa: E402
                               graded_cells, solution_cells)

REF = REFERENCE_ROOT / "mygrad"


def engine_package(tmp_path=None, change=None):
    """mygrad from the course's variable/function and its engine, edited by ``change``."""
    engine = REF / "engine.py"
    if change is not None:
        old, new = change
        text = engine.read_text(encoding="utf-8")
        assert old in text, old
        engine = tmp_path / "engine.py"
        engine.write_text(text.replace(old, new), encoding="utf-8")
    return build_package({"variable": REF / "variable.py", "function": REF / "function.py",
                          "engine": engine})


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_mygrad_engine_checkers_accept_the_course_engine(seed, hidden, capsys):
    pkg = engine_package()
    check.ch04_topological_order(pkg.topological_order, pkg, seed=seed, hidden=hidden)
    check.ch04_hooks(pkg.register_hook, pkg.retain_grad, pkg.engine._run_hooks, pkg,
                     seed=seed, hidden=hidden)
    check.ch04_engine_backward(pkg.backward, pkg, seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert out.count("All ") == 3 and out.count("(with hidden cases)") == (3 if hidden else 0)
    assert "note:" not in out
    ch04.mygrad_engine(pkg)  # the loader's check, quiet


def order_no_visited(root):
    order, stack = [], [(root, iter(_inputs(root)))]
    while stack:
        v, inputs = stack[-1]
        for x in inputs:
            stack.append((x, iter(_inputs(x))))
            break
        else:
            stack.pop()
            order.append(v)
    return order[::-1]


def _inputs(v, all_inputs=False):
    if v.grad_fn is None:
        return []
    return [x for x in v.grad_fn.inputs if all_inputs or getattr(x, "requires_grad", False)]


def order_recursive(root):
    order, seen = [], set()

    def visit(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        for x in _inputs(v):
            visit(x)
        order.append(v)
    visit(root)
    return order[::-1]


def order_forward(root):
    return order_recursive(root)[::-1]


def order_with_constants(root):
    order, seen, stack = [], {id(root)}, [(root, iter(_inputs(root, True)))]
    while stack:
        v, inputs = stack[-1]
        for x in inputs:
            if id(x) not in seen:
                seen.add(id(x))
                stack.append((x, iter(_inputs(x, True))))
                break
        else:
            stack.pop()
            order.append(v)
    return order[::-1]


@pytest.mark.parametrize("wrong,words", [
    (order_no_visited, "keep a set of the Variables already visited"),
    (order_recursive, "explicit stack"),
    (order_forward, "the root is last"),
    (order_with_constants, "does not require grad"),
])
def test_topological_order_rejects_typical_mistakes(wrong, words):
    pkg = engine_package()
    with pytest.raises(AssertionError) as info:
        check.ch04_topological_order(wrong, pkg)
    assert "ch04-topological-order" in str(info.value) and words in str(info.value)


@pytest.mark.parametrize("change,words", [
    (("grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx", "grads[id(x)] = gx"),
     "only one of their gradients reached it"),
    (("        v.grad = v.grad + grad", "        v.grad = grad"), "must add to .grad"),
    # _accumulate keeps the object it was given: two leaves of an Add share one array
    (("        v.grad = Variable(grad.data.copy()) if not GradMode.enabled else grad",
      "        v.grad = grad"), "store a copy of its data"),
    (("        v.grad = Variable(grad.data.copy()) if not GradMode.enabled else grad",
      "        v.grad = Variable(grad.data)"), "share one array"),
    (("                node.release()", "                pass"), "node.release()"),
    (("            g = _run_hooks(v, grads.pop(id(v)))",
      "            g = grads.pop(id(v))\n            _run_hooks(v, g)"),
     "_run_hooks returned was not used"),
    (("            if v.grad_fn is None or getattr(v, \"_retains_grad\", False):",
      "            if v.grad_fn is None:"), "marked _retains_grad keeps its complete gradient"),
    # PyTorch's rule for the number of gradients a backward returns: the exact-count rule of
    # old, then an engine that cuts off surplus gradients or fills missing ones without looking
    (("    if len(grads) > n and all(g is None for g in grads[n:]):",
      "    if False:"), "returned (grad_x, None) for the defaulted factor"),
    (("    elif len(grads) < n and not any(node.needs_input_grad[len(grads):]):",
      "    elif False:"), "the factor 3.0 needs no gradient"),
    (("    if len(grads) > n and all(g is None for g in grads[n:]):",
      "    if len(grads) > n:"), "to be reported, not cut off"),
    (("    elif len(grads) < n and not any(node.needs_input_grad[len(grads):]):",
      "    elif len(grads) < n:"), "not filled with None"),
])
def test_engine_backward_rejects_typical_mistakes(tmp_path, change, words):
    pkg = engine_package(tmp_path, change)
    with pytest.raises(AssertionError) as info:
        check.ch04_engine_backward(pkg.backward, pkg)
    assert "ch04-engine-backward" in str(info.value) and words in str(info.value)


def test_engine_backward_on_a_duplicating_order_costs_only_the_order(tmp_path, capsys):
    """Checks isolate: the engine check runs the learner's backward on the course's
    topological_order, so an order without a visited set costs ch04-topological-order alone."""
    pkg = engine_package(tmp_path, ("            if id(x) not in visited:\n",
                                    "            if True:\n"))
    check.ch04_engine_backward(pkg.backward, pkg, hidden=True)
    out = capsys.readouterr().out
    assert "passed (with hidden cases)" in out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "exercise ch04-topological-order fails" in notes[0]
    with pytest.raises(AssertionError, match="ch04-topological-order failed"):
        check.ch04_topological_order(pkg.topological_order, pkg)
    assert pkg.engine.topological_order is pkg.topological_order       # put back


def test_engine_stubs_are_reported_as_not_done():
    pkg = engine_package()

    def stub(*args, **kwargs):
        raise NotImplementedError("Exercise ch04-engine-backward: write your code here")
    with pytest.raises(NotImplementedError, match="ch04-engine-backward is not done yet"):
        check.ch04_engine_backward(stub, pkg)
    with pytest.raises(NotImplementedError, match="ch04-topological-order"):
        check.ch04_topological_order(stub, pkg)


def test_loader_falls_back_from_a_broken_engine(tmp_path):
    folder = tmp_path / "work"
    (folder / "mygrad").mkdir(parents=True)
    for name in ("variable", "function"):
        (folder / "mygrad" / f"{name}.py").write_text((REF / f"{name}.py").read_text())
    broken = (REF / "engine.py").read_text().replace("                node.release()",
                                                     "                pass")
    (folder / "mygrad" / "engine.py").write_text(broken)
    choices = {c.module: c for c in choose_modules(5, folder=folder)}
    assert choices["variable"].yours and choices["function"].yours
    assert not choices["engine"].yours and "ch04-engine-backward" in choices["engine"].reason


def test_the_seed_example_on_mygrad_matches_pytorch():
    torch = require_torch()
    pkg = engine_package()
    inp = pkg.Variable(np.ones((2, 2)))
    ws = [pkg.Variable(v, requires_grad=True) for v in (2.0, 3.0, 4.0)]
    tw = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (2.0, 3.0, 4.0)]
    for x, (w1, w2, w3) in ((inp, ws), (torch.ones(2, 2, dtype=torch.float64), tw)):
        l1 = x * w1
        loss = ((l1 + w2) * (l1 * w3)).mean()
        loss.backward()
        assert loss.item() == 40.0
    assert [w.grad.item() for w in ws] == [w.grad.item() for w in tw] == [28.0, 8.0, 10.0]


def test_chapter_04_graded_cells_call_their_own_checkers():
    cells = solution_cells("04_engine.ipynb")
    graded = graded_cells(cells)
    assert {c["metadata"]["nbgrader"]["grade_id"] for c in graded} == {
        "ch04-topological-sort", "ch04-backward", "ch04-reused-node", "ch04-second-backward",
        "ch04-topological-order", "ch04-hooks", "ch04-engine-backward"}
    for cell in graded:
        assert_calls_own_checker(cell)
        assert_has_heading_and_solution(cell, cells)
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert "load_mygrad(chapter=4)" in sources[0]
    assert any(s.startswith("%%mygrad engine topological_order") for s in sources)
