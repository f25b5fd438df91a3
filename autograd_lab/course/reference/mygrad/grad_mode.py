"""Grad modes (no_grad, enable_grad), detach, in-place operations and version counters."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
__all__ = ['bump_version', 'detach', 'enable_grad', 'no_grad', 'requires_grad_', 'save_for_backward', 'saved_tensors', 'set_grad_enabled', 'zero_']


# --- section: no_grad ---
class set_grad_enabled:
    """A context manager (and decorator) that switches recording on or off, and restores it."""

    def __init__(self, mode):
        self.mode = bool(mode)

    def __enter__(self):
        self.previous = GradMode.enabled
        GradMode.enabled = self.mode
        return self

    def __exit__(self, *exc_info):
        GradMode.enabled = self.previous
        return False                       # an error inside the block goes on up

    def __call__(self, fn):
        """@no_grad() above a def: each call of fn runs in this mode."""
        mode = self.mode

        def run_in_mode(*args, **kwargs):
            with set_grad_enabled(mode):   # a fresh switch per call: calls may nest
                return fn(*args, **kwargs)

        run_in_mode.__name__, run_in_mode.__doc__ = fn.__name__, fn.__doc__
        return run_in_mode


class no_grad(set_grad_enabled):
    """with no_grad(): ... computes without recording a graph."""

    def __init__(self):
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """with enable_grad(): ... records again, e.g. inside a no_grad block."""

    def __init__(self):
        super().__init__(True)


# --- section: detach ---
def _counter(v):
    """v's version counter: a one-element list that detach() shares with the new Variable."""
    counter = v.__dict__.get("_counter")
    if counter is None:
        counter = v._counter = [0]
    return counter


_ONLY_LEAVES = ("requires_grad_() can only change leaves: this Variable was computed by {}. Use "
                ".detach() to get a leaf with the same data.")


def detach(self):
    """A new leaf sharing this Variable's data (and its version counter), outside the graph."""
    out = Variable(self.data)
    out._counter = _counter(self)
    return out


def requires_grad_(self, requires_grad=True):
    """Set requires_grad of a leaf in place; returns the Variable itself."""
    if not self.is_leaf:
        raise RuntimeError(_ONLY_LEAVES.format(type(self.grad_fn).__name__))
    self.requires_grad = bool(requires_grad)
    return self


Variable.detach = detach
Variable.requires_grad_ = requires_grad_


# --- section: versions ---
def bump_version(v):
    """Count one more in-place change of v's data."""
    _counter(v)[0] += 1


Variable._version = property(lambda self: _counter(self)[0])


# --- section: saved versions ---
def save_for_backward(ctx, *tensors):
    """Keep the tensors and the version each one has now."""
    ctx._saved = tensors
    ctx._saved_versions = tuple(None if t is None else t._version for t in tensors)


def saved_tensors(ctx):
    """The saved tensors; raise if one was changed in place after it was saved."""
    if ctx._saved is None:
        raise RuntimeError(
            f"Trying to backward through {type(ctx).__name__} a second time, but its saved "
            "tensors were freed after the first backward. Pass retain_graph=True to the first "
            "backward() if you need to call it twice.")
    versions = ctx.__dict__.get("_saved_versions", ())
    for i, (t, version) in enumerate(zip(ctx._saved, versions)):
        if t is not None and t._version != version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: saved tensor {i} of {type(ctx).__name__} (shape {t.shape}) "
                f"is at version {t._version}; expected version {version} instead.")
    return tuple(ctx._saved)


Context.save_for_backward = save_for_backward
Context.saved_tensors = property(saved_tensors)


# --- section: in-place ---
def _inplace(update):
    def method(self, other):
        other = as_variable(other)
        _check_inplace(self, other)
        update(self.data, other.data)
        bump_version(self)
        return self
    return method


def _add(data, other):
    data += other


def _sub(data, other):
    data -= other


def _mul(data, other):
    data *= other


def _assign(self, key, value):
    value = as_variable(value)
    _check_inplace(self, value)
    self.data[key] = value.data
    bump_version(self)


def zero_(self):
    _check_inplace(self)
    self.data[...] = 0
    bump_version(self)
    return self


Variable.add_ = Variable.__iadd__ = _inplace(_add)
Variable.sub_ = Variable.__isub__ = _inplace(_sub)
Variable.mul_ = Variable.__imul__ = _inplace(_mul)
Variable.__setitem__ = _assign
Variable.zero_ = zero_


# --- section: inplace-rules ---
_LEAF_IN_PLACE = (
    "a leaf Variable that requires grad is being used in an in-place operation. Wrap the update "
    "in `with no_grad():` (as an optimizer step does).")
_NOT_RECORDED = (
    "mygrad does not record in-place operations: this one involves a Variable that requires "
    "grad. Write it out of place (y = y + 1) or under `with no_grad():`.")


def _check_inplace(self, other=None):
    """In-place changes are not recorded, so they are allowed only where nothing records."""
    if not GradMode.enabled:
        return
    if self.requires_grad and self.is_leaf:
        raise RuntimeError(_LEAF_IN_PLACE)
    if self.requires_grad or getattr(other, "requires_grad", False):
        raise RuntimeError(_NOT_RECORDED)
