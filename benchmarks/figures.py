"""The benchmark figures of issue 4. Each returns a ``Figure``: timings of every contender and
the target ratio (ours / baseline), measured in this process."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab import kernels as K

from . import baselines
from .timing import Timing, compare

try:
    import torch
    import torch.nn.functional as TF
except Exception:  # pragma: no cover - torch is optional
    torch = None
    TF = None


@dataclass
class Figure:
    """One row of the results table."""

    name: str
    baseline: str                  # the contender the target ratio is taken against
    target: float | None           # ours / baseline must be <= target (None: report only)
    timings: dict[str, Timing]
    ours: str = "ours"
    note: str = ""
    extra: dict = field(default_factory=dict)

    def ratio(self, other: str | None = None) -> float | None:
        other = other or self.baseline
        if other not in self.timings or self.ours not in self.timings:
            return None
        return self.timings[self.ours].median / self.timings[other].median

    @property
    def met(self) -> bool | None:
        r = self.ratio()
        return None if r is None or self.target is None else r <= self.target


def _t(a: np.ndarray, requires_grad: bool = False):
    return torch.from_numpy(a.copy()).requires_grad_(requires_grad) if torch is not None else None


# ------------------------------------------------------------------ engine overhead
def captured_chain(length: int = 1000, x0: np.ndarray | None = None) -> tuple[al.CapturedStep, al.Variable, al.Variable]:
    """The chain as an ``al.capture`` step: ``(step, leaf, scale)``. ``step(scale)`` computes
    leaf * scale, then ``length - 1`` more products by 1.0001, and fills ``leaf.grad``; the
    scale is a Variable holding 1.0001, so that the chain has an argument to replay on."""
    leaf = al.Variable(np.linspace(0.5, 1.0, 4) if x0 is None else x0, requires_grad=True)

    def chain(scale: al.Variable) -> al.Variable:
        y = leaf * scale
        for _ in range(length - 1):
            y = y * 1.0001
        return y.sum()

    return al.capture(chain), leaf, al.Variable(np.full(1, 1.0001))


def _recorded_chain(x0: np.ndarray, length: int) -> Callable[[], al.Variable]:
    def ours() -> al.Variable:
        x = al.Variable(x0, requires_grad=True)
        y = x
        for _ in range(length):
            y = y * 1.0001
        y.sum().backward()
        return x.grad
    return ours


def _replayed_chain(x0: np.ndarray, length: int) -> Callable[[], al.Variable]:
    step, leaf, scale = captured_chain(length, x0)

    def ours() -> al.Variable:
        leaf.grad = None
        step(scale)  # the same chain, replayed after its first call
        return leaf.grad
    return ours


def engine_chain(repeats: int = 15, length: int = 1000, captured: bool = False) -> Figure:
    """A chain of ``length`` multiplications on a (4,) vector, forward and backward; with
    ``captured=True`` the same chain as an ``al.capture`` step, replayed."""
    x0 = np.linspace(0.5, 1.0, 4)
    ours = (_replayed_chain if captured else _recorded_chain)(x0, length)

    def theirs():
        x = torch.tensor(x0, requires_grad=True)
        y = x
        for _ in range(length):
            y = y * 1.0001
        y.sum().backward()
        return x.grad

    tim = compare({"ours": ours, "torch": theirs if torch is not None else None},
                  repeats=repeats, sample_seconds=0.05)
    name = f"engine overhead: chain of {length} ops on (4,), fwd+bwd"
    fig = Figure(name + (", captured step (al.capture)" if captured else ""), "torch", 0.8, tim)
    fig.extra["grad"] = ours().data.copy()
    fig.extra["us_per_op"] = {k: v.median / length * 1e6 for k, v in tim.items()}
    fig.extra["cpu_us_per_op"] = {k: v.cpu_median / length * 1e6 for k, v in tim.items()}
    return fig


# ------------------------------------------------------------------ fused elementwise
def elementwise(name: str, repeats: int = 15, n: int = 1_000_000) -> Figure:
    """Kernel forward + backward of one activation on n float32 vs numpy (report only: a single
    numpy ufunc is no composite, and relu/tanh forwards are already one SIMD pass in numpy)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    fwd, bwd = getattr(K, f"{name}_fwd"), getattr(K, f"{name}_bwd")
    np_fwd = {"relu": lambda: np.maximum(x, 0), "sigmoid": lambda: 1 / (1 + np.exp(-x)),
              "tanh": lambda: np.tanh(x)}[name]
    np_bwd = {"relu": lambda y: g * (y > 0), "sigmoid": lambda y: g * y * (1 - y),
              "tanh": lambda y: g * (1 - y * y)}[name]
    tx, tg = _t(x, True), _t(g)
    contenders: dict[str, Callable | None] = {
        "ours": lambda: bwd(fwd(x), g),
        "numpy": lambda: np_bwd(np_fwd()),
        "torch": (lambda: torch.autograd.grad(getattr(torch, name)(tx), tx, tg)) if torch else None,
    }
    return Figure(f"{name}(x) fwd+bwd, 1e6 float32 (kernels)", "numpy", None,
                  compare(contenders, repeats=repeats))


