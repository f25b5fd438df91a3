"""Chapter 08's library modules: the key's mygrad/nn.py and mygrad/optim.py, their loader checks
(``ch08.mygrad_nn``, ``ch08.mygrad_optim``) and ``ch08_linear`` on mygrad's Linear; each check
must pass the key and reject the typical mistakes with the right hint."""
from __future__ import annotations

import types

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises import ch08, check

from ._checker_helpers import SEEDS, assert_all_passed
from ._mygrad_key import mygrad  # noqa: F401  (a fixture)
from .._oracle import require_torch


def _fail(checker, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        checker(*args, **kwargs)
    return str(info.value)


# -- the key passes ---------------------------------------------------------------------------
def test_the_key_passes_the_loader_checks(mygrad, capsys):
    ch08.mygrad_nn(mygrad)
    ch08.mygrad_optim(mygrad)
    out = capsys.readouterr().out
    assert "All 4 cases of mygrad-nn passed." in out and "All 4 cases of mygrad-optim passed." in out
    assert "All 6 cases of ch08-linear passed." in out


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_graded_checks(mygrad, seed, hidden, capsys):
    nn, optim = mygrad.nn, mygrad.optim
    check.ch08_linear(nn.Linear, Module=nn.Module, manual_seed=mygrad.manual_seed, seed=seed,
                      hidden=hidden)
    check.ch08_sgd_momentum(optim.SGD, seed=seed, hidden=hidden)
    check.ch08_adam(optim.Adam, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 3, hidden)


# -- the key's behaviour ----------------------------------------------------------------------
def test_module_registers_in_order_and_names_with_dots(mygrad):
    nn = mygrad.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(np.ones(1))
            self.body = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
            self.plain = [nn.Linear(3, 1)]                      # a list hides its layers
            self.head = nn.Linear(3, 1, bias=False)

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "body.0.weight", "body.0.bias",
                                                      "head.weight"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Sequential", "Linear", "ReLU",
                                                         "Linear"]
    net.head = None                                            # rebinding unregisters
    assert "head.weight" not in dict(net.named_parameters())
    assert repr(nn.Parameter(np.zeros(1))).startswith("Parameter containing:\n")


def test_module_without_super_init_says_what_to_do(mygrad):
    class Forgetful(mygrad.nn.Module):
        def __init__(self):
            self.w = mygrad.nn.Parameter(np.ones(2))

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\) at the top of Forgetful"):
        Forgetful()


def test_linear_matches_torch_semantics(mygrad):
    nn = mygrad.nn
    mygrad.manual_seed(3)
    a = nn.Linear(400, 300)
    mygrad.manual_seed(3)
    b = nn.Linear(400, 300)
    assert np.array_equal(a.weight.data, b.weight.data) and a.weight.dtype == np.float32
    k = 1 / np.sqrt(400)
    assert np.abs(a.weight.data).max() <= k and abs(a.weight.data.std() - k / np.sqrt(3)) < 0.01 * k
    x = mygrad.Variable(np.random.default_rng(0).normal(size=(5, 400)).astype(np.float32))
    np.testing.assert_allclose(a(x).data, x.data @ a.weight.data.T + a.bias.data, rtol=1e-5)
    with pytest.raises(ValueError, match="positive int in_features"):
        nn.Linear(0, 3)


