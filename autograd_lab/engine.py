"""The engine: walk the graph backwards from the outputs, once per node, in topological order.

1. ``topological_order`` lists every node reachable from the roots so that a node comes
   before everything it feeds into backwards (iteratively: no recursion limit).
2. A walk keeps a gradient buffer per node and output, and visits the nodes in that order, so
   each node's gradients are complete when it is reached (``_arrived``: its hooks run and
   retained gradients are kept); ``_run_node`` calls its backward and adds the results into
   the next buffers. ``backward``'s walk (``_backward_walk``) visits every node and adds into
   each leaf's ``.grad``; ``grad``'s walk (``_grad_walk``) visits only the nodes that lead to
   the inputs asked for and returns the gradients that arrive there.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .errors import BackwardError, ShapeError
from .node import AccumulateGrad, Node
from .grad_mode import STATE
from .primitives import Add, Cast, sum_to
from .variable import Variable, connect_engine


def topological_order(roots: Iterable[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each once, every node before the nodes it points to.

    An iterative depth-first search: a node is appended after all its children (post-order);
    reversing the list puts every consumer before what it consumes.
    """
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if root is None or id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


Observer = Callable[[Node, list, list], None]
_observer: list[Observer | None] = [None]  # the walk reads it once per backward call


@contextmanager
def observe(fn: Observer) -> Iterator[None]:
    """Call ``fn(node, grads_in, sent)`` after each node ``backward`` runs, in the walk's order.

    ``grads_in`` are the node's complete gradients (one per output; for an ``AccumulateGrad``
    node, the one that was just added into its leaf's ``.grad``); ``sent`` lists ``(index, grad)``
    for each gradient the node passed to its ``index``-th input (``next_functions[index]``).
    The gradients are the engine's own objects: read them, do not change them.

    >>> import autograd_lab as al
    >>> w = al.tensor(2.0, requires_grad=True)
    >>> seen = []
    >>> with observe(lambda node, grads_in, sent: seen.append(node.name())):
    ...     (w * w).backward()
    >>> seen
    ['MulBackward', 'AccumulateGrad']
    """
    previous, _observer[0] = _observer[0], fn
    try:
        yield
    finally:
        _observer[0] = previous


def _needed(order: list[Node], targets: set[int]) -> set[int]:
    """ids of the nodes with a path to one of ``targets`` (only these run for al.grad)."""
    needed: set[int] = set()
    for node in reversed(order):  # children before parents
        if id(node) in targets or any(c is not None and id(c) in needed for c, _ in node.next_functions):
            needed.add(id(node))
    return needed


def add_gradients(a: Variable | None, b: Variable) -> Variable:
    if a is None:
        return b
    if STATE.enabled:  # create_graph: keep the sum differentiable
        return Add.apply(a, b)
    return Variable._make(a._data + b._data)


def checked_grad(g: Any, node: Node, index: int, meta: tuple) -> Variable:
    """Check a gradient returned by ``backward`` against its input; sum it down if broadcast."""
    if not isinstance(g, Variable):  # the library's backwards return numpy arrays
        g = Variable._make(g if type(g) is np.ndarray else np.asarray(g))
    shape, dtype = meta
    if g._data.shape == shape and g._data.dtype == dtype:
        return g
    if g.shape != shape:
        try:
            target = np.broadcast_shapes(shape, g.shape)
        except ValueError:
            target = None
        if target != g.shape:
            raise ShapeError(
                f"Function {type(node).__name__} returned an invalid gradient at index {index} - got "
                f"shape {g.shape} but expected shape {shape} (the shape of input {index}). "
                "backward must return one gradient per forward input, each shaped like that input."
            )
        g = sum_to(g, shape)
    if g.dtype != dtype and dtype.kind in "fc":
        g = Cast.apply(g, dtype) if STATE.enabled else Variable._make(g._data.astype(dtype))
    return g


def _call_hooks(hooks: list, grad: Variable) -> Variable:
    """Run gradient hooks in order; a returned value replaces the gradient. As in PyTorch, a hook
    may not change the gradient's shape or dtype (the update it feeds would be silently wrong)."""
    for hook in list(hooks):
        new = hook(grad)
        if new is None:
            continue
        new = new if isinstance(new, Variable) else Variable(new)
        if new.shape != grad.shape or new.dtype != grad.dtype:
            what = "size" if new.shape != grad.shape else "type"
            raise BackwardError(
                f"hook {_hook_name(hook)!r} has changed the {what} of value: it got a gradient of "
                f"shape {grad.shape} and dtype {grad.dtype} and returned one of shape {new.shape} "
                f"and dtype {new.dtype}. A hook must return None or a gradient of the same shape "
                "and dtype (e.g. grad * 0.5, grad.clamp(-1, 1))."
            )
        grad = new
    return grad


