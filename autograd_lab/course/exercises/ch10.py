"""Checkers for chapter 10, Convolution and pooling."""
from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from ._common import Checker, data_of, library, named
from ._parts import Parts

__all__ = ["ch10_output_size", "ch10_conv2d_forward", "ch10_conv2d_backward", "ch10_max_pool"]

PARTS = {
    "ch10-conv2d-forward": ("output with bias", "bias=None"),
    "ch10-conv2d-backward": ("dx", "dweight", "dbias"),
    "ch10-max-pool": ("forward", "backward"),
}
"""Exercises made of independent parts: each part earns its share of the points
(:mod:`autograd_lab.course.exercises._parts`)."""


def _conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: int,
              padding: int) -> np.ndarray:
    from autograd_lab.kernels.conv import conv2d_fwd_ref
    return conv2d_fwd_ref(x, w, b, stride, padding)


# -- ch10-output-size ---------------------------------------------------------------------
def ch10_output_size(output_size: Callable[..., int], *, seed: int = 0,
                     hidden: bool = False) -> None:
    """Check ``output_size(n, k, stride=1, padding=0)``: how many positions a window of size k
    takes along an axis of length n padded by ``padding`` on both sides, moving by ``stride``:
    ``(n + 2 * padding - k) // stride + 1``, as an int."""
    ck = Checker("ch10-output-size", seed=seed, hidden=hidden)
    rng = ck.rng
    cases = [(8, 3, 1, 0), (8, 3, 1, 1), (8, 2, 2, 0), (7, 3, 2, 1), (5, 5, 1, 0), (28, 5, 3, 2)]
    if hidden:
        cases += [(int(rng.integers(5, 40)), int(rng.integers(1, 5)), int(rng.integers(1, 4)),
                   int(rng.integers(0, 3))) for _ in range(4)]
    formula = "(n + 2 * padding - k) // stride + 1"
    for n, k, s, p in cases:
        with ck.case(f"n={n}, k={k}, stride={s}, padding={p}"):
            got = ck.call(output_size, n, k, stride=s, padding=p)
            expected = (n + 2 * p - k) // s + 1
            ck.check(got is not None, "output_size returned None.", expected=expected,
                     hint="Did you forget the `return` statement?")
            ck.check(isinstance(got, (int, np.integer)), "output_size should return an int.",
                     expected=expected, received=got, hint="Use floor division //: a window "
                     "that would stick out past the (padded) edge is not used.")
            mistakes = {(n + 2 * p - k) // s: "You forgot the + 1: the first window sits at "
                        "position 0, before any step.",
                        (n + p - k) // s + 1: "Padding is added on BOTH sides: n + 2 * padding.",
                        (n - k) // s + 1: "You left out the padding: the padded length is "
                        "n + 2 * padding.",
                        (n + 2 * p - k) + 1: "You ignored the stride: divide the free room "
                        "(n + 2 * padding - k) by it."}
            hint = mistakes.get(int(got), f"The formula is {formula}.") if got != expected \
                else None
            ck.check(got == expected, "the output size is wrong.", expected=expected,
                     received=got, hint=hint)
    ck.done()


# -- ch10-conv2d-forward ------------------------------------------------------------------
def _conv_cases(rng: np.random.Generator, hidden: bool) -> list[tuple[str, tuple, tuple, int, int]]:
    cases = [
        ("one 5×5 image, one 3×3 kernel", (1, 1, 5, 5), (1, 1, 3, 3), 1, 0),
        ("2 images, 3 → 4 channels, padding 1", (2, 3, 6, 6), (4, 3, 3, 3), 1, 1),
        ("stride 2 on a 7×7 input, padding 1", (2, 2, 7, 7), (3, 2, 3, 3), 2, 1),
        ("a 2×3 kernel on a 5×6 input", (1, 2, 5, 6), (2, 2, 2, 3), 1, 0),
    ]
    if hidden:
        for _ in range(3):
            n, ci, co = (int(v) for v in rng.integers(1, 4, size=3))
            k = int(rng.integers(1, 4))
            h, w = (int(v) for v in rng.integers(k + 1, 9, size=2))
            s, p = int(rng.integers(1, 3)), int(rng.integers(0, 2))
            cases.append((f"random: x {(n, ci, h, w)}, weight {(co, ci, k, k)}, stride {s}, "
                          f"padding {p}", (n, ci, h, w), (co, ci, k, k), s, p))
    return cases


