"""Where the time of one recorded op goes: the 1000-op chain of ``figures.engine_chain`` in parts,
recorded and built as usual, and replayed as an ``al.capture`` step.

    python -m benchmarks.engine_profile [--repeats 25]

Each part is timed on the same chain (y = y * 1.0001 on a (4,) vector, 1000 times), the parts
interleaved repeat by repeat, medians per op. The garbage collector is off while timing the
parts (its cost is shown separately, with torch imported, as in the benchmark), so the split
adds up. benchmarks/PROFILE.md quotes this output.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time
from typing import Callable

import numpy as np

import autograd_lab as al

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
        for node in plan.nodes:
            node._saved = None
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.engine_profile", description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=25)
    args = ap.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"objects tracked by the garbage collector, kept alive per recorded op: {tracked_per_op():.1f}")
    for name, us in split(args.repeats).items():
        print(f"{name:40s} {us:6.2f} µs/op")
    for who, us in with_collector(args.repeats).items():
        print(f"{who + ': forward + backward, collector on':40s} {us:6.2f} µs/op")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