def test_dropout_train_and_eval(mygrad):
    nn = mygrad.nn
    mygrad.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = mygrad.Variable(np.ones((200, 100)), requires_grad=True)
    y = drop(x)
    kept = y.data != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(y.data[kept], 1 / 0.75)
    y.sum().backward()                                        # the gradient goes through the mask
    np.testing.assert_allclose(x.grad.data, kept / 0.75)
    assert drop.eval()(x) is x or np.array_equal(drop(x).data, x.data)
    assert np.all(nn.Dropout(1.0)(x).data == 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_optimizer_input_errors(mygrad):
    SGD = mygrad.optim.SGD
    with pytest.raises(ValueError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(TypeError, match="wrap it in a list"):
        SGD(mygrad.nn.Parameter(np.ones(2)), lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        SGD([mygrad.nn.Parameter(np.ones(2))], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        SGD([mygrad.nn.Parameter(np.ones(2))], lr=0.1, nesterov=True)


@pytest.mark.parametrize("make", [
    lambda optim, ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
    lambda optim, ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1),
])
def test_optimizers_match_torch_step_by_step(mygrad, make):
    torch = require_torch()
    rng = np.random.default_rng(1)
    start = rng.normal(size=(3, 4))
    p = mygrad.nn.Parameter(start.copy())
    q = torch.nn.Parameter(torch.tensor(start.copy()))
    ours, theirs = make(mygrad.optim, [p]), make(torch.optim, [q])
    for _ in range(6):
        g = rng.normal(size=(3, 4))
        p.grad, q.grad = mygrad.Variable(g.copy()), torch.tensor(g.copy())
        ours.step()
        theirs.step()
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-12, atol=1e-14)


# -- the checks reject typical mistakes -----------------------------------------------------
def _package(mygrad, **replace):
    """The key's mygrad with some names of nn / optim replaced."""
    nn = types.SimpleNamespace(**{n: getattr(mygrad.nn, n) for n in mygrad.nn.__all__})
    optim = types.SimpleNamespace(**{n: getattr(mygrad.optim, n) for n in mygrad.optim.__all__})
    for name, value in replace.items():
        setattr(optim if name in ("SGD", "Adam") else nn, name, value)
    return types.SimpleNamespace(nn=nn, optim=optim, Variable=mygrad.Variable,
                                 manual_seed=mygrad.manual_seed)


def test_linear_with_an_unseeded_generator_gets_the_generator_hint(mygrad):
    class Unseeded(mygrad.nn.Linear):
        def __init__(self, in_features, out_features, bias=True):
            mygrad.nn.Module.__init__(self)
            self.in_features, self.out_features = in_features, out_features
            k = 1 / np.sqrt(in_features)
            rng = np.random.default_rng()
            self.weight = mygrad.nn.Parameter(rng.uniform(-k, k, (out_features, in_features)))
            self.bias = mygrad.nn.Parameter(rng.uniform(-k, k, out_features)) if bias else None

    msg = _fail(check.ch08_linear, Unseeded, Module=mygrad.nn.Module,
                manual_seed=mygrad.manual_seed)
    assert "seed=7" in msg and "init_uniform" in msg


def test_linear_forward_through_numpy_gets_the_graph_hint(mygrad):
    class NoGraph(mygrad.nn.Linear):
        def forward(self, x):
            return mygrad.Variable(x.data @ self.weight.data.T + self.bias.data)

    msg = _fail(check.ch08_linear, NoGraph, Module=mygrad.nn.Module,
                manual_seed=mygrad.manual_seed)
    assert "no grad_fn" in msg


def test_linear_with_a_transposed_weight_gets_the_shape_hint(mygrad):
    class Transposed(mygrad.nn.Linear):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__(in_features, out_features, bias)
            self.weight = mygrad.nn.Parameter(self.weight.data.T.copy())

        def forward(self, x):
            return x @ self.weight + self.bias

    msg = _fail(check.ch08_linear, Transposed, Module=mygrad.nn.Module,
                manual_seed=mygrad.manual_seed)
    assert "(out_features, in_features)" in msg


def test_dropout_without_rescaling_fails_the_nn_check(mygrad):
    class Unscaled(mygrad.nn.Dropout):
        def forward(self, x):
            if not self.training:
                return x
            return x * mygrad.Variable(np.random.default_rng(0).random(x.shape) >= self.p)

    msg = _fail(ch08.mygrad_nn, _package(mygrad, Dropout=Unscaled))
    assert "the kept elements" in msg and "1 / (1 - p)" in msg


def test_an_nn_without_init_uniform_fails_the_nn_check(mygrad):
    pkg = _package(mygrad)
    del pkg.nn.init_uniform
    msg = _fail(ch08.mygrad_nn, pkg)
    assert "no init_uniform" in msg and "Conv2d" in msg


def test_an_init_uniform_off_the_seeded_generator_fails_the_nn_check(mygrad):
    def unseeded(shape, bound, dtype=np.float32):
        return np.random.default_rng().uniform(-bound, bound, size=shape).astype(dtype)

    msg = _fail(ch08.mygrad_nn, _package(mygrad, init_uniform=unseeded))
    assert "after manual_seed(3)" in msg and "_generator.uniform" in msg


def test_linear_draws_its_weights_with_init_uniform(mygrad):
    """The same random stream as before init_uniform: weight, then bias, from one generator."""
    mygrad.manual_seed(5)
    layer = mygrad.nn.Linear(3, 2)
    rng = np.random.default_rng(5)
    k = 1 / np.sqrt(3)
    weight = rng.uniform(-k, k, size=(2, 3)).astype(np.float32)
    bias = rng.uniform(-k, k, size=2).astype(np.float32)
    assert np.array_equal(layer.weight.data, weight) and np.array_equal(layer.bias.data, bias)
    mygrad.manual_seed(5)
    assert np.array_equal(mygrad.nn.init_uniform((2, 3), k), weight)


def test_eval_that_does_not_recurse_fails_the_nn_check(mygrad):
    class Shallow(mygrad.nn.Sequential):
        def train(self, mode=True):
            self.training = mode
            return self

    msg = _fail(ch08.mygrad_nn, _package(mygrad, Sequential=Shallow))
    assert "eval() did not reach every module" in msg


def test_sgd_with_averaged_momentum_fails_the_optim_check(mygrad):
    class Averaged(mygrad.optim.SGD):
        def step(self):
            for p, state in zip(self.params, self.state):
                d = p.grad.data + self.weight_decay * p.data
                buf = state.get("momentum_buffer")
                buf = d.copy() if buf is None else self.momentum * buf + (1 - self.momentum) * d
                state["momentum_buffer"] = buf
                p.data -= self.lr * buf

    msg = _fail(ch08.mygrad_optim, _package(mygrad, SGD=Averaged))
    assert "SGD, momentum 0.9" in msg and "after step 2" in msg


def test_adam_without_bias_correction_fails_the_optim_check(mygrad):
    class Uncorrected(mygrad.optim.Adam):
        def step(self):
            b1, b2 = self.betas
            for p, state in zip(self.params, self.state):
                g = p.grad.data + self.weight_decay * p.data
                m = state.setdefault("m", np.zeros_like(p.data))
                v = state.setdefault("v", np.zeros_like(p.data))
                m[...] = b1 * m + (1 - b1) * g
                v[...] = b2 * v + (1 - b2) * g * g
                p.data -= self.lr * m / (np.sqrt(v) + self.eps)

    msg = _fail(ch08.mygrad_optim, _package(mygrad, Adam=Uncorrected))
    assert "Adam: 4 steps" in msg and "after step 1" in msg


def test_the_checks_compare_against_the_library(mygrad):
    """The optimizer check is only as good as its oracle: autograd_lab follows PyTorch."""
    p = al.nn.Parameter(np.array([1.0, -2.0]))
    opt = al.optim.SGD([p], lr=0.1, momentum=0.9)
    for _ in range(2):
        p.grad = al.Variable(np.array([1.0, 1.0]))
        opt.step()
    np.testing.assert_allclose(p.data, [1.0 - 0.1 - 0.19, -2.0 - 0.1 - 0.19])


# -- ch08-module: Module's parameter walk -------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_module_check(mygrad, seed, hidden, capsys):
    check.ch08_module(mygrad.nn.Module, mygrad.nn.Parameter, seed=seed, hidden=hidden)
    assert "All 7 cases of ch08-module passed" in capsys.readouterr().out


def _walk_mistake(mygrad, **methods):
    """The key's Module with some methods replaced by a mistaken version."""
    return type("Module", (mygrad.nn.Module,), methods)


def test_a_walk_that_does_not_recurse_gets_the_recursion_hint(mygrad):
    def named_parameters(self, prefix=""):
        yield from self._parameters.items()
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, named_parameters=named_parameters),
                mygrad.nn.Parameter)
    assert "named_parameters() does not list" in msg and "recurse into the child" in msg


