"""Peers: one training step and one 1000-op chain in every Python autograd that is installed.

    python3 -m benchmarks.peers [--repeats 9] [--out benchmarks/PEERS.md]

The step: the digits MLP 64-128-10 (ReLU), batch 64, mean cross-entropy, plain SGD (lr 0.1),
in float64, on one thread. Every contender starts from the same weights, takes the same
batches (converted to its own tensors before the clock starts, as a data loader would hand them
over) and must give the numpy reference's losses and weights after five steps, or it is reported
as wrong and left out of the table. The chain: ``y = y * 1.0001`` a thousand times on a (4,)
vector, then the gradient of ``y.sum()``; it measures what recording and walking one node costs.

Contenders, each optional (skipped with its reason when not installed): autograd_lab recorded
(the ordinary path) and captured (``al.capture``), PyTorch eager, JAX with ``jit``, DeZero,
MyGrad, HIPS autograd and micrograd. micrograd works on Python scalars, so its step is timed on
a batch of 2 and scaled to 64 (its cost grows linearly with the batch); it has no exp or log,
so this file gives its Value two small ones written in its own style.

Times are medians of interleaved samples (``benchmarks.timing.compare``): the contenders take
turns, so a busy moment of the machine hits them alike. Ratios from one run are what to quote.
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import platform
import sys
import time
from typing import Any, Callable

import numpy as np

from .models import CLASSES, FEATURES, HIDDEN, mlp_weights, mlp_with_weights, training_step

BATCH, LR = 64, 0.1
N_BATCHES, CHECK_STEPS = 8, 5
CHAIN, CHAIN_FACTOR = 1000, 1.0001
MICRO_BATCH = 2

Step = Callable[[int], float]
"""Runs one training step on batch ``i`` (cycled) and returns the loss."""


# -- the shared problem -------------------------------------------------------------------------

def problem(seed: int = 0) -> tuple[list[np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """Weights ``[W1 (64,128), b1, W2 (128,10), b2]`` (PyTorch's uniform init) and the batches."""
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float64) / 16.0
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))[: BATCH * N_BATCHES]
    batches = [(x[order[i * BATCH:(i + 1) * BATCH]], y[order[i * BATCH:(i + 1) * BATCH]].astype(np.int64))
               for i in range(N_BATCHES)]
    bound1, bound2 = 1 / math.sqrt(FEATURES), 1 / math.sqrt(HIDDEN)
    weights = [rng.uniform(-bound1, bound1, (FEATURES, HIDDEN)), rng.uniform(-bound1, bound1, HIDDEN),
               rng.uniform(-bound2, bound2, (HIDDEN, CLASSES)), rng.uniform(-bound2, bound2, CLASSES)]
    return weights, batches


def reference_run(weights: list[np.ndarray], batches: list, steps: int) -> tuple[list[float], list[np.ndarray]]:
    """The losses and final weights of ``steps`` SGD steps, by hand-written backprop in numpy."""
    w1, b1, w2, b2 = (w.copy() for w in weights)
    losses = []
    for i in range(steps):
        x, y = batches[i % len(batches)]
        z1 = x @ w1 + b1
        h = np.maximum(z1, 0)
        z2 = h @ w2 + b2
        z2 = z2 - z2.max(axis=1, keepdims=True)
        logp = z2 - np.log(np.exp(z2).sum(axis=1, keepdims=True))
        losses.append(float(-logp[np.arange(len(y)), y].mean()))
        d2 = np.exp(logp)
        d2[np.arange(len(y)), y] -= 1
        d2 /= len(y)
        dh = d2 @ w2.T * (z1 > 0)
        w2 -= LR * h.T @ d2
        b2 -= LR * d2.sum(axis=0)
        w1 -= LR * x.T @ dh
        b1 -= LR * dh.sum(axis=0)
    return losses, [w1, b1, w2, b2]


def _import(module: str) -> Any:
    """Import a contender's package (DeZero 0.0.13 still names ``np.int``, gone in numpy 2)."""
    if module == "dezero" and not hasattr(np, "int"):
        np.int = int  # type: ignore[attr-defined]
    return importlib.import_module(module)


# -- the contenders: each returns (step, current weights as numpy [W1, b1, W2, b2]) ----------------

def autograd_lab_step(weights: list, batches: list, captured: bool = False) -> tuple[Step, Callable]:
    import autograd_lab as al
    from autograd_lab import functional as F

    model = mlp_with_weights("autograd_lab", weights)
    opt = al.optim.SGD(model.parameters(), lr=LR)
    data = [(al.tensor(x), al.tensor(y)) for x, y in batches]
    take = training_step(lambda x, y: F.cross_entropy(model(x), y), opt, captured)

    def step(i: int) -> float:
        return float(take(*data[i % len(data)]).data)
    return step, lambda: mlp_weights(model)


