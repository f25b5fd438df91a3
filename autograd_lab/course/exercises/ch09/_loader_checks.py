"""The loader's checks of the learner's ``mygrad/functional.py`` and ``mygrad/data.py`` (run
when ``load_mygrad`` imports them; each still decides in the kernel)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, library
from .shift_pixels import move_of

__all__ = ["mygrad_functional", "mygrad_data"]


# -- the loader's checks of the learner's mygrad/functional.py and mygrad/data.py ------------
def mygrad_functional(pkg: Any) -> None:
    """``mygrad.functional`` (also reachable as ``mygrad.nn.functional``): cross_entropy with
    int-array or Variable targets, log_softmax, softmax, relu, mse_loss, against
    ``autograd_lab.functional``."""
    import autograd_lab.functional as F
    al = library()
    ck = Checker("mygrad-functional")
    rng = np.random.default_rng(9)
    with ck.case("mygrad.nn.functional is mygrad.functional"):
        ck.check(getattr(pkg.nn, "functional", None) is pkg.functional,
                 "mygrad.nn.functional does not lead to mygrad.functional.",
                 hint="functional.py sets nn.functional to itself when it is imported.")
    data = np.round(30 * rng.normal(size=(6, 4)), 3)
    targets = rng.integers(0, 4, size=6)
    ref = al.Variable(data.copy(), requires_grad=True)
    ref_loss = F.cross_entropy(ref, targets)
    ref_loss.backward()
    for kind, t in (("an int array", targets), ("a Variable", pkg.Variable(targets))):
        with ck.case(f"cross_entropy with targets as {kind}: value and gradient"):
            x = pkg.Variable(data.copy(), requires_grad=True)
            loss = ck.call(pkg.functional.cross_entropy, x, t)
            ck.call(loss.backward)
            ck.close(loss.data, ref_loss.data, atol=1e-10, what="loss")
            ck.close(x.grad.data, ref.grad.data, atol=1e-10, what="gradient of the logits")
    with ck.case("softmax runs SoftmaxRows on 2-d rows, or chapter 05's Softmax when "
                 "USE_KERNELS is False, with the same values"):
        module = pkg.functional
        ck.check(hasattr(module, "USE_KERNELS"), "mygrad/functional.py has no USE_KERNELS flag.",
                 hint="Run the activations cell of chapter 09 again: it defines the flag.")
        flag = module.USE_KERNELS
        made = {}
        try:
            for use in (True, False):
                module.USE_KERNELS = use
                x = pkg.Variable(data.copy(), requires_grad=True)
                y = ck.call(module.softmax, x, dim=1)
                made[use] = type(y.grad_fn).__name__
                ck.close(y.data, F.softmax(al.Variable(data), dim=1).data, atol=1e-12,
                         what=f"softmax with USE_KERNELS = {use}")
        finally:
            module.USE_KERNELS = flag
        ck.check(made[True] == "SoftmaxRowsBackward" and made[False] != "SoftmaxRowsBackward",
                 f"softmax made {made[True]} with USE_KERNELS = True and {made[False]} with "
                 "False.", expected="SoftmaxRowsBackward, then chapter 05's SoftmaxBackward",
                 hint="In softmax: if USE_KERNELS and x.ndim == 2 and dim in (-1, 1): return "
                      "SoftmaxRows.apply(x); otherwise Softmax.apply(x, dim).")
    with ck.case("cross_entropy runs the fused kernel, or cross_entropy_ref when USE_KERNELS "
                 "is False, with the same values"):
        module = pkg.functional
        ck.check(hasattr(module, "USE_KERNELS") and callable(getattr(module, "cross_entropy_ref",
                                                                      None)),
                 "mygrad/functional.py has no USE_KERNELS flag or no cross_entropy_ref.",
                 hint="Run the cells of chapter 09 that define cross_entropy_ref and "
                      "cross_entropy again: they write both, and the flag, into the module.")
        flag = module.USE_KERNELS
        results = {}
        try:
            for use in (True, False):
                module.USE_KERNELS = use
                x = pkg.Variable(data.copy(), requires_grad=True)
                loss = ck.call(module.cross_entropy, x, targets)
                ck.call(loss.backward)
                results[use] = (type(loss.grad_fn).__name__, loss.data, x.grad.data)
        finally:
            module.USE_KERNELS = flag
        ck.check(results[True][0] == "SoftmaxCrossEntropyBackward",
                 f"with USE_KERNELS = True the loss is made by {results[True][0]}, not by the "
                 "fused kernel of chapter 07.", expected="SoftmaxCrossEntropyBackward",
                 received=results[True][0],
                 hint="if USE_KERNELS: return softmax_cross_entropy(logits, t) (after the "
                      "targets are checked); otherwise return cross_entropy_ref(logits, t).")
        ck.check(results[False][0] != "SoftmaxCrossEntropyBackward",
                 "with USE_KERNELS = False cross_entropy still runs the fused kernel.",
                 hint="Read the flag inside cross_entropy, at every call, so that flipping "
                      "mygrad.functional.USE_KERNELS takes effect.")
        for use in (True, False):
            ck.close(results[use][1], ref_loss.data, atol=1e-10,
                     what=f"loss with USE_KERNELS = {use}")
            ck.close(results[use][2], ref.grad.data, atol=1e-10,
                     what=f"gradient with USE_KERNELS = {use}")
    with ck.case("log_softmax, softmax, relu and mse_loss"):
        x = pkg.Variable(data.copy())
        ck.close(pkg.functional.log_softmax(x, dim=1).data,
                 F.log_softmax(al.Variable(data), dim=1).data, atol=1e-10, what="log_softmax")
        ck.close(pkg.functional.softmax(x, dim=1).data,
                 F.softmax(al.Variable(data), dim=1).data, atol=1e-12, what="softmax")
        ck.close(pkg.functional.relu(x).data, np.maximum(data, 0), what="relu")
        ck.close(pkg.functional.mse_loss(x, pkg.Variable(np.ones_like(data))).data,
                 ((data - 1) ** 2).mean(), rtol=1e-12, what="mse_loss")
    with ck.case("bad targets raise ValueError"):
        ck.raises(ValueError, pkg.functional.cross_entropy, pkg.Variable(data), targets[:3],
                  hint="Check that there is one target per row of the logits.")
    ck.done()


def mygrad_data(pkg: Any) -> None:
    """``mygrad.data``: batches, DataLoader (Variable inputs, int labels, a new order each
    epoch, a transform), train_step, evaluate and fit (with a learning-rate schedule) on a tiny
    problem, and shift_pixels."""
    ck = Checker("mygrad-data")
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    with ck.case("DataLoader: 4 batches of at most 3, every sample once, reshuffled each epoch"):
        loader = ck.call(pkg.DataLoader, x, y, batch_size=3, shuffle=True, seed=0)
        ck.check(len(loader) == 4, "len(loader) is wrong.", expected=4, received=len(loader))
        epochs = []
        for _ in range(2):
            got = list(loader)
            ck.check(all(isinstance(xb, pkg.Variable) for xb, _ in got),
                     "the inputs of a batch are not Variables.")
            labels = np.concatenate([yb for _, yb in got])
            ck.check(sorted(labels.tolist()) == list(range(10)),
                     "an epoch does not hold every sample exactly once.", received=labels)
            ck.check(all(np.array_equal(xb.data, x[yb]) for xb, yb in got),
                     "inputs and labels were separated.")
            epochs.append(labels)
        ck.check(not np.array_equal(epochs[0], epochs[1]), "two epochs came in the same order.",
                 hint="Draw each epoch's order from one generator made in __init__.")
    with ck.case("fit and evaluate learn a separable toy problem"):
        rng = np.random.default_rng(0)
        xs = rng.normal(size=(64, 2)).astype(np.float32)
        ys = (xs[:, 0] > 0).astype(np.int64)
        pkg.manual_seed(0)
        model = pkg.nn.Sequential(pkg.nn.Linear(2, 8), pkg.nn.ReLU(), pkg.nn.Linear(8, 2))
        opt = pkg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        history = ck.call(pkg.fit, model, pkg.DataLoader(xs, ys, batch_size=16), opt, 10,
                          test=(xs, ys))
        loss, acc = ck.call(pkg.evaluate, model, xs, ys)
        ck.check(history["loss"][-1] < history["loss"][0], "the training loss did not fall.",
                 received=history["loss"])
        ck.check(acc >= 0.9, "fit did not learn a problem a line separates.", received=acc)
        ck.close(history["test_accuracy"][-1], acc, what="the last test accuracy")
    with ck.case("shift_pixels, the loader's transform and fit's lr_schedule"):
        images = np.arange(1, 2 * 16 + 1, dtype=np.float64).reshape(2, 4, 4)
        moved = ck.call(pkg.shift_pixels, images, np.random.default_rng(0), fraction=1.0)
        ck.check(all(move_of(m, i) is not None for m, i in zip(np.asarray(moved), images)),
                 "shift_pixels does not move images by one pixel with zeros moved in.",
                 hint="Run chapter 09's ch09-shift-pixels cell again.")
        loader = ck.call(pkg.DataLoader, x, y, batch_size=5, shuffle=False,
                         transform=lambda xb: -xb)
        ck.check(all(np.array_equal(xb.data, -x[yb]) for xb, yb in loader),
                 "the DataLoader does not apply its transform to the inputs.",
                 hint="Run chapter 09's DataLoader cell again.")
        opt = pkg.optim.SGD(model.parameters(), lr=0.1)
        rates: list[int] = []

        def schedule(epoch: int) -> float:
            rates.append(epoch)
            return 0.01 * (epoch + 1)
        ck.call(pkg.fit, model, pkg.DataLoader(xs, ys, batch_size=32), opt, 3, lr_schedule=schedule)
        ck.check(rates == [0, 1, 2] and abs(opt.lr - 0.03) < 1e-12,
                 "fit does not set optimizer.lr = lr_schedule(epoch) before each epoch.",
                 received=rates, hint="Run chapter 09's fit cell again.")
    ck.done()
