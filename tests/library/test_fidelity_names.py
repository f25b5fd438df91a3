"""Names a PyTorch user reaches for that autograd_lab lacked (issue 44, "Missing names"): Module
hooks, gradient hooks and backward's options, and the operations; each compared with PyTorch
(values and gradients, float64) and checked by gradcheck where it is differentiable."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as alF
from autograd_lab.errors import BackwardError

from .._oracle import needs_torch, torch

RNG = np.random.default_rng(4444)
X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
W = np.arange(6.0).reshape(2, 3) / 7
BIAS = np.array([0.1, -0.2])


def _np(v):
    return None if v is None else np.asarray(v.tolist())


def _linear(m):
    lin = m.nn.Linear(3, 2, dtype=m.float64)
    with m.no_grad():
        lin.weight.copy_(m.tensor(W, dtype=m.float64))
        lin.bias.copy_(m.tensor(BIAS, dtype=m.float64))
    return lin


# ---------------------------------------------------------------- Module hooks
def _hooked_program(m):
    lin = _linear(m)
    log = []
    handles = [
        lin.register_forward_pre_hook(lambda mod, args: (args[0] * 2,)),
        lin.register_forward_hook(lambda mod, args, out: out + 1),
        lin.register_full_backward_hook(
            lambda mod, gi, go: log.append(("backward", [_np(g) for g in gi], [_np(g) for g in go]))),
        lin.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,)),
    ]
    x = m.tensor(X, dtype=m.float64, requires_grad=True)
    y = lin(x)
    (y * y).sum().backward()
    log.append(("grads", _np(x.grad), _np(lin.weight.grad), _np(lin.bias.grad)))
    for h in handles:
        h.remove()
    log.append(("after remove", _np(lin(x))))
    return _np(y), log


def _assert_same(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for u, v in zip(a, b):
            _assert_same(u, v)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    else:
        assert a == b


@needs_torch
def test_module_forward_pre_forward_and_full_backward_hooks_match_torch():
    _assert_same(_hooked_program(al), _hooked_program(torch))


@needs_torch
def test_full_backward_hook_replaces_grad_input_and_sees_none_for_other_arguments():
    def program(m):
        class Scale(m.nn.Module):
            def forward(self, x, k, y):
                return x * k + y.sum(), x * y
        mod = Scale()
        seen = []
        mod.register_full_backward_hook(lambda md, gi, go: (seen.append([g is None for g in gi]),
                                                            (gi[0] * 10, None, gi[2]))[1])
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        y = m.tensor(X[::-1].copy(), dtype=m.float64)
        a, b = mod(x, 2.0, y)
        (a.sum() + (b * b).sum()).backward()
        return seen, _np(x.grad), _np(y.grad) if y.grad is not None else None
    _assert_same(program(al), program(torch))


@needs_torch
def test_full_backward_hook_runs_when_no_input_requires_grad():
    def program(m):
        lin = _linear(m)
        seen = []
        lin.register_full_backward_hook(lambda md, gi, go: seen.append((list(gi), _np(go[0]))))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            lin(m.tensor(X, dtype=m.float64)).sum().backward()
        return seen, _np(lin.weight.grad)
    _assert_same(program(al), program(torch))


@needs_torch
def test_forward_hooks_with_kwargs_prepend_and_handle_as_context():
    def program(m):
        lin = _linear(m)
        order = []
        lin.register_forward_hook(lambda md, a, out: order.append("first"))
        lin.register_forward_hook(lambda md, a, out: order.append("prepended"), prepend=True)
        lin.register_forward_pre_hook(lambda md, a, kw: ((a[0] + 1,), kw), with_kwargs=True)
        with lin.register_forward_hook(lambda md, a, kw, out: out * 0, with_kwargs=True):
            zero = _np(lin(m.tensor(X, dtype=m.float64)))
        out = _np(lin(m.tensor(X, dtype=m.float64)))
        return order, zero, out
    _assert_same(program(al), program(torch))


def test_a_hook_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        al.nn.Linear(2, 2).register_forward_hook(3)


# ---------------------------------------------------------------- hooks and options of backward
@needs_torch
def test_post_accumulate_grad_hook_matches_torch():
    def program(m):
        w = m.tensor([3.0, 4.0], dtype=m.float64, requires_grad=True)
        seen = []
        h = w.register_post_accumulate_grad_hook(lambda t: seen.append(_np(t.grad)))
        (w * w).sum().backward()
        (w * 3).sum().backward()
        h.remove()
        (w * 3).sum().backward()
        return seen, _np(w.grad)
    _assert_same(program(al), program(torch))
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(BackwardError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(BackwardError, match="doesn't require gradient"):
        al.tensor([1.0]).register_post_accumulate_grad_hook(print)


@needs_torch
def test_backward_inputs_fills_only_those_grads():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([3.0, 4.0], dtype=m.float64, requires_grad=True)
        u = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        z = (y * w).sum()
        z.backward(inputs=[x, u], retain_graph=True)
        first = (_np(x.grad), w.grad, u.grad)
        z.backward(inputs=x, retain_graph=True)
        m.autograd.backward(z, inputs=[w, y])
        return first, _np(x.grad), _np(w.grad), _np(y.grad)
    _assert_same(program(al), program(torch))


def test_backward_inputs_refuses_empty_and_no_grad_inputs():
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(BackwardError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(BackwardError, match="does not require grad"):
        (x * 2).sum().backward(inputs=[al.tensor([1.0])])


@needs_torch
def test_grad_materialize_grads_gives_zeros_for_unused_inputs():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        u = m.tensor([[1.0]], dtype=m.float64, requires_grad=True)
        gx, gu = m.autograd.grad((x * x).sum(), [x, u], materialize_grads=True)
        return _np(gx), _np(gu), gu.shape == (1, 1)
    _assert_same(program(al), program(torch))
    x = al.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="allow_unused"):
        al.grad(x * 2, x, materialize_grads=True, allow_unused=False)
