"""Losses and activations as functions: cross_entropy, ..."""
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
__all__ = ['USE_KERNELS', 'cross_entropy', 'cross_entropy_ref', 'log_softmax', 'mse_loss', 'relu', 'softmax']


# --- section: activations ---
def relu(x):
    """max(x, 0) elementwise."""
    return as_variable(x).relu()


USE_KERNELS = True
"""True: softmax and cross_entropy run your kernels of chapter 07; False: their references."""


def softmax(x, dim=-1):
    """exp(x) / exp(x).sum(dim), computed stably: by the kernel softmax_rows for the rows of a
    2-d x while USE_KERNELS is True, by chapter 05's Softmax otherwise."""
    x = as_variable(x)
    if USE_KERNELS and x.ndim == 2 and dim in (-1, 1):
        return SoftmaxRows.apply(x)
    return Softmax.apply(x, dim)


def log_softmax(x, dim=-1):
    """log(softmax(x)) along dim, with the log-sum-exp trick (chapter 05's LogSoftmax)."""
    return LogSoftmax.apply(as_variable(x), dim)


# --- section: class_indices ---
def _class_indices(targets, logits):
    """targets as an int array of shape (N,), checked against logits of shape (N, C)."""
    t = np.asarray(getattr(targets, "data", targets))
    if logits.ndim != 2:
        raise ValueError(f"cross_entropy expects logits of shape (N, C), got {logits.shape}.")
    if t.shape != (logits.shape[0],):
        raise ValueError(f"cross_entropy expects targets of shape ({logits.shape[0]},), one "
                         f"class index per row of the logits, got shape {t.shape}.")
    if t.size and (np.any(t != np.round(t)) or t.min() < 0 or t.max() >= logits.shape[1]):
        raise ValueError(f"targets must be class indices in 0..{logits.shape[1] - 1}, got "
                         f"values from {t.min()} to {t.max()}.")
    return t.astype(np.intp)


# --- section: cross_entropy_ref ---
def cross_entropy_ref(logits, targets):
    """The mean over the batch of -log softmax(logits)[i, targets[i]], by Variable operations."""
    logits = as_variable(logits)
    t = _class_indices(targets, logits)
    log_p = log_softmax(logits, dim=-1)
    return -log_p[np.arange(len(t)), t].mean()


# --- section: cross_entropy ---
def cross_entropy(logits, targets):
    """The mean over the batch of -log softmax(logits)[i, targets[i]]: by the fused kernel
    softmax_cross_entropy, or by cross_entropy_ref when USE_KERNELS is False."""
    logits = as_variable(logits)
    t = _class_indices(targets, logits)
    if USE_KERNELS:
        return softmax_cross_entropy(logits, t)
    return cross_entropy_ref(logits, t)


# --- section: mse_loss ---
def mse_loss(input, target):
    """The mean of (input - target) ** 2 over all elements."""
    diff = as_variable(input) - as_variable(target)
    return (diff * diff).mean()


# --- section: nn.functional ---
def _attach_to_nn():
    """Make mygrad.nn.functional this module (as torch.nn.functional is)."""
    import sys
    package = globals().get("__package__")       # None when run in a notebook
    nn = sys.modules.get(f"{package}.nn") if package else None
    if nn is not None:
        nn.functional = sys.modules[__name__]


_attach_to_nn()
