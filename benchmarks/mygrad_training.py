"""The learner's library next to the finished one: one digits-MLP epoch with the key's ``mygrad``,
``autograd_lab`` and PyTorch, side by side.

MLP 64-128-10 (ReLU), SGD lr 0.05 with momentum 0.9, batches of 64, cross-entropy: the run of
chapter 09. Every contender starts from the same initial weights and sees the same batches; the
contenders take turns, ``repeats`` rounds, and each time is the median of its rounds, so a burst
of load from elsewhere on the machine hits them alike. Compare the ratios, not the seconds.

    python -m benchmarks.mygrad_training                 # prints the table
    python -m benchmarks.mygrad_training --out FILE.md   # and writes it
"""
from __future__ import annotations

import argparse
import statistics
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

import autograd_lab as al
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package
from autograd_lab.data import load_digits

from .models import digits_mlp, training_step
from .training import _limit_threads, _torch

LR, MOMENTUM, BATCH = 0.05, 0.9, 64


def key_mygrad() -> types.ModuleType:
    """The key's ``mygrad`` (the shipped export of the key notebooks), modules up to chapter 09."""
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES
             if m.chapter <= 9 and (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
    return build_package(files, REFERENCE_ROOT / PACKAGE)


def _epoch(nn: Any, optim: Any, F: Any, tensor: Callable[[np.ndarray], Any],
           init: list[np.ndarray], x: np.ndarray, y: np.ndarray, order: list[np.ndarray],
           raw: Callable[[np.ndarray], Any] = lambda a: a) -> Callable[[], Any]:
    """A function that trains a fresh copy of the model for one epoch (the thing timed)."""
    def run() -> Any:
        model = digits_mlp(nn)
        for p, value in zip(model.parameters(), init):
            p.data[...] = raw(value)
        step = training_step(lambda xb, yb: F.cross_entropy(model(xb), yb),
                             optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM))
        for idx in order:
            step(tensor(x[idx]), tensor(y[idx]))
        return model
    return run


def bench(repeats: int = 7, with_torch: bool = True) -> list[dict[str, Any]]:
    """Rows: contender, median seconds for one epoch, ratio to autograd_lab's time."""
    mygrad = key_mygrad()
    x_train, y_train, _, _ = load_digits()
    mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    x = ((x_train - mean) / np.where(std > 0, std, 1.0)).astype(np.float32)
    order = [idx for idx in np.array_split(np.random.default_rng(0).permutation(len(x)),
                                           range(BATCH, len(x), BATCH))]
    mygrad.manual_seed(0)
    start = digits_mlp(mygrad.nn)
    init = [p.data.copy() for p in start.parameters()]
    contenders = {
        "mygrad (the key's)": _epoch(mygrad.nn, mygrad.optim, mygrad.nn.functional,
                                     mygrad.Variable, init, x, y_train, order),
        "autograd_lab": _epoch(al.nn, al.optim, al.functional, al.tensor, init, x, y_train, order),
    }
    torch = _torch() if with_torch else None
    if torch is not None:
        contenders[f"torch {torch.__version__}"] = _epoch(
            torch.nn, torch.optim, torch.nn.functional, torch.from_numpy, init, x, y_train, order,
            raw=torch.from_numpy)
    for run in contenders.values():          # warm up: caches, allocators, JIT
        run()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, run in contenders.items():
            begin = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - begin)
    base = statistics.median(times["autograd_lab"])
    return [dict(benchmark="digits mlp, 1 epoch", contender=name,
                 seconds=statistics.median(ts), ratio_vs_autograd_lab=statistics.median(ts) / base)
            for name, ts in times.items()]


def render(rows: list[dict[str, Any]]) -> str:
    lines = ["| benchmark | contender | ms per epoch | time / autograd_lab |",
             "| --- | --- | ---: | ---: |"]
    lines += [f"| {r['benchmark']} | {r['contender']} | {1e3 * r['seconds']:.1f} | "
              f"{r['ratio_vs_autograd_lab']:.2f} |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.mygrad_training",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="rounds per contender (default 7)")
    ap.add_argument("--threads", type=int, default=None, help="threads for BLAS and torch")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    args = ap.parse_args(argv)
    _limit_threads(args.threads)
    rows = bench(args.repeats, with_torch=not args.no_torch)
    threads = args.threads if args.threads is not None else "the libraries' default"
    table = (f"Digits MLP 64-128-10, one epoch of 23 batches (SGD lr {LR}, momentum {MOMENTUM}), "
             f"same initial weights and batches for all; median of {args.repeats} rounds; "
             f"threads: {threads}. Written by `python -m benchmarks.mygrad_training`.\n\n"
             + render(rows))
    print(table, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