def torch_step(weights: list, batches: list) -> tuple[Step, Callable]:
    import torch
    model = mlp_with_weights("torch", weights)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    data = [(torch.from_numpy(x.copy()), torch.from_numpy(y.copy())) for x, y in batches]
    loss_fn = torch.nn.functional.cross_entropy
    take = training_step(lambda x, y: loss_fn(model(x), y), opt)

    def step(i: int) -> float:
        return float(take(*data[i % len(data)]).item())
    return step, lambda: mlp_weights(model)


def jax_step(weights: list, batches: list) -> tuple[Step, Callable]:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss_of(params: list, x: Any, y: Any) -> Any:
        w1, b1, w2, b2 = params
        z = jnp.maximum(x @ w1 + b1, 0) @ w2 + b2
        logp = jax.nn.log_softmax(z, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def update(params: list, x: Any, y: Any) -> tuple:
        loss, grads = jax.value_and_grad(loss_of)(params, x, y)
        return [p - LR * g for p, g in zip(params, grads)], loss

    state = {"params": [jnp.asarray(w) for w in weights]}
    data = [(jnp.asarray(x), jnp.asarray(y)) for x, y in batches]

    def step(i: int) -> float:
        x, y = data[i % len(data)]
        state["params"], loss = update(state["params"], x, y)
        return float(loss.block_until_ready())

    def now() -> list:
        return [np.asarray(p) for p in state["params"]]
    return step, now


def dezero_mlp(weights: list, batches: list) -> tuple[list, list, Callable]:
    """DeZero's parameters, its batches, and ``forward(x) -> logits`` of the digits MLP."""
    _import("dezero")
    import dezero
    import dezero.functions as DF
    params = [dezero.Parameter(w.copy()) for w in weights]
    data = [(dezero.Variable(x), y) for x, y in batches]

    def forward(x: Any) -> Any:
        w1, b1, w2, b2 = params
        return DF.linear(DF.relu(DF.linear(x, w1, b1)), w2, b2)
    return params, data, forward


def dezero_step(weights: list, batches: list) -> tuple[Step, Callable]:
    params, data, forward = dezero_mlp(weights, batches)  # imports DeZero, numpy 2 or not
    import dezero.functions as DF

    def step(i: int) -> float:
        x, y = data[i % len(data)]
        loss = DF.softmax_cross_entropy(forward(x), y)
        for p in params:
            p.cleargrad()
        loss.backward()
        for p in params:
            p.data -= LR * p.grad.data
        return float(loss.data)

    return step, lambda: [p.data for p in params]


def mygrad_step(weights: list, batches: list) -> tuple[Step, Callable]:
    import mygrad as mg
    from mygrad.nnet.activations import relu
    from mygrad.nnet.losses import softmax_crossentropy
    state = {"params": [mg.tensor(w.copy()) for w in weights]}
    data = [(mg.tensor(x, constant=True), y) for x, y in batches]

    def step(i: int) -> float:
        x, y = data[i % len(data)]
        w1, b1, w2, b2 = state["params"]
        loss = softmax_crossentropy(mg.matmul(relu(mg.matmul(x, w1) + b1), w2) + b2, y)
        loss.backward()
        # MyGrad's arrays are read-only while a graph may use them: new leaves for the new values
        state["params"] = [mg.tensor(p.data - LR * p.grad) for p in state["params"]]
        return float(loss.item())

    return step, lambda: [np.asarray(p.data) for p in state["params"]]


def hips_step(weights: list, batches: list) -> tuple[Step, Callable]:
    import autograd.numpy as anp
    from autograd import value_and_grad
    from autograd.scipy.special import logsumexp

    def loss_of(params: list, x: np.ndarray, y: np.ndarray) -> Any:
        w1, b1, w2, b2 = params
        z = anp.dot(anp.maximum(anp.dot(x, w1) + b1, 0), w2) + b2
        logp = z - logsumexp(z, axis=1, keepdims=True)
        return -anp.mean(logp[anp.arange(len(y)), y])

    both = value_and_grad(loss_of)
    state = {"params": [w.copy() for w in weights]}

    def step(i: int) -> float:
        x, y = batches[i % len(batches)]
        loss, grads = both(state["params"], x, y)
        state["params"] = [p - LR * g for p, g in zip(state["params"], grads)]
        return float(loss)

    return step, lambda: state["params"]


def _micrograd_value_ops() -> tuple[Callable, Callable]:
    """exp and log for micrograd's Value, in the style of its own operations."""
    from micrograd.engine import Value

    def vexp(v: Any) -> Any:
        out = Value(math.exp(v.data), (v,), "exp")

        def _backward() -> None:
            v.grad += out.data * out.grad
        out._backward = _backward
        return out

    def vlog(v: Any) -> Any:
        out = Value(math.log(v.data), (v,), "log")

        def _backward() -> None:
            v.grad += out.grad / v.data
        out._backward = _backward
        return out
    return vexp, vlog


def micrograd_step(weights: list, batches: list) -> tuple[Step, Callable]:
    """micrograd on a batch of MICRO_BATCH samples (time it, then scale to BATCH)."""
    from micrograd.nn import MLP
    vexp, vlog = _micrograd_value_ops()
    model = MLP(FEATURES, [HIDDEN, CLASSES])
    for layer, w, b in ((model.layers[0], weights[0], weights[1]), (model.layers[1], weights[2], weights[3])):
        for j, neuron in enumerate(layer.neurons):
            for i, wi in enumerate(neuron.w):
                wi.data = float(w[i, j])
            neuron.b.data = float(b[j])
    data = [([list(map(float, row)) for row in x[:MICRO_BATCH]], [int(t) for t in y[:MICRO_BATCH]])
            for x, y in batches]

    def step(i: int) -> float:
        xs, ys = data[i % len(data)]
        total = None
        for x, y in zip(xs, ys):
            z = model(x)
            top = max(v.data for v in z)  # a constant shift, as in a stable log-softmax
            lse = vlog(sum(vexp(v - top) for v in z)) + top
            term = lse - z[y]
            total = term if total is None else total + term
        loss = total * (1.0 / len(xs))
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= LR * p.grad
        return loss.data

    def now() -> list:
        l0, l1 = model.layers
        return [np.array([[n.w[i].data for n in l0.neurons] for i in range(FEATURES)]),
                np.array([n.b.data for n in l0.neurons]),
                np.array([[n.w[i].data for n in l1.neurons] for i in range(HIDDEN)]),
                np.array([n.b.data for n in l1.neurons])]
    return step, now


STEPS: dict[str, tuple[str, Callable[..., tuple[Step, Callable]]]] = {
    "autograd_lab recorded": ("autograd_lab", autograd_lab_step),
    "autograd_lab captured": ("autograd_lab", lambda w, b: autograd_lab_step(w, b, captured=True)),
    "PyTorch eager": ("torch", torch_step),
    "JAX jit": ("jax", jax_step),
    "DeZero": ("dezero", dezero_step),
    "MyGrad": ("mygrad", mygrad_step),
    "HIPS autograd": ("autograd", hips_step),
    "micrograd": ("micrograd", micrograd_step),
}
PURE_PYTHON = ("DeZero", "MyGrad", "HIPS autograd", "micrograd")


# -- the chain ------------------------------------------------------------------------------------

def chain_fns() -> dict[str, Callable[[], Any] | str]:
    """The 1000-op chain per contender: a callable returning the gradient, or why it is missing."""
    x0 = np.linspace(0.5, 1.0, 4)
    out: dict[str, Callable[[], Any] | str] = {}

    try:
        import autograd_lab as al

        def al_recorded() -> Any:
            x = al.Variable(x0, requires_grad=True)
            y = x
            for _ in range(CHAIN):
                y = y * CHAIN_FACTOR
            y.sum().backward()
            return x.grad.data
        out["autograd_lab recorded"] = al_recorded
        from benchmarks.figures import captured_chain
        step, leaf, scale = captured_chain(CHAIN, x0)

        def al_captured() -> Any:
            leaf.grad = None
            step(scale)
            return leaf.grad.data
        out["autograd_lab captured"] = al_captured
    except ImportError as err:
        out["autograd_lab recorded"] = out["autograd_lab captured"] = str(err)
    for name, module, make in (("PyTorch eager", "torch", _torch_chain), ("JAX jit", "jax", _jax_chain),
                               ("DeZero", "dezero", _dezero_chain), ("MyGrad", "mygrad", _mygrad_chain),
                               ("HIPS autograd", "autograd", _hips_chain),
                               ("micrograd", "micrograd", _micrograd_chain)):
        try:
            _import(module)
        except ImportError as err:
            out[name] = f"not installed ({err})"
            continue
        out[name] = make(x0)
    return out


def _torch_chain(x0: np.ndarray) -> Callable[[], Any]:
    import torch

    def run() -> Any:
        x = torch.tensor(x0, requires_grad=True)
        y = x
        for _ in range(CHAIN):
            y = y * CHAIN_FACTOR
        y.sum().backward()
        return x.grad.numpy()
    return run


def _jax_chain(x0: np.ndarray) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def chain(x: Any) -> Any:
        for _ in range(CHAIN):
            x = x * CHAIN_FACTOR
        return x.sum()
    compiled = jax.jit(jax.grad(chain))
    x = jnp.asarray(x0)
    return lambda: np.asarray(compiled(x).block_until_ready())


def _dezero_chain(x0: np.ndarray) -> Callable[[], Any]:
    _import("dezero")
    import dezero
    import dezero.functions as DF

    def run() -> Any:
        x = dezero.Variable(x0.copy())
        y = x
        for _ in range(CHAIN):
            y = y * CHAIN_FACTOR
        DF.sum(y).backward()
        return x.grad.data
    return run


def _mygrad_chain(x0: np.ndarray) -> Callable[[], Any]:
    import mygrad as mg

    def run() -> Any:
        x = mg.tensor(x0.copy())
        y = x
        for _ in range(CHAIN):
            y = y * CHAIN_FACTOR
        y.sum().backward()
        return x.grad
    return run


def _hips_chain(x0: np.ndarray) -> Callable[[], Any]:
    from autograd import grad

    def chain(x: Any) -> Any:
        for _ in range(CHAIN):
            x = x * CHAIN_FACTOR
        return x.sum()
    g = grad(chain)
    return lambda: g(x0)


def _micrograd_chain(x0: np.ndarray) -> Callable[[], Any]:
    from micrograd.engine import Value
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * CHAIN))  # its walk is recursive

    def run() -> Any:
        xs = [Value(float(v)) for v in x0]
        total = None
        for x in xs:
            y = x
            for _ in range(CHAIN):
                y = y * CHAIN_FACTOR
            total = y if total is None else total + y
        total.backward()
        return np.array([x.grad for x in xs])
    return run


