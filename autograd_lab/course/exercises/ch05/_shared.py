"""What chapter 05's exercises share: the course's stand-ins for the learner's other pieces
(every Function of chapters 03 and 05, Variable's operators and its engine, recording MatMul
and Reshape), the numpy references the judges compare with, and the loader's check of
``mygrad/ops.py`` with its gradcheck for any library."""
from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np

from .._common import (Checker, data_of, library, named, swapped_attributes,
                      swapped_names)



# -- the library a Function belongs to: autograd_lab, or the learner's mygrad ----------------
class GradcheckFailed(AssertionError):
    """A backward disagrees with central differences (mygrad's gradcheck, see below)."""


def numeric_gradcheck(Variable: type[Any], fn: Callable[..., Any], inputs: tuple, *,
                      eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                      seed: int = 0) -> bool:
    """gradcheck for any library with autograd_lab's API (``Variable``, ``backward``).

    Backpropagates a random gradient ``g`` through ``fn(*inputs)`` and compares each input's
    ``.grad`` with central differences of ``sum(g * fn(...))``, element by element. Returns
    True or raises ``GradcheckFailed`` naming the input and the worst element.
    """
    rng = np.random.default_rng(seed)
    for x in inputs:
        x.grad = None
    out = fn(*inputs)
    g = rng.normal(size=np.shape(out.data))
    out.backward(Variable(g))
    for k, x in enumerate(inputs):
        if not getattr(x, "requires_grad", False):
            continue
        numeric = np.zeros(x.shape)
        for i in np.ndindex(*x.shape):
            old = x.data[i]
            x.data[i] = old + eps
            plus = float((g * np.asarray(fn(*inputs).data)).sum())
            x.data[i] = old - eps
            minus = float((g * np.asarray(fn(*inputs).data)).sum())
            x.data[i] = old
            numeric[i] = (plus - minus) / (2 * eps)
        analytic = None if x.grad is None else np.asarray(x.grad.data, dtype=np.float64)
        if analytic is None or analytic.shape != numeric.shape:
            raise GradcheckFailed(f"input {k}: backward gave "
                                  f"{'no gradient' if analytic is None else analytic.shape} "
                                  f"for an input of shape {numeric.shape}")
        if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
            i = np.unravel_index(int(np.argmax(np.abs(analytic - numeric))), numeric.shape)
            raise GradcheckFailed(f"gradient of input {k} differs from central differences at "
                                  f"index {tuple(int(j) for j in i)}: backward gives "
                                  f"{analytic[i]:.6g}, numerically {numeric[i]:.6g}")
    return True


def library_of(Fn: Any) -> SimpleNamespace:
    """Variable and gradcheck of the library ``Fn`` (a Function class) is written for."""
    al = library()
    if isinstance(Fn, type) and issubclass(Fn, al.Function):
        return SimpleNamespace(Variable=al.Variable, gradcheck=al.gradcheck)
    base = next((c for c in getattr(Fn, "__mro__", ())[1:] if c.__name__ == "Function"), None)
    module = sys.modules.get(getattr(base, "__module__", ""), None)
    Variable = getattr(module, "Variable", None)
    if Variable is None:
        raise TypeError(f"{getattr(Fn, '__name__', Fn)!r} is not a Function class of mygrad or "
                        "autograd_lab: pass the class itself (e.g. check.ch05_...(Sum)), "
                        "defined as `class Sum(Function)`.")

    def gradcheck(fn: Callable[..., Any], inputs: tuple) -> bool:
        return numeric_gradcheck(Variable, fn, inputs)
    return SimpleNamespace(Variable=Variable, gradcheck=gradcheck)


# -- isolation: the course's pieces around the one under test ---------------------------------


