"""Check ``SoftmaxCrossEntropy``, the Function behind ``softmax_cross_entropy``: its forward
gives the mean cross-entropy of (N, C) logits by the fused kernel, and the gradient of the
logits is (softmax - onehot) / N times the incoming gradient, without and with
``create_graph=True`` (where the given recorded branch reads ``ctx.targets``).

The class runs on a numpy stand-in of ``cross_entropy_rows`` during the check, so that a
mistake in that kernel costs only its own exercise."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._common import Checker, swapped_names
from .._exercise import Mistake
from .._functions import function_of
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._shared import shown, softmax
from .messages import HINTS

ID = "ch07-softmax-ce-function"
PARTS: tuple[str, ...] = ()
SETUP = "SoftmaxCrossEntropy is a Function class"
GRAPH = "with create_graph=True: the recorded branch gives the same gradient"

MISTAKES = (
    Mistake("the summed loss", ("total / n if n else np.nan", "total"), None, "sce.sum"),
    Mistake("a gradient not divided by N", ("ctx.grad = targets, grad / max(n, 1)",
                                            "ctx.grad = targets, grad"), None, "sce.not-mean"),
    Mistake("grad_output ignored", ("return Variable(ctx.grad * grad_output.item()), None",
                                    "return Variable(ctx.grad), None"), None, "sce.chain"),
    Mistake("targets not kept", ("ctx.targets, ctx.grad = targets, grad / max(n, 1)",
                                 "ctx.grad = grad / max(n, 1)"), None, "sce.targets"),
)


def cross_entropy_rows(x: np.ndarray, targets: np.ndarray, grad: np.ndarray) -> float:
    """A numpy stand-in of the learner's fused kernel (the key's results)."""
    rows = np.arange(x.shape[0])
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    grad[...] = e / s
    grad[rows, targets] -= 1.0
    return float((np.log(s[:, 0]) + m[:, 0] - x[rows, targets]).sum())


@contextlib.contextmanager
def course_kernel(cls: Any) -> Iterator[None]:
    """``cls.forward`` runs on :func:`cross_entropy_rows` (where it uses that name)."""
    space = getattr(function_of(cls, "forward"), "__globals__", None)
    if not isinstance(space, dict) or "cross_entropy_rows" not in space:
        yield
        return
    with swapped_names(space, {"cross_entropy_rows": cross_entropy_rows}):
        yield


def cases(seed: int, hidden: bool) -> tuple[list, tuple[np.ndarray, np.ndarray]]:
    """(name, x, targets, incoming gradient) of the cases, then (x, targets) of the
    create_graph case: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes = [((4, 3), 1.0, False), ((6, 5), 2.5, False), ((5, 4), 0.5, True)]
    if hidden:
        shapes += [((1, 1), 3.0, False), ((9, 7), -1.5, True)]
    found = []
    for shape, scale, transposed in shapes:
        name = f"a {shape} batch{' (transposed, not C-contiguous)' if transposed else ''}, " \
               f"incoming gradient {scale:g}"
        x = np.round(2 * rng.normal(size=shape[::-1] if transposed else shape), 3)
        x = x.T if transposed else x
        found.append((name, x, rng.integers(0, shape[1], size=shape[0]).astype(np.int64), scale))
    graph = (np.round(rng.normal(size=(4, 3)), 3), np.array([0, 2, 1, 2], dtype=np.int64))
    return found, graph


def observe(ob: Observer, SoftmaxCrossEntropy: type[Any], Variable: type[Any], *, seed: int,
            hidden: bool) -> None:
    with ob.case(SETUP):
        ob.put("object", SoftmaxCrossEntropy)
        if not ob.put("class", isinstance(SoftmaxCrossEntropy, type)
                      and hasattr(SoftmaxCrossEntropy, "apply")):
            return
    found, (gx, gt) = cases(seed, hidden)
    with course_kernel(SoftmaxCrossEntropy):
        for name, x, t, scale in found:
            with ob.case(name):
                logits = Variable(x.copy(), requires_grad=True)
                loss = SoftmaxCrossEntropy.apply(logits, t)
                ob.put("object", loss)
                if not ob.put("variable", isinstance(loss, Variable)):
                    continue
                ob.put("loss", np.asarray(loss.data, dtype=np.float64))
                ob.attempt("backward raised", loss.backward, Variable(np.array(scale)))
                ob.put("grad", None if logits.grad is None else np.asarray(logits.grad.data))
        with ob.case(GRAPH):
            logits = Variable(gx.copy(), requires_grad=True)
            loss = SoftmaxCrossEntropy.apply(logits, gt)
            ob.attempt("backward raised", loss.backward, create_graph=True)
            ob.put("grad", None if logits.grad is None else np.asarray(logits.grad.data))


def judge(ck: Checker, obs: Observations) -> None:
    rule = HINTS["sce.rule"]
    setup = obs.case(ck, SETUP, what="your SoftmaxCrossEntropy")
    ck.check(setup["class"] is True, "SoftmaxCrossEntropy is not a Function class.",
             received=shown(setup["object"]), hint=HINTS["fn.class"])
    found, (gx, gt) = cases(obs.seed, obs.hidden)
    for name, x, t, scale in found:
        with ck.case(name):
            _judge_case(ck, obs.case(ck, name, what="your apply", hint=rule), x, t, scale)
    with ck.case(GRAPH):
        seen = obs.case(ck, GRAPH, what="your apply", hint=rule)
        err = seen["backward raised"]
        if isinstance(err, Raised):
            if err.is_a("AttributeError"):
                ck.fail(f"backward with create_graph=True raised AttributeError: {err.message}",
                        hint=HINTS["sce.targets"])
            raise_learner_error(ck, err, "your backward", rule)
        want = softmax(gx)
        want[np.arange(4), gt] -= 1.0
        ck.check(seen["grad"] is not None, "logits.grad is None after backward.",
                 hint=HINTS["sce.grad-none"])
        ck.close(seen["grad"], want / 4, rtol=1e-9, atol=1e-12,
                 what="gradient of the logits (create_graph=True)", hint=rule)
    ck.done()


def _judge_case(ck: Checker, seen: Any, x: np.ndarray, t: np.ndarray, scale: float) -> None:
    rule = HINTS["sce.rule"]
    n = x.shape[0]
    ck.check(seen["variable"] is True, "apply did not return a Variable.",
             received=shown(seen["object"]), hint=HINTS["sce.variable"])
    rows = np.arange(n)
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    mean = float((lse - x[rows, t]).mean())
    loss = seen["loss"]
    loss = loss.reshape(()) if isinstance(loss, np.ndarray) and loss.size == 1 else loss
    ck.close(loss, mean, rtol=1e-10, atol=1e-12, what="loss",
             mistakes=[(mean * n, HINTS["sce.sum"])] if n > 1 else [], hint=rule)
    if isinstance(seen["backward raised"], Raised):
        raise_learner_error(ck, seen["backward raised"], "your backward", rule)
    per_row = softmax(x)
    per_row[rows, t] -= 1.0
    want = per_row / n * scale
    got = seen["grad"]
    ck.check(got is not None, "logits.grad is None after backward.", hint=HINTS["sce.grad-none"])
    mistakes = [(per_row * scale, HINTS["sce.not-mean"]),
                (want / scale, HINTS["sce.chain"])] if n > 1 else []
    if scale != 1.0 and n == 1:
        mistakes = [(want / scale, HINTS["sce.chain-short"])]
    ck.close(got, want, rtol=1e-9, atol=1e-12, what="gradient of the logits",
             mistakes=mistakes, hint=rule)
