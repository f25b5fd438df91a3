"""Chapter 11 on the learner's library: `mygrad/higher.py` (grad, hvp, hessian, newton_step).

The key's module (course/reference/mygrad/higher.py, the export of solutions/11) is loaded as a
package on top of the key's earlier modules, and its second derivatives are compared with the
analytic ones (and with PyTorch where installed). The `ch11-hvp` checker must accept only the
exact product: a finite-difference answer fails with a hint that names finite differences.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT, write_init
from autograd_lab.course.learner.loader import _forget_package, build_package
from autograd_lab.course.exercises import ch11, check

from ._checker_helpers import SEEDS, failure
from .._oracle import require_torch


@pytest.fixture(scope="module")
def mygrad(tmp_path_factory: pytest.TempPathFactory):
    """The key's mygrad up to higher.py, as a fresh package.

    A module of a chapter whose key has no module file in this checkout is written as an empty
    module, so that higher.py's header (`from .nn import *`, ...) imports; with every chapter's
    module present nothing is stood in.
    """
    folder = tmp_path_factory.mktemp("key") / PACKAGE
    folder.mkdir()
    files: dict[str, Path] = {}
    for module in MODULES[:[m.name for m in MODULES].index("higher") + 1]:
        source = REFERENCE_ROOT / PACKAGE / f"{module.name}.py"
        target = folder / source.name
        target.write_text(source.read_text(encoding="utf-8") if source.exists()
                          else '"""(no module in this checkout)"""\n__all__ = []\n',
                          encoding="utf-8")
        files[module.name] = target
    write_init(folder)
    package = build_package(files, folder)
    yield package
    _forget_package()


def test_reference_has_higher_module() -> None:
    text = (REFERENCE_ROOT / PACKAGE / "higher.py").read_text(encoding="utf-8")
    for name in ("grad", "hvp", "hessian", "newton_step"):
        assert f"def {name}(" in text


def test_grad_twice_gives_exact_second_derivative_of_a_cube(mygrad) -> None:
    x = mygrad.Variable(np.array([-1.5, 0.25, 2.0, 3.0]), requires_grad=True)
    d1, = mygrad.grad((x ** 3).sum(), x, create_graph=True)
    assert d1.requires_grad and d1.grad_fn is not None
    d2, = mygrad.grad(d1.sum(), x, create_graph=True)
    d3, = mygrad.grad(d2.sum(), x)
    np.testing.assert_array_equal(d1.data, 3 * x.data ** 2)
    np.testing.assert_array_equal(d2.data, 6 * x.data)
    np.testing.assert_array_equal(d3.data, np.full(4, 6.0))
    assert x.grad is None  # grad never touches .grad
    assert d3.grad_fn is None  # without create_graph nothing is recorded


@pytest.mark.parametrize("name,f,second", [
    ("exp(x) log(x)", lambda x: x.exp() * x.log(),
     lambda x: np.exp(x) * (np.log(x) + 2 / x - 1 / x ** 2)),
    ("x / (1 + exp(x))", lambda x: x / (x.exp() + 1.0),
     lambda x: (lambda e: (-2 * e * (1 + e) - x * e * (1 + e) + 2 * x * e ** 2) / (1 + e) ** 3)(np.exp(x))),
    ("log(x) ** 2", lambda x: x.log() ** 2, lambda x: (2 - 2 * np.log(x)) / x ** 2),
    ("x * x * exp(-x)", lambda x: x * x * (-x).exp(), lambda x: (2 - 4 * x + x ** 2) * np.exp(-x)),
])
def test_grad_twice_matches_analytic_second_derivatives(mygrad, name, f, second) -> None:
    xd = np.array([0.3, 0.9, 1.7, 2.6])
    x = mygrad.Variable(xd, requires_grad=True)
    d1, = mygrad.grad(f(x).sum(), x, create_graph=True)
    d2, = mygrad.grad(d1.sum(), x)
    np.testing.assert_allclose(d2.data, second(xd), rtol=1e-13, atol=1e-13, err_msg=name)


def test_hessian_vector_product_through_matmul_softmax_and_indexing_matches_pytorch(mygrad) -> None:
    torch = require_torch()
    rng = np.random.default_rng(3)
    A, W0, v = rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))

    def program(W, A):
        z = A @ W
        return ((z.softmax(axis=1) * z).mean() + z.log_softmax(axis=1)[0].sum()
                + (z ** 2).sum() / 3.0 - z[1:, 0].exp().sum())

    W = mygrad.Variable(W0, requires_grad=True)
    g, = mygrad.grad(program(W, mygrad.Variable(A)), W, create_graph=True)
    hv, = mygrad.grad((g * mygrad.Variable(v)).sum(), W)
    Wt = torch.tensor(W0, requires_grad=True)
    zt = torch.tensor(A) @ Wt
    ft = ((zt.softmax(1) * zt).mean() + zt.log_softmax(1)[0].sum() + (zt ** 2).sum() / 3.0
          - zt[1:, 0].exp().sum())
    gt, = torch.autograd.grad(ft, Wt, create_graph=True)
    hvt, = torch.autograd.grad((gt * torch.tensor(v)).sum(), Wt)
    np.testing.assert_allclose(g.data, gt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hv.data, hvt.numpy(), rtol=1e-12, atol=1e-12)


def test_grad_follows_pytorch_semantics(mygrad) -> None:
    a = mygrad.Variable(np.array([1.0, 2.0]), requires_grad=True)
    b = mygrad.Variable(np.array([3.0, -1.0]), requires_grad=True)
    c = mygrad.Variable(np.array([5.0]), requires_grad=True)
    y = a * b
    ga, gb = mygrad.grad(y, (a, b), mygrad.Variable(np.array([1.0, 10.0])), retain_graph=True)
    np.testing.assert_array_equal(ga.data, [3.0, -10.0])
    np.testing.assert_array_equal(gb.data, [1.0, 20.0])
    # several outputs: their gradients add up
    ga2, = mygrad.grad([y.sum(), (a * a).sum()], a)
    np.testing.assert_array_equal(ga2.data, b.data + 2 * a.data)
    assert a.grad is None and b.grad is None
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        mygrad.grad((a * b).sum(), (a, c))
    assert mygrad.grad((a * b).sum(), (a, c), allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="grad_outputs="):
        mygrad.grad(a * b, a)
    with pytest.raises(RuntimeError, match="does not require grad"):
        mygrad.grad(mygrad.Variable(np.ones(1)).sum(), a)
    with pytest.raises(RuntimeError, match="does not require grad"):
        mygrad.grad((a * b).sum(), mygrad.Variable(np.ones(2)))
    with pytest.raises(RuntimeError, match="shape"):
        mygrad.grad(a * b, a, mygrad.Variable(np.ones(3)))
    # the graph is freed unless retained (or recorded), as in PyTorch
    z = (a * b).sum()
    mygrad.grad(z, a)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        mygrad.grad(z, a)


def test_hvp_hessian_newton_of_the_key_are_exact(mygrad) -> None:
    rng = np.random.default_rng(0)
    for problem, n in [(ch11.lse_quartic(), 4), (ch11.rosenbrock(), 2),
                       (ch11.tanh_net(rng.normal(size=(3, 4)), rng.normal(size=3)), 4),
                       (ch11.linear_plus_lse(100 * rng.normal(size=5), 0.05), 5)]:
        x, v = rng.normal(size=n), rng.normal(size=n)
        H = problem.hessian(x)
        scale = np.abs(H).max() * np.abs(v).max()
        assert np.abs(mygrad.hvp(problem, x, v) - H @ v).max() <= 1e-14 * scale * 10
        np.testing.assert_allclose(mygrad.hessian(problem, x), H, rtol=1e-12, atol=1e-12 * np.abs(H).max())
    q = ch11.quadratic(np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([1.0, -1.0]))
    np.testing.assert_allclose(mygrad.newton_step(q, np.array([5.0, -7.0])),
                               np.linalg.solve([[3.0, 1.0], [1.0, 2.0]], [-1.0, 1.0]), rtol=1e-12)


def test_key_passes_the_higher_module_check_and_the_chapter_checkers(mygrad, capsys) -> None:
    ch11.mygrad_higher(mygrad)
    for seed, hidden in SEEDS:
        check.ch11_hvp(mygrad.hvp, seed=seed, hidden=hidden)
        check.ch11_hessian(mygrad.hessian, seed=seed, hidden=hidden)
        check.ch11_newton_step(mygrad.newton_step, seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert "All 3 cases of mygrad-higher passed." in out


# -- the module check catches a grad that writes into .grad or records nothing ---------------
def test_module_check_rejects_a_grad_that_accumulates_into_dot_grad(mygrad) -> None:
    class Broken:
        Variable = mygrad.Variable
        hvp, newton_step = mygrad.hvp, mygrad.newton_step

        @staticmethod
        def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
                 allow_unused=False):
            inputs = inputs if isinstance(inputs, tuple) else (inputs,)
            outputs.backward(grad_outputs, retain_graph=retain_graph, create_graph=create_graph)
            return tuple(x.grad for x in inputs)

    with pytest.raises(AssertionError, match="grad wrote into x.grad"):
        ch11.mygrad_higher(Broken)


def test_module_check_rejects_a_grad_that_ignores_create_graph(mygrad) -> None:
    class Broken:
        Variable = mygrad.Variable
        hvp, newton_step = mygrad.hvp, mygrad.newton_step

        @staticmethod
        def grad(outputs, inputs, *args, create_graph=False, **kwargs):
            return mygrad.grad(outputs, inputs, *args, create_graph=False, **kwargs)

    message = failure(lambda obj, **_: ch11.mygrad_higher(obj), Broken)
    assert "has no history" in message and "GradMode.enabled = True" in message, message


# -- ch11-hvp: a finite-difference answer is not accepted, and the hint says why -------------
def _hvp_finite_differences(eps: float, dtype=np.float64):
    def hvp(f, x, v):
        def gradient(at):
            xv = al.tensor(at.astype(dtype), requires_grad=True)
            return al.grad(f(xv), xv)[0].numpy().astype(np.float64)
        return (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)
    return hvp


def _hvp_float32(f, x, v):
    xv = al.tensor(x.astype(np.float32), requires_grad=True)
    g, = al.grad(f(xv), xv, create_graph=True)
    return al.grad((g * al.tensor(v.astype(np.float32))).sum(), xv)[0].numpy()


@pytest.mark.parametrize("wrong", [_hvp_finite_differences(1e-4), _hvp_finite_differences(1e-5),
                                   _hvp_finite_differences(1e-6), _hvp_finite_differences(1e-7)],
                         ids=["eps=1e-4", "eps=1e-5", "eps=1e-6", "eps=1e-7"])
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch11_hvp_rejects_finite_differences_and_says_so(wrong, seed, hidden) -> None:
    message = failure(check.ch11_hvp, wrong, seed=seed, hidden=hidden)
    assert message.startswith("Exercise ch11-hvp failed"), message
    assert "finite differences of the gradient" in message and "exact" in message, message


def test_ch11_hvp_names_low_precision_too() -> None:
    message = failure(check.ch11_hvp, _hvp_float32)
    assert "float32" in message, message


def test_ch11_hvp_exact_answers_pass_with_either_library(mygrad, capsys) -> None:
    def with_autograd_lab(f, x, v):
        xv = al.tensor(x.copy(), requires_grad=True)
        g, = al.grad(f(xv), xv, create_graph=True)
        return al.grad((g * al.tensor(v)).sum(), xv)[0].numpy()

    for seed, hidden in SEEDS:
        check.ch11_hvp(with_autograd_lab, seed=seed, hidden=hidden)
        check.ch11_hvp(mygrad.hvp, seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert out.count("cases of ch11-hvp passed") == 2 * len(SEEDS), out


# -- ch11-grad: the walk the learner writes ---------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_grad_check(mygrad, seed, hidden, capsys):
    check.ch11_grad(mygrad.higher.grad, mygrad.Variable, seed=seed, hidden=hidden)
    assert "All 3 cases of ch11-grad passed" in capsys.readouterr().out


def _grad_variant(mygrad, *, record=True, add=True, restore=True, backward=False, in_finally=True):
    """The key's walk with one thing done wrong."""
    higher = mygrad.higher
    GradMode, as_variable = higher.GradMode, higher.as_variable

    def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
             allow_unused=False):
        outputs, inputs = higher._as_tuple(outputs), higher._as_tuple(inputs)
        if backward:
            for y in outputs:
                y.backward()
            return tuple(x.grad for x in inputs)
        grads = {id(y): mygrad.Variable(np.ones_like(y.data)) for y in outputs}
        wanted = {id(x): i for i, x in enumerate(inputs)}
        found = [None] * len(inputs)
        enabled = GradMode.enabled
        GradMode.enabled = bool(create_graph) if record else False

        def walk():
                for v in higher._walk_order(outputs):
                    g = grads.pop(id(v))
                    if id(v) in wanted:
                        found[wanted[id(v)]] = g
                    node = v.grad_fn
                    if node is None:
                        continue
                    input_grads = node.function.backward(node, g)
                    if not isinstance(input_grads, tuple):
                        input_grads = (input_grads,)
                    for x, gx, needed in zip(node.inputs, input_grads, node.needs_input_grad):
                        if needed and gx is not None:
                            gx = as_variable(gx)
                            grads[id(x)] = grads[id(x)] + gx if add and id(x) in grads else gx
        if not in_finally:      # restored after the walk, but not when it raises
            walk()
            GradMode.enabled = enabled
        else:
            try:
                walk()
            finally:
                if restore:
                    GradMode.enabled = enabled
        if any(g is None for g in found) and not allow_unused:
            raise RuntimeError("an input was not used")
        return tuple(found)
    return grad