def _hook_name(hook: Callable) -> str:
    return getattr(hook, "__qualname__", None) or getattr(hook, "__name__", None) or repr(hook)


def accumulate_leaf(var: Variable, grad: Variable, create_graph: bool) -> None:
    if not var._requires_grad:  # requires_grad_(False) after the graph was built: no .grad (PyTorch)
        return
    if var._hooks:
        grad = _call_hooks(var._hooks, grad)
    if var._grad is None:
        # The leaf owns its .grad (later passes add into it in place and zero_grad zeroes it):
        # the gradient that arrives here may be shared with a hook, a retained non-leaf grad or
        # another leaf's buffer, so it is copied. Under create_graph the gradient is a recorded
        # Variable and later passes replace it (var.grad + g) instead of writing into it.
        var._grad = grad if create_graph else Variable._make(np.array(grad._data, copy=True))
    elif create_graph:
        var._grad = Add.apply(var._grad, grad)
    else:
        np.add(var._grad._data, grad._data, out=var._grad._data, casting="unsafe")
        var._grad._bump_version()
    if var._post_accumulate_hooks:
        for hook in list(var._post_accumulate_hooks):
            hook(var)


def _start(roots: Sequence[Variable], seeds: Sequence[Variable]) -> tuple[list[Node], dict]:
    """The nodes below ``roots`` in the order backward visits them, and the gradient buffers
    (per node, one slot per output) holding the seeds."""
    buffers: dict[Node, list] = {}
    root_nodes = []
    for var, g in zip(roots, seeds):
        node = var.grad_fn if var.grad_fn is not None else AccumulateGrad.of(var)
        nr = var._output_nr if var.grad_fn is not None else 0
        buf = buffers.setdefault(node, [None] * max(len(node._output_meta), 1))
        buf[nr] = add_gradients(buf[nr], g) if buf[nr] is not None else g
        root_nodes.append(node)
    return topological_order(root_nodes), buffers


def _arrived(node: Node, buf: list, create_graph: bool) -> None:
    """The step every walk takes when a node's gradients are complete: the hooks registered on
    its outputs run, and the non-leaf outputs that asked for ``retain_grad`` keep theirs."""
    if node._hooks_by_output:
        for nr, hooks in node._hooks_by_output.items():
            if buf[nr] is not None:
                buf[nr] = _call_hooks(hooks, buf[nr])
    if node._retained:
        for nr, ref in node._retained.items():
            var = ref()
            if var is not None and buf[nr] is not None:
                g = buf[nr] if create_graph else buf[nr].detach()
                var._grad = g if var._grad is None else add_gradients(var._grad, g)


def _walk(roots: Sequence[Variable], seeds: Sequence[Variable], retain_graph: bool,
          create_graph: bool, inputs: Sequence[Variable] | None = None
          ) -> list[Variable | None] | None:
    """The backward walk, as chapter 04 writes it: visit the nodes in topological order; when a
    node's gradients are all in, run the hooks on its outputs, then hand the gradients on.

    Without ``inputs`` (``backward``) every node runs and each leaf adds its gradient into
    ``.grad``. With ``inputs`` (``grad``, ``backward(inputs=...)``) only the nodes between the
    roots and the inputs run, the gradients arriving at the inputs are returned (a leaf's hooks
    run on them), and no ``.grad`` changes."""
    order, buffers = _start(roots, seeds)
    keys = None if inputs is None else _keys(inputs)
    wanted = None if keys is None else dict(keys)
    needed: set[int] = set()
    if wanted is not None:  # only the nodes between the roots and the inputs run
        needed = _needed(order, {key[0] for key in wanted})
        order = [node for node in order if id(node) in needed]
    found: dict[tuple[int, int], Variable | None] = {}
    watch = _observer[0]
    sent: list | None = None if watch is None else []
    prev, STATE.enabled = STATE.enabled, create_graph  # record the backward only for create_graph
    try:
        for node in order:
            buf = buffers.pop(node, None)
            if buf is None:
                continue  # no gradient reached it
            if node._hooks_by_output or node._retained:  # most nodes have neither
                _arrived(node, buf, create_graph)
            if wanted is not None:
                if _kept(node, buf, wanted, found, needed):
                    _run_node(node, buf, buffers, retain_graph, sent)
            elif type(node) is AccumulateGrad:
                if buf[0] is not None:
                    accumulate_leaf(node.variable, buf[0], create_graph)
            else:
                _run_node(node, buf, buffers, retain_graph, sent)
            if sent is not None and watch is not None:
                watch(node, buf, sent)
                sent = []
    finally:
        STATE.enabled = prev
    return None if keys is None else [found.get(key) for key, _ in keys]


