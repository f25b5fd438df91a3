"""Check mygrad's ``Variable(data, requires_grad=False)``: ``data`` (a float ndarray),
``grad`` and ``grad_fn`` (None at first), ``requires_grad``; properties ``is_leaf``,
``shape``, ``ndim``, ``dtype``; ``numpy()`` (the array itself), ``len()``, ``item()`` and a
repr like PyTorch's."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from .._common import Checker, format_value
from .._exercise import Mistake
from .._observe import Case, Observations, Observer, Opaque, raise_learner_error
from ._shared import keyed
from .messages import HINTS

ID = "ch02-variable-class"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("integers kept", ("            data = data.astype(np.float64)\n", "            pass\n"),
            None, "variable.ints"),
    Mistake("requires_grad not a bool", ("self.requires_grad = bool(requires_grad)",
                                         "self.requires_grad = requires_grad"), None,
            "variable.bool"),
    Mistake("is_leaf a method", ("    @property\n    def is_leaf", "    def is_leaf"), None,
            "variable.property.is_leaf"),
    Mistake("ndim counts the rows", ("return self.data.ndim", "return len(self.data)"), None,
            "variable.ndim-rows"),
    Mistake("dtype as a string", ("return self.data.dtype", "return str(self.data.dtype)"), None,
            "variable.dtype-string"),
    Mistake("numpy() copies", ("        return self.data\n", "        return self.data.copy()\n"),
            None, "variable.numpy-copy"),
    Mistake("len() counts every element", ("return len(self.data)", "return self.data.size"),
            None, "variable.len-size"),
    Mistake("repr without grad_fn",
            ("if self.grad_fn is not None:\n            return f\"Variable({body}, "
             "grad_fn=<{type(self.grad_fn).__name__}>)\"\n        ", ""), None,
            "variable.repr-grad-fn"),
)

CLASS = "Variable is a class"
C_LIST = "a list becomes a numpy array in .data"
C_DTYPES = "integers become float64, float32 stays float32"
C_NESTED = "a Variable passed in: its data is used"
C_NEW = "a new Variable has grad None, requires_grad False, grad_fn None"
C_FLAG = "requires_grad=True (or 1) is stored as True"
C_LEAF = "is_leaf is a property: True without grad_fn, False once grad_fn is set"
C_NUMPY = "numpy() gives the array itself, item() a Python float"
C_REPR = "repr shows the numbers, and requires_grad or grad_fn"
_PROPS = ("is_leaf", "shape", "ndim", "dtype")


def cases(seed: int, hidden: bool) -> tuple[list[tuple[str, np.ndarray]], list[tuple[int, ...]]]:
    """(name, data) of the shape cases and the shapes of the len() cases, from the seed."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[int, ...]] = [(2, 3), (4,), ()]
    if hidden:
        shapes += [tuple(int(n) for n in rng.integers(1, 5, size=k)) for k in (1, 3)]
    found = [(f"shape, ndim, dtype of a {shape} array", np.round(rng.normal(size=shape), 3))
             for shape in shapes]
    return found, [(3, 2), (5,)] + ([(1, 4, 2)] if hidden else [])


def _len_title(shape: tuple[int, ...]) -> str:
    return f"len() of a {shape} Variable is the length of its first axis"


# -- the kernel's side ------------------------------------------------------------------------
class _Node:
    """A stand-in graph node: its class name is what a Variable's repr shows."""


def _node(name: str) -> Any:
    return type(name, (_Node,), {})()


def _read(ob: Observer, key: str, obj: Any, name: str) -> Any:
    """``obj.name`` kept under ``key`` (what reading it raised under ``key + ' raised'``)."""
    return ob.put(key, ob.attempt(key + " raised", getattr, obj, name))


def _dtype_seen(ob: Observer, dtype: Any) -> None:
    kind = ("numpy dtype" if isinstance(dtype, np.dtype) else "str" if isinstance(dtype, str)
            else "class" if isinstance(dtype, type) else "other")
    ob.put("dtype kind", kind)
    ob.put("dtype", str(dtype) if kind == "numpy dtype" else
           getattr(dtype, "__name__", "?") if kind == "class" else dtype)


