"""Checkers for chapter 08, Modules and optimizers.

The optimizers are checked step by step against ``autograd_lab.optim`` (which follows
PyTorch's update rules): both get the same parameters and the same gradients, and the
parameters must agree after every step.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library, named, shaped_mistakes

__all__ = ["ch08_linear", "mygrad_nn",
           "mygrad_optim"]


# -- ch08-linear ----------------------------------------------------------------------------
def ch08_linear(MyLinear: type[Any], *, seed: int = 0, hidden: bool = False,
                Module: type[Any] | None = None, manual_seed: Callable[[int], None] | None = None
                ) -> None:
    """Check a Linear layer: a Module whose Parameters ``weight`` (out, in) and ``bias``
    (out,) are registered by assignment, drawn from U(-1/sqrt(in), 1/sqrt(in)), and whose
    forward is ``x @ weight.T + bias`` (a differentiable Variable expression).

    Without ``Module``: ``MyLinear(in, out, bias=True, seed=None)`` is an ``autograd_lab.nn``
    Module seeded by its ``seed`` argument. With ``Module`` and ``manual_seed`` (the learner's
    ``mygrad``): ``MyLinear(in, out, bias=True)`` is a subclass of that ``Module`` and draws
    from the generator that ``manual_seed`` resets."""
    ck = Checker("ch08-linear", seed=seed, hidden=hidden)
    al = library()
    mine = Module is not None
    nn = al.nn
    Base = Module if Module is not None else nn.Module
    Variable = _variable_class(MyLinear) if mine else al.Variable
    rng = ck.rng
    init_hint = ("Call super().__init__() first, then assign Parameter objects to self.weight "
                 "and self.bias (or self.bias = None when bias=False).")
    cls_name = MyLinear.__name__

    def make(*args: Any, seed: int = 0, **kwargs: Any) -> Any:
        if mine:
            if manual_seed is not None:
                manual_seed(seed)
            return ck.call(named(lambda: MyLinear(*args, **kwargs), cls_name), hint=init_hint)
        return ck.call(named(lambda: MyLinear(*args, seed=seed, **kwargs), cls_name), hint=init_hint)

    with ck.case(f"{cls_name}(3, 2) registers weight (2, 3) and bias (2,) as Parameters"):
        layer = make(3, 2, seed=0)
        ck.check(isinstance(layer, Base), f"{cls_name} is not a Module.",
                 hint=f"Write `class {cls_name}(Module):`.")
        names = [n for n, _ in ck.call(layer.named_parameters)]
        ck.check(names == ["weight", "bias"], "named_parameters() does not list weight, bias.",
                 expected=["weight", "bias"], received=names,
                 hint="Only nn.Parameter values are registered: self.weight = "
                      "nn.Parameter(array), assigned in this order, after super().__init__().")
        params = dict(layer.named_parameters())
        for name, shape in (("weight", (2, 3)), ("bias", (2,))):
            got = tuple(params[name].shape)
            ck.check(got == shape, f"{name} has shape {got}, expected {shape}.",
                     hint="weight is (out_features, in_features), as in PyTorch, so that "
                          "forward is x @ weight.T; bias is (out_features,).")
            ck.check(params[name].requires_grad, f"{name} does not require grad.",
                     hint="nn.Parameter(...) requires grad by default; do not pass "
                          "requires_grad=False.")
    shapes = [(4, 3, 2, True), (5, 4, 1, False)] + ([(7, 6, 3, True)] if hidden else [])
    for batch, n_in, n_out, bias in shapes:
        with ck.case(f"forward and backward: ({batch}, {n_in}) batch, out_features={n_out}, "
                     f"bias={bias}"):
            layer = make(n_in, n_out, bias=bias, seed=1)
            names = [n for n, _ in layer.named_parameters()]
            want = ["weight", "bias"] if bias else ["weight"]
            ck.check(names == want, f"the parameters are {names}, expected {want}.",
                     hint="With bias=False register no bias: self.bias = None.")
            W = np.array(layer.weight.data, dtype=np.float64)
            x = Variable(np.round(rng.normal(size=(batch, n_in)), 3), requires_grad=True)
            y = ck.call(layer, x)
            b = np.array(layer.bias.data, dtype=np.float64) if bias else 0.0
            expected = x.data @ W.T + b
            got = getattr(y, "data", y)
            ck.close(got, expected, atol=1e-5, rtol=1e-5, what="output",
                     hint="forward returns x @ self.weight.T + self.bias.",
                     mistakes=shaped_mistakes(expected.shape, (lambda: x.data @ W + b,
                                                         "Use weight.T: weight is (out, in).")))
            ck.check(getattr(y, "grad_fn", None) is not None,
                     "the output has no grad_fn: nothing was recorded for backward.",
                     hint="Compute with Variables (x @ self.weight.T + self.bias), not with "
                          "their numpy .data, so that the graph is recorded.")
            g = np.round(rng.normal(size=(batch, n_out)), 3)
            ck.call(named(lambda: y.backward(Variable(g)), "backward"))
            ck.close(getattr(layer.weight.grad, "data", None), g.T @ x.data, atol=1e-5,
                     rtol=1e-5, what="weight.grad", hint="Let autograd do it: build the output "
                     "from self.weight with Variable operations.")
            if bias:
                ck.close(getattr(layer.bias.grad, "data", None), g.sum(axis=0), atol=1e-5,
                         rtol=1e-5, what="bias.grad")
    n_in, n_out = (100, 300) if not hidden else (250, 120)
    bound = 1 / np.sqrt(n_in)
    with ck.case(f"weights of {cls_name}({n_in}, {n_out}) are U(-1/sqrt({n_in}), 1/sqrt({n_in}))"):
        layer = make(n_in, n_out, seed=seed)
        w = np.asarray(layer.weight.data, dtype=np.float64)
        b = np.asarray(layer.bias.data, dtype=np.float64)
        std = float(w.std())
        init = (f"Draw both from rng.uniform(-k, k, size=...) with k = 1 / sqrt(in_features) = "
                f"{bound:.4g}.")
        ck.check(np.abs(w).max() <= bound * (1 + 1e-6),
                 f"some weights lie outside [-{bound:.4g}, {bound:.4g}].",
                 expected=f"max |w| <= {bound:.4g}", received=f"max |w| = {np.abs(w).max():.4g}",
                 hint=("A normal distribution has no bound: use a uniform one. " if std > 0.45 *
                       bound else "") + init)
        ck.check(abs(float(w.mean())) < 0.05 * bound, "the weights are not centred on 0.",
                 expected=0.0, received=float(w.mean()),
                 hint="U(0, 1) only gives positive weights. " + init)
        ck.check(np.abs(w).max() > 0.9 * bound and abs(std - bound / np.sqrt(3)) < 0.05 * bound,
                 "the weights do not spread over the whole interval.",
                 expected=f"std about k / sqrt(3) = {bound / np.sqrt(3):.4g}",
                 received=f"std {std:.4g}",
                 hint="k uses fan_in, the number of inputs (in_features), not out_features. "
                      + init)
        ck.check(np.abs(b).max() <= bound * (1 + 1e-6) and np.abs(b).max() > 0.5 * bound,
                 "the bias is not drawn from the same interval.",
                 expected=f"values in [-{bound:.4g}, {bound:.4g}], not all 0",
                 received=f"max |b| = {np.abs(b).max():.4g}",
                 hint="PyTorch draws the bias from the same U(-k, k) (zeros would also train, but "
                      "this exercise follows PyTorch).")
    seeding = ("Draw weight and bias with init_uniform, from the module's generator (which "
               "manual_seed resets), not from a new default_rng() or np.random." if mine else
               "Make one generator per layer, rng = np.random.default_rng(seed), and draw "
               "weight and bias from it.")
    with ck.case("the same seed gives the same weights, another seed others"):
        a1, a2, other = make(4, 3, seed=7), make(4, 3, seed=7), make(4, 3, seed=8)
        ck.check(np.array_equal(a1.weight.data, a2.weight.data)
                 and np.array_equal(a1.bias.data, a2.bias.data),
                 "two layers made with seed=7 differ.", hint=seeding)
        ck.check(not np.array_equal(a1.weight.data, other.weight.data),
                 "seed=7 and seed=8 give the same weights.", hint=seeding)
    if mine:
        class Two(Base):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.hidden = MyLinear(3, 4)
                self.out = MyLinear(4, 2)

            def forward(self, x: Any) -> Any:
                return self.out(self.hidden(x).relu())

        with ck.case("inside another Module: dotted names and a state_dict"):
            model = ck.call(named(Two, "a Module holding two layers"), hint=init_hint)
            keys = list(model.state_dict())
            want = ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
            ck.check(keys == want, "the state_dict keys are not the expected dotted names.",
                     expected=want, received=keys, hint=init_hint)
            out = ck.call(model, Variable(rng.normal(size=(5, 3))))
            ck.check(tuple(out.shape) == (5, 2), "the model output has the wrong shape.",
                     expected=(5, 2), received=tuple(out.shape))
        ck.done()
        return
    with ck.case("inside nn.Sequential: dotted names and a state_dict"):
        model = ck.call(named(lambda: nn.Sequential(MyLinear(3, 4, seed=0), nn.ReLU(),
                                                     MyLinear(4, 2, seed=1)), "nn.Sequential"))
        keys = list(model.state_dict())
        want = ["0.weight", "0.bias", "2.weight", "2.bias"]
        ck.check(keys == want, "the state_dict keys are not the expected dotted names.",
                 expected=want, received=keys, hint=init_hint)
        out = ck.call(model, al.Variable(rng.normal(size=(5, 3))))
        ck.check(tuple(out.shape) == (5, 2), "the model output has the wrong shape.",
                 expected=(5, 2), received=tuple(out.shape))
    ck.done()


def _variable_class(layer_class: type[Any]) -> Any:
    """The Variable class of the library a learner's layer class was written with."""
    import sys
    module = sys.modules.get(layer_class.__module__)
    found = getattr(module, "Variable", None)
    if found is None:
        import __main__
        found = getattr(__main__, "Variable", None)
    return found if found is not None else library().Variable


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
