"""What each part of a PyTorch-style Function protocol costs per op, rung by rung.

    python -m research.protocol_ladder [--repeats 15] [--part chain|mlp|both] [--epochs 10] [--threads 1]

Issue 14 asks the recorded 1000-op chain of ``figures.engine_chain`` (``y = y * 1.0001`` on a
(4,) vector, then ``y.sum().backward()``) to run in 0.8x PyTorch's time. This module times the
same chain on a ladder of minimal autograds written for this measurement, each rung adding one
part of what ``autograd_lab`` promises, beside the library itself and PyTorch, all interleaved
in one process. The step from one rung to the next is what that part costs in Python; the gap
between the last rung and the library is what the library spends beyond the minimum.

- ``numpy``: the arithmetic alone, the forward's and the backward's multiplication per op.
- ``closures``: one small object per op with a closure for its backward, an explicit stack for
  the order (the "40-line autograd" of the issue).
- ``protocol``: ``forward(ctx, ...)``/``backward(ctx, grad)`` static methods; the ctx is the
  graph node, with one edge per argument; every result is a Variable.
- ``+ saved``: ``ctx.save_for_backward``/``ctx.saved_tensors`` with the in-place check (lazy
  version counters), grad mode (per thread) off inside ``forward``, ``needs_input_grad``, and
  each gradient checked against its input's recorded shape and dtype.
- ``+ differentiable``: backward formulas written with Variable operations (what makes
  ``create_graph=True`` possible), the saved values freed after use, and a ``.grad`` the leaf
  owns (a copy), as PyTorch's semantics ask.

The rungs are deliberately small: each implements only what the chain needs, with no error
messages, hooks or ``retain_grad``. They are a floor, not a library.

The second part does the same for the digits MLP step of ``benchmarks.training``: the
hand-written numpy backprop; the same numpy lines as Functions on the last rung, recorded as a
graph each step, and replayed in a fixed order on ctx objects made once (the leaves' ``.grad``
updated as the optimizer does; both come out with the hand-written weights bit for bit); then
the library, captured and recorded, and PyTorch. ``benchmarks/PROFILE.md`` keeps what the two
tables showed.
"""
from __future__ import annotations

import argparse
import threading
from typing import Any, Callable

import numpy as np

import autograd_lab as al

from benchmarks.figures import captured_chain
from benchmarks.timing import compare

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

C = 1.0001
X0 = np.linspace(0.5, 1.0, 4)


# ---------------------------------------------------------------- rung: numpy alone
def numpy_chain(n: int) -> np.ndarray:
    """The 2n multiplications, nothing else; returns d(sum)/dx."""
    y = X0
    for _ in range(n):
        y = y * C
    g = np.ones_like(X0)
    for _ in range(n):
        g = g * C
    return g


# ---------------------------------------------------------------- rung: closures
class _Value:
    __slots__ = ("data", "parents", "back", "grad")

    def __init__(self, data: np.ndarray, parents: tuple = (), back: Callable | None = None) -> None:
        self.data, self.parents, self.back, self.grad = data, parents, back, None


def _closure_mul(v: _Value, c: float) -> _Value:
    return _Value(v.data * c, (v,), lambda g: (g * c,))


def _closure_sum(v: _Value) -> _Value:
    shape = v.data.shape
    return _Value(v.data.sum(), (v,), lambda g: (np.full(shape, g),))


def _closure_backward(root: _Value) -> None:
    order, seen, stack = [], {id(root)}, [(root, iter(root.parents))]
    while stack:  # post-order depth-first search, then reversed
        v, it = stack[-1]
        for p in it:
            if id(p) not in seen:
                seen.add(id(p))
                stack.append((p, iter(p.parents)))
                break
        else:
            stack.pop()
            order.append(v)
    root.grad = np.ones_like(root.data)
    for v in reversed(order):
        if v.back is not None:
            for p, g in zip(v.parents, v.back(v.grad)):
                p.grad = g if p.grad is None else p.grad + g


def closure_chain(n: int) -> np.ndarray:
    x = _Value(X0)
    y = x
    for _ in range(n):
        y = _closure_mul(y, C)
    _closure_backward(_closure_sum(y))
    return x.grad