def _keys(inputs: Sequence[Variable]) -> list[tuple[tuple[int, int], Node]]:
    """((id of the node, output number), node) of each input, in the inputs' order (an input
    given twice is there twice); the nodes kept with them keep the ids unique during the walk."""
    keys = []
    for v in inputs:
        node = v.grad_fn if v.grad_fn is not None else AccumulateGrad.of(v)
        keys.append(((id(node), v._output_nr if v.grad_fn is not None else 0), node))
    return keys


def _kept(node: Node, buf: list, wanted: dict, found: dict, needed: set[int]) -> bool:
    """For a walk that returns gradients: keep those of ``node``'s outputs that were asked for
    (after a leaf's own hooks); whether anything asked for lies below it."""
    if type(node) is AccumulateGrad and node.variable._hooks and buf[0] is not None:
        buf[0] = _call_hooks(node.variable._hooks, buf[0])  # a leaf's hooks run for grad too
    for nr, g in enumerate(buf):
        if (id(node), nr) in wanted:
            found[(id(node), nr)] = g
    return type(node) is not AccumulateGrad and any(
        c is not None and id(c) in needed for c, _ in node.next_functions)


def one_per_input(node: Node, result: tuple) -> tuple:
    """``backward``'s gradients, one per forward argument. As in PyTorch, surplus trailing Nones
    (gradients of defaulted arguments that were not passed) are dropped, and missing trailing
    ones are fine where no gradient is needed; any other count is an error."""
    edges = node.next_functions
    if len(result) > len(edges) and all(r is None for r in result[len(edges):]):
        return result[:len(edges)]
    if len(result) < len(edges) and not any(e[0] is not None for e in edges[len(result):]):
        return result + (None,) * (len(edges) - len(result))
    raise BackwardError(
        f"function {type(node).__name__} returned an incorrect number of gradients "
        f"(expected {len(edges)}, got {len(result)}): backward must return one gradient "
        "per argument of forward, using None for arguments that need none."
    )


def materialize(node: Node, buf: list) -> None:
    """Zeros for the outputs of a multi-output node that got no gradient (unless the Function
    asked for None with ``ctx.set_materialize_grads(False)``)."""
    if node.materialize_grads:
        for nr, g in enumerate(buf):
            if g is None and node._output_meta[nr] is not None:
                shape, dtype = node._output_meta[nr]
                buf[nr] = Variable._make(np.zeros(shape, dtype))


def _run_node(node: Node, buf: list, buffers: dict, retain_graph: bool,
              sent: list | None = None) -> None:
    if len(buf) > 1:  # a single output always has its gradient
        materialize(node, buf)
    result = node._forward_cls.backward(node, *buf)
    if not isinstance(result, tuple):
        result = (result,)
    edges = node.next_functions
    if len(result) != len(edges):
        result = one_per_input(node, result)
    for i, (nxt, nr), g in zip(range(len(edges)), edges, result):
        if nxt is None or g is None:
            continue
        meta = nxt._output_meta[nr]  # the input's (shape, dtype), as its producer recorded it
        if not (type(g) is Variable and g._data.shape == meta[0] and g._data.dtype == meta[1]):
            g = checked_grad(g, node, i, meta)
        if sent is not None:  # observe() is watching
            sent.append((i, g))
        nbuf = buffers.get(nxt)
        if nbuf is None:
            if nxt._single:
                buffers[nxt] = [g]
                continue
            nbuf = buffers[nxt] = [None] * len(nxt._output_meta)
        nbuf[nr] = g if nbuf[nr] is None else add_gradients(nbuf[nr], g)
    if not retain_graph and node._saved is not None:
        node._release()


