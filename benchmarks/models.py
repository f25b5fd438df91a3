"""The models and the training step the benchmarks share, each defined once.

- ``digits_mlp(nn)``: the digits MLP 64-128-10 (Linear, ReLU, Linear) in any library whose
  ``nn`` has PyTorch's names (autograd_lab, PyTorch, the course's ``mygrad``).
- ``mlp_with_weights`` / ``mlp_weights``: that MLP starting from given weights, and its weights
  back, in the layout ``benchmarks.peers`` hands every contender: ``[W1 (64, 128), b1,
  W2 (128, 10), b2]`` (``x @ W1 + b1``; the libraries' Linear keeps ``W1.T``).
- ``training_step``: one optimiser step as every benchmark takes it (clear the gradients, the
  loss and its backward, or a captured replay that does both, then the update).

The digits MLP that ``benchmarks.training`` trains, with its seeded initial weights, is the
library's own ``autograd_lab.train.make_model("mlp", seed)``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

FEATURES, HIDDEN, CLASSES = 64, 128, 10


def digits_mlp(nn: Any, **layer_options: Any) -> Any:
    """``nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))``; ``layer_options``
    (a dtype, a generator) go to both Linear layers."""
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN, **layer_options), nn.ReLU(),
                         nn.Linear(HIDDEN, CLASSES, **layer_options))


def mlp_with_weights(lib: str, weights: list[np.ndarray]) -> Any:
    """The float64 digits MLP of ``lib`` (``"autograd_lab"`` or ``"torch"``) holding ``weights``
    (peers' layout, copied in)."""
    if lib == "torch":
        import torch

        model = digits_mlp(torch.nn).double()
        with torch.no_grad():
            for layer, w, b in _layers(model, weights):
                layer.weight.copy_(torch.from_numpy(w.T.copy()))
                layer.bias.copy_(torch.from_numpy(b))
        return model
    if lib != "autograd_lab":
        raise ValueError(f"mlp_with_weights builds 'autograd_lab' or 'torch', not {lib!r}")
    from autograd_lab import nn

    model = digits_mlp(nn, dtype=np.float64)
    for layer, w, b in _layers(model, weights):
        layer.weight.data[...] = w.T
        layer.bias.data[...] = b
    return model


def mlp_weights(model: Any) -> list[np.ndarray]:
    """The model's weights as numpy arrays in peers' layout (views where the library allows)."""
    def array(t: Any) -> np.ndarray:
        return t.data if isinstance(t.data, np.ndarray) else t.detach().numpy()
    first, last = model[0], model[2]
    return [array(first.weight).T, array(first.bias), array(last.weight).T, array(last.bias)]


def _layers(model: Any, weights: list[np.ndarray]) -> tuple:
    return (model[0], weights[0], weights[1]), (model[2], weights[2], weights[3])


def training_step(loss_of: Callable[[Any, Any], Any], opt: Any,
                  captured: bool = False) -> Callable[[Any, Any], Any]:
    """``step(x, y) -> loss``: ``opt.zero_grad()``, the loss and its backward, ``opt.step()``.
    With ``captured=True`` (autograd_lab only) the loss is an ``al.capture`` step, captured on
    its first call and replayed after, forward and backward in one call: the same weights."""
    replay = None
    if captured:
        import autograd_lab as al
        replay = al.capture(loss_of)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        if replay is not None:
            loss = replay(x, y)
        else:
            loss = loss_of(x, y)
            loss.backward()
        opt.step()
        return loss
    return step
