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
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Sized

import numpy as np

from .grad_mode import no_grad
from .variable import Variable


class TrainingDiverged(FloatingPointError):
    """The loss became NaN or infinite (or passed ``max_loss``): the weights are no longer usable."""


def _check_loss(value: float, epoch: int, batch: int, first: float | None,
                max_loss: float | None) -> None:
    """Raise ``TrainingDiverged`` when a batch's loss is not finite or above ``max_loss``."""
    if math.isfinite(value) and (max_loss is None or value <= max_loss):
        return
    start = f" (the first batch's loss was {first:.4g})" if first is not None else ""
    what = f"became {value}" if not math.isfinite(value) else f"grew to {value:.4g}"
    raise TrainingDiverged(
        f"Training diverged: the loss {what} at epoch {epoch}, batch {batch}{start}, so the "
        "weights are no longer usable and training stopped. The learning rate is most likely "
        "too high: try one about 10 times smaller.")


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
    total_loss, seen = 0.0, 0
    correct: int | None = 0
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
        val_loader: Iterable | None = None, progress: bool = True, scheduler: Any = None,
        max_loss: float | None = None, capture: bool = False) -> dict[str, list[float]]:
    """Train for ``epochs`` passes over ``loader``; return the history per epoch.

    Each batch: forward, loss, ``optimizer.zero_grad()``, ``loss.backward()``, ``optimizer.step()``.
    ``capture=True`` runs forward, loss and backward as one ``al.capture`` step, captured once per
    batch shape and replayed: the same numbers with less Python per batch (see ``replay.py``).
    The history has ``loss`` and ``accuracy`` (training batches, averaged over the epoch), and
    ``val_loss``/``val_accuracy`` when ``val_loader`` is given. ``progress=False`` hides the bar;
    ``scheduler.step()`` (e.g. a StepLR) runs after each epoch.

    A batch whose loss is NaN or infinite -- or above ``max_loss``, when given -- stops the
    training with ``TrainingDiverged`` (the weights are beyond use by then)."""
    from tqdm.auto import tqdm  # picks the notebook widget inside Jupyter, text elsewhere

    if int(epochs) < 1:
        raise ValueError(f"epochs must be at least 1; got {epochs}")
    history: dict[str, list[float]] = {"loss": [], "accuracy": []}
    total = int(epochs) * len(loader) if isinstance(loader, Sized) else None
    bar = tqdm(total=total, disable=not progress, unit="batch", leave=True)
    first_loss: float | None = None
    step = None
    if capture:
        from .replay import capture as capture_step

        def forward(x: Any, y: Any) -> tuple:
            out = model(x)
            return loss_fn(out, y), out

        step = capture_step(forward)
    try:
        for epoch in range(1, int(epochs) + 1):
            bar.set_description(f"epoch {epoch}/{epochs}")
            model.train()
            total_loss, seen = 0.0, 0
            correct: int | None = 0
            for batch, (x, y) in enumerate(loader, 1):
                if step is not None:  # forward and backward in one replayed step
                    optimizer.zero_grad()
                    loss, out = step(x, y)
                else:
                    out = model(x)
                    loss = loss_fn(out, y)
                value = float(loss.item())
                _check_loss(value, epoch, batch, first_loss, max_loss)
                first_loss = value if first_loss is None else first_loss
                if step is None:
                    optimizer.zero_grad()
                    loss.backward()
                optimizer.step()
                n = len(x)
                total_loss += value * n
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
# SGD (momentum 0.9) learning rates and batch sizes. The CNN takes batches of 32 and He
# initialisation (make_model) so that one epoch already reaches about 89 % on the test split
# (benchmarks/training.py measures it); batches of 64 and PyTorch's default initialisation
# left it at about 24 % after one epoch.
DEFAULT_LR = {"mlp": 0.2, "cnn": 0.05}
DEFAULT_BATCH = {"mlp": 64, "cnn": 32}
# cross-entropy over 10 classes starts near ln 10 = 2.3; a batch loss past this means divergence
MAX_LOSS = 100.0


def make_model(name: str, seed: int = 0) -> Any:
    """The two digits models of the course: ``mlp`` (64-128-10) and ``cnn`` (two conv-relu-pool
    blocks and a linear layer, for 8×8 images).

    The CNN's weights get He initialisation, N(0, 2 / fan_in), and zero biases, which suits
    ReLU layers and lets it learn within its first epoch."""
    from . import nn
    from .factories import Generator

    g = Generator(seed)
    if name == "mlp":
        return nn.Sequential(nn.Linear(64, 128, generator=g), nn.ReLU(), nn.Linear(128, 10, generator=g))
    if name == "cnn":
        model = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, generator=g), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, generator=g), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 2 * 2, 10, generator=g))
        for layer in model:
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                fan_in = int(np.prod(layer.weight.shape[1:]))
                nn.init.normal_(layer.weight, 0.0, math.sqrt(2.0 / fan_in), generator=g)
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)
        return model
    raise ValueError(f"unknown model {name!r}; choose 'mlp' or 'cnn'")