def _seed(var: Variable, gradient: Any, index: int) -> Variable:
    if not var._requires_grad:
        raise BackwardError(
            f"element {index} of tensors does not require grad and does not have a grad_fn. "
            "Only Variables computed from a leaf with requires_grad=True can be differentiated: "
            "create the inputs with requires_grad=True (or call x.requires_grad_()), and do not "
            "compute them under al.no_grad()."
        )
    if gradient is None:
        if var._data.size != 1:
            raise BackwardError(
                f"grad can be implicitly created only for scalar outputs; this output has shape "
                f"{var.shape}. Reduce it to a scalar first (e.g. y.sum().backward()) or pass "
                "gradient=<a Variable of the same shape> to backward()."
            )
        return Variable._make(np.ones(var.shape, var.dtype))
    g = gradient if isinstance(gradient, Variable) else Variable(gradient)
    if g.shape != var.shape:
        raise ShapeError(
            f"Mismatch in shape: gradient has shape {g.shape} but the output has shape {var.shape}. "
            "Pass a gradient of the same shape as the Variable you call backward() on."
        )
    return g


def _roots_and_seeds(roots: Any, grads: Any) -> tuple[list[Variable], list[Variable]]:
    """The outputs to start from as a list, and the gradient each one starts with."""
    roots = [roots] if isinstance(roots, Variable) else list(roots)
    if grads is None:
        grads = [None] * len(roots)
    elif isinstance(grads, (Variable, np.ndarray)):
        grads = [grads]
    else:
        grads = list(grads)
    if len(grads) != len(roots):
        raise BackwardError(
            f"got {len(grads)} gradient(s) for {len(roots)} output(s); pass one gradient per "
            "output (None for a one-element output)."
        )
    return roots, [_seed(t, g, i) for i, (t, g) in enumerate(zip(roots, grads))]


def backward(
    tensors: Variable | Sequence[Variable],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Variable | Sequence[Variable] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into every leaf's ``.grad`` (``Variable.backward`` calls this).
    With ``inputs``, only into those Variables' ``.grad`` (leaves or not), and only the part of the
    graph that leads to them runs."""
    tensors, seeds = _roots_and_seeds(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        _walk(tensors, seeds, retain_graph, create_graph)
        return
    inputs = [inputs] if isinstance(inputs, Variable) else list(inputs)
    if not inputs:
        raise BackwardError(
            "the inputs argument to backward() cannot be empty: pass the Variables whose .grad "
            "should be filled, or leave inputs out to fill every leaf's."
        )
    for i, v in enumerate(inputs):
        if not isinstance(v, Variable) or not v._requires_grad:
            raise BackwardError(
                f"input {i} of backward(inputs=...) does not require grad (can't retain_grad on a "
                "Variable that has requires_grad=False): pass only Variables with requires_grad=True."
            )
    found = _walk(tensors, seeds, retain_graph, create_graph, inputs)
    assert found is not None  # a walk with inputs returns what reached them
    for v, g in zip(inputs, found):
        if g is not None:
            _accumulate_input(v, g, create_graph)


def _accumulate_input(var: Variable, grad: Variable, create_graph: bool) -> None:
    """Add ``grad`` into ``var.grad`` for ``backward(inputs=...)``; the walk already ran the hooks."""
    if var.grad_fn is None:
        hooks, var._hooks = var._hooks, None
        try:
            accumulate_leaf(var, grad, create_graph)
        finally:
            var._hooks = hooks
        return
    g = grad if create_graph else grad.detach()
    var._grad = g if var._grad is None else add_gradients(var._grad, g)


def grad(
    outputs: Variable | Sequence[Variable],
    inputs: Variable | Sequence[Variable],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Variable | None, ...]:
    """Return d(outputs)/d(inputs) without touching any ``.grad``.

    >>> import autograd_lab as al
    >>> x = al.tensor(3.0, requires_grad=True)
    >>> al.grad(x ** 2, x)
    (Variable(6.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False. materialize_grads gives zeros for unused inputs, so it allows them."
        )
    allow_unused = bool(allow_unused or materialize_grads)
    inputs = [inputs] if isinstance(inputs, Variable) else list(inputs)
    for i, v in enumerate(inputs):
        if not isinstance(v, Variable) or not v._requires_grad:
            raise BackwardError(
                f"input {i} of al.grad does not require grad; every input must be a Variable with "
                "requires_grad=True that the outputs were computed from."
            )
    outputs, seeds = _roots_and_seeds(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    found = _walk(outputs, seeds, retain_graph, create_graph, inputs)
    assert found is not None  # a walk with inputs returns what reached them
    result = found
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise BackwardError(
                f"One of the differentiated Variables (input {i}, shape {inputs[i].shape}) appears "
                "to not have been used in the graph. Set allow_unused=True if this is the desired "
                "behavior (its gradient is then None)."
            )
    if materialize_grads:
        result = [Variable._make(np.zeros(v.shape, v.dtype)) if g is None else g
                  for v, g in zip(inputs, result)]
    return tuple(result)


connect_engine(backward)  # Variable.backward calls backward above
