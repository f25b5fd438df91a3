"""Check ``log_softmax(x)`` for a Variable x of shape (N, C): log-probabilities along the last
axis, finite for huge logits, built from Variable operations so that backward works."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of, library
from .._exercise import Mistake
from .._observe import Observations, Observer, raise_learner_error
from .messages import HINTS

ID = "ch09-log-softmax"
PARTS: tuple[str, ...] = ()

_SHIFT = "z = x - x.data.max(axis=-1, keepdims=True)"
_RETURN = "return z - z.exp().sum(axis=-1, keepdims=True).log()"
MISTAKES = (
    Mistake("no shift", (_SHIFT, "z = x"), None, "logsoftmax.stable"),
    Mistake("one maximum for the batch", (_SHIFT, "z = x - x.data.max()"), None,
            "logsoftmax.global-max"),
    Mistake("the sum down the columns", (_RETURN, "return z - z.exp().sum(axis=0, "
                                                  "keepdims=True).log()"), None,
            "logsoftmax.axis0"),
    Mistake("no log-sum-exp", (_RETURN, "return z"), None, "logsoftmax.no-lse"),
    Mistake("numpy, not Variables", (_RETURN, "return z.data - np.log(np.exp(z.data).sum("
                                              "axis=-1, keepdims=True))"), None,
            "logsoftmax.variable"),
)

GRADCHECK = "gradcheck on a (2, 4) float64 input"
_EPS = 1e-6


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    found = [
        ("a (3, 5) batch of logits", np.round(rng.normal(size=(3, 5)), 3)),
        ("a single row (1, 10)", np.round(2 * rng.normal(size=(1, 10)), 3)),
        ("logits around 1000", np.round(1000 + 5 * rng.normal(size=(2, 4)), 3)),
        ("logits [1000, 0, -1000]", np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]])),
    ]
    if hidden:
        found += [("logits around -1000", np.round(-1000 + 3 * rng.normal(size=(4, 3)), 3)),
                  ("a (6, 10) batch, scale 30", 30 * rng.normal(size=(6, 10)))]
    grads = [np.round(rng.normal(size=data.shape), 3) for _, data in found]
    return {"cases": [(name, data, g) for (name, data), g in zip(found, grads)],
            "gradcheck": rng.normal(size=(2, 4)),
            "gradcheck grad": np.random.default_rng(0).uniform(0.5, 1.5, size=(2, 4))}


def _plain(out: Any) -> Any:
    try:
        return np.asarray(data_of(out), dtype=np.float64)
    except (TypeError, ValueError):
        return out


def observe(ob: Observer, log_softmax: Callable[[Any], Any], *, seed: int, hidden: bool) -> None:
    al = library()
    inputs = cases(seed, hidden)
    for name, data, g in inputs["cases"]:
        with ob.case(name):
            x = al.Variable(data.copy(), requires_grad=True)
            with np.errstate(all="ignore"):
                out = log_softmax(x)
            ob.put("type", type(out).__name__)
            ob.put("is a Variable", hasattr(out, "grad_fn")
                   and bool(getattr(out, "requires_grad", False)))
            ob.put("x after", np.asarray(x.data))
            ob.put("result", None if out is None else _plain(out))
            if hasattr(out, "backward"):
                ob.attempt("backward raised", out.backward, al.Variable(g))
                ob.put("grad", None if x.grad is None else np.asarray(data_of(x.grad)))
    with ob.case(GRADCHECK):
        data, g = inputs["gradcheck"], inputs["gradcheck grad"]
        x = al.Variable(data.copy(), requires_grad=True)
        log_softmax(x).backward(al.Variable(g))
        ob.put("grad", None if x.grad is None else np.asarray(data_of(x.grad)))
        moved = []
        for i in np.ndindex(data.shape):
            for step in (_EPS, -_EPS):
                values = data.copy()
                values[i] += step
                moved.append(_plain(log_softmax(al.Variable(values))))
        ob.put("moved", moved)
    _note_shadowing(log_softmax)


def _note_shadowing(log_softmax: Any) -> None:
    from ._shared import takes_dim
    names = getattr(log_softmax, "__globals__", None)
    if (isinstance(names, dict) and "USE_KERNELS" in names
            and names.get("log_softmax") is log_softmax and not takes_dim(log_softmax)):
        print("Note: this cell ran after section 3's `%%mygrad functional activations` cell "
              "and replaced its `log_softmax(x, dim=-1)` in this notebook; the cells of "
              "section 3 call it with dim. Run the `%%mygrad functional activations` cell "
              "again before going on.")


def log_softmax_ref(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _global_shift_fails(got: np.ndarray, x: np.ndarray) -> bool:
    """True if ``got`` is inf or nan exactly where log_softmax shifted by the maximum of the
    whole batch (instead of each row's) is."""
    with np.errstate(all="ignore"):
        z = x - x.max()
        shifted = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    bad = ~np.isfinite(shifted)
    return bool(bad.any() and np.array_equal(bad, ~np.isfinite(got)))


def judge(ck: Checker, obs: Observations) -> None:
    what = "your log_softmax"
    inputs = cases(obs.seed, obs.hidden)
    for name, data, g in inputs["cases"]:
        with ck.case(name):
            _judge_case(ck, obs.case(ck, name, what=what), data, g)
    with ck.case(GRADCHECK):
        seen = obs.case(ck, GRADCHECK, what=what, hint=HINTS["logsoftmax.variable"])
        _judge_differences(ck, seen, inputs["gradcheck"], inputs["gradcheck grad"])
    ck.done()


def _judge_case(ck: Checker, seen: Any, data: np.ndarray, g: np.ndarray) -> None:
    ck.check(seen["result"] is not None, "your log_softmax returned None.",
             hint=HINTS["logsoftmax.return"])
    ck.check(seen["is a Variable"] is True, "your log_softmax did not return a Variable that "
             "requires grad.", expected="a Variable with a grad_fn", received=seen["type"],
             hint=HINTS["logsoftmax.variable"])
    after = seen["x after"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, data),
             "your log_softmax changed its input x.", hint=HINTS["logsoftmax.input"])
    got, expected = seen["result"], log_softmax_ref(data)
    ck.check(isinstance(got, np.ndarray), "the result is not a number or an array of numbers.",
             received=got, hint=HINTS["logsoftmax.variable"])
    ck.check(got.shape == expected.shape, f"the result has shape {got.shape}, expected "
             f"{expected.shape}.", hint=HINTS["logsoftmax.keepdims"])
    ck.check(bool(np.all(np.isfinite(got))), "the result has inf or nan in it.", received=got,
             hint=HINTS["logsoftmax.global-max" if _global_shift_fails(got, data)
                        else "logsoftmax.stable"])
    with np.errstate(all="ignore"):
        columns = np.exp(got).sum(axis=0)
        rows = np.exp(got).sum(axis=-1)
    ck.check(not (data.shape[0] > 1 and np.allclose(columns, 1.0, atol=1e-9)
                  and not np.allclose(rows, 1.0, atol=1e-9)),
             "exp of your result sums to 1 down each column, not along each row.",
             hint=HINTS["logsoftmax.axis0"])
    wrong_axis = data - np.log(np.exp(data - data.max(axis=0, keepdims=True)).sum(
        axis=0, keepdims=True)) - data.max(axis=0, keepdims=True)
    ck.close(got, expected, atol=1e-7, what="log-probabilities", hint=HINTS["logsoftmax.stable"],
             mistakes=[(wrong_axis, HINTS["logsoftmax.axis0"]),
                       (data - data.max(axis=-1, keepdims=True), HINTS["logsoftmax.no-lse"]),
                       (np.exp(expected), HINTS["logsoftmax.softmax"])])
    err = seen["backward raised"]
    if err is not None:
        raise_learner_error(ck, err, "your backward", HINTS["logsoftmax.variable"])
    ck.check(seen["grad"] is not None, "x.grad is None after backward.",
             hint=HINTS["logsoftmax.variable"])
    p = np.exp(expected)
    ck.close(seen["grad"], g - p * g.sum(axis=-1, keepdims=True), atol=1e-7,
             what="gradient of x", hint=HINTS["logsoftmax.variable"])


def _judge_differences(ck: Checker, seen: Any, data: np.ndarray, g: np.ndarray) -> None:
    moved = seen["moved"]
    ck.check(isinstance(moved, list) and len(moved) == 2 * data.size and all(
        isinstance(v, np.ndarray) and v.shape == data.shape for v in moved),
        f"the results of the moved inputs are not all of shape {data.shape}.",
        hint=HINTS["logsoftmax.variable"])
    numeric = np.zeros(data.shape)
    for n, i in enumerate(np.ndindex(data.shape)):
        numeric[i] = ((moved[2 * n] * g).sum() - (moved[2 * n + 1] * g).sum()) / (2 * _EPS)
    ck.check(seen["grad"] is not None, "x.grad is None after backward.",
             hint=HINTS["logsoftmax.variable"])
    ck.close(seen["grad"], numeric, atol=1e-5, rtol=1e-3,
             what="gradient of x against central differences", hint=HINTS["logsoftmax.variable"])