def observe(ob: Observer, Variable: Any, *, seed: int, hidden: bool) -> None:
    with ob.case(CLASS):
        ob.put("is a class", isinstance(Variable, type))
        ob.put("given", Variable)
    if not isinstance(Variable, type):
        return
    with ob.case(C_LIST):
        _read(ob, "data", Variable([1.0, 2.0, 3.0]), "data")
    with ob.case(C_DTYPES):
        _read(ob, "int data", Variable([1, 2, 3]), "data")
        _read(ob, "float32 data", Variable(np.ones(2, dtype=np.float32)), "data")
    with ob.case(C_NESTED):
        _read(ob, "data", Variable(Variable([4.0, 5.0])), "data")
    with ob.case(C_NEW):
        v = Variable(np.zeros((2, 3)))
        for name in ("grad", "requires_grad", "grad_fn"):
            _read(ob, name, v, name)
    with ob.case(C_FLAG):
        for flag in (True, 1):
            _read(ob, f"requires_grad {flag!r}", Variable(np.ones(2), requires_grad=flag),
                  "requires_grad")
    for name in _PROPS:
        with ob.case(f"{name} on the class"):
            found = getattr(Variable, name, None)
            ob.put("is a property", isinstance(found, property))
            ob.put("kind", type(found).__name__)
    with ob.case(C_LEAF):
        leaf = Variable(1.0, requires_grad=True)
        _read(ob, "is_leaf", leaf, "is_leaf")
        leaf.grad_fn = _node("MulBackward")
        _read(ob, "is_leaf after grad_fn", leaf, "is_leaf")
    shaped, lengths = cases(seed, hidden)
    for key, (_, data) in zip(keyed(title for title, _ in shaped), shaped):
        with ob.case(key):
            v = Variable(data)
            for name in ("shape", "ndim", "data"):
                _read(ob, name, v, name)
            _dtype_seen(ob, _read(ob, "dtype object", v, "dtype"))
    with ob.case(C_NUMPY):
        _observe_numpy(ob, Variable)
    for shape in lengths:
        with ob.case(_len_title(shape)):
            ob.put("len", ob.attempt("len raised", len, Variable(np.zeros(shape))))
    with ob.case(C_REPR):
        ob.put("plain", ob.attempt("repr raised", repr, Variable([1.0, 2.0])))
        wants = Variable([1.0, 2.0], requires_grad=True)
        ob.put("requires grad", repr(wants))
        wants.grad_fn = _node("MulBackward")
        ob.put("computed", repr(wants))


def _observe_numpy(ob: Observer, Variable: Any) -> None:
    v = Variable([[2.5]])
    arr = ob.attempt("numpy raised", v.numpy)
    ob.put("numpy()", arr)
    ob.put("numpy() is data", arr is v.data)
    ob.put("data", v.data)
    for i, value in enumerate((v, Variable(7.0))):
        got = ob.attempt(f"item {i} raised", value.item)
        ob.put(f"item {i}", got)
        ob.put(f"item {i} type", type(got).__name__)


# -- the judge's side -------------------------------------------------------------------------
def _attr(ck: Checker, seen: Case, key: str, name: str, hint: str) -> Any:
    """The observed ``v.name``, with what reading it raised reported as the checker did."""
    err = seen[key + " raised"]
    if err is not None:
        if err.is_a("AttributeError") and not err.is_a("NotImplementedError"):
            ck.fail(f"your Variable has no attribute {name!r}.", hint=hint)
        raise_learner_error(ck, err, f"your Variable.{name}", hint)
    return seen[key]


def _prop(ck: Checker, obs: Observations, seen: Case, key: str, name: str, hint: str) -> Any:
    """The observed ``v.name`` of an attribute that must be a property."""
    on_class = obs.case(ck, f"{name} on the class", what="your Variable")
    ck.check(on_class["is a property"] is True, f"{name} is not a property.",
             expected=f"v.{name} read without brackets", received=on_class["kind"],
             hint=HINTS[f"variable.property.{name}"])
    return _attr(ck, seen, key, name, hint)


def _shown(value: Any) -> Any:
    return value.repr if isinstance(value, Opaque) else value


def _kind(value: Any) -> str:
    return value.type if isinstance(value, Opaque) else type(value).__name__


def judge(ck: Checker, obs: Observations) -> None:
    given = obs.case(ck, CLASS, what="your Variable")
    ck.check(given["is a class"] is True, "Variable is not a class.",
             received=_shown(given["given"]), hint=HINTS["variable.class"])
    _judge_data(ck, obs)
    _judge_flags(ck, obs)
    shaped, lengths = cases(obs.seed, obs.hidden)
    for key, (title, data) in zip(keyed(title for title, _ in shaped), shaped):
        with ck.case(title):
            _judge_shape(ck, obs, obs.case(ck, key, what="your Variable"), data)
    with ck.case(C_NUMPY):
        _judge_numpy(ck, obs.case(ck, C_NUMPY, what="your Variable"))
    for shape in lengths:
        title = _len_title(shape)
        with ck.case(title):
            seen = obs.case(ck, title, what="your Variable")
            if seen["len raised"] is not None:
                raise_learner_error(ck, seen["len raised"], "your __len__",
                                    HINTS["variable.len-write"])
            got = seen["len"]
            ck.check(got == shape[0], "len() is not the length of the first axis.",
                     expected=shape[0], received=_shown(got), hint=_len_hint(got, shape))
    with ck.case(C_REPR):
        _judge_repr(ck, obs.case(ck, C_REPR, what="your Variable"))
    ck.done()


