"""Check a Linear layer: a Module whose Parameters ``weight`` (out, in) and ``bias``
(out,) are registered by assignment, drawn from U(-1/sqrt(in), 1/sqrt(in)), and whose
forward is ``x @ weight.T + bias`` (a differentiable Variable expression).

Without ``Module``: ``MyLinear(in, out, bias=True, seed=None)`` is an ``autograd_lab.nn``
Module seeded by its ``seed`` argument. With ``Module`` and ``manual_seed`` (the learner's
``mygrad``; found from the class when not given): ``MyLinear(in, out, bias=True)`` is a
subclass of that ``Module`` and draws from the generator that ``manual_seed`` resets."""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of, library, shaped_mistakes
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import call, case, class_name, put_class_name, seen, variable_class
from .messages import HINTS

ID = "ch08-linear"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("a transposed weight", ("init_uniform((out_features, in_features), k, dtype)",
                                    "init_uniform((in_features, out_features), k, dtype)"),
            None, "linear.shape"),
    Mistake("k from fan_out", ("k = 1 / np.sqrt(in_features)", "k = 1 / np.sqrt(out_features)"),
            None, "linear.init"),
    Mistake("forward through numpy", ("return linear(x, self.weight, self.bias)",
                                      "return Variable(linear(x, self.weight, self.bias).data)"),
            None, "linear.graph"),
    Mistake("a zero bias", ("self.bias = Parameter(init_uniform((out_features,), k, dtype))",
                            "self.bias = Parameter(np.zeros(out_features, dtype))"), None,
            "linear.bias"),
    Mistake("no bias in forward", ("return linear(x, self.weight, self.bias)",
                                   "return linear(x, self.weight)"), None, "linear.forward"),
)

SHAPES = [(4, 3, 2, True), (5, 4, 1, False)]
HIDDEN_SHAPES = [(7, 6, 3, True)]
C_SEED = "the same seed gives the same weights, another seed others"