def _grad_failure(mygrad, variant):
    return failure(lambda g, seed, hidden: check.ch11_grad(g, mygrad.Variable, seed=seed,
                                                           hidden=hidden), variant)


def test_a_grad_that_replaces_instead_of_adding_gets_the_paths_hint(mygrad):
    msg = _grad_failure(mygrad, _grad_variant(mygrad, add=False))
    assert "ch11-grad" in msg and "add the new share" in msg


def test_a_grad_that_never_records_gets_the_create_graph_hint(mygrad):
    msg = _grad_failure(mygrad, _grad_variant(mygrad, record=False))
    assert "no grad_fn" in msg and "GradMode.enabled" in msg


def test_a_grad_that_leaves_recording_off_gets_the_finally_hint(mygrad):
    GradMode = mygrad.higher.GradMode
    before = GradMode.enabled
    try:
        msg = _grad_failure(mygrad, _grad_variant(mygrad, restore=False))
    finally:
        GradMode.enabled = before       # the mistake leaves recording off for later tests
    assert "not recorded any more" in msg and "finally" in msg


def test_a_grad_that_restores_recording_without_finally_gets_the_finally_hint(mygrad):
    """Restored after the walk, but not in a finally: block: a backward that raises inside the
    walk leaves recording off. The check makes one raise there."""
    GradMode = mygrad.higher.GradMode
    before = GradMode.enabled
    try:
        msg = _grad_failure(mygrad, _grad_variant(mygrad, in_finally=False))
    finally:
        GradMode.enabled = before
    assert "after a grad call that raised" in msg and "finally" in msg


def test_a_grad_built_on_backward_gets_the_dot_grad_hint(mygrad):
    msg = _grad_failure(mygrad, _grad_variant(mygrad, backward=True))
    assert "changed the inputs' .grad" in msg and "do not call backward()" in msg