# ---------------------------------------------------------------- rung: the Function protocol
class _Var:
    __slots__ = ("data", "grad_fn", "requires_grad", "grad")

    def __init__(self, data: np.ndarray, grad_fn: Any = None, requires_grad: bool = False) -> None:
        self.data, self.grad_fn, self.requires_grad, self.grad = data, grad_fn, requires_grad, None


class _Node:
    """The ctx of one call and the graph node it leaves (one edge per forward argument)."""

    __slots__ = ("cls", "next_functions", "const", "buf")

    def __init__(self, cls: type, next_functions: tuple) -> None:
        self.cls, self.next_functions, self.buf = cls, next_functions, None


class _Leaf:
    __slots__ = ("var", "buf", "next_functions")

    def __init__(self, var: _Var) -> None:
        self.var, self.buf, self.next_functions = var, None, ()


def _edge(a: Any) -> Any:
    if isinstance(a, _Var) and a.requires_grad:
        return a.grad_fn if a.grad_fn is not None else _Leaf(a)
    return None


def _protocol_apply(cls: type, *args: Any) -> _Var:
    ctx = _Node(cls, tuple(_edge(a) for a in args))
    return _Var(cls.forward(ctx, *args), ctx, True)


class _PMul:
    @staticmethod
    def forward(ctx: _Node, x: _Var, c: float) -> np.ndarray:
        ctx.const = c
        return x.data * c

    @staticmethod
    def backward(ctx: _Node, g: np.ndarray) -> tuple:
        return g * ctx.const, None


class _PSum:
    @staticmethod
    def forward(ctx: _Node, x: _Var) -> np.ndarray:
        ctx.const = x.data.shape
        return x.data.sum()

    @staticmethod
    def backward(ctx: _Node, g: np.ndarray) -> tuple:
        return (np.full(ctx.const, g),)


def _order(root: Any) -> list:
    order, seen, stack = [], {id(root)}, [(root, iter(root.next_functions))]
    while stack:
        node, it = stack[-1]
        for child in it:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def _protocol_backward(root: _Var) -> None:
    root.grad_fn.buf = np.ones_like(root.data)
    for node in _order(root.grad_fn):
        g, node.buf = node.buf, None
        if type(node) is _Leaf:
            node.var.grad = g
            continue
        for nxt, gi in zip(node.next_functions, node.cls.backward(node, g)):
            if nxt is not None:
                nxt.buf = gi if nxt.buf is None else nxt.buf + gi


def protocol_chain(n: int) -> np.ndarray:
    x = _Var(X0, requires_grad=True)
    y = x
    for _ in range(n):
        y = _protocol_apply(_PMul, y, C)
    _protocol_backward(_protocol_apply(_PSum, y))
    return x.grad


# ---------------------------------------------------------------- rung: + saved tensors, checks
class _ModeState(threading.local):
    enabled = True  # grad mode is per thread, as in PyTorch and the library


_Mode = _ModeState()


class _VarV:
    """A Variable with a version counter made on first in-place use (None: version 0)."""

    __slots__ = ("data", "grad_fn", "requires_grad", "grad", "vc")

    def __init__(self, data: np.ndarray, grad_fn: Any = None, requires_grad: bool = False) -> None:
        self.data, self.grad_fn, self.requires_grad = data, grad_fn, requires_grad
        self.grad = self.vc = None


class _NodeV:
    __slots__ = ("cls", "next_functions", "needs_input_grad", "const", "buf", "saved", "meta")

    def __init__(self, cls: type, next_functions: tuple, needs: tuple) -> None:
        self.cls, self.next_functions, self.needs_input_grad = cls, next_functions, needs
        self.buf = self.saved = None

    def save_for_backward(self, *tensors: Any) -> None:
        self.saved = tensors  # every version is 0 here; a counter made later means a change

    @property
    def saved_tensors(self) -> tuple:
        for t in self.saved:
            if t is not None and t.vc is not None and t.vc[0]:
                raise RuntimeError("a saved Variable was modified in place")
        return self.saved


class _LeafV:
    __slots__ = ("var", "buf", "next_functions", "meta")

    def __init__(self, var: _VarV) -> None:
        self.var, self.buf, self.next_functions = var, None, ()
        self.meta = (var.data.shape, var.data.dtype)