def bias_act(act: str, repeats: int = 15, rows: int = 1000, cols: int = 1000) -> Figure:
    """act(z + b) forward and backward (grad z and grad b) fused, vs the numpy composite."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    g = rng.standard_normal((rows, cols)).astype(np.float32)
    np_act = {"relu": lambda v: np.maximum(v, 0), "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
              "tanh": np.tanh}[act]
    np_grad = {"relu": lambda y: g * (y > 0), "sigmoid": lambda y: g * y * (1 - y),
               "tanh": lambda y: g * (1 - y * y)}[act]

    def np_version():
        y = np_act(z + b)
        gz = np_grad(y)
        return gz, gz.sum(axis=0)

    tz, tb, tg = _t(z, True), _t(b, True), _t(g)
    contenders = {
        "ours": lambda: K.bias_act_bwd(K.bias_act_fwd(z, b, act), g, act),
        "numpy": np_version,
        "torch": (lambda: torch.autograd.grad(getattr(torch, act)(tz + tb), (tz, tb), tg)) if torch else None,
    }
    return Figure(f"fused {act}(z + b) fwd+bwd, 1e6 float32 (kernels)", "numpy", 0.35,
                  compare(contenders, repeats=repeats))


# ------------------------------------------------------------------ softmax cross-entropy
def softmax_ce(rows: int, classes: int, repeats: int = 15) -> Figure:
    """F.cross_entropy forward + backward through the library vs torch (float32)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, classes)).astype(np.float32)
    t = rng.integers(0, classes, rows)

    def ours():
        v = al.Variable(x, requires_grad=True)
        F.cross_entropy(v, t).backward()
        return v.grad

    def kernels_only():
        loss, stats = K.cross_entropy_fwd(x, t)
        return K.cross_entropy_bwd(x, t, stats, 1.0 / rows)

    tx, tt = _t(x, True), (torch.from_numpy(t) if torch else None)
    contenders = {
        "ours": ours,
        "ours (kernels only)": kernels_only,
        "numpy": lambda: baselines.softmax_ce_fwd_bwd(x, t),
        "torch": (lambda: torch.autograd.grad(TF.cross_entropy(tx, tt), tx)) if torch else None,
    }
    return Figure(f"softmax-cross-entropy fwd+bwd ({rows},{classes}) float32", "torch", 1.0,
                  compare(contenders, repeats=repeats))


# ------------------------------------------------------------------ conv2d and pooling
def conv(n: int, cin: int, cout: int, size: int, target: float, repeats: int = 15) -> Figure:
    """F.conv2d (k3, p1) forward + backward through the library vs torch and numpy im2col."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, cin, size, size)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, 3, 3)) * 0.1).astype(np.float32)
    b = np.zeros(cout, np.float32)
    g = rng.standard_normal((n, cout, size, size)).astype(np.float32)

    def ours():
        xv, wv, bv = (al.Variable(a, requires_grad=True) for a in (x, w, b))
        F.conv2d(xv, wv, bv, padding=1).backward(al.Variable(g))
        return xv.grad

    tx, tw, tb, tg = _t(x, True), _t(w, True), _t(b, True), _t(g)
    contenders = {
        "ours": ours,
        "numpy": lambda: baselines.conv2d_fwd_bwd(x, w, b, g, 1),
        "torch": (lambda: torch.autograd.grad(TF.conv2d(tx, tw, tb, padding=1), (tx, tw, tb), tg))
        if torch else None,
    }
    return Figure(f"conv2d fwd+bwd ({n},{cin}->{cout}, {size}x{size}, k3, p1) float32", "torch", target,
                  compare(contenders, repeats=repeats))


def max_pool(repeats: int = 15) -> Figure:
    """F.max_pool2d 2x2 forward + backward through the library vs torch and numpy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32, 28, 28)).astype(np.float32)
    g = rng.standard_normal((64, 32, 14, 14)).astype(np.float32)

    def ours():
        xv = al.Variable(x, requires_grad=True)
        F.max_pool2d(xv, 2).backward(al.Variable(g))
        return xv.grad

    tx, tg = _t(x, True), _t(g)
    contenders = {
        "ours": ours,
        "numpy": lambda: baselines.max_pool2x2_fwd_bwd(x, g),
        "torch": (lambda: torch.autograd.grad(TF.max_pool2d(tx, 2), tx, tg)) if torch else None,
    }
    return Figure("max-pool 2x2 fwd+bwd (64,32,28,28) float32", "torch", 0.5,
                  compare(contenders, repeats=repeats))


# ------------------------------------------------------------------ linear
def linear(repeats: int = 9, n: int = 1024) -> Figure:
    """F.linear forward + backward (x, W, b all need grad) vs the three raw numpy matmuls."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, n)).astype(np.float32)
    w = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal((n, n)).astype(np.float32)

    def ours():
        xv, wv, bv = (al.Variable(a, requires_grad=True) for a in (x, w, b))
        F.linear(xv, wv, bv).backward(al.Variable(g))
        return wv.grad

    tx, tw, tb, tg = _t(x, True), _t(w, True), _t(b, True), _t(g)
    contenders = {
        "ours": ours,
        "numpy": lambda: (x @ w.T, g @ w, g.T @ x),
        "torch": (lambda: torch.autograd.grad(TF.linear(tx, tw, tb), (tx, tw, tb), tg)) if torch else None,
    }
    return Figure(f"linear fwd+bwd {n}x{n} float32 (numpy: the 3 matmuls alone)", "numpy", 1.1,
                  compare(contenders, repeats=repeats, sample_seconds=0.05))