def cases(seed: int, hidden: bool) -> list[tuple[tuple[int, int, int, bool], np.ndarray,
                                                  np.ndarray]]:
    """((batch, in, out, bias), x, grad of the output) of the forward cases; the model case's
    input is drawn after them (:func:`model_input`)."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in SHAPES + (HIDDEN_SHAPES if hidden else []):
        batch, n_in, n_out, _ = shape
        x = np.round(rng.normal(size=(batch, n_in)), 3)
        g = np.round(rng.normal(size=(batch, n_out)), 3)
        found.append((shape, x, g))
    return found


def model_input(seed: int, hidden: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    for batch, n_in, n_out, _ in SHAPES + (HIDDEN_SHAPES if hidden else []):
        rng.normal(size=(batch, n_in))
        rng.normal(size=(batch, n_out))
    return rng.normal(size=(5, 3))


def _forward_title(shape: tuple[int, int, int, bool]) -> str:
    batch, n_in, n_out, bias = shape
    return f"forward and backward: ({batch}, {n_in}) batch, out_features={n_out}, bias={bias}"


def _init_sizes(hidden: bool) -> tuple[int, int]:
    return (100, 300) if not hidden else (250, 120)


def _titles(name: str, hidden: bool, mine: bool) -> tuple[str, str, str]:
    n_in, n_out = _init_sizes(hidden)
    return (f"{name}(3, 2) registers weight (2, 3) and bias (2,) as Parameters",
            f"weights of {name}({n_in}, {n_out}) are U(-1/sqrt({n_in}), 1/sqrt({n_in}))",
            "inside another Module: dotted names and a state_dict" if mine else
            "inside nn.Sequential: dotted names and a state_dict")


def _learners_mygrad(MyLinear: type[Any]) -> tuple[Any, Any]:
    """(Module, manual_seed) of the learner's library, for a layer that is no autograd_lab.nn
    Module (the notebook passes them; the tests of the key may not)."""
    if isinstance(MyLinear, type) and issubclass(MyLinear, library().nn.Module):
        return None, None
    base = next((c for c in getattr(MyLinear, "__mro__", ())[1:] if c.__name__ == "Module"),
                None)
    found = getattr(sys.modules.get(getattr(MyLinear, "__module__", "")), "manual_seed", None)
    return base, found


def observe(ob: Observer, MyLinear: type[Any], Module: type[Any] | None = None,
            manual_seed: Callable[[int], None] | None = None, *, seed: int,
            hidden: bool) -> None:
    if Module is None:
        Module, manual_seed = _learners_mygrad(MyLinear)
    mine = Module is not None
    al = library()
    Base = Module if Module is not None else al.nn.Module
    Variable = variable_class(MyLinear) if mine else al.Variable
    put_class_name(ob, MyLinear)
    with ob.case("mine"):
        ob.put("mine", mine)
    first, init_title, last = _titles(MyLinear.__name__, hidden, mine)

    def make(*args: Any, seed: int = 0, **kwargs: Any) -> Any:
        if mine:
            if manual_seed is not None:
                manual_seed(seed)
            return call(ob, "build", lambda: MyLinear(*args, **kwargs))
        return call(ob, "build", lambda: MyLinear(*args, seed=seed, **kwargs))

    with case(ob, first):
        layer = make(3, 2, seed=0)
        ob.put("is a Module", isinstance(layer, Base))
        ob.put("names", [n for n, _ in call(ob, "named_parameters", layer.named_parameters)])
        params = dict(layer.named_parameters())
        ob.put("shapes", {k: tuple(int(d) for d in p.shape) for k, p in params.items()})
        ob.put("requires grad", {k: bool(p.requires_grad) for k, p in params.items()})
    for shape, x_data, g in cases(seed, hidden):
        with case(ob, _forward_title(shape)):
            _observe_forward(ob, make, Variable, shape, x_data, g)
    n_in, n_out = _init_sizes(hidden)
    with case(ob, init_title):
        layer = make(n_in, n_out, seed=seed)
        ob.put("weight", np.asarray(layer.weight.data, dtype=np.float64))
        ob.put("bias", np.asarray(layer.bias.data, dtype=np.float64))
    with case(ob, C_SEED):
        for key, s in (("a1", 7), ("a2", 7), ("other", 8)):
            layer = make(4, 3, seed=s)
            ob.put(key, [np.array(layer.weight.data), np.array(layer.bias.data)])
    with case(ob, last):
        _observe_model(ob, MyLinear, Base, Variable, mine, model_input(seed, hidden))


def _observe_forward(ob: Observer, make: Callable[..., Any], Variable: Any,
                     shape: tuple[int, int, int, bool], x_data: np.ndarray,
                     g: np.ndarray) -> None:
    _, n_in, n_out, bias = shape
    layer = make(n_in, n_out, bias=bias, seed=1)
    ob.put("names", [n for n, _ in layer.named_parameters()])
    ob.put("W", np.array(layer.weight.data, dtype=np.float64))
    ob.put("b", np.array(layer.bias.data, dtype=np.float64) if bias else 0.0)
    x = Variable(x_data, requires_grad=True)
    y = call(ob, "forward", layer, x)
    ob.put("output", data_of(y))
    ob.put("has grad_fn", getattr(y, "grad_fn", None) is not None)
    call(ob, "backward", lambda: y.backward(Variable(g)))
    ob.put("weight.grad", getattr(layer.weight.grad, "data", None))
    if bias:
        ob.put("bias.grad", getattr(layer.bias.grad, "data", None))


def _observe_model(ob: Observer, MyLinear: Any, Base: Any, Variable: Any, mine: bool,
                   x: np.ndarray) -> None:
    if mine:
        class Two(Base):
            def __init__(self) -> None:
                super().__init__()
                self.hidden = MyLinear(3, 4)
                self.out = MyLinear(4, 2)

            def forward(self, x: Any) -> Any:
                return self.out(self.hidden(x).relu())

        model = call(ob, "model", Two)
    else:
        nn = library().nn
        model = call(ob, "model", lambda: nn.Sequential(MyLinear(3, 4, seed=0), nn.ReLU(),
                                                        MyLinear(4, 2, seed=1)))
    if mine:  # registered by the layer; the walk is ch08-module's, judged there
        ob.put("keys", [f"{child}.{p}" for child, m in dict(getattr(model, "_modules", {})).items()
                        for p in dict(getattr(m, "_parameters", {}))])
    else:
        ob.put("keys", list(model.state_dict()))
    out = call(ob, "forward", model, Variable(x))
    ob.put("shape", tuple(int(d) for d in out.shape))


def judge(ck: Checker, obs: Observations) -> None:
    name = class_name(ck, obs, "Linear")
    mine = obs.case(ck, "mine")["mine"] is True
    first, init_title, last = _titles(name, obs.hidden, mine)
    build = (f"your {name}", HINTS["linear.init-call"])
    with ck.case(first):
        got = seen(ck, obs, first)
        got.called("build", *build)
        ck.check(got["is a Module"] is True, f"{name} is not a Module.",
                 hint=HINTS["linear.module"].format(name=name))
        got.called("named_parameters", "your named_parameters")
        names = got["names"]
        ck.check(names == ["weight", "bias"], "named_parameters() does not list weight, bias.",
                 expected=["weight", "bias"], received=names, hint=HINTS["linear.names"])
        for pname, want_shape in (("weight", (2, 3)), ("bias", (2,))):
            have = got["shapes"][pname]
            ck.check(have == want_shape, f"{pname} has shape {have}, expected {want_shape}.",
                     hint=HINTS["linear.shape"])
            ck.check(got["requires grad"][pname], f"{pname} does not require grad.",
                     hint=HINTS["linear.requires-grad"])
    for shape, x, g in cases(obs.seed, obs.hidden):
        title = _forward_title(shape)
        with ck.case(title):
            _judge_forward(ck, seen(ck, obs, title), build, shape, x, g)
    _judge_init(ck, obs, build, init_title, mine)
    with ck.case(last):
        got = seen(ck, obs, last)
        got.called("model", "your a Module holding two layers" if mine else "your nn.Sequential",
                   HINTS["linear.init-call"])
        want = (["hidden.weight", "hidden.bias", "out.weight", "out.bias"] if mine
                else ["0.weight", "0.bias", "2.weight", "2.bias"])
        ck.check(got["keys"] == want, "the state_dict keys are not the expected dotted names.",
                 expected=want, received=got["keys"], hint=HINTS["linear.init-call"])
        got.called("forward", "your model")
        ck.check(got["shape"] == (5, 2), "the model output has the wrong shape.",
                 expected=(5, 2), received=got["shape"])
    ck.done()


def _judge_forward(ck: Checker, got: Any, build: tuple[str, str],
                   shape: tuple[int, int, int, bool], x: np.ndarray, g: np.ndarray) -> None:
    _, _, _, bias = shape
    got.called("build", *build)
    names, want = got["names"], (["weight", "bias"] if bias else ["weight"])
    ck.check(names == want, f"the parameters are {names}, expected {want}.",
             hint=HINTS["linear.no-bias"])
    W, b = got["W"], got["b"]
    got.called("forward", "your layer")
    expected = x @ W.T + b
    ck.close(got["output"], expected, atol=1e-5, rtol=1e-5, what="output",
             hint=HINTS["linear.forward"],
             mistakes=shaped_mistakes(expected.shape, (lambda: x @ W + b,
                                                       HINTS["linear.transpose"])))
    ck.check(got["has grad_fn"] is True,
             "the output has no grad_fn: nothing was recorded for backward.",
             hint=HINTS["linear.graph"])
    got.called("backward", "your backward")
    ck.close(got["weight.grad"], g.T @ x, atol=1e-5, rtol=1e-5, what="weight.grad",
             hint=HINTS["linear.weight-grad"])
    if bias:
        ck.close(got["bias.grad"], g.sum(axis=0), atol=1e-5, rtol=1e-5, what="bias.grad")


def _judge_init(ck: Checker, obs: Observations, build: tuple[str, str], title: str,
                mine: bool) -> None:
    n_in, _ = _init_sizes(obs.hidden)
    bound = 1 / np.sqrt(n_in)
    with ck.case(title):
        got = seen(ck, obs, title)
        got.called("build", *build)
        w, b = got["weight"], got["bias"]
        std = float(w.std())
        init = HINTS["linear.init"] + f" = {bound:.4g}."
        ck.check(np.abs(w).max() <= bound * (1 + 1e-6),
                 f"some weights lie outside [-{bound:.4g}, {bound:.4g}].",
                 expected=f"max |w| <= {bound:.4g}", received=f"max |w| = {np.abs(w).max():.4g}",
                 hint=(HINTS["linear.normal"] if std > 0.45 * bound else "") + init)
        ck.check(abs(float(w.mean())) < 0.05 * bound, "the weights are not centred on 0.",
                 expected=0.0, received=float(w.mean()), hint=HINTS["linear.centred"] + init)
        ck.check(np.abs(w).max() > 0.9 * bound and abs(std - bound / np.sqrt(3)) < 0.05 * bound,
                 "the weights do not spread over the whole interval.",
                 expected=f"std about k / sqrt(3) = {bound / np.sqrt(3):.4g}",
                 received=f"std {std:.4g}", hint=HINTS["linear.fan-in"] + init)
        ck.check(np.abs(b).max() <= bound * (1 + 1e-6) and np.abs(b).max() > 0.5 * bound,
                 "the bias is not drawn from the same interval.",
                 expected=f"values in [-{bound:.4g}, {bound:.4g}], not all 0",
                 received=f"max |b| = {np.abs(b).max():.4g}", hint=HINTS["linear.bias"])
    seeding = HINTS["linear.seed-mine" if mine else "linear.seed-given"]
    with ck.case(C_SEED):
        got = seen(ck, obs, C_SEED)
        got.called("build", *build)
        a1, a2, other = got["a1"], got["a2"], got["other"]
        ck.check(np.array_equal(a1[0], a2[0]) and np.array_equal(a1[1], a2[1]),
                 "two layers made with seed=7 differ.", hint=seeding)
        ck.check(not np.array_equal(a1[0], other[0]), "seed=7 and seed=8 give the same weights.",
                 hint=seeding)