def _judge_data(ck: Checker, obs: Observations) -> None:
    asarray = HINTS["variable.asarray"]
    with ck.case(C_LIST):
        data = _attr(ck, obs.case(ck, C_LIST, what="your Variable"), "data", "data", asarray)
        ck.check(isinstance(data, np.ndarray), "data is not a numpy array.",
                 expected="np.ndarray", received=_kind(data), hint=HINTS["variable.convert"])
        ck.close(data, np.array([1.0, 2.0, 3.0]), what="data")
    with ck.case(C_DTYPES):
        seen = obs.case(ck, C_DTYPES, what="your Variable")
        data = _attr(ck, seen, "int data", "data", asarray)
        ck.check(_dtype_of(data) == "float64", "integer data was not turned into floats.",
                 expected="float64", received=_dtype_of(data), hint=HINTS["variable.ints"])
        data = _attr(ck, seen, "float32 data", "data", asarray)
        ck.check(_dtype_of(data) == "float32", "float32 data changed its dtype.",
                 expected="float32", received=_dtype_of(data), hint=HINTS["variable.floats"])
    with ck.case(C_NESTED):
        data = _attr(ck, obs.case(ck, C_NESTED, what="your Variable"), "data", "data", asarray)
        ck.check(isinstance(data, np.ndarray) and data.dtype.kind in "fc",
                 "Variable(another Variable) did not take the other one's numbers.",
                 expected="a float array [4., 5.]", received=_shown(data),
                 hint=HINTS["variable.nested"])
        ck.close(data, np.array([4.0, 5.0]), what="data")


def _dtype_of(data: Any) -> str:
    if isinstance(data, Opaque):
        return data.type
    try:
        return str(np.asarray(data).dtype)
    except (TypeError, ValueError):
        return type(data).__name__


def _judge_flags(ck: Checker, obs: Observations) -> None:
    with ck.case(C_NEW):
        seen = obs.case(ck, C_NEW, what="your Variable")
        grad = _attr(ck, seen, "grad", "grad", HINTS["variable.grad-start"])
        ck.check(grad is None, "grad of a new Variable is not None.", expected=None,
                 received=_shown(grad), hint=HINTS["variable.grad-none"])
        rg = _attr(ck, seen, "requires_grad", "requires_grad", HINTS["variable.store-flag"])
        ck.check(rg is False, "requires_grad should default to False.", expected=False,
                 received=_shown(rg), hint=HINTS["variable.flag-default"])
        fn = _attr(ck, seen, "grad_fn", "grad_fn", HINTS["variable.grad-fn-start"])
        ck.check(fn is None, "grad_fn of a new Variable should be None.", expected=None,
                 received=_shown(fn), hint=HINTS["variable.grad-fn-none"])
    with ck.case(C_FLAG):
        seen = obs.case(ck, C_FLAG, what="your Variable")
        for flag in (True, 1):
            rg = _attr(ck, seen, f"requires_grad {flag!r}", "requires_grad",
                       HINTS["variable.flag"])
            ck.check(rg is True, f"requires_grad={flag!r} was not stored as True.",
                     expected=True, received=_shown(rg), hint=HINTS["variable.bool"])
    with ck.case(C_LEAF):
        seen = obs.case(ck, C_LEAF, what="your Variable")
        is_leaf = _prop(ck, obs, seen, "is_leaf", "is_leaf", HINTS["variable.is-leaf"])
        ck.check(is_leaf is True, "a Variable without grad_fn should be a leaf.", expected=True,
                 received=_shown(is_leaf), hint=HINTS["variable.leaf"])
        after = _attr(ck, seen, "is_leaf after grad_fn", "is_leaf", HINTS["variable.is-leaf"])
        ck.check(after is False, "is_leaf did not change after grad_fn was set.",
                 expected=False, received=True, hint=HINTS["variable.leaf-computed"])


