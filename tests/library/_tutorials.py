"""The parts that PyTorch's tutorials repeat from one program to the next, for the tests that
run those programs on autograd_lab and on PyTorch (``test_tutorials_*.py``).

Every helper takes the module handed to a program (``torch``: ``Seeded(al)`` or
``Seeded(torch)``) and makes the same calls the tutorial's text makes, in the same order, so a
program that uses them still runs the tutorial's code; each program keeps the lines in which
it differs from the others (its model, its loss, how it updates the weights).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator


def sine(torch, **kwargs):
    """The tutorials' data: 2000 points x in [-pi, pi] and y = sin(x) (kwargs: dtype, device)."""
    x = torch.linspace(-math.pi, math.pi, 2000, **kwargs)
    return x, torch.sin(x)


def train(steps: int, loss_of: Callable, update: Callable, every: int = 100) -> list[float]:
    """The tutorials' loop: ``steps`` times ``loss = loss_of()``, keep ``loss.item()`` when
    ``t % every == every - 1`` (where the tutorial prints it), then ``update(loss)`` (the
    program's backward pass and weight update). Returns the losses kept."""
    losses = []
    for t in range(steps):
        loss = loss_of()
        if t % every == every - 1:
            losses.append(loss.item())
        update(loss)
    return losses


def by_hand(torch, params, learning_rate: float) -> Callable:
    """The update of the tutorials that step without an optimizer: ``loss.backward()``, then
    under ``no_grad`` every parameter ``-= learning_rate * grad``, then every ``grad = None``."""
    def update(loss):
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= learning_rate * p.grad
            for p in params:
                p.grad = None
    return update


def with_optimizer(optimizer) -> Callable:
    """The update of the tutorials that use ``torch.optim``: zero_grad, backward, step."""
    def update(loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return update


def polynomial_linear(torch):
    """polynomial_nn's and polynomial_optim's set-up: the features (x, x^2, x^3) of ``sine``, a
    ``Sequential(Linear(3, 1), Flatten(0, 1))`` and ``MSELoss(reduction='sum')``."""
    x, y = sine(torch)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    return xx, y, model, torch.nn.MSELoss(reduction='sum')


def linear_params(model) -> list[float]:
    """The fitted polynomial of ``polynomial_linear``'s model: [bias, w1, w2, w3]."""
    linear_layer = model[0]
    return [linear_layer.bias.item(), linear_layer.weight[:, 0].item(),
            linear_layer.weight[:, 1].item(), linear_layer.weight[:, 2].item()]


def batches(x, y, bs: int, epochs: int) -> Iterator:
    """The mini-batches of "What is torch.nn really?": ``epochs`` passes over (x, y) in slices of
    ``bs`` rows (the last one shorter)."""
    n = x.shape[0]
    for _epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            yield x[start_i:end_i], y[start_i:end_i]


def scalar_parameters(torch, module, names: str) -> None:
    """``module.<name> = torch.nn.Parameter(torch.randn(()))`` for each letter of ``names``, in
    order (Polynomial3's and DynamicNet's constructors)."""
    for name in names:
        setattr(module, name, torch.nn.Parameter(torch.randn(())))


def cubic(m, x):
    """Polynomial3's forward: m.a + m.b x + m.c x^2 + m.d x^3."""
    return m.a + m.b * x + m.c * x ** 2 + m.d * x ** 3


def sgd_on_sine(torch, model, steps: int, every: int = 100, **sgd) -> list[float]:
    """polynomial_module's and dynamic_net's training: ``model`` fitted to ``sine`` with
    ``MSELoss(reduction='sum')`` and ``torch.optim.SGD(model.parameters(), **sgd)``."""
    x, y = sine(torch)
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), **sgd)
    return train(steps, lambda: criterion(model(x), y), with_optimizer(optimizer), every)
