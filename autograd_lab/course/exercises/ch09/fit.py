"""Check ``evaluate(model, X, y, loss_fn, batch_size)`` and ``fit(model, loader, optimizer,
epochs, loss_fn, test, log_every, lr_schedule)`` on a probe model that records its mode and
whether a graph was recorded at each call. ``evaluate`` runs in eval mode under no_grad in
batches, restores the mode, and returns the mean loss over the samples and the accuracy.
``fit`` trains every epoch in training mode, sets ``optimizer.lr = lr_schedule(epoch)``
(epochs counted from 0) before each epoch, and keeps the history.

The learner's ``fit`` runs with the course's ``train_step`` (where it uses that name): a mistake
there costs exercise ch09-train-step only."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._common import Checker, swapped_names
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._fit_probe import Batches, Probe, ProbeOptimizer, log_softmax_rows, probe_loss
from .messages import HINTS
from .train_step import course_train_step

ID = "ch09-fit"
PARTS: tuple[str, ...] = ()

_RETURN = "return total / len(X), correct / len(X)"
_SET_LR = "            optimizer.lr = lr_schedule(epoch)\n"
_STEPS = "        losses = [train_step(model, loss_fn, optimizer, xb, yb) for xb, yb in loader]\n"
MISTAKES = (
    Mistake("evaluate in training mode", ("    model.eval()\n", ""), None, "fit.eval-mode"),
    Mistake("evaluate records a graph", ("    with no_grad():\n", "    if True:\n"), None,
            "fit.no-grad"),
    Mistake("evaluate leaves the model in evaluation mode",
            ("    model.train(was_training)\n", ""), None, "fit.restore"),
    Mistake("evaluate returns the summed loss", (_RETURN, "return total, correct / len(X)"),
            None, "fit.loss-sum"),
    Mistake("evaluate returns the count of right answers",
            (_RETURN, "return total / len(X), correct"), None, "fit.accuracy-count"),
    Mistake("fit never switches to training mode", ("        model.train()\n", ""), None,
            "fit.train-mode"),
    Mistake("fit counts the epochs from 1", (_SET_LR, _SET_LR.replace("(epoch)", "(epoch + 1)")),
            None, "fit.from-zero"),
    Mistake("fit sets the rate after the epoch",
            ("        if lr_schedule is not None:\n" + _SET_LR + "        model.train()\n" + _STEPS,
             "        model.train()\n" + _STEPS + "        if lr_schedule is not None:\n"
             + _SET_LR), None, "fit.before"),
    Mistake("fit trains under no_grad", (_STEPS, "        with no_grad(): " + _STEPS.lstrip()),
            None, "fit.train-graph"),
    Mistake("fit sums the batch losses", ("float(np.mean(losses))", "float(np.sum(losses))"),
            None, "fit.epoch-loss"),
    Mistake("fit tests on the training data", ("evaluate(model, test[0], test[1], loss_fn)",
                                               "evaluate(model, loader.X, loader.y, loss_fn)"),
            None, "fit.evaluate"),
)

EPOCHS = 3
NO_SCHEDULE = "fit without lr_schedule leaves the learning rate alone"


@dataclass(frozen=True)
class Setup:
    """One run's data: n samples of d features, c classes, batches of bs, the probe's W."""

    n: int
    bs: int
    X: np.ndarray
    y: np.ndarray
    W: np.ndarray

    @property
    def sizes(self) -> list[int]:
        return [min(self.bs, self.n - s) for s in range(0, self.n, self.bs)]

    @property
    def test(self) -> tuple[np.ndarray, np.ndarray]:
        return self.X[: self.n // 2], self.y[: self.n // 2]


def cases(seed: int, hidden: bool) -> Setup:
    rng = np.random.default_rng(seed)
    n, d, c, bs = (10, 3, 4, 4) if not hidden else (13, 5, 3, 5)
    X = np.round(rng.normal(size=(n, d)), 3)
    y = rng.integers(0, c, size=n)
    W = np.round(rng.normal(size=(d, c)), 3)
    return Setup(n, bs, X, y, W)


def schedule(hidden: bool) -> Callable[[int], float]:
    """The learning-rate schedule the fit case passes."""
    return (lambda e: 0.1 / (e + 1)) if not hidden else (lambda e: 0.05 * (3 - e))


def _mode(training: bool) -> str:
    return "training" if training else "evaluation"


def evaluate_title(s: Setup, start_mode: bool) -> str:
    return f"evaluate: {s.n} samples in batches of {s.bs}, model in {_mode(start_mode)} mode"


def fit_title(s: Setup) -> str:
    return (f"fit: {EPOCHS} epochs of {len(s.sizes)} batches, model in evaluation mode "
            "before, with test=(X, y) and lr_schedule")


# -- the kernel's half ---------------------------------------------------------------------
def observe(ob: Observer, fit: Callable[..., Any], evaluate: Callable[..., Any], *,
            Variable: type[Any], seed: int, hidden: bool) -> None:
    found = getattr(fit, "__globals__", None)
    ns: dict[str, Any] = found if isinstance(found, dict) and "train_step" in found else {}
    with swapped_names(ns, {"train_step": course_train_step} if ns else {}):
        _observe(ob, fit, evaluate, Variable, cases(seed, hidden), hidden)


def _observe(ob: Observer, fit: Any, evaluate: Any, Variable: type[Any], s: Setup,
             hidden: bool) -> None:
    for start_mode in (True, False):
        with ob.case(evaluate_title(s, start_mode)):
            model = Probe(Variable, s.W).train(start_mode)
            if ob.put("callable", callable(evaluate)):
                ob.put("returned", evaluate(model, s.X, s.y, probe_loss, batch_size=s.bs))
                ob.put("calls", model.calls)
                ob.put("training", model.training)
    with ob.case(fit_title(s)):
        model = Probe(Variable, s.W).eval()
        opt = ProbeOptimizer(model, lr=0.5)
        if ob.put("callable", callable(fit)):
            _put_history(ob, fit(model, Batches(Variable, s.X, s.y, s.bs), opt, EPOCHS,
                                 probe_loss, test=s.test, lr_schedule=schedule(hidden)))
            ob.put("steps", opt.steps)
            ob.put("calls", model.calls)
    with ob.case(NO_SCHEDULE):
        model = Probe(Variable, s.W)
        opt = ProbeOptimizer(model, lr=0.05)
        if ob.put("callable", callable(fit)):
            _put_history(ob, fit(model, Batches(Variable, s.X, s.y, s.bs), opt, 2, probe_loss))
            ob.put("steps", opt.steps)


def _put_history(ob: Observer, history: Any) -> None:
    ob.put("history type", type(history).__name__)
    ob.put("history", {str(k): list(v) if isinstance(v, (list, tuple)) else v
                       for k, v in history.items()} if isinstance(history, dict) else history)


# -- the judge's half ----------------------------------------------------------------------
def _callable(ck: Checker, seen: Any, name: str) -> None:
    ck.check(seen["callable"] is True, f"{name} is not callable.", expected="a function",
             hint=HINTS["fit.callable"])


def judge(ck: Checker, obs: Observations) -> None:
    s = cases(obs.seed, obs.hidden)
    logits = s.X @ s.W
    per_sample = -log_softmax_rows(logits)[np.arange(s.n), s.y]
    for start_mode in (True, False):
        title = evaluate_title(s, start_mode)
        with ck.case(title):
            seen = obs.case(ck, title, what="your evaluate")
            _callable(ck, seen, "evaluate")
            _judge_evaluate(ck, seen, s, start_mode, per_sample,
                            float((logits.argmax(axis=1) == s.y).mean()))
    want, want_lrs = reference(s, schedule(obs.hidden))
    title = fit_title(s)
    with ck.case(title):
        seen = obs.case(ck, title, what="your fit", hint=HINTS["fit.signature"])
        _callable(ck, seen, "fit")
        _judge_fit(ck, seen, s, schedule(obs.hidden), want, want_lrs)
    with ck.case(NO_SCHEDULE):
        seen = obs.case(ck, NO_SCHEDULE, what="your fit")
        _callable(ck, seen, "fit")
        _judge_no_schedule(ck, seen, s)
    ck.done()


def _judge_evaluate(ck: Checker, seen: Any, s: Setup, start_mode: bool,
                    per_sample: np.ndarray, accuracy: float) -> None:
    got = seen["returned"]
    ck.check(isinstance(got, tuple) and len(got) == 2, "evaluate should return a pair "
             "(mean loss, accuracy).", received=getattr(got, "repr", got),
             hint=HINTS["fit.pair"])
    calls = _rows(ck, seen["calls"])
    ck.check(len(calls) > 0, "evaluate never called the model.", hint=HINTS["fit.call-model"])
    ck.check(all(not training for training, _, _ in calls), "the model was in "
             "training mode during evaluate's forward passes.", hint=HINTS["fit.eval-mode"])
    ck.check(not any(graph for _, graph, _ in calls), "evaluate's forward passes "
             "recorded a graph.", hint=HINTS["fit.no-grad"])
    rows = [k for _, _, k in calls]
    ck.check(sum(rows) == s.n and max(rows) <= s.bs, f"evaluate passed batches of "
             f"{rows} samples to the model.", expected=s.sizes, received=rows,
             hint=HINTS["fit.batches"])
    after = seen["training"]
    ck.check(after == start_mode, f"after evaluate the model is in {_mode(bool(after))} mode; "
             f"it came in {_mode(start_mode)} mode.", hint=HINTS["fit.restore"])
    batch_means = [per_sample[k:k + s.bs].mean() for k in range(0, s.n, s.bs)]
    ck.close(got[0], per_sample.mean(), atol=1e-9, what="mean loss", hint=HINTS["fit.mean-loss"],
             mistakes=[(np.mean(batch_means), HINTS["fit.batch-means"]),
                       (per_sample.sum(), HINTS["fit.loss-sum"])])
    ck.close(got[1], accuracy, atol=1e-12, what="accuracy", hint=HINTS["fit.accuracy"],
             mistakes=[(accuracy * s.n, HINTS["fit.accuracy-count"])])


def _rows(ck: Checker, calls: Any) -> list[tuple[Any, Any, Any]]:
    ck.check(isinstance(calls, list) and all(isinstance(c, tuple) and len(c) == 3
                                             for c in calls),
             "the probe model's calls were not observed.")
    return list(calls)


def reference(s: Setup, lr_schedule: Callable[[int], float]
              ) -> tuple[dict[str, list[float]], list[float]]:
    """The history and the steps' learning rates that the course's fit gives on the probe."""
    w = s.W.copy()
    Xt, yt = s.test
    history: dict[str, list[float]] = {"loss": [], "accuracy": [], "test_loss": [],
                                       "test_accuracy": []}
    lrs = []
    for e in range(EPOCHS):
        lr = lr_schedule(e)
        losses = []
        for start in range(0, s.n, s.bs):
            out = s.X[start:start + s.bs] @ w
            yb = s.y[start:start + s.bs]
            losses.append(float(-log_softmax_rows(out)[np.arange(len(yb)), yb].mean()))
            w = w * (1.0 - lr)
            lrs.append(lr)
        history["loss"].append(float(np.mean(losses)))
        history["accuracy"].append(float(((s.X @ w).argmax(axis=1) == s.y).mean()))
        out = Xt @ w
        history["test_accuracy"].append(float((out.argmax(axis=1) == yt).mean()))
        history["test_loss"].append(float(-log_softmax_rows(out)[np.arange(len(yt)),
                                                                  yt].mean()))
    return history, lrs


def _lr_hint(first: list[float], lr_schedule: Callable[[int], float]) -> str:
    if np.allclose(first[:-1], [lr_schedule(e + 1) for e in range(EPOCHS - 1)]):
        return HINTS["fit.from-zero"]
    if np.allclose(first[1:], [lr_schedule(e) for e in range(EPOCHS - 1)]):
        return HINTS["fit.before"]
    return HINTS["fit.schedule"]


def _steps(ck: Checker, steps: Any) -> list[tuple[float, bool]]:
    ck.check(isinstance(steps, list) and all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], (int, float, np.number))
        and not isinstance(p[0], bool) for p in steps),
        "the optimizer's steps were not observed as (learning rate, mode) pairs.",
        hint=HINTS["fit.lr-number"])
    return list(steps)


def _judge_fit(ck: Checker, seen: Any, s: Setup, lr_schedule: Callable[[int], float],
               want: dict[str, list[float]], want_lrs: list[float]) -> None:
    steps, per_epoch = _steps(ck, seen["steps"]), len(s.sizes)
    ck.check(len(steps) == EPOCHS * per_epoch, f"fit made {len(steps)} steps; "
             f"{EPOCHS} epochs of {per_epoch} batches make {EPOCHS * per_epoch}.",
             hint=HINTS["fit.steps"])
    ck.check(all(training for _, training in steps), "some training steps ran with "
             "the model in evaluation mode.", hint=HINTS["fit.train-mode"])
    train_calls = [graph for training, graph, _ in _rows(ck, seen["calls"]) if training]
    ck.check(all(train_calls), "a training step's forward pass recorded no graph.",
             hint=HINTS["fit.train-graph"])
    lrs = [float(lr) for lr, _ in steps]
    first = [lrs[k * per_epoch] for k in range(EPOCHS)]
    ck.check(np.allclose(lrs, want_lrs), "the learning rates of the steps do not follow "
             "lr_schedule.", expected=[lr_schedule(e) for e in range(EPOCHS)], received=first,
             hint=_lr_hint(first, lr_schedule))
    history = _history(ck, seen)
    for key in ("loss", "accuracy", "test_loss", "test_accuracy"):
        ck.check(_length(history.get(key, [])) == EPOCHS, f'history["{key}"] should hold '
                 f"{EPOCHS} numbers, one per epoch.", received=history.get(key),
                 hint=HINTS["fit.per-epoch"])
    ck.close(history["loss"], want["loss"], atol=1e-9, what='history["loss"]',
             hint=HINTS["fit.epoch-loss"])
    for key in ("accuracy", "test_accuracy", "test_loss"):
        ck.close(history[key], want[key], atol=1e-9, what=f'history["{key}"]',
                 hint=HINTS["fit.evaluate"])


def _history(ck: Checker, seen: Any) -> dict[str, Any]:
    history = seen["history"]
    ck.check(isinstance(history, dict), "fit should return the history, a dict.",
             received=seen["history type"], hint=HINTS["fit.history"])
    return dict(history)


def _length(value: Any) -> int:
    return len(value) if isinstance(value, (list, tuple)) else -1


def _judge_no_schedule(ck: Checker, seen: Any, s: Setup) -> None:
    steps = _steps(ck, seen["steps"])
    ck.check(all(lr == 0.05 for lr, _ in steps) and len(steps) == 2 * len(s.sizes),
             "without lr_schedule the learning rate changed or steps are missing.",
             received=[lr for lr, _ in steps], hint=HINTS["fit.keep-lr"])
    history = _history(ck, seen)
    ck.check(_length(history.get("loss", [])) == 2 and not history.get("test_loss"),
             'without test, history["test_loss"] should stay empty.',
             received=history, hint=HINTS["fit.no-test"])
