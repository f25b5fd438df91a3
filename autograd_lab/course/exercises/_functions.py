"""What the checkers of chapters 03 and 05 share about the learner's ``Function`` classes:
finding the globals a class's code runs in, and running a class with the course's ``apply``,
``Mul`` and ``Clone`` around it, so that only the piece under test is the learner's."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._common import Checker, swapped_names

__all__ = ["ReferenceOps", "StandInCtx", "course_apply", "course_ops", "data", "function_of",
           "names", "reference_apply", "sum_to"]


def function_of(cls: Any, name: str) -> Any:
    """The plain function behind ``cls.name`` (staticmethod, classmethod or plain)."""
    for klass in getattr(cls, "__mro__", ()):
        if name in vars(klass):
            raw = vars(klass)[name]
            return getattr(raw, "__func__", raw)
    return None


def names(ck: Checker, cls: Any, method: str, wanted: tuple[str, ...]) -> dict[str, Any]:
    """The globals ``cls.method`` runs in, checked to hold ``wanted`` (e.g. Variable)."""
    fn = function_of(cls, method)
    ns = getattr(fn, "__globals__", None)
    if ns is None:
        ck.fail(f"{getattr(cls, '__name__', cls)} has no method {method}.",
                hint=f"Define {method} inside the class, as in the cell above.")
    missing = [n for n in wanted if n not in ns]
    ck.check(not missing, f"the code of {cls.__name__}.{method} cannot see {missing}.",
             hint="Run the chapter's first cell (load_mygrad) and the %%mygrad cells above "
                  "this one, in order, then this check again.")
    return ns


def data(value: Any) -> Any:
    return value.data if hasattr(value, "grad_fn") and hasattr(value, "data") else value


def sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def reference_apply(cls: type[Any], ns: dict[str, Any]) -> Callable[..., Any]:
    """``cls.apply`` as the course writes it, for checking ``cls``'s forward and backward
    without the learner's own ``apply`` (exercise ch03-own-apply is checked on its own)."""
    Variable, GradMode = ns["Variable"], ns.get("GradMode")

    def apply(*inputs: Any) -> Any:
        ctx = cls.Node()
        ctx.needs_input_grad = tuple(isinstance(x, Variable) and x.requires_grad
                                     for x in inputs)
        enabled = getattr(GradMode, "enabled", True)
        if GradMode is not None:
            GradMode.enabled = False
        try:
            output = cls.forward(ctx, *inputs)
        finally:
            if GradMode is not None:
                GradMode.enabled = enabled
        if not isinstance(output, Variable):
            output = Variable(output)
        if enabled and any(ctx.needs_input_grad):
            ctx.inputs = inputs
            output.requires_grad = True
            output.grad_fn = ctx
        return output

    apply.__name__ = f"{cls.__name__}.apply"
    return apply


@contextlib.contextmanager
def course_apply(cls: type[Any], ns: dict[str, Any]) -> Iterator[None]:
    """Run with the course's ``apply`` on the learner's ``Function`` (so every Function, and
    ``cls`` whichever way it is called, uses it), then give ``Function`` its own back; grad
    mode is restored too, whatever ran inside."""
    GradMode = ns.get("GradMode")
    mode = getattr(GradMode, "enabled", True)
    owners = [k for k in getattr(cls, "__mro__", ())[:-1] if "apply" in k.__dict__]
    saved = [(k, k.__dict__["apply"]) for k in owners]

    def apply(klass: type[Any], *inputs: Any) -> Any:
        return reference_apply(klass, ns)(*inputs)

    for klass in owners:
        klass.apply = classmethod(apply)
    if GradMode is not None:
        GradMode.enabled = True       # the cases record; an earlier cell may have left it off
    try:
        yield
    finally:
        for klass, own in saved:
            klass.apply = own
        if GradMode is not None:
            GradMode.enabled = mode


class ReferenceOps:
    """``a * b`` and ``x.clone()`` as the course's Mul and Clone compute them, with nothing
    recorded: what ``*`` and ``clone()`` mean inside another Function's backward while that
    Function is checked."""

    def __init__(self, Variable: type[Any], op: Callable[..., np.ndarray]) -> None:
        self.Variable, self.op = Variable, op

    def apply(self, *inputs: Any) -> Any:
        return self.Variable(self.op(*(np.asarray(data(x)) for x in inputs)))


@contextlib.contextmanager
def course_ops(ns: dict[str, Any], names: tuple[str, ...] | None = None) -> Iterator[None]:
    """Run with ``Mul`` and ``Clone`` in the learner's namespace replaced by the course's (the
    operators look them up there), then put the learner's back: a broken Mul is exercise
    ch03-mul-function's, a broken apply (which Clone uses) ch03-own-apply's, not the
    Function's that uses ``*`` or ``clone()`` in its backward."""
    Variable = ns["Variable"]
    def as_variable(x: Any) -> Any:
        return x if isinstance(x, Variable) else Variable(x)

    def summed_to(grad: Any, shape: tuple) -> Any:
        g = np.asarray(data(grad))
        return grad if g.shape == tuple(shape) else Variable(sum_to(g, tuple(shape)))

    course = {"Mul": ReferenceOps(Variable, np.multiply),
              "Clone": ReferenceOps(Variable, np.copy),
              "as_variable": as_variable, "sum_to": summed_to}
    course = {k: v for k, v in course.items() if names is None or k in names}
    with swapped_names(ns, course):
        yield


class StandInCtx:
    """A correct ctx for calling a Function's forward and backward by hand (so the learner's
    Context and apply play no part)."""

    def __init__(self, needs: tuple[bool, ...]) -> None:
        self.needs_input_grad, self.inputs, self._saved = needs, (), ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple:
        return tuple(self._saved)