def ch10_conv2d_forward(conv2d_forward: Callable[..., np.ndarray], *, seed: int = 0,
                        hidden: bool = False) -> None:
    """Check ``conv2d_forward(x, weight, bias, stride=1, padding=0)`` on numpy arrays: x
    (N, C_in, H, W), weight (C_out, C_in, kh, kw), bias (C_out,) -> (N, C_out, H_out, W_out),
    the cross-correlation that ``F.conv2d`` computes."""
    ck = Checker("ch10-conv2d-forward", seed=seed, hidden=hidden)
    parts = Parts(ck)
    rng = ck.rng
    cases = _conv_cases(rng, hidden)
    with parts.part("output with bias"):
        _conv_forward_values(ck, conv2d_forward, cases)
    with parts.part("bias=None"):
        _conv_forward_no_bias(ck, conv2d_forward)
    parts.done()


def _conv_forward_values(ck: Checker, conv2d_forward: Callable[..., np.ndarray],
                         cases: list) -> None:
    rng = ck.rng
    for name, xs, ws, s, p in cases:
        with ck.case(name):
            x = np.round(rng.normal(size=xs), 3)
            w = np.round(rng.normal(size=ws), 3)
            b = np.round(rng.normal(size=ws[0]), 3)
            args = (x.copy(), w.copy(), b.copy())
            got = data_of(ck.call(conv2d_forward, *args, stride=s, padding=p))
            ck.check(np.array_equal(args[0], x) and np.array_equal(args[1], w),
                     "your conv2d_forward changed x or weight.",
                     hint="Pad into a new array (np.pad returns one) and do not write into x.")
            expected = _conv_ref(x, w, b, s, p)
            mistakes = [(_conv_ref(x, w[:, :, ::-1, ::-1], b, s, p),
                         "You flipped the kernel (the textbook 'convolution'). Deep "
                         "learning libraries compute the cross-correlation: no flip."),
                        (_conv_ref(x, w, None, s, p), "You forgot to add the bias "
                         "(one number per output channel).")]
            if ws[2] == ws[3]:
                mistakes.append((_conv_ref(x, w.transpose(0, 1, 3, 2), b, s, p),
                                 "The kernel's rows and columns are swapped: in weight[o, c, di, "
                                 "dj], di walks down the rows (height) together with i, and dj "
                                 "along the columns (width) together with j."))
            if expected.shape[2] == expected.shape[3]:
                mistakes.append((expected.transpose(0, 1, 3, 2),
                                 "The output's rows and columns are swapped: out[n, o, i, j] has "
                                 "i along the height (the window starts at row i*stride) and j "
                                 "along the width."))
            ck.close(got, expected, atol=1e-9, what="output",
                     hint="out[n, o, i, j] = bias[o] + sum over c, di, dj of "
                          "weight[o, c, di, dj] * xpad[n, c, i*stride + di, j*stride + dj].",
                     mistakes=mistakes)


def _conv_forward_no_bias(ck: Checker, conv2d_forward: Callable[..., np.ndarray]) -> None:
    rng = np.random.default_rng(ck.seed + 1000)  # the same inputs whatever the other part did
    with ck.case("bias=None: nothing is added"):
        x = np.round(rng.normal(size=(2, 2, 5, 5)), 3)
        w = np.round(rng.normal(size=(3, 2, 3, 3)), 3)
        got = data_of(ck.call(conv2d_forward, x.copy(), w.copy(), None, stride=1, padding=1,
                              hint="bias may be None (Conv2d(..., bias=False) passes None): add "
                                   "it only when it is given, e.g. `if bias is not None: out = "
                                   "out + bias[None, :, None, None]`."))
        ck.close(got, _conv_ref(x, w, None, 1, 1), atol=1e-9, what="output without bias",
                 hint="With bias=None the output is the cross-correlation alone: add nothing.")


