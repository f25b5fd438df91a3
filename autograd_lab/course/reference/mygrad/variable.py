"""Variable: a numpy array plus the bookkeeping autograd needs."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
__all__ = ['Variable']


# --- section: Variable ---
class Variable:
    """A numpy array plus what autograd needs: grad, requires_grad, grad_fn."""

    def __init__(self, data, requires_grad=False):
        if isinstance(data, Variable):
            data = data.data
        data = np.asarray(data)
        if data.dtype.kind not in "fc":          # ints and bools become float64
            data = data.astype(np.float64)
        self.data = data
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self.grad_fn = None

    @property
    def is_leaf(self):
        """True when no recorded operation made this Variable."""
        return self.grad_fn is None

    @property
    def shape(self):
        return self.data.shape

    @property
    def ndim(self):
        """The number of axes: 0 for a single number, 2 for a matrix."""
        return self.data.ndim

    @property
    def dtype(self):
        return self.data.dtype

    def numpy(self):
        """The data as a numpy array (the same array, not a copy)."""
        return self.data

    def item(self):
        """The single number a one-element Variable holds, as a Python float."""
        return self.data.item()

    def __len__(self):
        """The length of the first axis, as len() of a list of rows."""
        return len(self.data)

    def __repr__(self):
        body = np.array2string(self.data, separator=", ", prefix="Variable(")
        if self.grad_fn is not None:
            return f"Variable({body}, grad_fn=<{type(self.grad_fn).__name__}>)"
        if self.requires_grad:
            return f"Variable({body}, requires_grad=True)"
        return f"Variable({body})"
