"""Check ``cross_entropy(logits, targets)``: the mean over the batch of -log p[target] for
logits (N, C) and integer targets (N,), equal to ``F.cross_entropy`` in value and gradient, also
for logits in the thousands. ``Variable`` is the class the logits are made of (the learner's
``mygrad.Variable``; by default ``autograd_lab``'s).

The learner's function runs with the course's ``_class_indices`` (where it uses that name): a
mistake there costs exercise ch09-class-indices only."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of, library, swapped_names
from .._exercise import Mistake
from .._observe import Observations, Observer, raise_learner_error
from ._shared import shadowed_log_softmax
from .log_softmax import log_softmax_ref
from .messages import HINTS

ID = "ch09-cross-entropy"
PARTS: tuple[str, ...] = ()

_PICK = "return -log_p[np.arange(len(t)), t].mean()"
MISTAKES = (
    Mistake("a sum over the batch", (_PICK, "return -log_p[np.arange(len(t)), t].sum()"), None,
            "ce.summed"),
    Mistake("no minus", (_PICK, "return log_p[np.arange(len(t)), t].mean()"), None, "ce.sign"),
    Mistake("every class", (_PICK, "return -log_p.mean()"), None, "ce.all-classes"),
    Mistake("log of softmax without the shift", ("log_p = log_softmax(logits, dim=-1)",
                                                 "log_p = logits - logits.exp().sum(axis=-1, "
                                                 "keepdims=True).log()"), None, "ce.finite"),
)

NAMES = "the names cross_entropy uses"


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    configs = [("4 samples, 3 classes", 4, 3, 1.0), ("8 samples, 10 classes", 8, 10, 2.0),
               ("logits in the thousands", 3, 5, 1000.0)]
    if hidden:
        configs += [("1 sample, 10 classes", 1, 10, 1.0),
                    ("16 samples, 10 classes, scale 50", 16, 10, 50.0)]
    found = []
    for name, n, c, scale in configs:
        data = np.round(scale * rng.normal(size=(n, c)), 3)
        found.append((name, data, rng.integers(0, c, size=n)))
    return found


def class_indices(targets: Any, logits: Any) -> np.ndarray:
    """The course's _class_indices (exercise ch09-class-indices)."""
    t = np.asarray(getattr(targets, "data", targets))
    if logits.ndim != 2:
        raise ValueError(f"cross_entropy expects logits of shape (N, C), got {logits.shape}.")
    if t.shape != (logits.shape[0],):
        raise ValueError(f"cross_entropy expects targets of shape ({logits.shape[0]},), one "
                         f"class index per row of the logits, got shape {t.shape}.")
    if t.size and (np.any(t != np.round(t)) or t.min() < 0 or t.max() >= logits.shape[1]):
        raise ValueError(f"targets must be class indices in 0..{logits.shape[1] - 1}, got "
                         f"values from {t.min()} to {t.max()}.")
    return t.astype(np.intp)


def _stage(fn: Any) -> dict[str, Any]:
    ns = getattr(fn, "__globals__", None)
    return ns if isinstance(ns, dict) and "_class_indices" in ns else {}


def observe(ob: Observer, cross_entropy: Callable[..., Any], *, seed: int, hidden: bool,
            Variable: Any = None) -> None:
    Var = Variable if Variable is not None else library().Variable
    with ob.case(NAMES):
        ob.put("shadowed", shadowed_log_softmax(cross_entropy))
    ns = _stage(cross_entropy)
    with swapped_names(ns, {"_class_indices": class_indices} if ns else {}):
        for name, data, targets in cases(seed, hidden):
            with ob.case(name):
                logits = Var(data.copy(), requires_grad=True)
                with np.errstate(all="ignore"):
                    loss = cross_entropy(logits, targets)
                ob.put("type", type(loss).__name__)
                ob.put("is a Variable", hasattr(loss, "grad_fn")
                       and bool(getattr(loss, "requires_grad", False)))
                ob.put("loss", None if loss is None else np.asarray(data_of(loss),
                                                                    dtype=np.float64))
                if hasattr(loss, "sum"):
                    ob.attempt("backward raised", lambda: loss.sum().backward())
                    ob.put("grad", None if logits.grad is None else
                           np.asarray(data_of(logits.grad)))


def judge(ck: Checker, obs: Observations) -> None:
    import autograd_lab.functional as F
    al = library()
    shadowed = obs.case(ck, NAMES).get("shadowed") is True
    for name, data, targets in cases(obs.seed, obs.hidden):
        with ck.case(name):
            seen = obs.case(ck, name, what="your cross_entropy",
                            hint=HINTS["ce.shadow"] if shadowed else None)
            ck.check(seen["loss"] is not None, "your cross_entropy returned None.",
                     hint=HINTS["logsoftmax.return"])
            ck.check(seen["is a Variable"] is True, "your cross_entropy did not return a "
                     "Variable that requires grad.", expected="a Variable with a grad_fn",
                     received=seen["type"], hint=HINTS["logsoftmax.variable"])
            ref_logits = al.Variable(data.copy(), requires_grad=True)
            ref = F.cross_entropy(ref_logits, targets)
            ref.backward()
            _judge_loss(ck, seen, data, targets, float(ref.item()))
            err = seen["backward raised"]
            if err is not None:
                raise_learner_error(ck, err, "your backward", HINTS["logsoftmax.variable"])
            ck.check(seen["grad"] is not None, "logits.grad is None after backward.",
                     hint=HINTS["logsoftmax.variable"])
            ck.close(seen["grad"], ref_logits.grad.data, atol=1e-7,
                     what="gradient of the logits", hint=HINTS["ce.gradient"])
    ck.done()


def _judge_loss(ck: Checker, seen: Any, data: np.ndarray, targets: np.ndarray,
                expected: float) -> None:
    got = seen["loss"]
    ck.check(isinstance(got, np.ndarray) and got.size == 1,
             f"the loss has shape {getattr(got, 'shape', None)}; it should be one number.",
             hint=HINTS["ce.mean"])
    value = float(got.reshape(-1)[0])
    ck.check(bool(np.isfinite(value)), "the loss is inf or nan.", expected=expected,
             received=value, hint=HINTS["ce.finite"])
    n = len(targets)
    per_sample = -log_softmax_ref(data)[np.arange(n), targets]
    ck.close(got.reshape(()), expected, atol=1e-7, what="loss", hint=HINTS["ce.formula"],
             mistakes=[(per_sample.sum(), HINTS["ce.summed"]), (-expected, HINTS["ce.sign"]),
                       (-log_softmax_ref(data).mean(), HINTS["ce.all-classes"])])
