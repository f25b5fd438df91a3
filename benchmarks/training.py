"""Training benchmarks on the digits: autograd_lab vs PyTorch vs hand-written numpy backprop.

MLP 64-128-10 (ReLU, SGD momentum 0.9, 20 epochs; lr and batch size from ``train.DEFAULT_LR`` and
``train.DEFAULT_BATCH``) and a small CNN (conv-relu-pool x2, linear). The accuracy after a single
epoch is reported too: a learner's first `autograd-lab train --epochs 1` should show learning. Every contender trains the same architecture from the same
initial weights on the same mini-batches (one precomputed order per epoch), so the times
compare the frameworks and nothing else. Times are medians of ``repeats`` runs.

    python -m benchmarks.training            # prints a table
    run_training_benchmarks() -> list[dict]  # rows for the benchmark runner
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import numpy as np

import autograd_lab as al
import autograd_lab.nn as nn
from autograd_lab.data import load_digits
from autograd_lab.optim import SGD
from autograd_lab.train import DEFAULT_BATCH, DEFAULT_LR, make_model

from .models import training_step

MOMENTUM = 0.9
LR = DEFAULT_LR["mlp"]
BATCH = DEFAULT_BATCH["mlp"]


def _batches(n: int, epochs: int, seed: int, batch: int = BATCH) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[p[i:i + batch] for i in range(0, n, batch)] for p in (rng.permutation(n) for _ in range(epochs))]


def _accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(logits.argmax(1) == y))


# ---- the three contenders ------------------------------------------------------------------------------
def train_ours(model: nn.Module, x: np.ndarray, y: np.ndarray, order: list, lr: float = LR,
               capture: bool = False) -> nn.Module:
    """SGD with momentum over ``order``; ``capture=True`` runs forward and backward as an
    ``al.capture`` step (captured once per batch shape, then replayed: the same weights)."""
    loss_fn = nn.CrossEntropyLoss()
    step = training_step(lambda xb, yb: loss_fn(model(xb), yb),
                         SGD(model.parameters(), lr=lr, momentum=MOMENTUM), capture)
    for epoch in order:
        for idx in epoch:
            step(al.Variable._make(x[idx]), al.Variable._make(y[idx]))
    return model


def predict_ours(model: nn.Module, x: np.ndarray) -> np.ndarray:
    model.eval()
    with al.no_grad():
        return model(al.Variable._make(x)).data


def to_torch(model: nn.Module) -> Any:
    """The same architecture in PyTorch, starting from our model's weights (names match)."""
    import torch

    layers = []
    for m in model:
        if isinstance(m, nn.Linear):
            layers.append(torch.nn.Linear(m.in_features, m.out_features))
        elif isinstance(m, nn.Conv2d):
            layers.append(torch.nn.Conv2d(m.in_channels, m.out_channels, m.kernel_size, m.stride, m.padding))
        elif isinstance(m, nn.MaxPool2d):
            layers.append(torch.nn.MaxPool2d(m.kernel_size, m.stride))
        elif isinstance(m, nn.ReLU):
            layers.append(torch.nn.ReLU())
        elif isinstance(m, nn.Flatten):
            layers.append(torch.nn.Flatten())
    net = torch.nn.Sequential(*layers)
    net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in model.state_dict().items()})
    return net


def train_torch(net: Any, x: np.ndarray, y: np.ndarray, order: list, lr: float = LR) -> Any:
    import torch

    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    loss_fn = torch.nn.CrossEntropyLoss()
    step = training_step(lambda xb, yb: loss_fn(net(xb), yb),
                         torch.optim.SGD(net.parameters(), lr=lr, momentum=MOMENTUM))
    for epoch in order:
        for idx in epoch:
            i = torch.from_numpy(idx)
            step(xt[i], yt[i])
    return net


