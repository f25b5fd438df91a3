"""Check ``LayerNormFunction.apply(x, weight, bias, eps)``: normalization over the last axis
with the biased variance and eps inside the root, then ``* weight + bias``; a hand-written
backward for x, weight and bias (against autograd_lab's F.layer_norm and central
differences)."""
from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab import functional as F
from autograd_lab import tensor
from .._common import Checker, grad_data, library_under_test
from .._exercise import Mistake
from .._observe import Observations, Observer
from . import _shared as sh
from .messages import HINTS

ID = "ch13-layer-norm"
PARTS: tuple[str, ...] = ()

_VAR = "var = ((x.data - mu) ** 2).mean(axis=-1, keepdims=True)"
MISTAKES = (
    Mistake("unbiased variance", (_VAR, "var = x.data.var(axis=-1, keepdims=True, ddof=1)"),
            None, "ln.var"),
    Mistake("over the whole array", ("mu = x.data.mean(axis=-1, keepdims=True)\n        " + _VAR,
                                     "mu = x.data.mean()\n        var = ((x.data - mu) ** 2).mean()"),
            None, "ln.axis"),
    Mistake("eps outside the root", ("rstd = 1.0 / np.sqrt(var + eps)",
                                     "rstd = 1.0 / (np.sqrt(var) + eps)"), None, "ln.eps"),
    Mistake("mean and variance held constant",
            ("grad_x = ctx.rstd * (g_hat - g_hat.mean(axis=-1, keepdims=True)\n"
             "                             - x_hat * (g_hat * x_hat).mean(axis=-1, keepdims=True))",
             "grad_x = ctx.rstd * g_hat"), None, "ln.backward"),
    Mistake("parameter gradients not summed",
            ("Variable((g * x_hat).sum(axis=rows)), Variable(g.sum(axis=rows))",
             "Variable(g * x_hat), Variable(g)"), None, "ln.param"),
)

EPS = "features that barely vary: eps inside the square root"
GRADCHECK = "gradcheck: backward agrees with central differences"
_STEP = 1e-6
_WEIGHTS = np.random.default_rng(0).uniform(0.5, 1.5, size=(3, 4))
"""The weights of the output's sum that the central differences differentiate."""


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shaped = []
    for shape in [(4, 5), (2, 3, 6)] + ([(7, 2), (2, 2, 2, 4)] if hidden else []):
        x = np.round(rng.normal(1.0, 2.0, size=shape), 3)
        w = np.round(rng.uniform(0.5, 1.5, size=shape[-1]), 3)
        b = np.round(rng.normal(size=shape[-1]), 3)
        g = np.round(rng.uniform(-1, 1, size=shape), 3)
        shaped.append((f"x of shape {shape}: values and gradients of x, weight and bias",
                       x, w, b, g))
    flat = 1.0 + np.round(rng.normal(size=(3, 4)), 3) * 1e-3
    x = rng.normal(size=(3, 4))
    checked = (x, rng.uniform(0.5, 1.5, 4), rng.normal(size=4))
    return {"shaped": shaped, "flat": flat, "gradcheck": checked}


def observe(ob: Observer, LayerNormFunction: Any, pkg: Any = None, *, seed: int,
            hidden: bool) -> None:
    if not sh.observe_pkg(ob, pkg):
        return
    lib = library_under_test(pkg)
    inputs = cases(seed, hidden)
    for name, x, w, b, g in inputs["shaped"]:
        with ob.case(name):
            xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
            out = LayerNormFunction.apply(xs, ws, bs, 1e-5)
            if sh.put_data(ob, "output", out):
                sh.backward(ob, "backward raised", out, pkg.Variable(g))
                for key, v in (("x", xs), ("weight", ws), ("bias", bs)):
                    sh.put_grad(ob, key, v)
    with ob.case(EPS):
        x = inputs["flat"]
        sh.put_data(ob, "output", LayerNormFunction.apply(
            lib.tensor(x), lib.tensor(np.ones(4)), lib.tensor(np.zeros(4)), 1e-5))
    with ob.case(GRADCHECK):
        _observe_differences(ob, LayerNormFunction, pkg, inputs["gradcheck"])


def _observe_differences(ob: Observer, LayerNormFunction: Any, pkg: Any,
                         arrays: tuple[np.ndarray, ...]) -> None:
    """The gradients backward gives for the output weighted by ``_WEIGHTS``, and the outputs
    at x ± step for every element of every input: the judge takes the differences."""
    lib = library_under_test(pkg)
    inputs = tuple(lib.tensor(a, requires_grad=True) for a in arrays)

    def run() -> Any:
        return LayerNormFunction.apply(*inputs, 1e-5)

    out = run()
    for v in inputs:
        v.grad = None
    out.backward(pkg.Variable(_WEIGHTS))
    for i, v in enumerate(inputs):
        sh.put_grad(ob, f"grad {i}", v)
        outputs = []
        for j in np.ndindex(v.shape):
            saved = v.data[j]
            for step in (_STEP, -_STEP):
                v.data[j] = saved + step
                outputs.append(np.asarray(run().data, dtype=np.float64))
            v.data[j] = saved
        ob.put(f"outputs {i}", np.stack(outputs))


