"""A Function's forward and backward called by hand, split in two: :func:`observe_by_hand`
calls them in the learner's kernel (with a stand-in ctx and the course's apply, Mul, sum_to
and every other Function of the chapter, so no other exercise plays a part) and keeps plain
data; :func:`judge_by_hand` reads that data back with the old checker's messages."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of, format_value
from .._functions import StandInCtx, course_apply, course_ops, function_of
from .._observe import Case, Observer, Raised, raise_learner_error, raised
from ._shared import course_pieces, unbroadcast_reference
from .messages import HINTS

__all__ = ["attempt", "observe_by_hand", "judge_by_hand", "judge_attempt", "describe_grads",
           "grad_of", "pair_cases", "reduce_to"]


def attempt(ob: Observer, key: str, fn: Callable[[], Any]) -> tuple[bool, Any]:
    """Call the learner's ``fn``: (True, its result), or (False, None) with what it raised
    kept under ``key`` (``None`` there when it returned)."""
    try:
        result = fn()
    except BaseException as err:  # noqa: BLE001 - the learner's code may raise anything
        if type(err) is KeyboardInterrupt:
            raise
        ob.put(key, raised(err))
        return False, None
    ob.put(key, None)
    return True, result


def judge_attempt(ck: Checker, seen: Case, key: str, name: str, hint: str | None = None) -> None:
    """Fail as ``ck.call`` did when the call observed under ``key`` raised (``name`` is the
    name the message gives the learner's function)."""
    err = seen[key]
    if err is None:
        return
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    raise_learner_error(ck, err, f"your {name}", hint)


def describe_grads(grads: Any, Variable: type[Any]) -> list[Any]:
    """What a backward returned, one entry per value: None, ("Variable", its data as float64),
    or ("other", its type's name, its text)."""
    values = list(grads) if isinstance(grads, tuple) else [grads]
    out: list[Any] = []
    for g in values:
        if g is None:
            out.append(None)
        elif isinstance(g, Variable):
            out.append(("Variable", np.asarray(data_of(g), dtype=np.float64)))
        else:
            out.append(("other", type(g).__name__, format_value(g)))
    return out


def observe_by_hand(ob: Observer, cls: Any, arrays: list[np.ndarray], g: np.ndarray,
                    extra: tuple = (), keep: tuple[str, ...] = ()) -> None:
    """Inside a case: ``cls.forward`` then ``cls.backward`` by hand on Variables of
    ``arrays`` with the upstream gradient ``g``; keeps the class's name, what each call raised,
    the inputs and grad_output after the calls, the output's data and the gradients."""
    ob.put("class", str(getattr(cls, "__name__", cls)))
    ns = getattr(function_of(cls, "forward"), "__globals__", None)
    if ns is None or "Variable" not in ns:
        ob.put("setup", "no forward" if ns is None else "no Variable")
        return
    Variable = ns["Variable"]
    ctx = StandInCtx(tuple(True for _ in arrays) + (False,) * len(extra))
    inputs = [Variable(a.copy(), requires_grad=True) for a in arrays]
    with course_ops(ns), course_apply(cls, ns), course_pieces(ns, (cls.__name__,) + keep):
        ok, out = attempt(ob, "forward raised", lambda: cls.forward(ctx, *inputs, *extra))
        if not ok:
            return
        ob.put("inputs after forward", [np.array(data_of(v)) for v in inputs])
        grad_output = Variable(g.copy())
        ok, grads = attempt(ob, "backward raised", lambda: cls.backward(ctx, grad_output))
        if not ok:
            return
    ob.put("grad_output after backward", np.array(data_of(grad_output)))
    ob.put("grads", describe_grads(grads, Variable))
    ob.put("output", np.asarray(data_of(out), dtype=np.float64))


def judge_by_hand(ck: Checker, seen: Case, arrays: list[np.ndarray], g: np.ndarray,
                  backward_hint: str | None = None) -> tuple[np.ndarray, list[Any]]:
    """The old checker's verdicts on :func:`observe_by_hand`'s data, in its order;
    (output data, the gradients backward returned as arrays or None)."""
    name = str(seen["class"])
    setup = seen.get("setup")
    if setup == "no forward":
        ck.fail(f"{name} has no method forward.",
                hint="Define forward inside the class, as in the cell above.")
    if setup is not None:
        ck.fail(f"the code of {name}.forward cannot see ['Variable'].",
                hint="Run the chapter's first cell (load_mygrad) and the %%mygrad cells above "
                     "this one, in order, then this check again.")
    judge_attempt(ck, seen, "forward raised", f"{name}.forward")
    after = seen["inputs after forward"]
    for v, a in zip(after, arrays):
        ck.check(isinstance(v, np.ndarray) and np.array_equal(v, a),
                 f"{name}.forward changed an input.", hint=HINTS["fn.input-changed"])
    judge_attempt(ck, seen, "backward raised", f"{name}.backward", backward_hint)
    g_after = seen["grad_output after backward"]
    ck.check(isinstance(g_after, np.ndarray) and np.array_equal(g_after, g),
             f"{name}.backward changed grad_output.", hint=HINTS["fn.grad-output-changed"])
    grads = seen["grads"]
    bad = [d for d in grads if d is not None and d[0] != "Variable"]
    ck.check(not bad, f"{name}.backward returned a {bad[0][1] if bad else ''}, not a Variable.",
             expected="Variables (or None)", received=bad[0][2] if bad else None,
             hint=HINTS["fn.variables"])
    return seen["output"], [None if d is None else d[1] for d in grads]


def grad_of(ck: Checker, grads: list[Any], i: int, name: str, shape: tuple[int, ...],
            want: np.ndarray, mistakes: list[tuple[Any, str]]) -> None:
    """The gradient of input ``i`` (named ``name``): present, of its input's shape, right."""
    ck.check(len(grads) > i and grads[i] is not None, f"backward returned no gradient for {name}.",
             received=len(grads), hint=HINTS["fn.one-per-input"])
    got = np.asarray(grads[i], dtype=np.float64)
    if got.shape != tuple(shape):
        ck.fail(f"the gradient of {name} has shape {got.shape}, but {name} has shape {shape}.",
                hint=HINTS[f"fn.grad-shape.{name}"])
    ck.close(got, want, what=f"gradient of {name}",
             mistakes=[(m, h) for m, h in mistakes if np.shape(m) == got.shape],
             hint=f"Write the derivative with respect to {name}, times grad_output, summed to "
                  f"{name}'s shape.")


PAIRS = [((3, 4), (4,)), ((2, 3), (2, 3)), ((2, 1), (1, 3))]
"""(a's shape, b's shape) of the binary Functions' cases; hidden cases add two more."""


def pair_cases(seed: int, hidden: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(a, b, upstream gradient) of Sub's and Div's cases: the same from the same seed."""
    rng = np.random.default_rng(seed)
    pairs = PAIRS + ([((2, 3, 2), (3, 1)), ((), (3,))] if hidden else [])
    out = []
    for sa, sb in pairs:
        a = np.round(rng.normal(size=sa), 3)
        b = np.round(rng.uniform(0.5, 2.0, size=sb) * rng.choice([-1, 1], size=sb), 3)
        g = np.round(rng.uniform(0.5, 2.0, size=np.broadcast_shapes(sa, sb)), 3)
        out.append((a, b, g))
    return out


def reduce_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """x summed down to shape (the course's unbroadcast, in float64)."""
    return unbroadcast_reference(np.asarray(x, dtype=np.float64), shape)


_SHAPE_WORDS = ("broadcast", "shape", "axis", "dimension")


def judge_shapes_call(ck: Checker, seen: Case, key: str, name: str, shape_hint: str) -> None:
    """Fail when the call observed under ``key`` raised, with the likely cause: a
    crash about shapes gets ``shape_hint`` (the usual cause), a ctx attribute backward read
    but forward did not keep its own hint, any other crash the generic one."""
    err = seen[key]
    if err is None:
        return
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError"):
        raise ck._not_done(NotImplementedError(err.message))
    text = err.message.lower()
    if err.is_a("AttributeError") and "backward' object has no attribute" in text:
        missing = err.message.rsplit(" ", 1)[-1].strip("'")
        ck.fail(f"your {name} raised {err.name}: {err.message}", hint=(
            f"backward read ctx.{missing}, which forward did not keep on ctx: " + HINTS[
                "fn.keep-on-ctx"]))
    about_shapes = err.is_a("ValueError") or any(w in text for w in _SHAPE_WORDS)
    ck.fail(f"your {name} raised {err.name}: {err.message}", hint=shape_hint if about_shapes
            else "Read the traceback above to find the failing line in your code.")