def train_numpy_mlp(params: list[np.ndarray], x: np.ndarray, y: np.ndarray, order: list,
                    lr: float = LR) -> list[np.ndarray]:
    """Backprop written out by hand for Linear-ReLU-Linear + softmax cross-entropy, SGD momentum."""
    w1, b1, w2, b2 = [p.copy() for p in params]
    bufs: list[np.ndarray | None] = [None] * 4
    eye = np.eye(w2.shape[0], dtype=x.dtype)
    for epoch in order:
        for idx in epoch:
            xb, yb = x[idx], y[idx]
            h = xb @ w1.T + b1
            a = np.maximum(h, 0)
            z = a @ w2.T + b2
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            dz = (p - eye[yb]) / len(idx)
            dh = (dz @ w2) * (h > 0)
            grads = [dh.T @ xb, dh.sum(0), dz.T @ a, dz.sum(0)]
            for k, (w, g) in enumerate(zip((w1, b1, w2, b2), grads)):
                if bufs[k] is None:
                    bufs[k] = g.copy()
                else:
                    bufs[k] *= MOMENTUM
                    bufs[k] += g
                w -= lr * bufs[k]
    return [w1, b1, w2, b2]


def predict_numpy_mlp(params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    w1, b1, w2, b2 = params
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


# ---- measuring ---------------------------------------------------------------------------------------
def _limit_threads(threads: int | None) -> None:
    """Cap the threads of BLAS, numba and torch (None leaves each library's default)."""
    if threads is None:
        return
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(threads)
    except ImportError:
        pass
    import numba
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    torch = _torch()
    if torch is not None:
        torch.set_num_threads(threads)


def _torch() -> Any:
    """PyTorch, or None when it is missing or installed but failing to import."""
    try:
        import torch
    except Exception:
        return None
    return torch


def bench_model(kind: str, seeds: tuple[int, ...] = (0, 1, 2, 3, 4), epochs: int = 20, repeats: int = 3,
                with_torch: bool = True, lr: float | None = None) -> list[dict[str, Any]]:
    """Accuracy of autograd_lab over ``seeds``, and training times on seed 0 for every contender.

    The contenders run in turn, ``repeats`` rounds, and each time is the median of its rounds,
    so a burst of load from elsewhere on the machine hits them alike."""
    lr = DEFAULT_LR[kind] if lr is None else lr
    batch = DEFAULT_BATCH[kind]
    images = kind == "cnn"
    accs, accs_fixed, accs_one = [], [], []
    for seed in seeds:  # the seed picks the split, the initial weights and the batch order ...
        acc = {}
        for split_seed in dict.fromkeys((seed, 0)):  # ... or only the latter two (one run for seed 0)
            xs, ys, xt, yt = load_digits(as_images=images, seed=split_seed)
            model = train_ours(make_model(kind, seed), xs, ys, _batches(len(xs), epochs, seed, batch), lr)
            acc[split_seed] = _accuracy(predict_ours(model, xt), yt)
        accs.append(acc[seed])
        accs_fixed.append(acc[0])
        xs, ys, xt, yt = load_digits(as_images=images, seed=seed)  # a first epoch on its own
        model = train_ours(make_model(kind, seed), xs, ys, _batches(len(xs), 1, seed, batch), lr)
        accs_one.append(_accuracy(predict_ours(model, xt), yt))
    x_train, y_train, x_test, y_test = load_digits(as_images=images)
    order = _batches(len(x_train), epochs, 0, batch)
    torch = _torch() if with_torch else None
    contenders: dict[str, Callable[[], Any]] = {
        "autograd_lab": lambda: train_ours(make_model(kind, 0), x_train, y_train, order, lr),
        "autograd_lab (captured)": lambda: train_ours(make_model(kind, 0), x_train, y_train, order, lr,
                                                      capture=True)}
    if kind == "mlp":
        init = [p.data.copy() for p in make_model("mlp", 0).parameters()]
        contenders["numpy (hand backprop)"] = lambda: train_numpy_mlp(init, x_train, y_train, order, lr)
    if torch is not None:
        contenders[f"torch {torch.__version__}"] = lambda: train_torch(to_torch(make_model(kind, 0)), x_train,
                                                                         y_train, order, lr)
    warm = order[:1]  # one epoch each first: JIT compilation, caches, allocator
    train_ours(make_model(kind, 0), x_train, y_train, warm, lr)
    train_ours(make_model(kind, 0), x_train, y_train, warm, lr, capture=True)
    if kind == "mlp":
        train_numpy_mlp(init, x_train, y_train, warm, lr)
    if torch is not None:
        train_torch(to_torch(make_model(kind, 0)), x_train, y_train, warm, lr)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    results: dict[str, Any] = {}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - start)
    t_ours = statistics.median(times["autograd_lab"])
    rows = []
    for name in contenders:
        t = statistics.median(times[name])
        row = dict(benchmark=f"digits {kind}", contender=name, seconds=t, epoch_ms=1e3 * t / epochs,
                   ratio_vs_ours=t / t_ours)
        if name == "autograd_lab":
            row.update(accuracy_mean=float(np.mean(accs)), accuracy_min=float(np.min(accs)), seeds=len(seeds),
                       accuracy_fixed_split_mean=float(np.mean(accs_fixed)),
                       accuracy_fixed_split_min=float(np.min(accs_fixed)),
                       accuracy_1_epoch_mean=float(np.mean(accs_one)),
                       accuracy_1_epoch_min=float(np.min(accs_one)))
        elif name == "autograd_lab (captured)":  # the same weights as the ordinary path
            same = all(np.array_equal(p.data, q.data) for p, q in
                       zip(results[name].parameters(), results["autograd_lab"].parameters()))
            row["accuracy_mean"] = _accuracy(predict_ours(results[name], x_test), y_test)
            row["note"] = "weights equal to the ordinary path's" if same else "WEIGHTS DIFFER"
        elif name.startswith("numpy"):
            row["accuracy_mean"] = _accuracy(predict_numpy_mlp(results[name], x_test), y_test)
        else:
            with torch.no_grad():
                row["accuracy_mean"] = _accuracy(results[name](torch.from_numpy(x_test)).numpy(), y_test)
        rows.append(row)
    return rows