def judge(ck: Checker, obs: Observations) -> None:
    sh.judge_pkg(ck, obs)
    inputs = cases(obs.seed, obs.hidden)
    for name, x, w, b, g in inputs["shaped"]:
        with ck.case(name):
            _judge_shaped(ck, obs.case(ck, name, what="your apply"), x, w, b, g)
    with ck.case(EPS):
        x = inputs["flat"]
        w, b = np.ones(4), np.zeros(4)
        got = sh.data(ck, obs.case(ck, EPS, what="your apply"), "output", "output")
        ck.close(got, reference(x, w, b, 1e-5, np.ones_like(x))[0], atol=1e-9, what="output",
                 hint=HINTS["ln.eps"],
                 mistakes=[(layer_norm_np(x, w, b, 1e-5, eps_outside=True), HINTS["ln.eps"])])
    with ck.case(GRADCHECK):
        _judge_differences(ck, obs.case(ck, GRADCHECK, what="your LayerNormFunction",
                                        hint=HINTS["ln.backward"]), inputs["gradcheck"])
    ck.done()


def _judge_shaped(ck: Checker, seen: Any, x: np.ndarray, w: np.ndarray, b: np.ndarray,
                  g: np.ndarray) -> None:
    want, gx, gw, gb = reference(x, w, b, 1e-5, g)
    mistakes = [(layer_norm_np(x, w, b, 1e-5, ddof=1), HINTS["ln.var"]),
                (layer_norm_np(x, w, b, 1e-5, axis=None), HINTS["ln.axis"]),
                (layer_norm_np(x, w, b, 1e-5, axis=0), HINTS["ln.axis"]),
                (layer_norm_np(x, w, b, 1e-5, eps_outside=True), HINTS["ln.eps"])]
    ck.close(sh.data(ck, seen, "output", "output"), want, atol=1e-9, what="output",
             hint=HINTS["ln.axis"], mistakes=mistakes)
    sh.raised(ck, seen, "backward raised", "your backward", HINTS["ln.returns"] + HINTS["ln.param"])
    rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
    ck.close(sh.grad(ck, seen, "x", "x", HINTS["ln.backward"]), gx, atol=1e-8,
             what="gradient of x", hint=HINTS["ln.backward"],
             mistakes=[(g * w * rstd, HINTS["ln.backward"])])
    for name, want_g in (("weight", gw), ("bias", gb)):
        got = sh.grad(ck, seen, name, name, HINTS["ln.param"])
        ck.check(got.shape == want_g.shape, f"the gradient of {name} has shape "
                 f"{got.shape}, expected {want_g.shape}.", hint=HINTS["ln.param"])
        ck.close(got, want_g, atol=1e-8, what=f"gradient of {name}", hint=HINTS["ln.param"])


def _judge_differences(ck: Checker, seen: Any, arrays: tuple[np.ndarray, ...]) -> None:
    for i, x in enumerate(arrays):
        grad = seen[f"grad {i}"]
        analytic = np.zeros(x.shape) if grad is None else np.asarray(grad, dtype=np.float64)
        outputs = np.asarray(seen[f"outputs {i}"], dtype=np.float64)
        values = (outputs * _WEIGHTS).reshape(outputs.shape[0], -1).sum(axis=1)
        numeric = ((values[0::2] - values[1::2]) / (2 * _STEP)).reshape(x.shape)
        if analytic.shape != x.shape or not np.allclose(analytic, numeric, atol=1e-5, rtol=1e-3):
            ck.fail(f"the gradient of input {i} disagrees with central differences: "
                    f"backward gave {analytic}, central differences {numeric}.",
                    hint=HINTS["ln.backward"])


def layer_norm_np(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float, *, ddof: int = 0,
                  eps_outside: bool = False, axis: int | None = -1) -> np.ndarray:
    """LayerNorm in numpy; the keywords make the typical mistakes."""
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    denom = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    return (x - mu) / denom * w + b


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float,
              g: np.ndarray) -> tuple[np.ndarray, ...]:
    """Value and the gradients of x, w and b, from autograd_lab's F.layer_norm (float64)."""
    xs, ws, bs = (tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.layer_norm(xs, (x.shape[-1],), ws, bs, eps)
    y.backward(tensor(g))
    return y.data, grad_data(xs), grad_data(ws), grad_data(bs)
