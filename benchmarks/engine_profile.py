"""Where the time of one recorded op goes: the 1000-op chain of ``figures.engine_chain`` in parts,
recorded and built as usual, and replayed as an ``al.capture`` step.

    python -m benchmarks.engine_profile [--repeats 25] [--ablate]

Each part is timed on the same chain (y = y * 1.0001 on a (4,) vector, 1000 times), the parts
interleaved repeat by repeat, medians per op. The garbage collector is off while timing the
parts (its cost is shown separately, with torch imported, as in the benchmark), so the split
adds up. benchmarks/PROFILE.md quotes this output.

``--ablate`` runs the recorded chain again with one item of the library's work taken out at a
time (each replaced by a bare stand-in that is right for this chain only) and prints what each
item costs per op, forward and backward, against the full path in the same repeats.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import time
from typing import Any, Callable, Iterator

import numpy as np

import autograd_lab as al
from autograd_lab import function

from .figures import captured_chain

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

N = 1000
X0 = np.linspace(0.5, 1.0, 4)


def _numpy_only() -> None:
    """The arithmetic alone: the forward's and the backward's multiplication per op."""
    y = X0
    for _ in range(N):
        y = y * 1.0001
    g = np.ones(4)
    for _ in range(N):
        g = g * 1.0001


def _unrecorded() -> None:
    """The same 2000 multiplications on Variables that do not require grad (nothing recorded)."""
    y = al.Variable(X0)
    for _ in range(N):
        y = y * 1.0001
    g = al.Variable(np.ones(4))
    for _ in range(N):
        g = g * 1.0001


def _chain(lib: object, tensor: Callable) -> object:
    x = tensor(X0, requires_grad=True)
    y = x
    for _ in range(N):
        y = y * 1.0001
    return y.sum()


def _ours() -> object:
    return _chain(al, al.Variable)


def _torch() -> object:
    return _chain(torch, torch.tensor)


# the same chain as an al.capture step (as benchmarks.figures.engine_chain(captured=True) times it)
_STEP, _LEAF, _SCALE = captured_chain(N, X0)


def _replay_parts() -> tuple[float, float]:
    """Seconds of the replayed forward and of the replayed backward of one call."""
    from autograd_lab.grad_mode import STATE

    if not _STEP._plans:
        _STEP(_SCALE)  # the capture
    plan = next(iter(_STEP._plans.values()))
    _LEAF.grad = None
    STATE.enabled = False  # as the step's own replay runs its generated code (replay._run)
    try:
        t = time.perf_counter()
        values = plan.forward(_SCALE)
        middle = time.perf_counter()
        plan.backward(values[0])
        end = time.perf_counter()
    finally:
        STATE.enabled = True
        plan.free_saved()
    return middle - t, end - middle


def tracked_per_op() -> float:
    """Objects the garbage collector tracks that one recorded op keeps alive until backward."""
    _ours()
    gc.collect()
    before = len(gc.get_objects())
    keep = _ours()
    n = (len(gc.get_objects()) - before) / N
    del keep
    return n


def split(repeats: int) -> dict[str, float]:
    """Microseconds per op of each part, medians, the collector off."""
    parts: dict[str, list[float]] = {k: [] for k in (
        "numpy: the two multiplications", "ours: the same, nothing recorded",
        "ours: forward, recorded", "ours: backward", "captured: forward, replayed",
        "captured: backward, replayed", "torch: forward", "torch: backward")}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, fn in (("numpy: the two multiplications", _numpy_only),
                             ("ours: the same, nothing recorded", _unrecorded)):
                t = time.perf_counter()
                fn()
                parts[name].append(time.perf_counter() - t)
            for who, build in (("ours", _ours), ("torch", _torch if torch is not None else None)):
                if build is None:
                    continue
                t = time.perf_counter()
                loss = build()
                parts[f"{who}: forward" + (", recorded" if who == "ours" else "")].append(time.perf_counter() - t)
                t = time.perf_counter()
                loss.backward()
                parts[f"{who}: backward"].append(time.perf_counter() - t)
                del loss
            forward, backward = _replay_parts()
            parts["captured: forward, replayed"].append(forward)
            parts["captured: backward, replayed"].append(backward)
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    return {k: statistics.median(v) / N * 1e6 for k, v in parts.items() if v}


def with_collector(repeats: int) -> dict[str, float]:
    """Forward + backward per op with the collector on (what a user pays), ours and torch."""
    def captured() -> None:
        _LEAF.grad = None
        _STEP(_SCALE)

    out = {}
    for who, run in (("ours", lambda: _ours().backward()), ("captured", captured),
                     ("torch", (lambda: _torch().backward()) if torch is not None else None)):
        if run is None:
            continue
        samples = []
        for _ in range(repeats):
            t = time.perf_counter()
            run()
            samples.append(time.perf_counter() - t)
        out[who] = statistics.median(samples) / N * 1e6
    return out


# ---- what each item costs: the recorded chain with one item taken out at a time
class _PlainGradMode:
    """Grad mode in a plain attribute shared by all threads (the library keeps one per thread)."""
    enabled = True


def _mul_forward_bare(ctx: Any, a: al.Variable, b: float) -> al.Variable:
    """Mul's forward for this chain only (a Variable times a number): what its backward reads,
    without ``_save_operands``, ``save_for_backward``'s checks or ``broadcasting``'s error path."""
    ctx.shapes, ctx._saved, ctx.consts = (a._data.shape, None), (None, None), (None, b)
    return al.Variable._make(np.multiply(a._data, b))


def _mul_backward_on_arrays(ctx: Any, grad: al.Variable) -> tuple:
    """Mul's backward for this chain only, on the arrays: no ``saved_tensors`` check, no Variable
    multiply (a differentiable one, for create_graph), no ``sum_to``."""
    return al.Variable._make(grad._data * ctx.consts[1]), None


def _record_bare(cls: type, args: tuple, kwargs: dict) -> al.Variable:
    """``function._record`` for this chain only (one new output, no keywords): the node, its
    edges, ``needs_input_grad`` and output metadata, grad mode off around forward.
    Without the general path: try/finally, the common-case test (aliases, in-place, several
    outputs, saved outputs), the metadata of inputs without an edge."""
    node = cls._backward_cls()
    edges, needs = [], []
    for a in args:
        if isinstance(a, al.Variable) and a._requires_grad:
            fn = a.grad_fn
            edges.append((fn, a._output_nr) if fn is not None else (function.AccumulateGrad.of(a), 0))
            needs.append(True)
        else:
            edges.append((None, 0))
            needs.append(False)
    node.next_functions, node.needs_input_grad = tuple(edges), tuple(needs)
    function.STATE.enabled = False
    result = cls.forward(node, *args)
    function.STATE.enabled = True
    result.grad_fn, result._requires_grad = node, True
    node._output_meta = ((result._data.shape, result._data.dtype),)
    return result


def _run_node_bare(node: Any, buf: list, buffers: dict, retain_graph: bool,
                   sent: list | None = None) -> None:
    """``engine._run_node`` for this chain only (each node's input has one consumer): no count
    check, no check of each gradient's shape and dtype, no sum where gradients meet (and no
    observer: ``sent`` is always None here)."""
    for (nxt, _), g in zip(node.next_functions, node._forward_cls.backward(node, *buf)):
        if nxt is not None and g is not None:
            buffers[nxt] = [g]
    node._saved = None


def _ablations() -> dict[str, list[tuple[Any, str, Any]]]:
    """Per item: the (module or class, attribute, stand-in) pairs that take it out."""
    from autograd_lab import engine, grad_mode, ops, variable
    from autograd_lab.ops import elementwise

    plain = _PlainGradMode()
    items = {
        "grad mode in a plain attribute, not per thread": [
            (m, "STATE", plain) for m in (function, engine, ops, grad_mode, variable)],
        "Mul.forward without its operand helpers": [(elementwise.Mul, "forward", staticmethod(_mul_forward_bare))],
        "Mul.backward on arrays, not on Variables": [
            (elementwise.Mul, "backward", staticmethod(_mul_backward_on_arrays))],
        "the plain-output shortcut (every output through the general loop)": [
            (function, "_is_plain_output", lambda node, args, result: False)],
        "_record's general path": [(function, "_record", _record_bare)],
        "_run_node's checks": [(engine, "_run_node", _run_node_bare)],
    }
    items["all of the above"] = [pair for pairs in items.values() for pair in pairs]
    return items


@contextlib.contextmanager
def _taken_out(pairs: list[tuple[Any, str, Any]]) -> Iterator[None]:
    old = [(owner, name, owner.__dict__[name]) for owner, name, _ in pairs]
    for owner, name, value in pairs:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in old:
            setattr(owner, name, value)


def ablation(repeats: int) -> dict[str, tuple[float, float]]:
    """Per item, µs per op it costs in the forward and in the backward: medians over ``repeats``
    of the full path's time minus the time without the item, the two run back to back, the
    collector off. Each stand-in must give the chain's gradient bit for bit, or this raises."""
    items = _ablations()
    saved: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in items}
    want = None
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, pairs in items.items():
                times = []
                for patch in ([], pairs):
                    x = al.Variable(X0, requires_grad=True)
                    with _taken_out(patch):
                        t = time.perf_counter()
                        y = x
                        for _ in range(N):
                            y = y * 1.0001
                        loss = y.sum()
                        middle = time.perf_counter()
                        loss.backward()
                        times.append((middle - t, time.perf_counter() - middle))
                    want = x.grad.data if want is None else want
                    if not np.array_equal(x.grad.data, want):
                        raise AssertionError(f"without {name!r} the chain's gradient differs")
                    del loss, y
                saved[name][0].append(times[0][0] - times[1][0])
                saved[name][1].append(times[0][1] - times[1][1])
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    return {k: (statistics.median(f) / N * 1e6, statistics.median(b) / N * 1e6) for k, (f, b) in saved.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.engine_profile", description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--ablate", action="store_true", help="what each item of a recorded op costs")
    args = ap.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"objects tracked by the garbage collector, kept alive per recorded op: {tracked_per_op():.1f}")
    for name, us in split(args.repeats).items():
        print(f"{name:40s} {us:6.2f} µs/op")
    for who, us in with_collector(args.repeats).items():
        print(f"{who + ': forward + backward, collector on':40s} {us:6.2f} µs/op")
    if args.ablate:
        print("\nwhat an item costs per recorded op (the full path minus the path without it), µs:")
        for name, (forward, backward) in ablation(args.repeats).items():
            print(f"{name:52s} forward {forward:5.2f}  backward {backward:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