def run_training_benchmarks(seeds: tuple[int, ...] = (0, 1, 2, 3, 4), epochs: int = 20, repeats: int = 3,
                            with_torch: bool = True, threads: int | None = None,
                            models: tuple[str, ...] = ("mlp", "cnn")) -> list[dict[str, Any]]:
    """Rows for the MLP and the CNN: contender, seconds, epoch_ms, accuracy, ratio_vs_ours.

    ``threads`` caps BLAS, numba and torch threads for the whole process (None: defaults)."""
    _limit_threads(threads)
    return [row for kind in models for row in bench_model(kind, seeds, epochs, repeats, with_torch)]


def format_rows(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'benchmark':<12} {'contender':<26} {'total s':>8} {'ms/epoch':>9} {'time/ours':>9}  test accuracy"]
    for r in rows:
        acc = f"{r['accuracy_mean']:.2%}"
        if "accuracy_min" in r:
            acc = (f"{acc} (min {r['accuracy_min']:.2%}) over {r['seeds']} seeds; split 0 only: "
                   f"{r['accuracy_fixed_split_mean']:.2%} (min {r['accuracy_fixed_split_min']:.2%})")
            if "accuracy_1_epoch_mean" in r:
                acc += (f"; after 1 epoch: {r['accuracy_1_epoch_mean']:.2%} "
                        f"(min {r['accuracy_1_epoch_min']:.2%})")
        else:
            acc += " (seed 0)" + (f"; {r['note']}" if "note" in r else "")
        lines.append(f"{r['benchmark']:<12} {r['contender']:<26} {r['seconds']:>8.3f} {r['epoch_ms']:>9.2f} "
                     f"{r['ratio_vs_ours']:>9.2f}  {acc}")
    return "\n".join(lines)


# issue 5's targets (its time ratios are issue 14's too): accuracy at least, time at most
ACCURACY_TARGETS = {"mlp": 0.97, "cnn": 0.985}
TIME_TARGETS = {("mlp", "torch"): 0.4, ("mlp", "numpy"): 1.5, ("cnn", "torch"): 0.5}


def _pct(fraction: float) -> str:
    return f"{round(fraction * 100, 1):g}%"


def _verdict(value: float, bound: float, at_least: bool) -> str:
    if value >= bound if at_least else value <= bound:
        return "**met**"
    if at_least:
        return f"**missed** by {(bound - value) * 100:.2f} points"
    return f"**missed** by {value / bound:.2f}×"