def _numpy_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# What every Function of chapters 03 and 05 computes, on numpy arrays (nothing recorded).
_REFERENCE: dict[str, Callable[..., Any]] = {
    "Add": np.add, "Sub": np.subtract, "Div": np.divide, "Neg": np.negative, "Exp": np.exp,
    "Log": np.log, "Pow": lambda x, p: x ** p, "MatMul": np.matmul,
    "Reshape": lambda x, shape: x.reshape(shape),
    "Transpose": lambda x, axes=None: np.transpose(x, axes),
    "BroadcastTo": lambda x, shape: np.broadcast_to(x, shape).copy(),
    "SumTo": lambda g, shape: unbroadcast_reference(g, tuple(shape)),
    "Unbroadcast": lambda g, shape: unbroadcast_reference(g, tuple(shape)),
    "Sum": lambda x, axis=None, keepdims=False: x.sum(axis=axis, keepdims=keepdims),
    "Mean": lambda x, axis=None, keepdims=False: x.mean(axis=axis, keepdims=keepdims),
    "Softmax": _numpy_softmax,
    "LogSoftmax": lambda x, axis=-1: np.log(_numpy_softmax(x, axis)),
    "Index": lambda x, key: x[key],
    "Scatter": lambda g, shape, key: scatter_reference(g, shape, key),
}


