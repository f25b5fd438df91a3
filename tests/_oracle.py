"""PyTorch as an oracle when it is installed: tests that use it skip cleanly otherwise.

One rule for every test: torch counts as available only if ``import torch`` succeeds. A torch that
is installed but broken (a missing shared library, an ABI mismatch) is treated as absent, and
``sys.modules`` is told so, so that an ``import torch`` elsewhere fails cleanly too
(``tests/conftest.py`` imports this module first). Tests use ``@needs_torch`` or
``torch = require_torch()``; both skip with ``TORCH_SKIP_REASON``.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

TORCH_ERROR: str | None = None


class _NoTorch:
    """A meta-path finder that makes every ``import torch`` fail with why it is broken."""

    def __init__(self, why: str) -> None:
        self.why = why

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"torch is installed but does not import ({self.why})", name=name)
        return None


# PyTorch's OpenMP threads wait passively for work, as the library's kernels' threads do
# (autograd_lab.kernels._jit._start_threads): spinning, they took the core that the other test
# worker needed, and tests of small tensors ran ten times longer. OpenMP reads the variable once,
# when torch loads it; it is set for that moment only, and a setting of one's own wins.
_PASSIVE = "OMP_WAIT_POLICY" not in os.environ
try:  # torch is optional; importing it is slow, so do it once here
    if _PASSIVE:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    import torch  # type: ignore
except Exception as exc:  # pragma: no cover - depends on the machine
    torch = None
    TORCH_ERROR = f"{type(exc).__name__}: {exc}"
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[name]
    if not isinstance(exc, ModuleNotFoundError) or exc.name != "torch":
        # installed but broken: a later `import torch` raises ImportError (importorskip skips)
        # through a finder, not a None in sys.modules, which libraries that look for torch there
        # (scipy's array-API helpers, used by scikit-learn) would take for the module itself
        sys.meta_path.insert(0, _NoTorch(f"{type(exc).__name__}: {exc}"))
finally:
    if _PASSIVE:
        os.environ.pop("OMP_WAIT_POLICY", None)

_WHY = TORCH_ERROR.splitlines()[0] if TORCH_ERROR else "not installed"
REASON = (f"PyTorch is not available ({_WHY}); the comparison with it needs "
          "pip install torch==2.13.0")
TORCH_SKIP_REASON = REASON  # the one wording every skip uses

needs_torch = pytest.mark.skipif(torch is None, reason=REASON)


def require_torch():
    """torch, or skip the calling test (the same rule as ``needs_torch``)."""
    if torch is None:
        pytest.skip(REASON)
    return torch


def to_torch(a: np.ndarray, requires_grad: bool = True):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ---------------------------------------------------------------- running one program on both
class Seeded:
    """A stand-in for the ``torch`` (or ``al``) module handed to a ported tutorial: everything is
    the real module's, except that random numbers come from one seeded numpy stream, so the same
    program run on PyTorch and on autograd_lab starts from the same values. ``nn.Linear`` and
    ``nn.init.uniform_`` draw from that stream too, in float64."""

    def __init__(self, module, seed: int = 0) -> None:
        self._module = module
        self._rng = np.random.default_rng(seed)
        self.nn = _SeededNN(module.nn, self)

    def __getattr__(self, name):
        return getattr(self._module, name)

    def _values(self, shape, low=None, high=None) -> np.ndarray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if low is None:
            return self._rng.standard_normal(shape)
        return self._rng.uniform(low, high, shape)

    def _make(self, values: np.ndarray, dtype=None, requires_grad: bool = False):
        m = self._module
        return m.tensor(values, dtype=m.float64 if dtype is None else dtype, requires_grad=requires_grad)

    def randn(self, *shape, dtype=None, requires_grad=False, device=None):
        return self._make(self._values(shape), dtype, requires_grad)

    def rand(self, *shape, dtype=None, requires_grad=False, device=None):
        return self._make(self._values(shape, 0.0, 1.0), dtype, requires_grad)


class _SeededNN:
    def __init__(self, nn, owner: Seeded) -> None:
        self._nn, self._owner = nn, owner
        self.init = _SeededInit(nn.init, owner)

    def __getattr__(self, name):
        return getattr(self._nn, name)

    def Linear(self, in_features, out_features, bias=True, **kwargs):  # noqa: N802 (PyTorch's name)
        o = self._owner
        kwargs.setdefault("dtype", o._module.float64)
        layer = self._nn.Linear(in_features, out_features, bias, **kwargs)
        bound = 1 / np.sqrt(in_features)
        with o._module.no_grad():
            layer.weight.copy_(o._make(o._values(tuple(layer.weight.shape), -bound, bound)))
            if layer.bias is not None:
                layer.bias.copy_(o._make(o._values(tuple(layer.bias.shape), -bound, bound)))
        return layer


class _SeededInit:
    def __init__(self, init, owner: Seeded) -> None:
        self._init, self._owner = init, owner

    def __getattr__(self, name):
        return getattr(self._init, name)

    def uniform_(self, tensor, a=0.0, b=1.0):
        o = self._owner
        with o._module.no_grad():
            tensor.copy_(o._make(o._values(tuple(tensor.shape), a, b), dtype=tensor.dtype))
        return tensor


def as_numpy(value):
    """Values of either library as plain numpy (nested lists/tuples/dicts kept)."""
    if isinstance(value, dict):
        return {k: as_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(as_numpy(v) for v in value)
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().numpy()
    data = getattr(value, "data", None)
    if isinstance(data, np.ndarray):
        return data
    return value


def assert_same(ours, theirs, rtol: float = 1e-9, atol: float = 1e-12, path: str = "result") -> None:
    """Compare what a program returned on autograd_lab with what it returned on PyTorch."""
    ours, theirs = as_numpy(ours), as_numpy(theirs)
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), path
        for k in theirs:
            assert_same(ours[k], theirs[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), f"{path}: {ours!r} vs {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, rtol, atol, f"{path}[{i}]")
    elif theirs is None or isinstance(theirs, (bool, str)):
        assert ours == theirs, f"{path}: {ours!r} != {theirs!r}"
    else:
        a, b = np.asarray(ours), np.asarray(theirs)
        assert a.shape == b.shape, f"{path}: shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a.astype(np.float64) if a.dtype != bool else a,
                                   b.astype(np.float64) if b.dtype != bool else b,
                                   rtol=rtol, atol=atol, err_msg=path)


def run_both(program, *args, seed: int = 0, **kwargs):
    """Run ``program(module, ...)`` on autograd_lab and on PyTorch (float64 default); return both results."""
    import autograd_lab as al
    t = require_torch()
    ours = program(Seeded(al, seed), *args, **kwargs)
    previous = t.get_default_dtype()
    t.set_default_dtype(t.float64)
    try:
        theirs = program(Seeded(t, seed), *args, **kwargs)
    finally:
        t.set_default_dtype(previous)
    return ours, theirs


# ---------------------------------------------------------------- one (fn, inputs, twice) case
def run_case(m, fn, inputs):
    """``fn(m, F, *xs)`` on float64 leaves made from ``inputs`` in library ``m`` (autograd_lab or
    torch), then backward of a weighted sum of the output; its value and the inputs' gradients
    as numpy arrays (None where an input got none)."""
    F = torch.nn.functional if m is torch else m.functional
    xs = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in inputs]
    out = fn(m, F, *xs)
    size = int(np.prod(out.shape))
    weights = np.linspace(0.5, 1.5, size or 1)[:size]
    (out * m.tensor(weights.reshape(tuple(out.shape)), dtype=m.float64)).sum().backward()
    as_np = (lambda v: v.detach().numpy()) if m is torch else (lambda v: v.data)
    return as_np(out), [as_np(x.grad) if x.grad is not None else None for x in xs]


def assert_case_matches_torch(al, fn, inputs, *, same_dtype=True, same_missing=True) -> None:
    """Value and gradients of one case equal PyTorch's (float64, rtol 1e-7)."""
    out, grads = run_case(al, fn, inputs)
    t_out, t_grads = run_case(torch, fn, inputs)
    assert out.shape == t_out.shape
    if same_dtype:
        assert out.dtype == t_out.dtype
    np.testing.assert_allclose(out, t_out, rtol=1e-7, atol=1e-10)
    for g, tg in zip(grads, t_grads):
        if same_missing:
            assert (g is None) == (tg is None)
            if g is None:
                continue
        np.testing.assert_allclose(g, tg, rtol=1e-7, atol=1e-10)


def assert_case_gradchecks(al, fn, inputs, twice: bool) -> None:
    """gradcheck of one case (and gradgradcheck when it is twice differentiable)."""
    xs = [al.tensor(v, requires_grad=True) for v in inputs]
    f = lambda *a: fn(al, al.functional, *a)  # noqa: E731
    assert al.gradcheck(f, xs)
    if twice:
        assert al.gradgradcheck(f, xs)
