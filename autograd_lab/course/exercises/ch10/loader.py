"""The loader's check of the learner's ``mygrad/conv.py`` (chapter 10): the chapter's exercises
on the module's functions, then the Convolution Function and the layers against autograd_lab."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of, library

__all__ = ["mygrad_conv"]


def mygrad_conv(pkg: Any) -> None:
    """``mygrad.conv``: output_size, conv2d_forward/backward, the Convolution Function via
    conv2d, MaxPool, and the layers Conv2d, MaxPool2d, Flatten (also reachable as
    ``mygrad.nn.Conv2d``, ...), against autograd_lab."""
    import autograd_lab.functional as F
    from . import (ch10_conv2d_backward, ch10_conv2d_forward, ch10_max_pool,
                   ch10_output_size)
    conv = pkg.conv
    ch10_output_size(conv.output_size)
    ch10_conv2d_forward(conv.conv2d_forward)
    ch10_conv2d_backward(conv.conv2d_backward)
    ch10_max_pool(conv.MaxPool, Variable=pkg.Variable)
    al = library()
    ck = Checker("mygrad-conv")
    rng = np.random.default_rng(10)
    with ck.case("conv2d (stride 2, padding 1): value and the gradients of x, weight, bias"):
        arrays = [rng.normal(size=s) for s in [(2, 3, 7, 7), (4, 3, 3, 3), (4,)]]
        mine = [pkg.Variable(a.copy(), requires_grad=True) for a in arrays]
        ref = [al.Variable(a.copy(), requires_grad=True) for a in arrays]
        y = ck.call(conv.conv2d, *mine, stride=2, padding=1)
        y_ref = F.conv2d(ref[0], ref[1], ref[2], stride=2, padding=1)
        ck.close(data_of(y), y_ref.data, what="conv2d output")
        g = rng.normal(size=y_ref.shape)
        ck.call(y.backward, pkg.Variable(g))
        y_ref.backward(al.Variable(g))
        for name, p, q in zip(["x", "weight", "bias"], mine, ref):
            ck.check(p.grad is not None, f"{name} got no gradient from conv2d.")
            ck.close(data_of(p.grad), q.grad.data, what=f"gradient of {name}")
    with ck.case("the layers: Conv2d, MaxPool2d, Flatten in mygrad.nn, shapes and parameters"):
        for name in ("Conv2d", "MaxPool2d", "Flatten"):
            ck.check(getattr(pkg.nn, name, None) is getattr(conv, name, None),
                     f"mygrad.nn.{name} is not conv.py's {name}.",
                     hint="conv.py sets the layers as attributes of mygrad.nn when imported.")
        pkg.manual_seed(0)
        layer = ck.call(conv.Conv2d, 2, 5, 3, padding=1)
        ck.check(isinstance(layer, pkg.nn.Module), "Conv2d is not a mygrad.nn.Module.")
        shapes = [tuple(p.shape) for p in layer.parameters()]
        ck.check(shapes == [(5, 2, 3, 3), (5,)], "Conv2d's parameters have the wrong shapes.",
                 expected=[(5, 2, 3, 3), (5,)], received=shapes)
        bound = 1 / np.sqrt(2 * 9)
        ck.check(all(np.abs(p.data).max() <= bound for p in layer.parameters()),
                 f"Conv2d's initial weights exceed PyTorch's bound 1/sqrt(in * k * k) = {bound:.3f}.")
        pkg.manual_seed(0)
        again = conv.Conv2d(2, 5, 3, padding=1)
        ck.close(again.weight.data, layer.weight.data, what="weights after manual_seed(0) twice",
                 hint="Draw the weights with mygrad.nn's init_uniform when the layer is built "
                      "(it uses the generator that manual_seed resets).")
        x = pkg.Variable(rng.normal(size=(3, 2, 6, 6)))
        model = pkg.nn.Sequential(layer, conv.MaxPool2d(2), conv.Flatten())
        out = ck.call(model, x)
        ck.check(tuple(out.shape) == (3, 45), "Conv2d(2, 5, 3, padding=1), MaxPool2d(2), "
                 f"Flatten() on (3, 2, 6, 6) should give (3, 45), got {tuple(out.shape)}.")
    ck.done()