def kept_shape_reference(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """shape with the summed axes set to 1 (what keepdims=True gives)."""
    if axis is None:
        return (1,) * len(shape)
    kept = list(shape)
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        kept[a % len(shape)] = 1
    return tuple(kept)


# Plain helpers of the chapter that other exercises' code calls.
_REFERENCE_HELPERS: dict[str, Callable[..., Any]] = {"_kept_shape": kept_shape_reference}


class _ReferenceFunction:
    """``Name.apply(...)`` as the course computes it, with nothing recorded."""

    def __init__(self, Variable: type[Any], fn: Callable[..., Any]) -> None:
        self.Variable, self.fn = Variable, fn

    def apply(self, *inputs: Any) -> Any:
        args = [np.asarray(x.data) if isinstance(x, self.Variable) else x for x in inputs]
        return self.Variable(np.asarray(self.fn(*args)))


def _reference_methods(Variable: type[Any]) -> dict[str, Any]:
    """Variable's operators and methods as the course computes them (nothing recorded)."""
    def ref(name: str) -> Callable[..., Any]:
        return _ReferenceFunction(Variable, _REFERENCE[name]).apply

    def wrap(x: Any) -> Any:
        return x if isinstance(x, Variable) else Variable(np.asarray(x, dtype=np.float64))

    def mul(a: Any, b: Any) -> Any:
        return Variable(np.asarray(wrap(a).data * wrap(b).data))

    def reshape(self: Any, *shape: Any) -> Any:
        return ref("Reshape")(self, shape[0] if len(shape) == 1 and isinstance(
            shape[0], (tuple, list)) else shape)

    def transpose(self: Any, dim0: int, dim1: int) -> Any:
        return Variable(np.swapaxes(self.data, dim0, dim1).copy())

    return {
        "__add__": lambda a, b: ref("Add")(a, wrap(b)),
        "__radd__": lambda a, b: ref("Add")(wrap(b), a),
        "__sub__": lambda a, b: ref("Sub")(a, wrap(b)),
        "__rsub__": lambda a, b: ref("Sub")(wrap(b), a),
        "__mul__": mul, "__rmul__": lambda a, b: mul(b, a),
        "__truediv__": lambda a, b: ref("Div")(a, wrap(b)),
        "__rtruediv__": lambda a, b: ref("Div")(wrap(b), a),
        "__neg__": lambda a: ref("Neg")(a), "__pow__": lambda a, p: ref("Pow")(a, p),
        "__matmul__": lambda a, b: ref("MatMul")(a, wrap(b)),
        "__rmatmul__": lambda a, b: ref("MatMul")(wrap(b), a),
        "exp": lambda a: ref("Exp")(a), "log": lambda a: ref("Log")(a),
        "sum": lambda a, axis=None, keepdims=False: ref("Sum")(a, axis, keepdims),
        "mean": lambda a, axis=None, keepdims=False: ref("Mean")(a, axis, keepdims),
        "reshape": reshape, "transpose": transpose,
        "T": property(lambda a: ref("Transpose")(a, None)),
        "softmax": lambda a, axis=-1: ref("Softmax")(a, axis),
        "log_softmax": lambda a, axis=-1: ref("LogSoftmax")(a, axis),
        "clone": lambda a: Variable(a.data.copy()),
    }


def _reference_backward(Variable: type[Any]) -> Callable[..., None]:
    """``Variable.backward`` as the course's engine does it, on nodes the course's apply made
    (``ctx.inputs``, ``ctx.function``): each node once, in reverse topological order, leaves'
    gradients accumulated."""
    def backward(self: Any, gradient: Any = None, retain_graph: Any = None,
                 create_graph: bool = False) -> None:
        g = Variable(np.ones_like(self.data)) if gradient is None else gradient
        g = g if isinstance(g, Variable) else Variable(np.asarray(g))
        order: list[Any] = []
        seen: set[int] = set()
        stack: list[tuple[Any, bool]] = [(self, False)]
        while stack:
            v, finished = stack.pop()
            if finished:
                order.append(v)
                continue
            if id(v) in seen:
                continue
            seen.add(id(v))
            stack.append((v, True))
            if v.grad_fn is not None:
                stack += [(x, False) for x in v.grad_fn.inputs
                          if isinstance(x, Variable) and x.requires_grad and id(x) not in seen]
        grads = {id(self): g}
        for v in reversed(order):
            gv = grads.pop(id(v), None)
            if gv is None:
                continue
            if v.grad_fn is None:
                v.grad = gv if v.grad is None else Variable(v.grad.data + gv.data)
                continue
            node = v.grad_fn
            out = node.function.backward(node, gv)
            for x, gx in zip(node.inputs, out if isinstance(out, tuple) else (out,)):
                if isinstance(x, Variable) and x.requires_grad and gx is not None:
                    gx = gx if isinstance(gx, Variable) else Variable(np.asarray(gx))
                    old = grads.get(id(x))
                    grads[id(x)] = gx if old is None else Variable(old.data + gx.data)
    return backward


@contextlib.contextmanager
def course_pieces(ns: dict[str, Any], keep: tuple[str, ...]) -> Iterator[None]:
    """Every Function of chapters 03 and 05 except those named in ``keep``, Variable's
    operators and methods, and ``Variable.backward``, as the course computes them, while a
    check runs; the learner's are put back afterwards. So a mistake in another exercise (a
    Sum.forward that ignores keepdims, an Exp, a Reshape, an engine) cannot fail this one."""
    Variable = ns["Variable"]
    course = {name: _ReferenceFunction(Variable, _REFERENCE[name]) if name in _REFERENCE
              else _REFERENCE_HELPERS[name]
              for name in (*_REFERENCE, *_REFERENCE_HELPERS) if name not in keep}
    methods = _reference_methods(Variable)
    methods["backward"] = _reference_backward(Variable)
    with swapped_names(ns, course), swapped_attributes(Variable, methods):
        yield


@contextlib.contextmanager
def isolated(*classes: Any, helpers: tuple[str, ...] = ()) -> Iterator[None]:
    """For a Function class of the learner's mygrad (not autograd_lab's): the course's apply,
    Mul, Clone, sum_to and :func:`course_pieces` around the check, keeping ``classes``."""
    al = library()
    cls = classes[0]
    if isinstance(cls, type) and issubclass(cls, al.Function):
        yield
        return
    from .._functions import course_apply as _course_apply
    from .._functions import course_ops as _course_ops
    from .._functions import function_of as _function_of
    from ..ch03 import note_apply as _note_apply  # the public note of chapter 03
    ns = getattr(_function_of(cls, "forward"), "__globals__", None)
    if ns is None or "Variable" not in ns or "Function" not in ns:
        yield                       # the check itself reports what is missing
        return
    _note_apply(ns)
    with _course_ops(ns), _course_apply(cls, ns), course_pieces(
            ns, tuple(c.__name__ for c in classes) + helpers):
        yield


def fails_quietly(run: Callable[[], None]) -> bool:
    """Whether another exercise's check fails (its output hidden)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run()
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return True
    return False


# -- ch05-reshape-transpose -----------------------------------------------------------------




# -- ch05-unbroadcast -----------------------------------------------------------------------
def unbroadcast_reference(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lead = grad.ndim - len(shape)
    out = grad.sum(axis=tuple(range(lead))) if lead else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and out.shape[i] != 1)
    return out.sum(axis=axes, keepdims=True) if axes else out


def random_broadcast(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A target shape with some 1s, and a grad shape it broadcasts to (maybe with new axes)."""
    ndim = int(rng.integers(1, 4))
    big = tuple(int(n) for n in rng.integers(2, 5, size=ndim))
    small = tuple(1 if rng.random() < 0.5 else n for n in big)
    drop = int(rng.integers(0, ndim))
    return small[drop:], big






# -- ch05-unbroadcast-function --------------------------------------------------------------


# -- ch05-sum-backward ----------------------------------------------------------------------
def sum_grad(g: np.ndarray, shape: tuple[int, ...], axis: Any, keepdims: bool) -> np.ndarray:
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(a % len(shape) for a in axes)
    if not keepdims:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, shape).copy()










