"""PyTorch's tutorial "What is torch.nn really?", up to and including "Refactor using optim",
run on autograd_lab and on PyTorch in float64.

The tutorial downloads MNIST; here the same code runs on a small made-up data set of the same
shape (784 pixel values in [0, 1) and a label 0-9 per image), handed in as numpy arrays as the
tutorial's pickle gives them. Imports become attribute lookups on the module handed in as
``torch`` (``import torch.nn.functional as F`` → ``F = torch.nn.functional``), random starting
values come from one seeded stream shared by both runs (see ``_oracle.Seeded``). The tutorial's
three training loops take their mini-batches from ``_tutorials.batches`` (the same slices).
"""
from __future__ import annotations

import math

import numpy as np

from .._oracle import assert_same, needs_torch, run_both
from ._tutorials import batches

pytestmark = needs_torch


def fake_mnist(n_train: int = 320, n_valid: int = 64, seed: int = 0):
    rng = np.random.default_rng(seed)
    x_train = rng.random((n_train, 784))
    y_train = rng.integers(0, 10, n_train)
    x_valid = rng.random((n_valid, 784))
    y_valid = rng.integers(0, 10, n_valid)
    return x_train, y_train, x_valid, y_valid


def nn_tutorial(torch, data):
    out = {}
    x_train, y_train, x_valid, y_valid = data
    x_train, y_train, x_valid, y_valid = map(
        torch.tensor, (x_train, y_train, x_valid, y_valid)
    )
    n, c = x_train.shape
    out["data"] = [n, c, y_train.min(), y_train.max()]

    # ---- Neural net from scratch (without torch.nn)
    weights = torch.randn(784, 10) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 64  # batch size

    xb = x_train[0:bs]  # a mini-batch from x
    preds = model(xb)  # predictions
    out["preds"] = [preds[0], preds.shape]

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll

    yb = y_train[0:bs]
    out["first loss"] = loss_func(preds, yb)

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    out["first accuracy"] = accuracy(preds, yb)

    lr = 0.5  # learning rate
    epochs = 2  # how many epochs to train for

    for xb, yb in batches(x_train, y_train, bs, epochs):
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()

    out["from scratch"] = [loss_func(model(xb), yb), accuracy(model(xb), yb), weights, bias]

    # ---- Using torch.nn.functional
    F = torch.nn.functional

    loss_func = F.cross_entropy

    def model(xb):
        return xb @ weights + bias

    out["functional"] = [loss_func(model(xb), yb), accuracy(model(xb), yb)]

    # ---- Refactor using nn.Module
    nn = torch.nn

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    model = Mnist_Logistic()
    out["module before"] = loss_func(model(xb), yb)

    def fit():
        for xb, yb in batches(x_train, y_train, bs, epochs):
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
                model.zero_grad()

    fit()
    out["module after"] = loss_func(model(xb), yb)

    # ---- Refactor using nn.Linear
    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    model = Mnist_Logistic()
    out["linear before"] = loss_func(model(xb), yb)
    fit()
    out["linear after"] = loss_func(model(xb), yb)

    # ---- Refactor using torch.optim
    optim = torch.optim

    def get_model():
        model = Mnist_Logistic()
        return model, optim.SGD(model.parameters(), lr=lr)

    model, opt = get_model()
    out["optim before"] = loss_func(model(xb), yb)

    for xb, yb in batches(x_train, y_train, bs, epochs):
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        opt.step()
        opt.zero_grad()

    out["optim after"] = [loss_func(model(xb), yb), [p for p in model.parameters()]]
    return out


def test_what_is_torch_nn_really_up_to_optim():
    ours, theirs = run_both(nn_tutorial, fake_mnist())
    assert_same(ours, theirs)