# -- ch10-conv2d-backward -----------------------------------------------------------------
def ch10_conv2d_backward(conv2d_backward: Callable[..., tuple], *, seed: int = 0,
                         hidden: bool = False) -> None:
    """Check ``conv2d_backward(grad, x, weight, stride=1, padding=0) -> (dx, dweight, dbias)``
    on numpy arrays, against the gradients of ``F.conv2d``. Each of dx, dweight and dbias is a
    part of its own (it earns its share of the points alone)."""
    ck = Checker("ch10-conv2d-backward", seed=seed, hidden=hidden)
    from autograd_lab.kernels.conv import conv2d_bwd_ref
    parts = Parts(ck)
    rng = ck.rng
    inputs = []
    for name, xs, ws, s, p in _conv_cases(rng, hidden):
        x = np.round(rng.normal(size=xs), 3)
        w = np.round(rng.normal(size=ws), 3)
        g = np.round(rng.normal(size=_conv_ref(x, w, None, s, p).shape), 3)
        inputs.append((name, x, w, g, s, p, conv2d_bwd_ref(g, x, w, s, p)))
    dx_hint = ("Scatter, do not gather: every window position (n, o, i, j) sends "
               "grad[n, o, i, j] * weight[o, c, di, dj] back to xpad[n, c, i*stride + "
               "di, j*stride + dj] (add with +=, windows overlap); then cut the padding "
               "off: dx = dxpad[:, :, padding:padding + H, padding:padding + W].")
    for part, index in (("dbias", 2), ("dweight", 1), ("dx", 0)):
        with parts.part(part):
            for name, x, w, g, s, p, expected in inputs:
                with ck.case(f"{part}: {name}"):
                    got = ck.call(conv2d_backward, g.copy(), x.copy(), w.copy(), stride=s,
                                  padding=p)
                    ck.check(isinstance(got, (tuple, list)) and len(got) == 3,
                             "conv2d_backward should return three arrays (dx, dweight, dbias).",
                             received=got, hint="return dx, dw, db")
                    value = data_of(got[index])
                    if part == "dbias":
                        ck.close(value, expected[2], atol=1e-9, what="dbias",
                                 hint="Every output position of channel o adds bias[o]: dbias[o] "
                                      "is the sum of grad[:, o] over the batch and both spatial "
                                      "axes.",
                                 mistakes=[(g.mean(axis=(0, 2, 3)), "Sum, do not average: the "
                                            "bias is added at every position, so every "
                                            "position's gradient adds up.")])
                    elif part == "dweight":
                        ck.close(value, expected[1], atol=1e-9, what="dweight",
                                 hint="dweight[o, c, di, dj] = sum over n, i, j of grad[n, o, i, "
                                      "j] * xpad[n, c, i*stride + di, j*stride + dj]: the same "
                                      "windows as the forward pass, weighted by grad (with "
                                      "im2col: g2 @ cols.T).",
                                 mistakes=[(expected[1][:, :, ::-1, ::-1], "dweight came out "
                                            "flipped: read the window at offset (di, dj), as "
                                            "forward does.")])
                    else:
                        if value is not None and np.shape(value) != x.shape:
                            ck.fail(f"dx has shape {np.shape(value)}, expected the input's "
                                    f"shape {x.shape}.", hint=dx_hint)
                        ck.close(value, expected[0], atol=1e-9, what="dx", hint=dx_hint)
    parts.done()