def _checked_apply(cls: type, *args: Any) -> Any:
    edges, needs, record = [], [], False
    for a in args:
        if isinstance(a, _VarV) and a.requires_grad:
            edges.append(a.grad_fn if a.grad_fn is not None else _LeafV(a))
            needs.append(True)
            record = True
        else:
            edges.append(None)
            needs.append(False)
    if not record or not _Mode.enabled:
        return _VarV(cls.forward(None, *args))
    ctx = _NodeV(cls, tuple(edges), tuple(needs))
    _Mode.enabled = False
    try:
        data = cls.forward(ctx, *args)
    finally:
        _Mode.enabled = True
    ctx.meta = (data.shape, data.dtype)
    return _VarV(data, ctx, True)


class _VMul:
    @staticmethod
    def forward(ctx: Any, x: _VarV, c: Any) -> np.ndarray:
        if ctx is not None:
            ctx.save_for_backward(c if isinstance(c, _VarV) and ctx.needs_input_grad[0] else None)
            ctx.const = c
        return x.data * (c.data if isinstance(c, _VarV) else c)

    @staticmethod
    def backward(ctx: _NodeV, g: np.ndarray) -> tuple:
        saved, = ctx.saved_tensors
        c = ctx.const if saved is None else saved.data
        return g * c, None


class _VSum:
    @staticmethod
    def forward(ctx: Any, x: _VarV) -> np.ndarray:
        if ctx is not None:
            ctx.const = x.data.shape
        return x.data.sum()

    @staticmethod
    def backward(ctx: _NodeV, g: np.ndarray) -> tuple:
        return (np.full(ctx.const, g),)


def _checked_backward(root: _VarV) -> None:
    root.grad_fn.buf = np.ones_like(root.data)
    _Mode.enabled = False
    try:
        for node in _order(root.grad_fn):
            g, node.buf = node.buf, None
            if type(node) is _LeafV:
                node.var.grad = g
                continue
            for nxt, gi in zip(node.next_functions, node.cls.backward(node, g)):
                if nxt is None or gi is None:
                    continue
                if gi.shape != nxt.meta[0] or gi.dtype != nxt.meta[1]:
                    raise ValueError("gradient of the wrong shape or dtype")
                nxt.buf = gi if nxt.buf is None else nxt.buf + gi
    finally:
        _Mode.enabled = True


def checked_chain(n: int) -> np.ndarray:
    x = _VarV(X0, requires_grad=True)
    y = x
    for _ in range(n):
        y = _checked_apply(_VMul, y, C)
    _checked_backward(_checked_apply(_VSum, y))
    return x.grad


# ---------------------------------------------------------------- rung: + differentiable backward
class _VarD(_VarV):
    """A Variable whose ``*`` is itself an op: recorded when grad mode is on, as under create_graph."""

    __slots__ = ()

    def __mul__(self, other: Any) -> "_VarD":
        if _Mode.enabled and (self.requires_grad or (isinstance(other, _VarV) and other.requires_grad)):
            return _diff_apply(_DMul, self, other)
        return _VarD(self.data * (other.data if isinstance(other, _VarV) else other))


class _NodeD(_NodeV):
    __slots__ = ()


def _diff_apply(cls: type, *args: Any) -> Any:
    edges, needs, record = [], [], False
    for a in args:
        if isinstance(a, _VarV) and a.requires_grad:
            edges.append(a.grad_fn if a.grad_fn is not None else _LeafV(a))
            needs.append(True)
            record = True
        else:
            edges.append(None)
            needs.append(False)
    if not record or not _Mode.enabled:
        return cls.forward(None, *args)
    ctx = _NodeD(cls, tuple(edges), tuple(needs))
    _Mode.enabled = False
    try:
        out = cls.forward(ctx, *args)
    finally:
        _Mode.enabled = True
    out.grad_fn, out.requires_grad = ctx, True
    ctx.meta = (out.data.shape, out.data.dtype)
    return out


