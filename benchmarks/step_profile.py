"""Where the time of one recorded training step goes, beside PyTorch's and DeZero's.

    python3 -m benchmarks.step_profile [--steps 400] [--rounds 5]

The step of ``benchmarks.peers`` (the digits MLP 64-128-10, batch 64, float64, plain SGD, one
thread, the same weights and batches), cut into its parts: clearing the gradients, the forward
through the model, the loss, backward, the optimizer's update, and reading the loss as a float.
Each part is timed inside the step with ``time.perf_counter``; the contenders take turns round
by round, and each part's figure is the median over all steps, in µs. A part a library does not
have as such (DeZero's update is the benchmark's own loop) is timed the same way.

The parts are what to compare between libraries, and with the whole step of ``benchmarks.peers``
(the sum here is a little above it: each clock reading costs about 0.1 µs).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import numpy as np

from .peers import FEATURES, HIDDEN, CLASSES, LR, _import, limit_threads, problem

PARTS = ("zero_grad", "forward", "loss", "backward", "update", "loss as float")
Parted = Callable[[int, dict], None]
"""Runs one step on batch ``i`` and adds each part's seconds to ``times[part]``."""


def autograd_lab_parts(weights: list, batches: list) -> Parted:
    import autograd_lab as al
    from autograd_lab import functional as F
    from autograd_lab import nn

    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN, dtype=np.float64), nn.ReLU(),
                          nn.Linear(HIDDEN, CLASSES, dtype=np.float64))
    for layer, w, b in ((model[0], weights[0], weights[1]), (model[2], weights[2], weights[3])):
        layer.weight.data[...] = w.T
        layer.bias.data[...] = b
    opt = al.optim.SGD(model.parameters(), lr=LR)
    data = [(al.tensor(x), al.tensor(y)) for x, y in batches]

    def step(i: int, times: dict) -> None:
        x, y = data[i % len(data)]
        t0 = time.perf_counter()
        opt.zero_grad()
        t1 = time.perf_counter()
        out = model(x)
        t2 = time.perf_counter()
        loss = F.cross_entropy(out, y)
        t3 = time.perf_counter()
        loss.backward()
        t4 = time.perf_counter()
        opt.step()
        t5 = time.perf_counter()
        float(loss.data)
        t6 = time.perf_counter()
        _add(times, (t0, t1, t2, t3, t4, t5, t6))
    return step


def torch_parts(weights: list, batches: list) -> Parted:
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES)).double()
    with torch.no_grad():
        for layer, w, b in ((model[0], weights[0], weights[1]), (model[2], weights[2], weights[3])):
            layer.weight.copy_(torch.from_numpy(w.T.copy()))
            layer.bias.copy_(torch.from_numpy(b))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    data = [(torch.from_numpy(x.copy()), torch.from_numpy(y.copy())) for x, y in batches]
    loss_fn = torch.nn.functional.cross_entropy

    def step(i: int, times: dict) -> None:
        x, y = data[i % len(data)]
        t0 = time.perf_counter()
        opt.zero_grad()
        t1 = time.perf_counter()
        out = model(x)
        t2 = time.perf_counter()
        loss = loss_fn(out, y)
        t3 = time.perf_counter()
        loss.backward()
        t4 = time.perf_counter()
        opt.step()
        t5 = time.perf_counter()
        loss.item()
        t6 = time.perf_counter()
        _add(times, (t0, t1, t2, t3, t4, t5, t6))
    return step


def dezero_parts(weights: list, batches: list) -> Parted:
    _import("dezero")
    import dezero
    import dezero.functions as DF

    params = [dezero.Parameter(w.copy()) for w in weights]
    data = [(dezero.Variable(x), y) for x, y in batches]

    def step(i: int, times: dict) -> None:
        x, y = data[i % len(data)]
        w1, b1, w2, b2 = params
        t0 = time.perf_counter()
        for p in params:
            p.cleargrad()
        t1 = time.perf_counter()
        out = DF.linear(DF.relu(DF.linear(x, w1, b1)), w2, b2)
        t2 = time.perf_counter()
        loss = DF.softmax_cross_entropy(out, y)
        t3 = time.perf_counter()
        loss.backward()
        t4 = time.perf_counter()
        for p in params:
            p.data -= LR * p.grad.data
        t5 = time.perf_counter()
        float(loss.data)
        t6 = time.perf_counter()
        _add(times, (t0, t1, t2, t3, t4, t5, t6))
    return step


def _add(times: dict, marks: tuple) -> None:
    for part, start, end in zip(PARTS, marks, marks[1:]):
        times[part].append(end - start)


CONTENDERS = {"autograd_lab recorded": autograd_lab_parts, "PyTorch eager": torch_parts,
              "DeZero": dezero_parts}


def profile(steps: int, rounds: int) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Median µs per part and contender; and the contenders left out, with the reason."""
    weights, batches = problem()
    runners: dict[str, Parted] = {}
    missing: dict[str, str] = {}
    for name, make in CONTENDERS.items():
        try:
            runners[name] = make(weights, batches)
        except ImportError as err:
            missing[name] = f"not installed ({err})"
    times = {name: {part: [] for part in PARTS} for name in runners}
    for run in runners.values():  # warm up: compiled kernels, caches, first allocations
        scratch: dict[str, list] = {part: [] for part in PARTS}
        for i in range(20):
            run(i, scratch)
    for _ in range(rounds):
        for name, run in runners.items():
            for i in range(steps // rounds):
                run(i, times[name])
    medians = {name: {part: statistics.median(ts) * 1e6 for part, ts in parts.items()}
               for name, parts in times.items()}
    return medians, missing


def render(medians: dict[str, dict[str, float]], missing: dict[str, str]) -> str:
    names = list(medians)
    lines = ["| part | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for part in PARTS:
        lines.append(f"| {part} | " + " | ".join(f"{medians[n][part]:.1f}" for n in names) + " |")
    lines.append("| **sum** | " + " | ".join(f"**{sum(medians[n].values()):.1f}**" for n in names) + " |")
    for name, why in missing.items():
        lines.append(f"\n{name}: {why}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="steps per contender")
    parser.add_argument("--rounds", type=int, default=5, help="turns the contenders take")
    args = parser.parse_args(argv)
    limit_threads()
    medians, missing = profile(args.steps, args.rounds)
    print("µs per part of one training step (medians), one thread, float64:\n")
    print(render(medians, missing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
