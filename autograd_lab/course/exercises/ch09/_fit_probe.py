"""The stage exercise ch09-fit runs the learner's ``fit`` and ``evaluate`` on, in the kernel: a
probe model that remembers its mode and whether a graph was recorded at each call, a loss that
needs no gradient, an optimizer that records its steps, and a loader over fixed batches."""
from __future__ import annotations

from typing import Any

import numpy as np


def log_softmax_rows(x: np.ndarray) -> np.ndarray:
    """log(softmax(x)) along the last axis, in numpy."""
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class Probe:
    """A model that remembers, for each call, its mode, whether a graph was recorded and how
    many samples came; its logits are x @ w with a w that requires grad."""

    def __init__(self, Variable: type[Any], w: np.ndarray) -> None:
        self.w = Variable(w.copy(), requires_grad=True)
        self.training = True
        self.calls: list[tuple[bool, bool, int]] = []

    def __call__(self, x: Any) -> Any:
        out = x @ self.w
        self.calls.append((bool(self.training), getattr(out, "grad_fn", None) is not None,
                           len(x.data)))
        return out

    def train(self, mode: bool = True) -> Probe:
        self.training = bool(mode)
        return self

    def eval(self) -> Probe:
        return self.train(False)

    def parameters(self) -> list[Any]:
        return [self.w]


class ProbeLoss:
    def __init__(self, value: float) -> None:
        self.value = value

    def item(self) -> float:
        return self.value

    def backward(self) -> None:
        pass


def probe_loss(out: Any, y: Any) -> ProbeLoss:
    """The mean cross-entropy of the batch, computed in numpy (the probe needs no gradient)."""
    rows = np.arange(len(y))
    return ProbeLoss(float(-log_softmax_rows(np.asarray(out.data))[rows, np.asarray(y)].mean()))


class ProbeOptimizer:
    """Records the learning rate and the model's mode at each step; shrinks w a little, by lr."""

    def __init__(self, model: Probe, lr: float) -> None:
        self.model, self.lr = model, lr
        self.steps: list[tuple[Any, bool]] = []

    def zero_grad(self) -> None:
        pass

    def step(self) -> None:
        self.steps.append((self.lr, bool(self.model.training)))
        self.model.w.data[...] = self.model.w.data * (1.0 - self.lr)


class Batches:
    """A loader over fixed batches in order: X, y and (Variable of inputs, labels) pairs."""

    def __init__(self, Variable: type[Any], X: np.ndarray, y: np.ndarray, batch_size: int) -> None:
        self.Variable, self.X, self.y, self.batch_size = Variable, X, y, batch_size

    def __iter__(self) -> Any:
        for start in range(0, len(self.X), self.batch_size):
            yield (self.Variable(self.X[start:start + self.batch_size]),
                   self.y[start:start + self.batch_size])

    def __len__(self) -> int:
        return -(-len(self.X) // self.batch_size)
