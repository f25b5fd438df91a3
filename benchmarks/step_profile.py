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

from .models import mlp_with_weights
from .peers import LR, dezero_mlp, limit_threads, problem

PARTS = ("zero_grad", "forward", "loss", "backward", "update", "loss as float")
Parted = Callable[[int, dict], None]
"""Runs one step on batch ``i`` and adds each part's seconds to ``times[part]``."""


def autograd_lab_parts(weights: list, batches: list) -> Parted:
    import autograd_lab as al
    from autograd_lab import functional as F

    model = mlp_with_weights("autograd_lab", weights)
    opt = al.optim.SGD(model.parameters(), lr=LR)
    data = [(al.tensor(x), al.tensor(y)) for x, y in batches]

    def step(i: int, times: dict) -> None:
        x, y = data[i % len(data)]
        _timed(times, opt.zero_grad, lambda: model(x), lambda out: F.cross_entropy(out, y),
               lambda loss: loss.backward(), opt.step, lambda loss: float(loss.data))
    return step


def torch_parts(weights: list, batches: list) -> Parted:
    import torch

    model = mlp_with_weights("torch", weights)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    data = [(torch.from_numpy(x.copy()), torch.from_numpy(y.copy())) for x, y in batches]
    loss_fn = torch.nn.functional.cross_entropy

    def step(i: int, times: dict) -> None:
        x, y = data[i % len(data)]
        _timed(times, opt.zero_grad, lambda: model(x), lambda out: loss_fn(out, y),
               lambda loss: loss.backward(), opt.step, lambda loss: loss.item())
    return step


def dezero_parts(weights: list, batches: list) -> Parted:
    params, data, forward = dezero_mlp(weights, batches)  # imports DeZero, numpy 2 or not
    import dezero.functions as DF

    def clear() -> None:
        for p in params:
            p.cleargrad()

    def update() -> None:
        for p in params:
            p.data -= LR * p.grad.data

    def step(i: int, times: dict) -> None:
        x, y = data[i % len(data)]
        _timed(times, clear, lambda: forward(x), lambda out: DF.softmax_cross_entropy(out, y),
               lambda loss: loss.backward(), update, lambda loss: float(loss.data))
    return step


def _timed(times: dict, zero_grad: Callable[[], object], forward: Callable[[], object],
           loss_of: Callable[[object], object], backward: Callable[[object], object],
           update: Callable[[], object], read: Callable[[object], object]) -> None:
    """One step, part by part, each part's seconds added to ``times[part]`` (a lambda's call adds
    the same small cost to every contender's part)."""
    clock = time.perf_counter
    t0 = clock()
    zero_grad()
    t1 = clock()
    out = forward()
    t2 = clock()
    loss = loss_of(out)
    t3 = clock()
    backward(loss)
    t4 = clock()
    update()
    t5 = clock()
    read(loss)
    t6 = clock()
    for part, start, end in zip(PARTS, (t0, t1, t2, t3, t4, t5), (t1, t2, t3, t4, t5, t6)):
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
    times: dict[str, dict[str, list[float]]] = {name: {part: [] for part in PARTS} for name in runners}
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