def target_lines(rows: list[dict[str, Any]]) -> list[str]:
    """A Markdown table: each target of the models in ``rows``, the figure measured, met or missed.
    Times are ours over the baseline's, for the ordinary and the captured step."""
    lines = ["| model | figure | measured | target | result |", "| --- | --- | --- | --- | --- |"]
    for kind in dict.fromkeys(r["benchmark"].split()[-1] for r in rows):
        mine = {r["contender"]: r for r in rows if r["benchmark"] == f"digits {kind}"}
        ours = mine.get("autograd_lab")
        if ours is None:
            continue
        bound = ACCURACY_TARGETS[kind]
        acc = ours["accuracy_mean"]
        lines.append(f"| {kind} | test accuracy, mean over {ours['seeds']} seeds | {acc:.2%} | ≥ {bound:.1%} "
                     f"| {_verdict(acc, bound, True)} |")
        for (model, base), bound in TIME_TARGETS.items():
            theirs = next((r for name, r in mine.items() if name.startswith(base)), None)
            if model != kind or theirs is None:
                continue
            for name in ("autograd_lab", "autograd_lab (captured)"):
                if name in mine:
                    ratio = mine[name]["seconds"] / theirs["seconds"]
                    step = "captured step" if "captured" in name else "ordinary step"
                    lines.append(f"| {kind} | time vs {theirs['contender']}, {step} | {ratio:.2f} | ≤ {bound} "
                                 f"| {_verdict(ratio, bound, False)} |")
    return lines


def write_markdown(rows: list[dict[str, Any]], path: str, threads: int | None, seconds: float) -> None:
    """The table as a small Markdown page with the machine and settings it was measured on."""
    import datetime
    import os
    import platform

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    text = "\n".join([
        "# Training benchmarks (digits)",
        "",
        "Generated by `python -m benchmarks.training --out benchmarks/TRAINING.md` — do not edit by hand.",
        "Every contender trains the same model from the same initial weights on the same batches;",
        "contenders take turns repeat by repeat. `time/ours` is the contender's time over ours (above 1:",
        f"ours is faster). Targets (issue 5): MLP ≥ {_pct(ACCURACY_TARGETS['mlp'])} test accuracy over 5 seeds, "
        f"time ≤ {TIME_TARGETS['mlp', 'torch']}× PyTorch's",
        f"and ≤ {TIME_TARGETS['mlp', 'numpy']}× a hand-written numpy backprop; "
        f"CNN ≥ {_pct(ACCURACY_TARGETS['cnn'])}, epoch time ≤ {TIME_TARGETS['cnn', 'torch']}× PyTorch's.",
        "`after 1 epoch`: a fresh model trained for one epoch (issue 13: one epoch already shows learning).",
        "",
        f"- date: {datetime.datetime.now():%Y-%m-%d %H:%M}; whole run {seconds:.0f} s; load average at end: {load}",
        f"- machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs",
        f"- threads: {threads if threads else 'library defaults'} (BLAS, numba, torch)",
        "",
        "```",
        format_rows(rows),
        "```",
        "",
        "## Targets",
        "",
        *target_lines(rows),
        "",
    ]) + _previous_run(path)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _previous_run(path: str) -> str:
    """The table the last run wrote to ``path`` (with its date), kept under the new one so that a
    change shows its effect beside the figures it replaced."""
    import os
    import re

    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8") as fh:
        old = fh.read().split("\n## Previous run", 1)[0]
    table = re.search(r"```\n(.*?)```", old, re.S)
    date = re.search(r"- date: ([^;]+);", old)
    if table is None:
        return ""
    when = f" ({date.group(1)})" if date else ""
    return f"\n## Previous run{when}\n\n```\n{table.group(1)}```\n"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="cap BLAS/numba/torch threads")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--models", nargs="+", choices=("mlp", "cnn"), default=("mlp", "cnn"),
                        help="which models to time (default: both)")
    parser.add_argument("--out", default=None, help="also write the table as Markdown to this file")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run_training_benchmarks(tuple(range(args.seeds)), repeats=args.repeats, threads=args.threads,
                                   models=tuple(args.models))
    print(format_rows(rows))
    if args.out:
        write_markdown(rows, args.out, args.threads, time.perf_counter() - start)
        print(f"wrote {args.out}")