# -- ch05-mean-backward ---------------------------------------------------------------------


# -- ch05-log-softmax -----------------------------------------------------------------------


# -- ch05-matmul-backward -------------------------------------------------------------------
def saved_something(node: Any) -> bool:
    """Whether a node's forward saved any tensor (unreadable counts as saved: no guess)."""
    try:
        return len(node.saved_tensors) > 0
    except Exception:  # noqa: BLE001 - freed or broken: let the error itself speak
        return True






# -- ch05-softmax ---------------------------------------------------------------------------
def softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def axis_mistakes(data: np.ndarray, axis: int) -> list[tuple[np.ndarray, str]]:
    """Softmaxes that used another axis than ``axis`` in one or both steps, with a hint naming
    the step. (Subtracting the maximum along the wrong axis is not harmless: it subtracts a
    different number inside one softmax slice.)"""
    if data.ndim < 2:
        return []  # one axis only: there is no wrong one
    right = axis % data.ndim
    out = []
    for other in [a for a in range(data.ndim) if a != right] + [None]:
        where = "over all elements" if other is None else f"along axis {other}"
        told = f"the axis argument (axis={axis} here)"
        for max_axis, sum_axis, step in ((other, other, "both the maximum and the sum"),
                                         (other, right, "the maximum"),
                                         (right, other, "the sum")):
            if sum_axis == right and max_axis is None:
                continue  # subtracting one number from every element is right, not a mistake
            with np.errstate(all="ignore"):
                e = np.exp(data - data.max(axis=max_axis, keepdims=True))
                wrong = e / e.sum(axis=sum_axis, keepdims=True)
            out.append((wrong, f"You used the wrong axis: you took {step} {where}; softmax "
                        f"works along {told}. Use axis=axis (and keepdims=True) both in "
                        "x.data.max(...) and in e.sum(...)."))
    return out








def dropped_axis(make: Callable[[], np.ndarray], hint: str) -> list[tuple[np.ndarray, str]]:
    """The result of a formula that forgot keepdims, where numpy could still broadcast it."""
    try:
        with np.errstate(all="ignore"):
            return [(np.asarray(make()), hint)]
    except ValueError:
        return []






# -- the loader's check of mygrad/ops.py ------------------------------------------------------
def _op_cases(pkg: Any, rng: np.random.Generator) -> list[tuple[str, Callable[..., Any], tuple]]:
    """(name, function, inputs) for every operation of mygrad/ops.py, on small inputs."""
    def var(*shape: int, positive: bool = False) -> Any:
        data = rng.uniform(0.5, 2.0, size=shape) if positive else rng.normal(size=shape)
        return pkg.Variable(data, requires_grad=True)
    return [
        ("a - b, b broadcast (3,) -> (2, 3)", lambda a, b: a - b, (var(2, 3), var(3))),
        ("2 - a", lambda a: 2.0 - a, (var(2, 2),)),
        ("a / b, both broadcast (2, 1) and (3,)", lambda a, b: a / b,
         (var(2, 1), var(3, positive=True))),
        ("1 / a", lambda a: 1.0 / a, (var(3, positive=True),)),
        ("a ** 3", lambda a: a ** 3, (var(2, 3),)),
        ("a.log()", lambda a: a.log(), (var(2, 3, positive=True),)),
        ("a.sum(axis=0)", lambda a: a.sum(axis=0), (var(3, 3),)),
        ("a.sum(axis=(0, 2), keepdims=True)", lambda a: a.sum(axis=(0, 2), keepdims=True),
         (var(2, 3, 2),)),
        ("a.sum()", lambda a: a.sum(), (var(2, 3),)),
        ("a.mean(axis=1)", lambda a: a.mean(axis=1), (var(2, 4),)),
        ("a.reshape(3, 2)", lambda a: a.reshape(3, 2), (var(2, 3),)),
        ("a.T and a.transpose(0, 1)", lambda a: a.T * 2.0 + a.transpose(0, 1), (var(2, 3),)),
        ("a @ b, (2, 3) @ (3, 2)", lambda a, b: a @ b, (var(2, 3), var(3, 2))),
        ("v @ b, (3,) @ (3, 2)", lambda v, b: v @ b, (var(3), var(3, 2))),
        ("a.softmax(axis=0)", lambda a: a.softmax(axis=0), (var(3, 2),)),
        ("a.log_softmax(axis=-1)", lambda a: a.log_softmax(axis=-1), (var(2, 3),)),
        ("a[1:, ::2]", lambda a: a[1:, ::2], (var(3, 4),)),
        ("a[[0, 0, 2]] (a repeated index)", lambda a: a[[0, 0, 2]], (var(3, 2),)),
    ]