# -- running ---------------------------------------------------------------------------------------

def limit_threads() -> None:
    """One thread for BLAS, numba, PyTorch and XLA (set before JAX starts)."""
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    try:
        import autograd_lab as al
        al.kernels.set_parallel(False)
    except ImportError:
        pass
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass


def build_steps(weights: list, batches: list) -> tuple[dict[str, Step], dict[str, str]]:
    """Every installed contender's step, checked against the numpy reference; and why others are out."""
    want_losses, want_weights = reference_run(weights, batches, CHECK_STEPS)
    small = [(x[:MICRO_BATCH], y[:MICRO_BATCH]) for x, y in batches]
    small_losses, small_weights = reference_run(weights, small, CHECK_STEPS)
    steps: dict[str, Step] = {}
    missing: dict[str, str] = {}
    for name, (module, make) in STEPS.items():
        try:
            _import(module)
        except ImportError as err:
            missing[name] = f"not installed ({err})"
            continue
        losses_ref, weights_ref = (small_losses, small_weights) if name == "micrograd" else (want_losses, want_weights)
        check, now = make(weights, batches)
        losses = [check(i) for i in range(CHECK_STEPS)]
        if not np.allclose(losses, losses_ref, rtol=1e-9, atol=1e-12) or not all(
                np.allclose(a, b, rtol=1e-8, atol=1e-10) for a, b in zip(now(), weights_ref)):
            missing[name] = f"wrong: losses {np.round(losses, 6)} against the reference's {np.round(losses_ref, 6)}"
            continue
        steps[name] = make(weights, batches)[0]
    return steps, missing