def test_a_walk_without_prefixes_gets_the_prefix_hint(mygrad):
    def named_parameters(self, prefix=""):
        for _, module in self.named_modules():
            yield from module._parameters.items()
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, named_parameters=named_parameters),
                mygrad.nn.Parameter)
    assert "lack the module's prefix" in msg


def test_a_walk_that_lists_a_shared_parameter_twice_gets_the_seen_set_hint(mygrad):
    def named_parameters(self, prefix=""):
        for name, module in self.named_modules(prefix):
            for pname, p in module._parameters.items():
                yield (f"{name}.{pname}" if name else pname), p
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, named_parameters=named_parameters),
                mygrad.nn.Parameter)
    assert "shared parameter" in msg and "set of the ids" in msg


def test_a_walk_that_visits_children_first_gets_the_order_hint(mygrad):
    def named_modules(self, prefix=""):
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)
        yield prefix, self
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, named_modules=named_modules),
                mygrad.nn.Parameter)
    assert "named_modules() does not list" in msg or "order differs" in msg


def test_a_setattr_that_never_unregisters_gets_the_reassignment_hint(mygrad):
    def __setattr__(self, name, value):
        if "_parameters" in self.__dict__:
            if isinstance(value, mygrad.nn.Parameter):
                self._parameters[name] = value
            elif isinstance(value, mygrad.nn.Module):
                self._modules[name] = value
        object.__setattr__(self, name, value)
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, __setattr__=__setattr__),
                mygrad.nn.Parameter)
    assert "reassigned name still lists" in msg and "one thing at a time" in msg


def test_zero_grad_that_fills_zeros_gets_the_none_hint(mygrad):
    def zero_grad(self):
        for p in self.parameters():
            p.grad = mygrad.nn.Parameter(np.zeros(p.shape))
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, zero_grad=zero_grad),
                mygrad.nn.Parameter)
    assert "not None after zero_grad" in msg and "not zeros" in msg