class _DMul:
    @staticmethod
    def forward(ctx: Any, x: _VarD, c: Any) -> _VarD:
        if ctx is not None:
            ctx.save_for_backward(c if isinstance(c, _VarV) and ctx.needs_input_grad[0] else None)
            ctx.const = c
        return _VarD(x.data * (c.data if isinstance(c, _VarV) else c))

    @staticmethod
    def backward(ctx: _NodeD, g: _VarD) -> tuple:
        saved, = ctx.saved_tensors
        return g * (ctx.const if saved is None else saved), None


class _DSum:
    @staticmethod
    def forward(ctx: Any, x: _VarD) -> _VarD:
        if ctx is not None:
            ctx.const = x.data.shape
        return _VarD(x.data.sum())

    @staticmethod
    def backward(ctx: _NodeD, g: _VarD) -> tuple:
        return (_VarD(np.full(ctx.const, g.data)),)


def _diff_backward(root: _VarD) -> None:
    root.grad_fn.buf = _VarD(np.ones_like(root.data))
    _Mode.enabled = False
    try:
        for node in _order(root.grad_fn):
            g, node.buf = node.buf, None
            if type(node) is _LeafV:
                leaf = node.var
                if leaf.grad is None:
                    leaf.grad = _VarD(g.data.copy())  # the leaf owns its .grad
                else:
                    np.add(leaf.grad.data, g.data, out=leaf.grad.data)
                continue
            grads = node.cls.backward(node, g)
            node.saved = None  # freed, as without retain_graph
            for nxt, gi in zip(node.next_functions, grads):
                if nxt is None or gi is None:
                    continue
                if gi.data.shape != nxt.meta[0] or gi.data.dtype != nxt.meta[1]:
                    raise ValueError("gradient of the wrong shape or dtype")
                nxt.buf = gi if nxt.buf is None else _VarD(nxt.buf.data + gi.data)
    finally:
        _Mode.enabled = True


