"""The ``autograd-lab train`` command: train one of the digits models (``train.train_digits``),
print the test accuracy and write the loss and accuracy curves as a picture.

A bad value is refused before any training, with argparse's message.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from .train import DEFAULT_BATCH, DEFAULT_LR, TrainingDiverged, train_digits


# ---- argument types -----------------------------------------------------------------------------
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