def time_all(repeats: int, sample_seconds: float) -> dict[str, Any]:
    from benchmarks.timing import compare
    limit_threads()
    weights, batches = problem()
    steps, missing = build_steps(weights, batches)
    counters = {name: 0 for name in steps}

    def cycling(name: str, step: Step) -> Callable[[], float]:
        def run() -> float:
            counters[name] += 1
            return step(counters[name])
        return run

    fast = {n: cycling(n, s) for n, s in steps.items() if n != "micrograd"}
    step_times = {n: t.median for n, t in compare(fast, repeats, sample_seconds).items()}
    if "micrograd" in steps:
        slow = compare({"micrograd": cycling("micrograd", steps["micrograd"])}, max(3, repeats // 3), 0.0)
        step_times["micrograd"] = slow["micrograd"].median * BATCH / MICRO_BATCH
    chains = chain_fns()
    runnable = {n: f for n, f in chains.items() if callable(f)}
    want = np.full(4, CHAIN_FACTOR ** CHAIN)
    for name, f in list(runnable.items()):
        if not np.allclose(f(), want, rtol=1e-9):
            missing[name + " (chain)"] = "wrong gradient"
            del runnable[name]
    fast_chains = {n: f for n, f in runnable.items() if n != "micrograd"}
    chain_times = {n: t.median for n, t in compare(fast_chains, repeats, sample_seconds).items()}
    if "micrograd" in runnable:
        chain_times["micrograd"] = compare({"micrograd": runnable["micrograd"]}, max(3, repeats // 3), 0.0)["micrograd"].median
    for name, why in chains.items():
        if isinstance(why, str):
            missing.setdefault(name + " (chain)", why)
    return {"step": step_times, "chain": chain_times, "missing": missing}


def targets(result: dict[str, Any]) -> list[str]:
    """Issue 36's targets, each met or missed in this run, with the ratio behind it."""
    lines = []
    for kind, table in (("step", result["step"]), ("chain", result["chain"])):
        ours = table.get("autograd_lab recorded")
        if ours is None:
            continue
        peers = {n: t for n, t in table.items() if n in PURE_PYTHON}
        if peers:
            fastest = min(peers, key=peers.get)
            ratio = ours / peers[fastest]
            lines.append(f"- recorded {kind} faster than every pure-Python peer: "
                         f"{'met' if ratio < 1 else 'missed'} (ours / {fastest}'s = {ratio:.2f})")
    step = result["step"]
    if "autograd_lab captured" in step and "PyTorch eager" in step:
        ratio = step["autograd_lab captured"] / step["PyTorch eager"]
        lines.append(f"- captured step at most 0.5x PyTorch eager: {'met' if ratio <= 0.5 else 'missed'} "
                     f"({ratio:.2f}x)")
    if "autograd_lab captured" in step and "JAX jit" in step:
        ratio = step["autograd_lab captured"] / step["JAX jit"]
        lines.append(f"- captured step faster than JAX jit: {'met' if ratio < 1 else 'missed'} ({ratio:.2f}x)")
    return lines


def _versions() -> list[str]:
    out = []
    for name, module in (("numpy", "numpy"), ("numba", "numba"), ("torch", "torch"), ("jax", "jax"),
                         ("dezero", "dezero"), ("mygrad", "mygrad"), ("autograd", "autograd"),
                         ("micrograd", "micrograd")):
        try:
            from importlib.metadata import version
            out.append(f"{name} {version(module)}")
        except Exception:  # not installed
            continue
    return out


def markdown(result: dict[str, Any], seconds: float) -> str:
    step, chain = result["step"], result["chain"]
    base = step.get("PyTorch eager")
    lines = ["# Peers: one training step and a 1000-op chain", "",
             "Written by `python3 -m benchmarks.peers` (see its docstring for the rules: float64, one "
             "thread, the same weights and batches, losses and weights checked against a numpy "
             "reference). Ratios are to PyTorch eager in the same run; below 1 is faster.", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
             + ", ".join(_versions()) + f". The run took {seconds:.0f} s.", "",
             "| contender | MLP step (µs) | vs PyTorch | 1000-op chain (ms) | vs PyTorch |",
             "| --- | ---: | ---: | ---: | ---: |"]
    cbase = chain.get("PyTorch eager")
    for name in STEPS:
        s, c = step.get(name), chain.get(name)
        if s is None and c is None:
            continue
        cell = (lambda v, b, scale: "—" if v is None else f"{v * scale:,.4g}")
        ratio = (lambda v, b: "—" if v is None or b is None else f"{v / b:.2f}")
        note = " (scaled from a batch of 2)" if name == "micrograd" else ""
        lines.append(f"| {name}{note} | {cell(s, base, 1e6)} | {ratio(s, base)} | {cell(c, cbase, 1e3)} | "
                     f"{ratio(c, cbase)} |")
    lines += ["", "## Targets", ""] + (targets(result) or ["- (PyTorch or a peer missing: nothing to compare)"])
    if result["missing"]:
        lines += ["", "## Not in the table", ""] + [f"- {k}: {v}" for k, v in sorted(result["missing"].items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="interleaved samples per contender")
    parser.add_argument("--sample-seconds", type=float, default=0.05, help="length of one sample")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "PEERS.md"),
                        help="markdown file to write (default: benchmarks/PEERS.md); '-' prints only")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = time_all(args.repeats, args.sample_seconds)
    text = markdown(result, time.perf_counter() - started)
    print(text)
    if args.out != "-":
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
