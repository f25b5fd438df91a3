"""The loader's checks of the learner's ``mygrad/nn.py`` and ``mygrad/optim.py``: they run
when the notebook's library cells are loaded as a package, on the package itself (the optimizers
step by step against ``autograd_lab.optim``), and end with ``ch08_linear`` on its Linear.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, library

__all__ = ["mygrad_nn", "mygrad_optim"]


# -- the loader's checks of the learner's mygrad/nn.py and mygrad/optim.py -------------------
def mygrad_nn(pkg: Any) -> None:
    """``mygrad.nn``: Parameter, Module registration, Linear, ReLU, Sequential, train/eval,
    Dropout, manual_seed (what chapters 09-12 rely on)."""
    nn = pkg.nn
    ck = Checker("mygrad-nn")
    with ck.case("Parameter requires grad; Module registers Parameters and Modules in order"):
        p = ck.call(nn.Parameter, np.zeros(2))
        ck.check(isinstance(p, pkg.Variable) and p.requires_grad and p.is_leaf,
                 "a Parameter must be a leaf Variable that requires grad.",
                 hint="class Parameter(Variable) with requires_grad=True by default.")
        model = ck.call(nn.Sequential, nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        names = [n for n, _ in ck.call(lambda: list(model.named_parameters()))]
        want = ["0.weight", "0.bias", "2.weight", "2.bias"]
        ck.check(names == want, "named_parameters() gives the wrong names or order.",
                 expected=want, received=names,
                 hint="Module.__setattr__ files Parameters into _parameters and Modules into "
                      "_modules; named_parameters walks them, own parameters first.")
        model.zero_grad()
        ck.check(all(q.grad is None for q in model.parameters()),
                 "zero_grad() did not set every gradient to None.")
    with ck.case("train() and eval() reach every module; Dropout honours them"):
        model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
        ck.call(model.eval)
        ck.check(all(not m.training for m in model.modules()),
                 "eval() did not reach every module.", hint="Set training on self.modules().")
        x = pkg.Variable(np.ones((4, 1000)))
        drop = model[1]
        ck.close(drop(x).data, x.data, what="Dropout in eval mode",
                 hint="In eval mode Dropout returns its input unchanged.")
        drop.train()
        out = np.asarray(drop(x).data)
        kept = out != 0
        ck.check(0.4 < kept.mean() < 0.6, "Dropout(0.5) in training mode should zero about "
                 "half of the elements.", received=float(kept.mean()))
        ck.close(out[kept], np.full(int(kept.sum()), 2.0), what="the kept elements",
                 hint="Inverted dropout scales what it keeps by 1 / (1 - p).")
    with ck.case("init_uniform draws U(-bound, bound) from the generator manual_seed resets"):
        init_uniform = getattr(nn, "init_uniform", None)
        ck.check(callable(init_uniform), "nn.py has no init_uniform(shape, bound, dtype).",
                 hint="Chapter 10's Conv2d draws its weights with it: run the manual_seed cell of "
                      "chapter 08 again.")
        pkg.manual_seed(3)
        a = ck.call(init_uniform, (4, 5), 0.25)
        pkg.manual_seed(3)
        b = ck.call(init_uniform, (4, 5), 0.25, np.float64)
        drawn = np.random.default_rng(3).uniform(-0.25, 0.25, size=(4, 5))
        ck.check(a.shape == (4, 5) and a.dtype == np.float32 and b.dtype == np.float64,
                 "init_uniform gives the wrong shape or dtype.", expected="(4, 5) float32, float64",
                 received=f"{a.shape} {a.dtype}, {b.dtype}")
        ck.close(b, drawn, atol=0, what="init_uniform((4, 5), 0.25) after manual_seed(3)",
                 hint="Return _generator.uniform(-bound, bound, size=shape).astype(dtype).")
    with ck.case("Linear's bias gradient: your column_sums with USE_KERNELS, numpy without; "
                 "the same numbers"):
        flag, kernel = getattr(nn, "USE_KERNELS", None), getattr(nn, "column_sums", None)
        if flag is None or kernel is None:
            ck.fail("mygrad/nn.py has no USE_KERNELS "
                    "flag or does not see column_sums.", hint="Run chapter 08's Linear cell "
                    "again: it defines the flag and AddBias, whose backward calls column_sums.")
        rng = np.random.default_rng(5)
        x = rng.normal(size=(9, 4)).astype(np.float32)
        g = rng.normal(size=(9, 3)).astype(np.float32)
        calls = []

        def counting(a: np.ndarray) -> np.ndarray:
            calls.append(a.shape)
            return kernel(a)

        grads = {}
        try:
            nn.column_sums = counting
            for use in (True, False):
                nn.USE_KERNELS = use
                pkg.manual_seed(0)
                layer = ck.call(nn.Linear, 4, 3)
                out = ck.call(layer, pkg.Variable(x))
                ck.call(lambda: out.backward(pkg.Variable(g)))
                grads[use] = (len(calls), np.asarray(layer.bias.grad.data))
        finally:
            nn.column_sums, nn.USE_KERNELS = kernel, flag
        ck.check(grads[True][0] == 1 and grads[False][0] == 1, "Linear's backward did not "
                 "call column_sums exactly once with USE_KERNELS = True and never with False.",
                 received=[grads[True][0], grads[False][0] - grads[True][0]],
                 hint="AddBias.backward: column_sums(g) if USE_KERNELS else column_sums_ref(g), "
                      "reading the flag at every call.")
        ck.close(grads[True][1], g.sum(axis=0), atol=1e-5, what="bias gradient (kernel)")
        ck.close(grads[False][1], g.sum(axis=0), atol=1e-5, what="bias gradient (numpy)")
    ck.done()
    from . import ch08_linear
    ch08_linear(nn.Linear, Module=nn.Module, manual_seed=pkg.manual_seed)


def mygrad_optim(pkg: Any) -> None:
    """``mygrad.optim``: SGD (momentum, weight decay, nesterov) and Adam, step by step against
    ``autograd_lab.optim``."""
    al = library()
    ck = Checker("mygrad-optim")
    rng = np.random.default_rng(3)
    cases: list[tuple[str, Any, Any, dict[str, Any]]] = [
             ("SGD, momentum 0.9, weight decay 0.1", pkg.optim.SGD, al.optim.SGD,
              dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
             ("SGD, nesterov", pkg.optim.SGD, al.optim.SGD,
              dict(lr=0.1, momentum=0.9, nesterov=True)),
             ("Adam", pkg.optim.Adam, al.optim.Adam, dict(lr=0.05)),
             ("Adam, weight decay 0.1", pkg.optim.Adam, al.optim.Adam,
              dict(lr=0.05, weight_decay=0.1))]
    for name, mine, ref, kw in cases:
        with ck.case(f"{name}: 4 steps match autograd_lab.optim"):
            start = rng.normal(size=(2, 3))
            p, q = pkg.nn.Parameter(start.copy()), al.nn.Parameter(start.copy())
            opt, ref_opt = ck.call(mine, [p], **kw), ref([q], **kw)
            for step in range(4):
                g = rng.normal(size=(2, 3))
                ck.call(opt.zero_grad)
                ref_opt.zero_grad()
                p.grad, q.grad = pkg.Variable(g.copy()), al.Variable(g.copy())
                ck.call(opt.step)
                ref_opt.step()
                ck.close(p.data, q.data, atol=1e-12, rtol=1e-10,
                         what=f"the parameter after step {step + 1}")
            ck.check(p.is_leaf and p.requires_grad, "after step() the parameter is no longer "
                     "a leaf that requires grad.", hint="Update p.data under no_grad().")
    ck.done()
