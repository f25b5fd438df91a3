"""What chapter 11's exercise modules share: the course's own ``hvp`` and ``hessian`` (exact,
with ``autograd_lab``), put in place of the learner's for the duration of another exercise's
calls, so that a mistake in one exercise costs no other a point; and reading a result."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import autograd_lab as al

from .._common import Checker, data_of, swapped_names
from .._observe import Observer, Raised, raise_learner_error, raised
from .messages import HINTS

__all__ = ["course_hvp", "course_hessian", "course_names", "result_array", "expect_result",
           "Stop", "observed_case", "learner_call", "reraise"]


def course_hvp(f: Callable[[Any], Any], x: np.ndarray, v: np.ndarray) -> np.ndarray:
    xv = al.Variable(np.array(x, dtype=np.float64), requires_grad=True)
    g, = al.grad(f(xv), xv, create_graph=True)
    hv, = al.grad((g * al.Variable(np.asarray(v, dtype=np.float64))).sum(), xv)
    assert hv is not None, "grad gave no gradient for x"
    return hv.numpy()


def course_hessian(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    n = np.size(x)
    return np.stack([course_hvp(f, x, np.eye(n)[i]) for i in range(n)], axis=1)


@contextlib.contextmanager
def course_names(fn: Any, names: tuple[str, ...]) -> Iterator[None]:
    """The learner's ``fn`` sees the course's exact ``hvp`` or ``hessian`` (those of ``names``
    its module defines) during the block."""
    ns = getattr(fn, "__globals__", None)
    if not isinstance(ns, dict):
        yield
        return
    course = {"hvp": course_hvp, "hessian": course_hessian}
    with swapped_names(ns, {n: course[n] for n in names if n in ns}):
        yield


def result_array(got: Any) -> Any:
    """Kernel side: the learner's result as plain data (a Variable's array, else the value)."""
    return data_of(got)


def expect_result(ck: Checker, got: Any, what: str, shape: tuple[int, ...]) -> Any:
    """Judge side: fail on a missing result, as the checkers did."""
    if got is None:
        ck.fail(f"the {what} is None.", expected=f"an array of shape {shape}",
                hint=HINTS["return"])
    return got


class Stop(Exception):
    """Ends an observed case after a learner's call raised (kept under its key)."""


@contextlib.contextmanager
def observed_case(ob: Observer, name: str) -> Iterator[None]:
    with ob.case(name):
        try:
            yield
        except Stop:
            pass


def learner_call(ob: Observer, key: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; when it raises, keep the exception under ``key`` and stop."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - the learner's code may raise anything
        ob.put(key, raised(err))
        raise Stop from None


def reraise(ck: Checker, seen: Any, key: str, what: str, hint: str | None = None) -> None:
    """Judge side: raise, the checker's way, what the call kept under ``key`` raised."""
    err = seen.get(key)
    if err is not None:
        if not isinstance(err, Raised):
            ck.fail("the observation of this case is not readable.")
        raise_learner_error(ck, err, what, hint)