def _judge_shape(ck: Checker, obs: Observations, seen: Case, data: np.ndarray) -> None:
    shape = data.shape
    got = _prop(ck, obs, seen, "shape", "shape", HINTS["variable.shape-read"])
    ck.check(isinstance(got, (tuple, list)) and tuple(got) == shape, "shape is wrong.",
             expected=shape, received=_shown(got), hint=HINTS["variable.shape"])
    ndim = _prop(ck, obs, seen, "ndim", "ndim", HINTS["variable.ndim-read"])
    ck.check(ndim == len(shape), "ndim is wrong.", expected=len(shape), received=_shown(ndim),
             hint=_ndim_hint(ndim, shape))
    _prop(ck, obs, seen, "dtype object", "dtype", HINTS["variable.dtype-read"])
    kind, dtype = seen["dtype kind"], seen["dtype"]
    ck.check(kind == "numpy dtype" and dtype == "float64",
             "dtype is not the numpy dtype of the data.", expected="dtype('float64')",
             received=f"dtype('{dtype}')" if kind == "numpy dtype" else _shown(dtype),
             hint=_dtype_hint(kind, dtype))
    ck.close(_attr(ck, seen, "data", "data", HINTS["variable.asarray"]), data, what="data")


def _judge_numpy(ck: Checker, seen: Case) -> None:
    if seen["numpy raised"] is not None:
        raise_learner_error(ck, seen["numpy raised"], "your numpy", HINTS["variable.numpy-read"])
    arr, data = seen["numpy()"], seen["data"]
    ck.check(seen["numpy() is data"] is True, "numpy() did not return the Variable's own array.",
             expected="the array in .data itself",
             received=_shown(arr) if isinstance(arr, Opaque) else format_value(arr),
             hint=_numpy_hint(arr, data))
    for i in (0, 1):
        if seen[f"item {i} raised"] is not None:
            raise_learner_error(ck, seen[f"item {i} raised"], "your item",
                                HINTS["variable.item-read"])
        got = seen[f"item {i}"]
        ck.check(type(got) is float, "item() did not return a Python float.",
                 expected="float", received=seen[f"item {i} type"], hint=HINTS["variable.item"])
    ck.close(got, 7.0, what="item()")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _judge_repr(ck: Checker, seen: Case) -> None:
    if seen["repr raised"] is not None:
        raise_learner_error(ck, seen["repr raised"], "your __repr__", HINTS["variable.repr-write"])
    body = np.array2string(np.array([1.0, 2.0]), separator=", ")
    for key, want, problem, hint in (
            ("plain", f"Variable({body})",
             "repr of a plain Variable is not Variable(<the numbers>).", "variable.repr"),
            ("requires grad", f"Variable({body}, requires_grad=True)",
             "repr of a Variable that requires grad does not say so.", "variable.repr-flag"),
            ("computed", f"Variable({body}, grad_fn=<MulBackward>)", "repr of a computed "
             "Variable does not name its grad_fn as PyTorch does.", "variable.repr-grad-fn")):
        text = seen[key]
        ck.check(isinstance(text, str) and _squash(text) == _squash(want), problem,
                 expected=want, received=_shown(text), hint=HINTS[hint])


def _ndim_hint(got: Any, shape: tuple[int, ...]) -> str:
    """What a wrong ``ndim`` most likely counted."""
    if shape and got == shape[0]:
        return HINTS["variable.ndim-rows"]
    if got == int(np.prod(shape)):
        return HINTS["variable.ndim-size"]
    return HINTS["variable.ndim"]


def _dtype_hint(kind: str, name: Any) -> str:
    """What a wrong ``dtype`` most likely returned."""
    if kind == "str":
        return HINTS["variable.dtype-string"]
    if kind == "class":
        return HINTS["variable.dtype-class"].format(name=name)
    return HINTS["variable.dtype"]


def _numpy_hint(got: Any, data: Any) -> str:
    """Why ``numpy()`` did not give the Variable's own array."""
    if isinstance(got, np.ndarray) and isinstance(data, np.ndarray) \
            and got.shape == data.shape and np.array_equal(got, data):
        return HINTS["variable.numpy-copy"]
    if not isinstance(got, np.ndarray):
        return HINTS["variable.numpy-type"]
    return HINTS["variable.numpy"]


def _len_hint(got: Any, shape: tuple[int, ...]) -> str:
    """What a wrong ``len`` most likely counted."""
    if got == int(np.prod(shape)) and len(shape) > 1:
        return HINTS["variable.len-size"]
    if got == len(shape):
        return HINTS["variable.len-ndim"]
    return HINTS["variable.len"]
