"""A small training loop: ``fit`` a model, ``evaluate`` it, and the ``autograd-lab train`` command.

>>> import autograd_lab.nn as nn
>>> from autograd_lab.data import load_digits, TensorDataset, DataLoader
>>> from autograd_lab.optim import SGD
>>> x_train, y_train, x_test, y_test = load_digits()
>>> loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True, seed=0)
>>> model = nn.Sequential(nn.Linear(64, 128, seed=0), nn.ReLU(), nn.Linear(128, 10, seed=1))
>>> history = fit(model, loader, nn.CrossEntropyLoss(), SGD(model.parameters(), lr=0.1, momentum=0.9),
...               epochs=2, progress=False)
>>> sorted(history)
['accuracy', 'loss']
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .grad_mode import no_grad
from .variable import Variable


def _correct(output: Variable, target: Variable) -> int | None:
    """How many rows of ``output`` have their largest score at the target class (None if the
    targets are not class labels, e.g. for a regression)."""
    t = target.data
    if output.ndim != 2 or t.ndim != 1 or t.dtype.kind not in "iu":
        return None
    return int(np.count_nonzero(output.data.argmax(axis=1) == t))


def evaluate(model: Any, loader: Iterable, loss_fn: Callable) -> tuple[float, float | None]:
    """Mean loss and accuracy of ``model`` over ``loader`` (eval mode, no graph recorded).

    Accuracy is None when the targets are not integer class labels."""
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    try:
        with no_grad():
            for x, y in loader:
                out = model(x)
                n = len(x)
                total_loss += float(loss_fn(out, y).item()) * n
                c = _correct(out, y)
                correct = None if c is None or correct is None else correct + c
                seen += n
    finally:
        if was_training:
            model.train()
    if seen == 0:
        raise ValueError("evaluate got an empty loader; it needs at least one batch.")
    return total_loss / seen, (None if correct is None else correct / seen)


def fit(model: Any, loader: Iterable, loss_fn: Callable, optimizer: Any, epochs: int = 1,
        val_loader: Iterable | None = None, progress: bool = True, scheduler: Any = None) -> dict[str, list[float]]:
    """Train for ``epochs`` passes over ``loader``; return the history per epoch.

    Each batch: forward, loss, ``optimizer.zero_grad()``, ``loss.backward()``, ``optimizer.step()``.
    The history has ``loss`` and ``accuracy`` (training batches, averaged over the epoch), and
    ``val_loss``/``val_accuracy`` when ``val_loader`` is given. ``progress=False`` hides the bar;
    ``scheduler.step()`` (e.g. a StepLR) runs after each epoch."""
    from tqdm.auto import tqdm  # picks the notebook widget inside Jupyter, text elsewhere

    if int(epochs) < 1:
        raise ValueError(f"epochs must be at least 1; got {epochs}")
    history: dict[str, list[float]] = {"loss": [], "accuracy": []}
    total = int(epochs) * len(loader) if hasattr(loader, "__len__") else None
    bar = tqdm(total=total, disable=not progress, unit="batch", leave=True)
    try:
        for epoch in range(1, int(epochs) + 1):
            bar.set_description(f"epoch {epoch}/{epochs}")
            model.train()
            total_loss, correct, seen = 0.0, 0, 0
            for x, y in loader:
                out = model(x)
                loss = loss_fn(out, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                n = len(x)
                total_loss += float(loss.item()) * n
                c = _correct(out, y)
                correct = None if c is None or correct is None else correct + c
                seen += n
                bar.update(1)
            history["loss"].append(total_loss / seen)
            history["accuracy"].append(float("nan") if correct is None else correct / seen)
            stats = {"loss": f"{history['loss'][-1]:.4f}"}
            if correct is not None:
                stats["acc"] = f"{history['accuracy'][-1]:.3f}"
            if val_loader is not None:
                val_loss, val_acc = evaluate(model, val_loader, loss_fn)
                history.setdefault("val_loss", []).append(val_loss)
                history.setdefault("val_accuracy", []).append(float("nan") if val_acc is None else val_acc)
                stats["val_loss"] = f"{val_loss:.4f}"
                if val_acc is not None:
                    stats["val_acc"] = f"{val_acc:.3f}"
            bar.set_postfix(stats)
            if scheduler is not None:
                scheduler.step()
    finally:
        bar.close()
    if all(np.isnan(history["accuracy"])):
        del history["accuracy"]
        history.pop("val_accuracy", None)
    return history


# ---- the `autograd-lab train` command ---------------------------------------------------------------
# SGD learning rates (momentum 0.9, batch 64) chosen on a validation part of the training split
DEFAULT_LR = {"mlp": 0.2, "cnn": 0.05}


def make_model(name: str, seed: int = 0) -> Any:
    """The two digits models of the course: ``mlp`` (64-128-10) and ``cnn`` (two conv-relu-pool
    blocks and a linear layer, for 8×8 images)."""
    from . import nn
    from .factories import Generator

    g = Generator(seed)
    if name == "mlp":
        return nn.Sequential(nn.Linear(64, 128, generator=g), nn.ReLU(), nn.Linear(128, 10, generator=g))
    if name == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, generator=g), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, generator=g), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 2 * 2, 10, generator=g))
    raise ValueError(f"unknown model {name!r}; choose 'mlp' or 'cnn'")


def train_digits(model_name: str = "mlp", epochs: int = 20, seed: int = 0, batch_size: int = 64,
                 lr: float | None = None, progress: bool = True) -> tuple[Any, dict[str, list[float]], float]:
    """Train one of ``make_model``'s networks on the digits with SGD (momentum 0.9); return
    ``(model, history, test_accuracy)``; the history's val_* entries are on the test split."""
    from . import nn
    from .data import DataLoader, TensorDataset, load_digits
    from .optim import SGD

    x_train, y_train, x_test, y_test = load_digits(as_images=model_name == "cnn")
    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True, seed=seed)
    test_loader = DataLoader(TensorDataset(x_test, y_test), batch_size=256)
    model = make_model(model_name, seed)
    optimizer = SGD(model.parameters(), lr=lr if lr is not None else DEFAULT_LR[model_name], momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    history = fit(model, train_loader, loss_fn, optimizer, epochs, val_loader=test_loader, progress=progress)
    _, test_acc = evaluate(model, test_loader, loss_fn)
    return model, history, float(test_acc)


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``train`` on an argparse sub-parser collection; the command runs ``run_train(args)``."""
    p = subparsers.add_parser("train", help="train an MLP or a CNN on the bundled digits",
                              description="Train a small network on scikit-learn's 8x8 digits with a progress "
                                          "bar, print the test accuracy and save loss/accuracy curves as a PNG.")
    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="network to train (default: mlp)")
    p.add_argument("--epochs", type=int, default=20, help="passes over the training set (default: 20)")
    p.add_argument("--seed", type=int, default=0, help="seed for weights and shuffling (default: 0)")
    p.add_argument("--lr", type=float, default=None, help="SGD learning rate (default: 0.2 for mlp, 0.05 for cnn)")
    p.add_argument("--batch-size", type=int, default=64, help="mini-batch size (default: 64)")
    p.add_argument("--out", default="training.png", help="where to write the curves (default: training.png)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run_train)
    return p


add_train = add_train_parser  # the name cli.COMMANDS expects


def run_train(args: argparse.Namespace) -> int:
    """Carry out a parsed ``train`` command; returns the exit status."""
    if args.epochs < 1:
        raise SystemExit(f"autograd-lab train: --epochs must be at least 1 (got {args.epochs})")
    import matplotlib

    matplotlib.use("Agg")  # headless: write the PNG, open no window
    from .viz import plot_history

    start = time.perf_counter()
    _, history, test_acc = train_digits(args.model, args.epochs, args.seed, args.batch_size, args.lr,
                                        progress=not args.no_progress)
    seconds = time.perf_counter() - start
    print(f"{args.model}: test accuracy {test_acc:.2%} after {args.epochs} epochs ({seconds:.1f} s)")
    fig = plot_history({"train loss": history["loss"], "test loss": history["val_loss"],
                        "train accuracy": history["accuracy"], "test accuracy": history["val_accuracy"]})
    fig.suptitle(f"digits, {args.model}: test accuracy {test_acc:.2%}", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"curves written to {args.out}")
    return 0


def train_main(argv: Sequence[str] | None = None) -> int:
    """Run ``autograd-lab train`` on its own: ``train_main(['--model', 'cnn', '--epochs', '5'])``."""
    parser = argparse.ArgumentParser(prog="autograd-lab")
    add_train_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["train", *(argv if argv is not None else [])])
    return args.func(args)