def differentiable_chain(n: int) -> np.ndarray:
    x = _VarD(X0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * C
    _diff_backward(_diff_apply(_DSum, y))
    return x.grad.data


# ---------------------------------------------------------------- the MLP step on the last rung
class _DLinear:
    """x @ W.T + b, the hand-written numpy lines; x kept for W's gradient, W for x's."""

    @staticmethod
    def forward(ctx: _NodeD, x: _VarD, w: _VarD, b: _VarD) -> _VarD:
        need = ctx.needs_input_grad
        ctx.save_for_backward(x if need[1] else None, w if need[0] else None)
        return _VarD(x.data @ w.data.T + b.data)

    @staticmethod
    def backward(ctx: _NodeD, g: _VarD) -> tuple:
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (_VarD(g.data @ w.data) if need[0] else None,
                _VarD(g.data.T @ x.data) if need[1] else None,
                _VarD(g.data.sum(0)) if need[2] else None)


class _DReLU:
    @staticmethod
    def forward(ctx: _NodeD, h: _VarD) -> _VarD:
        ctx.save_for_backward(h)
        return _VarD(np.maximum(h.data, 0))

    @staticmethod
    def backward(ctx: _NodeD, g: _VarD) -> tuple:
        h, = ctx.saved_tensors
        return (_VarD(g.data * (h.data > 0)),)


class _DCrossEntropy:
    """Mean cross-entropy of the softmax; the probabilities are kept for the backward."""

    @staticmethod
    def forward(ctx: _NodeD, z: _VarD, y: np.ndarray, eye: np.ndarray) -> _VarD:
        z = z.data - z.data.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        ctx.const = (p, eye[y])
        return _VarD(-np.log(p[np.arange(len(y)), y]).sum() / len(y))

    @staticmethod
    def backward(ctx: _NodeD, g: _VarD) -> tuple:
        p, onehot = ctx.const
        return _VarD((p - onehot) / len(p) * g.data), None, None


def _momentum_update(leaves: list, bufs: list, lr: float) -> None:
    """The hand-written step's SGD with momentum, from each leaf's ``.grad``."""
    from benchmarks.training import MOMENTUM

    for k, p in enumerate(leaves):
        if bufs[k] is None:
            bufs[k] = p.grad.data.copy()
        else:
            bufs[k] *= MOMENTUM
            bufs[k] += p.grad.data
        p.data -= lr * bufs[k]


def train_floor_mlp(params: list[np.ndarray], x: np.ndarray, y: np.ndarray, order: list,
                    lr: float) -> list[np.ndarray]:
    """``training.train_numpy_mlp``'s step on the last rung: the same numpy lines as Functions,
    recorded and walked backwards, the same momentum update on the leaves' ``.grad``."""
    w1, b1, w2, b2 = leaves = [_VarD(p.copy(), requires_grad=True) for p in params]
    bufs: list[np.ndarray | None] = [None] * 4
    eye = np.eye(w2.data.shape[0], dtype=x.dtype)
    for epoch in order:
        for idx in epoch:
            for p in leaves:
                p.grad = None
            h = _diff_apply(_DLinear, _VarD(x[idx]), w1, b1)
            z = _diff_apply(_DLinear, _diff_apply(_DReLU, h), w2, b2)
            _diff_backward(_diff_apply(_DCrossEntropy, z, y[idx], eye))
            _momentum_update(leaves, bufs, lr)
    return [p.data for p in leaves]


def _checked(g: _VarD, like: _VarD) -> _VarD:
    if g.data.shape != like.data.shape or g.data.dtype != like.data.dtype:
        raise ValueError("gradient of the wrong shape or dtype")
    return g


def train_replay_floor_mlp(params: list[np.ndarray], x: np.ndarray, y: np.ndarray, order: list,
                           lr: float) -> list[np.ndarray]:
    """The same step replayed, at its floor: the four Functions' ``forward`` and ``backward``
    called in a fixed order on ctx objects made once, with no node, edge or order made per step
    (what ``al.capture`` does). Each gradient is still checked, the saved values are freed and
    the leaves get a ``.grad`` of their own."""
    w1, b1, w2, b2 = leaves = [_VarD(p.copy(), requires_grad=True) for p in params]
    bufs: list[np.ndarray | None] = [None] * 4
    eye = np.eye(w2.data.shape[0], dtype=x.dtype)
    lin1 = _NodeD(_DLinear, (None, None, None), (False, True, True))  # the edges are not walked
    relu = _NodeD(_DReLU, (None,), (True,))
    lin2 = _NodeD(_DLinear, (None, None, None), (True, True, True))
    loss_fn = _NodeD(_DCrossEntropy, (None, None, None), (True, False, False))
    for epoch in order:
        for idx in epoch:
            for p in leaves:
                p.grad = None
            _Mode.enabled = False
            try:
                h = _DLinear.forward(lin1, _VarD(x[idx]), w1, b1)
                a = _DReLU.forward(relu, h)
                z = _DLinear.forward(lin2, a, w2, b2)
                loss = _DCrossEntropy.forward(loss_fn, z, y[idx], eye)
                gz = _checked(_DCrossEntropy.backward(loss_fn, _VarD(np.ones_like(loss.data)))[0], z)
                ga, gw2, gb2 = _DLinear.backward(lin2, gz)
                gh = _checked(_DReLU.backward(relu, _checked(ga, a))[0], h)
                _, gw1, gb1 = _DLinear.backward(lin1, gh)
            finally:
                _Mode.enabled = True
                for node in (lin1, relu, lin2, loss_fn):
                    node.saved = None
            for p, g in zip(leaves, (gw1, gb1, gw2, gb2)):
                p.grad = _VarD(_checked(g, p).data.copy())
            _momentum_update(leaves, bufs, lr)
    return [p.data for p in leaves]


# ---------------------------------------------------------------- the library, and PyTorch
def ours_chain(n: int) -> np.ndarray:
    x = al.Variable(X0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * C
    y.sum().backward()
    return x.grad.numpy()


def captured(n: int) -> Callable[[], np.ndarray]:
    step, leaf, scale = captured_chain(n, X0)

    def run() -> np.ndarray:
        leaf.grad = None
        step(scale)
        return leaf.grad.numpy()
    return run


def torch_chain(n: int) -> np.ndarray:
    x = torch.tensor(X0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * C
    y.sum().backward()
    return x.grad.numpy()


RUNGS: dict[str, Callable[[int], np.ndarray]] = {
    "numpy": numpy_chain,
    "closures": closure_chain,
    "protocol": protocol_chain,
    "+ saved": checked_chain,
    "+ differentiable": differentiable_chain,
    "autograd_lab, recorded": ours_chain,
}


def contenders(n: int) -> dict[str, Callable[[], np.ndarray] | None]:
    """Every rung, the library (recorded and captured) and PyTorch, as calls without arguments."""
    out: dict[str, Callable[[], np.ndarray] | None] = {k: (lambda f=f: f(n)) for k, f in RUNGS.items()}
    out["autograd_lab, captured"] = captured(n)
    out["torch"] = (lambda: torch_chain(n)) if torch is not None else None
    return out


def mlp_contenders(epochs: int) -> tuple[dict[str, Callable[[], Any] | None], int]:
    """The digits MLP of ``benchmarks.training`` (64-128-10, batch 64, SGD momentum), ``epochs``
    epochs from the same weights on the same batches: hand-written numpy, the last rung, the
    library captured and ordinary, PyTorch; and the number of steps each one runs."""
    from autograd_lab.data import load_digits
    from autograd_lab.train import make_model

    from benchmarks.training import LR, _batches, to_torch, train_numpy_mlp, train_ours, train_torch

    x, y, _, _ = load_digits()
    order = _batches(len(x), epochs, 0)
    init = [p.data.copy() for p in make_model("mlp", 0).parameters()]
    out: dict[str, Callable[[], Any] | None] = {
        "numpy (hand backprop)": lambda: train_numpy_mlp(init, x, y, order, LR),
        "+ differentiable": lambda: train_floor_mlp(init, x, y, order, LR),
        "+ differentiable, replayed": lambda: train_replay_floor_mlp(init, x, y, order, LR),
        "autograd_lab, captured": lambda: train_ours(make_model("mlp", 0), x, y, order, LR, capture=True),
        "autograd_lab, recorded": lambda: train_ours(make_model("mlp", 0), x, y, order, LR),
        "torch": (lambda: train_torch(to_torch(make_model("mlp", 0)), x, y, order, LR)) if torch else None,
    }
    return out, sum(len(epoch) for epoch in order)


def _table(timings: dict, per: int, unit: str, bases: tuple, step_skip: tuple | None) -> None:
    """One row per contender: the median (min–max), its ratio to each of ``bases`` and, unless
    ``step_skip`` is None, the step from the row above (rows named in it are not steps)."""
    refs = [(b, timings[b].median) for b in bases if b in timings]
    head = [unit] + [f"vs {b}" for b, _ in refs] + ([] if step_skip is None else ["step from the row above"])
    print("| contender | " + " | ".join(head) + " |")
    print("| --- " * (len(head) + 1) + "|")
    prev = None
    for name, t in timings.items():
        each, lo, hi = (1e6 * v / per for v in (t.median, t.min, t.max))
        cells = [f"{each:.2f} ({lo:.2f}–{hi:.2f})"] + [f"{t.median / r:.2f}" for _, r in refs]
        if step_skip is not None:
            cells.append("" if prev is None or name in step_skip else f"+{each - prev:.2f}")
            if name not in step_skip:
                prev = each
        print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--length", type=int, default=1000, help="ops in the chain")
    parser.add_argument("--epochs", type=int, default=10, help="MLP epochs per timed run")
    parser.add_argument("--part", choices=("chain", "mlp", "both"), default="both")
    parser.add_argument("--threads", type=int, default=1,
                        help="cap BLAS/numba/torch threads (default 1, as the issue's one-thread "
                             "figures; 0 leaves each library's default)")
    args = parser.parse_args(argv)
    from benchmarks.training import _limit_threads

    _limit_threads(args.threads or None)
    if args.part in ("chain", "both"):
        timings = compare(contenders(args.length), repeats=args.repeats)
        print(f"chain of {args.length} ops: µs per op, median (min–max) over {args.repeats} repeats")
        _table(timings, args.length, "µs per op", ("torch",), ("autograd_lab, captured", "torch"))
    if args.part in ("mlp", "both"):
        runs, steps = mlp_contenders(args.epochs)
        timings = compare(runs, repeats=args.repeats)
        print(f"\ndigits MLP, {args.epochs} epoch(s): µs per step, median (min–max) over "
              f"{args.repeats} repeats")
        _table(timings, steps, "µs per step", ("numpy (hand backprop)", "torch"), None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