def train_digits(model_name: str = "mlp", epochs: int = 20, seed: int = 0, batch_size: int | None = None,
                 lr: float | None = None, progress: bool = True,
                 capture: bool = False) -> tuple[Any, dict[str, list[float]], float]:
    """Train one of ``make_model``'s networks on the digits with SGD (momentum 0.9); return
    ``(model, history, test_accuracy)``; the history's val_* entries are on the test split.
    ``batch_size`` and ``lr`` default to ``DEFAULT_BATCH`` and ``DEFAULT_LR`` for the model;
    ``capture=True`` replays a captured step (``fit``'s option; the same numbers)."""
    from . import nn
    from .data import DataLoader, TensorDataset, load_digits
    from .optim import SGD

    x_train, y_train, x_test, y_test = load_digits(as_images=model_name == "cnn")
    batch_size = batch_size if batch_size is not None else DEFAULT_BATCH[model_name]
    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True, seed=seed)
    test_loader = DataLoader(TensorDataset(x_test, y_test), batch_size=256)
    model = make_model(model_name, seed)
    optimizer = SGD(model.parameters(), lr=lr if lr is not None else DEFAULT_LR[model_name], momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    history = fit(model, train_loader, loss_fn, optimizer, epochs, val_loader=test_loader, progress=progress,
                  max_loss=MAX_LOSS, capture=capture)
    _, test_acc = evaluate(model, test_loader, loss_fn)
    assert test_acc is not None  # the digits models classify
    return model, history, float(test_acc)


# ---- argument types: a bad value is refused before any training, with argparse's message -----------
def _whole_number(minimum: int, example: int, too_small: str):
    """An argparse type for a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number such as {example}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{too_small}, got {value}")
        return value
    return parse


positive_int = _whole_number(1, 64, "must be at least 1")
seed_int = _whole_number(0, 0, "must be 0 or more")


def learning_rate(text: str) -> float:
    """argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.1, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number above 0 (e.g. 0.1), got {text}")
    return value


def image_path(text: str) -> Path:
    """argparse type: a file to write in an existing, writable folder, with a picture suffix."""
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(text).expanduser()
    folder = path.parent
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name, e.g. "
                                         f"{path / 'training.png'}")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"the folder {folder} does not exist; create it first "
                                         "or write somewhere else")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write into the folder {folder} (no permission); "
                                         "write somewhere else")
    formats = FigureCanvasBase.get_supported_filetypes()
    if path.suffix and path.suffix[1:].lower() not in formats:
        raise argparse.ArgumentTypeError(f"cannot write a {path.suffix} picture; use one of "
                                         + ", ".join("." + f for f in sorted(formats)))
    return path


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``train`` on an argparse sub-parser collection; the command runs ``run_train(args)``."""
    p = subparsers.add_parser("train", help="train an MLP or a CNN on the bundled digits",
                              description="Train a small network on scikit-learn's 8x8 digits with a progress "
                                          "bar, print the test accuracy and save loss/accuracy curves as a PNG.")
    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="network to train (default: mlp)")
    p.add_argument("--epochs", type=positive_int, default=20,
                   help="passes over the training set, at least 1 (default: 20)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed for weights and shuffling (default: 0)")
    p.add_argument("--lr", type=learning_rate, default=None,
                   help=f"learning rate, above 0 (default: {DEFAULT_LR['mlp']:g} for mlp, "
                        f"{DEFAULT_LR['cnn']:g} for cnn)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help=f"mini-batch size, at least 1 (default: {DEFAULT_BATCH['mlp']} for mlp, "
                        f"{DEFAULT_BATCH['cnn']} for cnn)")
    p.add_argument("--out", type=image_path, default="training.png",
                   help="where to write the curves, in an existing folder (default: training.png)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--capture", action="store_true",
                   help="capture the training step once and replay it (al.capture): the same "
                        "numbers, less Python per batch")
    p.set_defaults(func=run_train)
    return p


add_train = add_train_parser  # the name cli.COMMANDS expects


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def run_train(args: argparse.Namespace) -> int:
    """Carry out a parsed ``train`` command; returns the exit status."""
    import matplotlib

    matplotlib.use("Agg")  # headless: write the PNG, open no window
    from matplotlib.ticker import FixedLocator

    from .viz import plot_history

    lr = args.lr if args.lr is not None else DEFAULT_LR[args.model]
    start = time.perf_counter()
    try:
        _, history, test_acc = train_digits(args.model, args.epochs, args.seed, args.batch_size, lr,
                                            progress=not args.no_progress, capture=args.capture)
    except TrainingDiverged as err:
        print(f"autograd-lab train: error: {err} For example: --lr {lr / 10:g}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    print(f"{args.model}: test accuracy {test_acc:.2%} after {_plural(args.epochs, 'epoch')} "
          f"({seconds:.1f} s)")
    fig = plot_history({"train loss": history["loss"], "test loss": history["val_loss"],
                        "train accuracy": history["accuracy"], "test accuracy": history["val_accuracy"]})
    for ax in fig.axes:  # whole epochs only, and room around a single point
        ax.set_xlim(0.5, args.epochs + 0.5)
        if args.epochs <= 10:
            ax.xaxis.set_major_locator(FixedLocator(range(1, args.epochs + 1)))
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
