"""A small training loop: ``fit`` a model, ``evaluate`` it, and the digits models of the course
(``make_model``, ``train_digits``). The ``autograd-lab train`` command is in ``train_command.py``.

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

import math
from typing import Any, Callable, Iterable, Sized

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
