"""Chapter 09's checkers not yet written as ``observe`` and ``judge`` (each still decides in the
kernel), and the loader's checks of ``mygrad/functional.py`` and ``mygrad/data.py``."""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, library
from .shift_pixels import move_of

__all__ = ["ch09_fit", "mygrad_functional", "mygrad_data"]


def _log_softmax_ref(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


_VARIABLE = ("Use Variable operations (x - m, .exp(), .sum(axis=..., keepdims=True), .log()) "
             "so that the result has a grad_fn and backward works; do not go through x.data "
             "or numpy for the part that depends on x.")


def _needs_variable(ck: Checker, out: Any, what: str) -> None:
    ck.check(out is not None, f"your {what} returned None.",
             hint="Did you forget the `return` statement?")
    ck.check(hasattr(out, "grad_fn") and getattr(out, "requires_grad", False),
             f"your {what} did not return a Variable that requires grad.",
             expected="a Variable with a grad_fn", received=type(out).__name__, hint=_VARIABLE)


_SHADOW = ("The notebook's `log_softmax` is now the one-argument function of exercise "
           "ch09-log-softmax: its cell ran again after section 3's `%%mygrad functional "
           "activations` cell, and replaced that cell's `log_softmax(x, dim=-1)`, which your "
           "library's code calls with `dim`. Run the `%%mygrad functional activations` cell "
           "again (or give your exercise function another name), then this cell.")


def _takes_dim(fn: Any) -> bool:
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "dim" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _shadowed_log_softmax(fn: Any) -> bool:
    """True if ``fn`` looks ``log_softmax`` up in a namespace (the notebook's) where it is a
    function without a ``dim`` argument although section 3's cell has run there."""
    names = getattr(fn, "__globals__", None)
    code = getattr(fn, "__code__", None)
    if not isinstance(names, dict) or code is None or "log_softmax" not in code.co_names:
        return False
    found = names.get("log_softmax")
    return callable(found) and not _takes_dim(found)


# -- ch09-fit ------------------------------------------------------------------------------
class _Probe:
    """A model that remembers, for each call, its mode, whether a graph was recorded and how
    many samples came; its logits are x @ w with a w that requires grad."""

    def __init__(self, Variable: type[Any], w: np.ndarray) -> None:
        self.w = Variable(w.copy(), requires_grad=True)
        self.training = True
        self.calls: list[tuple[bool, bool, int]] = []

    def __call__(self, x: Any) -> Any:
        out = x @ self.w
        self.calls.append((self.training, getattr(out, "grad_fn", None) is not None, len(x.data)))
        return out

    def train(self, mode: bool = True) -> _Probe:
        self.training = bool(mode)
        return self

    def eval(self) -> _Probe:
        return self.train(False)

    def parameters(self) -> list[Any]:
        return [self.w]


class _Loss:
    def __init__(self, value: float) -> None:
        self.value = value

    def item(self) -> float:
        return self.value

    def backward(self) -> None:
        pass


def _probe_loss(out: Any, y: Any) -> _Loss:
    """The mean cross-entropy of the batch, computed in numpy (the probe needs no gradient)."""
    return _Loss(float(-_log_softmax_ref(np.asarray(out.data))[np.arange(len(y)),
                                                                np.asarray(y)].mean()))


class _ProbeOptimizer:
    """Records the learning rate and the model's mode at each step; shrinks w a little, by lr."""

    def __init__(self, model: _Probe, lr: float) -> None:
        self.model, self.lr = model, lr
        self.steps: list[tuple[float, bool]] = []

    def zero_grad(self) -> None:
        pass

    def step(self) -> None:
        self.steps.append((self.lr, self.model.training))
        self.model.w.data[...] = self.model.w.data * (1.0 - self.lr)


class _Batches:
    """A loader over fixed batches in order: X, y and (Variable of inputs, labels) pairs."""

    def __init__(self, Variable: type[Any], X: np.ndarray, y: np.ndarray, batch_size: int) -> None:
        self.Variable, self.X, self.y, self.batch_size = Variable, X, y, batch_size

    def __iter__(self) -> Any:
        for start in range(0, len(self.X), self.batch_size):
            yield (self.Variable(self.X[start:start + self.batch_size]),
                   self.y[start:start + self.batch_size])

    def __len__(self) -> int:
        return -(-len(self.X) // self.batch_size)


_EVAL_MODE = ("evaluate must put the model in evaluation mode (model.eval()) before its "
              "forward passes: in training mode Dropout would zero activations at random and "
              "the score would be noise.")
_NO_GRAD = ("Run evaluate's forward passes inside `with no_grad():`: nothing is differentiated "
            "there, and a recorded graph only costs time and memory.")
_RESTORE = ("Remember the mode before (was_training = model.training) and put it back at the "
            "end with model.train(was_training): a model that came in evaluation mode stays in "
            "it, one that came in training mode goes back to training.")


def ch09_fit(fit: Callable[..., Any], evaluate: Callable[..., Any], *, Variable: type[Any],
             seed: int = 0, hidden: bool = False) -> None:
    """Check ``evaluate(model, X, y, loss_fn, batch_size)`` and ``fit(model, loader, optimizer,
    epochs, loss_fn, test, log_every, lr_schedule)`` on a probe model that records its mode and
    whether a graph was recorded at each call. ``evaluate`` runs in eval mode under no_grad in
    batches, restores the mode, and returns the mean loss over the samples and the accuracy.
    ``fit`` trains every epoch in training mode, sets ``optimizer.lr = lr_schedule(epoch)``
    (epochs counted from 0) before each epoch, and keeps the history."""
    ck = Checker("ch09-fit", seed=seed, hidden=hidden)
    rng = ck.rng
    n, d, c, bs = (10, 3, 4, 4) if not hidden else (13, 5, 3, 5)
    X = np.round(rng.normal(size=(n, d)), 3)
    y = rng.integers(0, c, size=n)
    W = np.round(rng.normal(size=(d, c)), 3)
    logits = X @ W
    per_sample = -_log_softmax_ref(logits)[np.arange(n), y]
    accuracy = float((logits.argmax(axis=1) == y).mean())
    sizes = [min(bs, n - s) for s in range(0, n, bs)]
    batch_means = [per_sample[s:s + bs].mean() for s in range(0, n, bs)]
    for start_mode in (True, False):
        mode = "training" if start_mode else "evaluation"
        with ck.case(f"evaluate: {n} samples in batches of {bs}, model in {mode} mode"):
            model = _Probe(Variable, W).train(start_mode)
            got = ck.call(evaluate, model, X, y, _probe_loss, batch_size=bs)
            ck.check(isinstance(got, tuple) and len(got) == 2, "evaluate should return a pair "
                     "(mean loss, accuracy).", received=got, hint="return total / len(X), "
                     "correct / len(X)")
            ck.check(len(model.calls) > 0, "evaluate never called the model.",
                     hint="Call model(Variable(xb)) on each batch of X.")
            ck.check(all(not training for training, _, _ in model.calls), "the model was in "
                     "training mode during evaluate's forward passes.", hint=_EVAL_MODE)
            ck.check(not any(graph for _, graph, _ in model.calls), "evaluate's forward passes "
                     "recorded a graph.", hint=_NO_GRAD)
            rows = [k for _, _, k in model.calls]
            ck.check(sum(rows) == n and max(rows) <= bs, f"evaluate passed batches of "
                     f"{rows} samples to the model.", expected=sizes, received=rows,
                     hint="Walk X in slices X[start:start + batch_size], each sample once.")
            ck.check(model.training == start_mode, f"after evaluate the model is in "
                     f"{'training' if model.training else 'evaluation'} mode; it came in "
                     f"{mode} mode.", hint=_RESTORE)
            ck.close(got[0], per_sample.mean(), atol=1e-9, what="mean loss",
                     hint="Add each batch's mean loss times its size, then divide by len(X).",
                     mistakes=[(np.mean(batch_means), "You averaged the batches' mean losses: "
                                "the last batch is smaller, so weight each batch's loss by its "
                                "size (loss.item() * len(yb)) and divide the total by len(X)."),
                               (per_sample.sum(), "This is the sum over the samples; divide "
                                "by len(X).")])
            ck.close(got[1], accuracy, atol=1e-12, what="accuracy",
                     hint="Count the samples whose largest logit (out.data.argmax(axis=1)) is "
                          "their label, and divide by len(X).",
                     mistakes=[(accuracy * n, "This is the number of right answers; divide "
                                "by len(X) to get the accuracy.")])
    epochs = 3
    schedule = (lambda e: 0.1 / (e + 1)) if not hidden else (lambda e: 0.05 * (3 - e))
    Xt, yt = X[: n // 2], y[: n // 2]

    def reference() -> tuple[dict[str, list[float]], list[float]]:
        model = _Probe(Variable, W)
        history: dict[str, list[float]] = {"loss": [], "accuracy": [], "test_loss": [],
                                           "test_accuracy": []}
        lrs = []
        for e in range(epochs):
            lr = schedule(e)
            losses = []
            for start in range(0, n, bs):
                out = X[start:start + bs] @ model.w.data
                losses.append(_probe_loss(types.SimpleNamespace(data=out),
                                          y[start:start + bs]).value)
                model.w.data[...] = model.w.data * (1.0 - lr)
                lrs.append(lr)
            history["loss"].append(float(np.mean(losses)))
            out = X @ model.w.data
            history["accuracy"].append(float((out.argmax(axis=1) == y).mean()))
            out = Xt @ model.w.data
            history["test_accuracy"].append(float((out.argmax(axis=1) == yt).mean()))
            history["test_loss"].append(float(-_log_softmax_ref(out)[np.arange(len(yt)),
                                                                     yt].mean()))
        return history, lrs

    want, want_lrs = reference()
    with ck.case(f"fit: {epochs} epochs of {len(sizes)} batches, model in evaluation mode "
                 "before, with test=(X, y) and lr_schedule"):
        model = _Probe(Variable, W).eval()
        opt = _ProbeOptimizer(model, lr=0.5)
        history = ck.call(fit, model, _Batches(Variable, X, y, bs), opt, epochs, _probe_loss,
                          test=(Xt, yt), lr_schedule=schedule,
                          hint="fit(model, loader, optimizer, epochs, loss_fn=cross_entropy, "
                               "test=None, log_every=0, lr_schedule=None)")
        ck.check(len(opt.steps) == epochs * len(sizes), f"fit made {len(opt.steps)} steps; "
                 f"{epochs} epochs of {len(sizes)} batches make {epochs * len(sizes)}.",
                 hint="Each epoch runs train_step on every batch of the loader, once.")
        ck.check(all(training for _, training in opt.steps), "some training steps ran with "
                 "the model in evaluation mode.", hint="Call model.train() at the start of "
                 "each epoch: the model may come in evaluation mode (evaluate, or a caller), "
                 "and Dropout must be on while training.")
        train_calls = [graph for training, graph, _ in model.calls if training]
        ck.check(all(train_calls), "a training step's forward pass recorded no graph.",
                 hint="Only evaluate runs under no_grad; train_step must record the graph "
                      "that loss.backward() walks.")
        lrs = [lr for lr, _ in opt.steps]
        first = [lrs[k * len(sizes)] for k in range(epochs)]
        ck.check(np.allclose(lrs, want_lrs), "the learning rates of the steps do not follow "
                 "lr_schedule.", expected=[schedule(e) for e in range(epochs)], received=first,
                 hint=("Count the epochs from 0: the first epoch runs at lr_schedule(0)."
                       if np.allclose(first[:-1], [schedule(e + 1) for e in range(epochs - 1)])
                       else "Set the rate BEFORE the epoch's steps: optimizer.lr = "
                       "lr_schedule(epoch), with epoch counted from 0." if
                       np.allclose(first[1:], [schedule(e) for e in range(epochs - 1)])
                       else "At the start of each epoch, when lr_schedule is given, set "
                       "optimizer.lr = lr_schedule(epoch) (epoch = 0, 1, ...)."))
        ck.check(isinstance(history, dict), "fit should return the history, a dict.",
                 received=type(history).__name__, hint="return history")
        for key in ("loss", "accuracy", "test_loss", "test_accuracy"):
            ck.check(len(history.get(key, [])) == epochs, f'history["{key}"] should hold '
                     f"{epochs} numbers, one per epoch.", received=history.get(key),
                     hint="Append one value per epoch to each list.")
        ck.close(history["loss"], want["loss"], atol=1e-9, what='history["loss"]',
                 hint="Each epoch's training loss is the mean of what train_step returned "
                      "for its batches.")
        for key in ("accuracy", "test_accuracy", "test_loss"):
            ck.close(history[key], want[key], atol=1e-9, what=f'history["{key}"]',
                     hint="After each epoch's steps, evaluate the model on loader.X, loader.y "
                          "(accuracy) and on test (test_loss, test_accuracy).")
    with ck.case("fit without lr_schedule leaves the learning rate alone"):
        model = _Probe(Variable, W)
        opt = _ProbeOptimizer(model, lr=0.05)
        history = ck.call(fit, model, _Batches(Variable, X, y, bs), opt, 2, _probe_loss)
        ck.check(all(lr == 0.05 for lr, _ in opt.steps) and len(opt.steps) == 2 * len(sizes),
                 "without lr_schedule the learning rate changed or steps are missing.",
                 received=[lr for lr, _ in opt.steps],
                 hint="Touch optimizer.lr only when lr_schedule is not None.")
        ck.check(len(history.get("loss", [])) == 2 and not history.get("test_loss"),
                 'without test, history["test_loss"] should stay empty.',
                 received=history, hint="Evaluate on the test set only when test is given.")
    ck.done()


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