# -- ch10-max-pool ------------------------------------------------------------------------
def _pool_ref(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from autograd_lab.kernels.pool import max_pool2d_fwd_ref
    return max_pool2d_fwd_ref(x, k, k)


def _pool_grad(x: np.ndarray, k: int, g: np.ndarray) -> np.ndarray:
    from autograd_lab.kernels.pool import max_pool2d_bwd_ref
    _, idx = _pool_ref(x, k)
    return max_pool2d_bwd_ref(g, idx, x.shape)


def _fd_check(ck: Checker, MaxPool: Any, Variable: Any, data: np.ndarray, k: int,
              hint: str) -> None:
    """Central differences of sum(MaxPool(x) * g) against the backward's gradient."""
    g = ck.rng.normal(size=_pool_ref(data, k)[0].shape)
    x = Variable(data.copy(), requires_grad=True)
    y = ck.call(named(lambda: MaxPool.apply(x, k), "MaxPool"))
    ck.call(named(lambda: y.backward(Variable(g)), "MaxPool.backward"), hint=hint)
    eps, numeric = 1e-6, np.zeros_like(data)
    for i in np.ndindex(data.shape):
        plus, minus = data.copy(), data.copy()
        plus[i] += eps
        minus[i] -= eps
        f = [float((np.asarray(data_of(MaxPool.apply(Variable(v), k))) * g).sum())
             for v in (plus, minus)]
        numeric[i] = (f[0] - f[1]) / (2 * eps)
    ck.check(x.grad is not None, "x.grad is None after backward.", hint=hint)
    ck.close(data_of(x.grad), numeric, what="gradient of x against central differences",
             atol=1e-5, hint=hint)


def ch10_max_pool(MaxPool: Any, *, seed: int = 0, hidden: bool = False,
                  Variable: Any = None) -> None:
    """Check the Function ``MaxPool.apply(x, k)``: the maximum of each k×k window (stride k,
    leftover rows and columns dropped), and a backward that sends each output gradient to the
    position of its window's (first) maximum.

    ``Variable`` is the Variable class of the library MaxPool is written for (mygrad's in the
    chapter); by default autograd_lab's."""
    ck = Checker("ch10-max-pool", seed=seed, hidden=hidden)
    lib = library()
    al = SimpleNamespace(Variable=Variable or lib.Variable)
    rng = ck.rng
    back_hint = ("backward: start from zeros shaped like x and add each grad_output[n, c, i, j] "
                 "at the position of its window's maximum (remember it in forward, e.g. "
                 "with argmax over the flattened window). Return (grad_x, None).")
    cases = [("a (1, 1, 4, 4) input, k=2", (1, 1, 4, 4), 2),
             ("a (2, 3, 6, 6) input, k=3", (2, 3, 6, 6), 3),
             ("a (1, 2, 5, 7) input, k=2: the last row and column are dropped", (1, 2, 5, 7), 2)]
    if hidden:
        cases += [("a (3, 2, 8, 8) input, k=2", (3, 2, 8, 8), 2),
                  ("a (2, 1, 9, 6) input, k=4", (2, 1, 9, 6), 4)]
    inputs = [(name, rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64) / 10, k)
              for name, shape, k in cases]
    ties = np.array([[[[0.0, 0.0, 1.0, 2.0],
                       [0.0, 0.0, 2.0, 2.0],
                       [3.0, 1.0, 5.0, 0.0],
                       [1.0, 3.0, 0.0, 4.0]]]])
    parts = Parts(ck)
    with parts.part("forward"):
        for name, data, k in inputs + [("ties", ties, 2)]:
            with ck.case(f"forward: {name}"):
                x = al.Variable(data.copy(), requires_grad=True)
                y = ck.call(named(lambda: MaxPool.apply(x, k), "MaxPool"))
                expected, _ = _pool_ref(data, k)
                ck.check(np.shape(data_of(y)) == expected.shape, f"the output has shape "
                         f"{np.shape(data_of(y))}, expected {expected.shape}.",
                         hint="H_out = H // k and W_out = W // k: a window that does not fit is "
                              "left out, as in PyTorch.")
                ck.close(data_of(y), expected, what="forward output",
                         hint="Each output element is the max of one k×k window; windows start "
                              "at rows and columns 0, k, 2k, ...")
    with parts.part("backward"):
        grads = np.random.default_rng(seed + 1000)  # the same whatever the forward part did
        for name, data, k in inputs:
            with ck.case(f"backward: {name}"):
                x = al.Variable(data.copy(), requires_grad=True)
                y = ck.call(named(lambda: MaxPool.apply(x, k), "MaxPool"))
                g = np.round(grads.normal(size=_pool_ref(data, k)[0].shape), 3)
                ck.call(named(lambda: y.backward(al.Variable(g)), "MaxPool.backward"),
                        hint=back_hint)
                ck.check(x.grad is not None, "x.grad is None after backward.", hint=back_hint)
                ck.close(data_of(x.grad), _pool_grad(data, k, g), what="gradient of x",
                         hint=back_hint)
        with ck.case("backward: ties: the gradient goes to ONE position per window (the first "
                     "maximum)"):
            x = al.Variable(ties.copy(), requires_grad=True)
            y = ck.call(named(lambda: MaxPool.apply(x, 2), "MaxPool"))
            g = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
            ck.call(named(lambda: y.backward(al.Variable(g)), "MaxPool.backward"),
                    hint=back_hint)
            expected = _pool_grad(ties, 2, g)
            mask = np.zeros_like(ties)
            for i in range(2):
                for j in range(2):
                    win = ties[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                    mask[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = \
                        (win == win.max()) * g[0, 0, i, j]
            ck.check(x.grad is not None, "x.grad is None after backward.", hint=back_hint)
            ck.close(data_of(x.grad), expected, what="gradient of x", hint=back_hint,
                     mistakes=[(mask, "With a mask x == max, a window with several equal "
                                "maxima (common after ReLU: many zeros) passes its gradient "
                                "to all of them, so the gradient is counted twice. Send it "
                                "to one position only: the first maximum, as argmax finds "
                                "it.")])
        with ck.case("backward: central differences of a (1, 2, 4, 6) input, k=2"):
            _fd_check(ck, MaxPool, al.Variable, grads.normal(size=(1, 2, 4, 6)), 2, back_hint)
    parts.done()


# -- the loader's check of the learner's mygrad/conv.py ------------------------------------
def mygrad_conv(pkg: Any) -> None:
    """``mygrad.conv``: output_size, conv2d_forward/backward, the Convolution Function via
    conv2d, MaxPool, and the layers Conv2d, MaxPool2d, Flatten (also reachable as
    ``mygrad.nn.Conv2d``, ...), against autograd_lab."""
    import autograd_lab.functional as F
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
