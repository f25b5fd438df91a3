"""Modules: Module, Parameter, Linear, ReLU, Sequential, Dropout."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
import numpy as np
from .variable import *  # noqa: F401,F403
from .function import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .grad_mode import *  # noqa: F401,F403
from .kernels import *  # noqa: F401,F403
__all__ = ['AddBias', 'Dropout', 'Linear', 'Module', 'Parameter', 'ReLU', 'Sequential', 'USE_KERNELS', 'init_uniform', 'linear', 'manual_seed']


# --- section: manual_seed ---
_generator = np.random.default_rng(0)


def manual_seed(seed):
    """Seed the generator that Linear's initial weights and Dropout's masks are drawn from."""
    global _generator
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"manual_seed expects a non-negative int, got {seed!r}; "
                        "e.g. mygrad.manual_seed(0).")
    _generator = np.random.default_rng(seed)


def init_uniform(shape, bound, dtype=np.float32):
    """An array of this shape and dtype from U(-bound, bound), drawn with that generator."""
    return _generator.uniform(-bound, bound, size=shape).astype(dtype)


# --- section: Parameter ---
class Parameter(Variable):
    """A Variable that a Module registers as trainable; it requires grad by default."""

    def __init__(self, data, requires_grad=True):
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


# --- section: Module ---
class Module:
    """Base class of layers and models: registers the Parameters and Modules assigned to it."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        self.training = True

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__ and isinstance(value, (Parameter, Module)):
            raise AttributeError(
                f"cannot assign {type(value).__name__} {name!r} before Module.__init__() has "
                f"run. Call super().__init__() at the top of {type(self).__name__}.__init__.")
        if "_parameters" in self.__dict__:      # a name holds one kind of thing at a time
            if isinstance(value, Parameter):
                self._modules.pop(name, None)
                self._parameters[name] = value    # a reassigned name keeps its place
            elif isinstance(value, Module):
                self._parameters.pop(name, None)
                self._modules[name] = value
            else:
                self._parameters.pop(name, None)
                self._modules.pop(name, None)
        object.__setattr__(self, name, value)

    def named_parameters(self, prefix=""):
        """(dotted name, Parameter) for this module's parameters, then its children's; each once."""
        seen = set()
        for name, module in self.named_modules(prefix):
            for pname, p in module._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{name}.{pname}" if name else pname), p

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_modules(self, prefix=""):
        """(dotted name, Module) for this module ("") and every module inside it, in order."""
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        return iter(self._modules.values())

    def zero_grad(self):
        """Set every parameter's gradient to None (as PyTorch 2 does by default)."""
        for p in self.parameters():
            p.grad = None

    def train(self, mode=True):
        """Switch this module and every module inside it to training (or evaluation) mode."""
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self):
        return self.train(False)

    def state_dict(self):
        """A copy of every parameter's data, keyed by its dotted name."""
        return {name: p.data.copy() for name, p in self.named_parameters()}

    def load_state_dict(self, state):
        """Copy the arrays of a state_dict into this model's parameters, in place."""
        own = dict(self.named_parameters())
        if set(own) != set(state):
            raise KeyError(f"the state_dict has keys {sorted(state)} but the model has "
                           f"parameters {sorted(own)}: load it into the same architecture.")
        for name, p in own.items():
            if np.shape(state[name]) != p.shape:
                raise ValueError(f"{name}: the state_dict holds shape {np.shape(state[name])}, "
                                 f"the model's parameter has shape {p.shape}.")
            p.data[...] = state[name]

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} has no forward method: define "
                                  "forward(self, x) in the class.")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"  ({name}): " + repr(m).replace("\n", "\n  ")
                 for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ("\n" + "\n".join(lines) + "\n)" if lines else ")")


# --- section: Linear ---
USE_KERNELS = True
"""True: the bias's gradient is summed by your column_sums of chapter 07; False: by numpy."""


class AddBias(Function):
    """y = x + b for x (N, F) and b (F,); db = the column sums of grad_output."""

    @staticmethod
    def forward(ctx, x, b):
        return Variable(x.data + b.data)

    @staticmethod
    def backward(ctx, grad_output):
        if GradMode.enabled:                      # create_graph=True: recorded formulas
            return grad_output, grad_output.sum(axis=0)
        g = np.ascontiguousarray(grad_output.data)
        return grad_output, Variable(column_sums(g) if USE_KERNELS else column_sums_ref(g))


def linear(x, weight, bias=None):
    """x @ weight.T + bias for a batch x of shape (N, in_features)."""
    y = as_variable(x) @ weight.T
    if bias is None:
        return y
    return AddBias.apply(y, bias) if y.ndim == 2 else y + bias


class Linear(Module):
    """y = x @ weight.T + bias; weight (out_features, in_features), both U(-k, k), k = 1/sqrt(in)."""

    def __init__(self, in_features, out_features, bias=True, dtype=np.float32):
        super().__init__()
        for what, n in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"Linear needs a positive int {what}, got {n!r}; e.g. "
                                 "Linear(64, 128).")
        self.in_features, self.out_features = in_features, out_features
        k = 1 / np.sqrt(in_features)
        self.weight = Parameter(init_uniform((out_features, in_features), k, dtype))
        self.bias = Parameter(init_uniform((out_features,), k, dtype)) if bias else None

    def forward(self, x):
        return linear(x, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


# --- section: ReLU ---
class ReLU(Module):
    """relu as a layer: max(x, 0) elementwise."""

    def forward(self, x):
        return as_variable(x).relu()


# --- section: Sequential ---
class Sequential(Module):
    """Feeds its input through the given modules in order; they are named "0", "1", ..."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential takes Modules, but argument {i} is a "
                                f"{type(m).__name__}; e.g. Sequential(Linear(2, 3), ReLU()).")
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


# --- section: Dropout ---
class Dropout(Module):
    """In training, zero each element with probability p and scale the rest by 1/(1-p);
    in evaluation mode, the identity."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}.")
        self.p = p

    def forward(self, x):
        x = as_variable(x)
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0.0
        keep = _generator.random(x.shape) >= self.p
        return x * Variable((keep / (1 - self.p)).astype(x.dtype))

    def extra_repr(self):
        return f"p={self.p}"