def mygrad_ops(pkg: Any) -> None:
    """The loader's check of ``mygrad/ops.py``: a numerical gradcheck of every operation (so a
    failure names the operation), unbroadcast's error, then whole programs compared with
    autograd_lab."""
    from .._library import ops as compare_with_autograd_lab
    ck = Checker("mygrad-ops")
    rng = np.random.default_rng(7)
    for name, fn, inputs in _op_cases(pkg, rng):
        with ck.case(f"gradcheck of {name}"):
            ck.call(named(lambda: numeric_gradcheck(pkg.Variable, fn, inputs), "gradcheck"),
                    hint=f"The backward of {name.split(',')[0]} disagrees with central "
                         "differences: check its formula, and that a broadcast input's "
                         "gradient is summed down to its shape (sum_to).")
    with ck.case("unbroadcast sums down, and refuses shapes that cannot broadcast"):
        got = ck.call(pkg.unbroadcast, np.ones((2, 3)), (3,))
        ck.close(data_of(got), np.full(3, 2.0), what="unbroadcast(ones((2, 3)), (3,))")
        ck.raises(ValueError, pkg.unbroadcast, np.ones((3, 4)), (2, 4))
    ck.done()
    compare_with_autograd_lab(pkg)


# -- ch05-sub-function, ch05-div-function, ch05-pow-function, ch05-log-function -------------------


















# -- ch05-index-function --------------------------------------------------------------------
def scatter_reference(g: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
    out = np.zeros(shape)
    np.add.at(out, key, g)
    return out


def key_text(key: Any) -> str:
    def one(k: Any) -> str:
        if isinstance(k, slice):
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step)
                            ).rstrip(":") or ":"
        return repr(k)
    return ", ".join(one(k) for k in key) if isinstance(key, tuple) else one(key)






# -- ch05-matmul-vectors --------------------------------------------------------------------
class _RecordedNode:
    """A node the course's stand-in Functions record: its inputs and their gradients."""

    def __init__(self, inputs: tuple, vjp: Callable[[np.ndarray], tuple]) -> None:
        self.inputs, self.vjp, self.function = inputs, vjp, self

    def backward(self, node: Any, grad_output: Any) -> tuple:
        return node.vjp(np.asarray(grad_output.data))


def recording(Variable: type[Any], forward: Callable[..., np.ndarray],
               vjp: Callable[..., tuple]) -> Any:
    """A stand-in Function whose ``apply`` computes with numpy and records a node."""
    def apply(*inputs: Any) -> Any:
        args = [np.asarray(x.data) if isinstance(x, Variable) else x for x in inputs]
        out = Variable(np.asarray(forward(*args)))
        if any(isinstance(x, Variable) and x.requires_grad for x in inputs):
            out.requires_grad = True
            out.grad_fn = _RecordedNode(inputs, lambda g: tuple(
                None if v is None else Variable(v) for v in vjp(g, *args)))
        return out
    return SimpleNamespace(apply=apply)