def test_zero_grad_of_the_own_parameters_only_gets_the_walk_hint(mygrad):
    def zero_grad(self):
        for p in self._parameters.values():
            p.grad = None
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, zero_grad=zero_grad),
                mygrad.nn.Parameter)
    assert "not None after zero_grad" in msg and "children's parameters" in msg


def test_the_untouched_stub_fails_the_module_check(mygrad):
    def named_parameters(self, prefix=""):
        raise NotImplementedError("Exercise ch08-module: write your code here")
    with pytest.raises(NotImplementedError, match="ch08-module is not done yet"):
        check.ch08_module(_walk_mistake(mygrad, named_parameters=named_parameters),
                          mygrad.nn.Parameter)


def test_train_that_does_not_recurse_gets_the_modules_hint(mygrad):
    def train(self, mode=True):
        self.training = bool(mode)
        return self
    msg = _fail(check.ch08_module, _walk_mistake(mygrad, train=train), mygrad.nn.Parameter)
    assert "still in training mode" in msg and "self.modules()" in msg


# -- ch08-sequential ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_sequential_and_dropout_checks(mygrad, seed, hidden, capsys):
    check.ch08_sequential(mygrad.nn.Sequential, mygrad.nn.Module, seed=seed, hidden=hidden)
    check.ch08_dropout(mygrad.nn.Dropout, seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert "All 3 cases of ch08-sequential passed" in out
    assert "All 3 cases of ch08-dropout passed" in out


def _sequential(mygrad, **methods):
    return type("Sequential", (mygrad.nn.Sequential,), methods)


def test_sequential_in_reverse_order_gets_the_order_hint(mygrad):
    def forward(self, x):
        for m in reversed(list(self._modules.values())):
            x = m(x)
        return x
    msg = _fail(check.ch08_sequential, _sequential(mygrad, forward=forward), mygrad.nn.Module)
    assert "reverse order" in msg


def test_sequential_that_feeds_every_module_the_input_gets_the_chaining_hint(mygrad):
    def forward(self, x):
        for m in self._modules.values():
            y = m(x)
        return y
    msg = _fail(check.ch08_sequential, _sequential(mygrad, forward=forward), mygrad.nn.Module)
    assert "reassign x = m(x)" in msg


def test_sequential_keeping_a_plain_list_gets_the_registration_hint(mygrad):
    Module = mygrad.nn.Module

    class Listed(Module):
        def __init__(self, *modules):
            super().__init__()
            self.layers = list(modules)

        def forward(self, x):
            for m in self.layers:
                x = m(x)
            return x
    msg = _fail(check.ch08_sequential, Listed, Module)
    assert "not registered under '0'" in msg and "plain list hides them" in msg


def test_sequential_without_negative_indices_gets_the_indexing_hint(mygrad):
    def __getitem__(self, i):
        return self._modules[str(i)]
    msg = _fail(check.ch08_sequential, _sequential(mygrad, __getitem__=__getitem__),
                mygrad.nn.Module)
    assert "seq[-1]" in msg or "negative" in msg


# -- ch08-dropout ---------------------------------------------------------------------------------
def _dropout(mygrad, forward):
    return type("Dropout", (mygrad.nn.Dropout,), {"forward": forward})


def test_dropout_without_rescaling_gets_the_scale_hint(mygrad):
    Variable = mygrad.Variable

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = np.random.default_rng(0).random(x.shape) >= self.p
        return x * Variable(keep.astype(x.dtype))
    msg = _fail(check.ch08_dropout, _dropout(mygrad, forward))
    assert "not scaled by 1/(1 - p)" in msg and "expected output equals the input" in msg


def test_dropout_keeping_a_fraction_p_gets_the_mask_hint(mygrad):
    Variable = mygrad.Variable

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = np.random.default_rng(0).random(x.shape) < self.p
        return x * Variable((keep / (1 - self.p)).astype(x.dtype))
    msg = _fail(check.ch08_dropout, _dropout(mygrad, forward))
    assert "elements are zeroed" in msg and "with < p you keep a fraction p" in msg


def test_dropout_that_also_drops_in_eval_mode_gets_the_eval_hint(mygrad):
    Variable = mygrad.Variable

    def forward(self, x):
        if self.p == 0:
            return x
        if self.p == 1:
            return x * 0.0
        keep = np.random.default_rng(0).random(x.shape) >= self.p
        return x * Variable((keep / (1 - self.p)).astype(x.dtype))
    msg = _fail(check.ch08_dropout, _dropout(mygrad, forward))
    assert "output in eval mode" in msg and "return the input unchanged" in msg


def test_dropout_on_numpy_data_gets_the_graph_hint(mygrad):
    Variable = mygrad.Variable

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = np.random.default_rng(0).random(x.shape) >= self.p
        return Variable(x.data * keep / (1 - self.p))
    msg = _fail(check.ch08_dropout, _dropout(mygrad, forward))
    assert "no grad_fn" in msg
