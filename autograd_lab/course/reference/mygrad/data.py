"""Batches and a training loop."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .grad_mode import *  # noqa: F401,F403
from .kernels import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .optim import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
__all__ = ['DataLoader', 'batches', 'evaluate', 'fit', 'shift_pixels', 'train_step']


# --- section: batches ---
def batches(x, y, batch_size, shuffle=False, seed=None, drop_last=False):
    """Yield (x[idx], y[idx]) for consecutive pieces idx of a (shuffled) order of the samples.

    seed may be an int, None or a numpy Generator (np.random.default_rng returns it as is)."""
    n = len(x)
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start:start + batch_size]
        yield x[idx], y[idx]


# --- section: DataLoader ---
class DataLoader:
    """Mini-batches (Variable of inputs, int array of labels); a new shuffle every epoch."""

    def __init__(self, X, y, batch_size=64, shuffle=True, seed=0, drop_last=False,
                 transform=None):
        X, y = np.asarray(X), np.asarray(y)
        if len(X) != len(y):
            raise ValueError(f"X and y must hold the same number of samples, got {len(X)} "
                             f"and {len(y)}.")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
        self.X, self.y = X, y
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last
        self.transform = transform               # None, or a function of a batch's inputs
        self.rng = np.random.default_rng(seed)   # one generator: each epoch a new order

    def __iter__(self):
        for xb, yb in batches(self.X, self.y, self.batch_size, self.shuffle, self.rng,
                              self.drop_last):
            yield Variable(xb if self.transform is None else self.transform(xb)), yb

    def __len__(self):
        n, b = len(self.X), self.batch_size
        return n // b if self.drop_last else -(-n // b)


# --- section: train_step ---
def train_step(model, loss_fn, optimizer, x, y):
    """One step of training on the batch (x, y); returns the batch's loss as a float."""
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


# --- section: fit ---
def evaluate(model, X, y, loss_fn=cross_entropy, batch_size=512):
    """(mean loss, accuracy) of a classifier on (X, y), in eval mode and without a graph."""
    was_training = model.training
    model.eval()
    total, correct = 0.0, 0
    with no_grad():
        for start in range(0, len(X), batch_size):
            xb, yb = X[start:start + batch_size], y[start:start + batch_size]
            out = model(Variable(xb))
            total += loss_fn(out, yb).item() * len(yb)
            correct += int((out.data.argmax(axis=1) == yb).sum())
    model.train(was_training)
    return total / len(X), correct / len(X)


def _summary(history, epoch, epochs):
    """One line on the epoch just finished."""
    line = (f"epoch {epoch:2d}/{epochs}: train loss {history['loss'][-1]:.4f}, "
            f"accuracy {history['accuracy'][-1]:.3f}")
    if history["test_loss"]:
        line += (f"; test loss {history['test_loss'][-1]:.4f}, "
                 f"accuracy {history['test_accuracy'][-1]:.3f}")
    return line


def fit(model, loader, optimizer, epochs, loss_fn=cross_entropy, test=None, log_every=0,
        lr_schedule=None):
    """Train for a number of epochs; return the history of the losses and accuracies.

    history["loss"] holds each epoch's mean batch loss; "accuracy" the training accuracy after
    the epoch; with test=(X, y) also "test_loss" and "test_accuracy". log_every=k prints one
    line every k epochs. lr_schedule(epoch), epochs counted from 0, sets optimizer.lr before
    each epoch."""
    history = {"loss": [], "accuracy": [], "test_loss": [], "test_accuracy": []}
    for epoch in range(epochs):
        if lr_schedule is not None:
            optimizer.lr = lr_schedule(epoch)
        model.train()
        losses = [train_step(model, loss_fn, optimizer, xb, yb) for xb, yb in loader]
        history["loss"].append(float(np.mean(losses)))
        history["accuracy"].append(evaluate(model, loader.X, loader.y, loss_fn)[1])
        if test is not None:
            test_loss, test_acc = evaluate(model, test[0], test[1], loss_fn)
            history["test_loss"].append(test_loss)
            history["test_accuracy"].append(test_acc)
        if log_every and ((epoch + 1) % log_every == 0 or epoch + 1 == epochs):
            print(_summary(history, epoch + 1, epochs))
    return history


# --- section: shift_pixels ---
def shift_pixels(images, rng, fraction=0.25):
    """A copy of images (N, H, W) in which each image, with probability fraction, moves by one
    pixel (dy, dx each from -1, 0, 1), zeros moving in."""
    n, h, w = images.shape
    out = images.copy()
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    chosen = np.flatnonzero(rng.random(n) < fraction)
    for i, (dy, dx) in zip(chosen, rng.integers(-1, 2, size=(len(chosen), 2))):
        out[i] = padded[i, 1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
    return out
