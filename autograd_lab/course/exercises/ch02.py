"""Checkers for chapter 02, Variable and the computational graph."""
from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import Variable, no_grad, ones, tensor
from ._common import Checker, deeper_than_recursion, format_value, grad_data

__all__ = ["ch02_variable_class", "ch02_propagation_rule", "ch02_hand_gradients",
           "ch02_find_leaves"]


def _attr(ck: Checker, obj: Any, name: str, hint: str) -> Any:
    """``obj.name`` with the learner's errors (stubs, crashes, missing attributes) reported."""
    def read_attribute() -> Any:
        return getattr(obj, name)
    read_attribute.__name__ = f"Variable.{name}"
    try:
        return ck.call(read_attribute, hint=hint)
    except AssertionError as err:
        if isinstance(err.__cause__, AttributeError):
            raise ck.error(f"your Variable has no attribute {name!r}.", hint=hint) from None
        raise


def _prop(ck: Checker, cls: type[Any], obj: Any, name: str, hint: str) -> Any:
    """``obj.name`` for an attribute that must be a property (read without brackets)."""
    ck.check(isinstance(getattr(cls, name, None), property), f"{name} is not a property.",
             expected=f"v.{name} read without brackets", received=type(
                 getattr(cls, name, None)).__name__,
             hint=f"Put @property above def {name}(self), so that v.{name} works without "
                  "brackets and is computed each time it is read.")
    return _attr(ck, obj, name, hint)


class _Node:
    """A stand-in graph node: its class name is what a Variable's repr shows."""


def _node(name: str) -> Any:
    return type(name, (_Node,), {})()


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _ndim_hint(got: Any, shape: tuple[int, ...]) -> str:
    """What a wrong ``ndim`` most likely counted."""
    if shape and got == shape[0]:
        return ("ndim counted the rows (the length of the first axis, len(data)); it is the "
                "number of axes: 2 for a matrix, 0 for a single number.")
    if got == int(np.prod(shape)):
        return ("ndim counted the elements (data.size); it is the number of axes, the length "
                "of the shape.")
    return "ndim is the number of axes of the array: the length of its shape."


def _dtype_hint(got: Any) -> str:
    """What a wrong ``dtype`` most likely returned."""
    if isinstance(got, str):
        return ("dtype gave the name as a string; give numpy's dtype object itself (the "
                "array's .dtype), which compares equal to np.float64.")
    if isinstance(got, type):
        return (f"dtype gave a Python class ({got.__name__}); the dtype is the type of the "
                "array's elements, which the array itself reports.")
    return "dtype is the type of the array's elements, as the array itself reports it."


def _numpy_hint(got: Any, data: np.ndarray) -> str:
    """Why ``numpy()`` did not give the Variable's own array."""
    if isinstance(got, np.ndarray) and got.shape == data.shape and np.array_equal(got, data):
        return ("numpy() made a copy: it must give the array the Variable holds, so that a "
                "change through one shows in the other, as PyTorch's t.numpy() shares memory.")
    if not isinstance(got, np.ndarray):
        return ("numpy() did not give a numpy array; it gives the array the Variable holds, "
                "not the Variable itself or a list.")
    return "numpy() gives the array the Variable holds, unchanged."


def _len_hint(got: Any, shape: tuple[int, ...]) -> str:
    """What a wrong ``len`` most likely counted."""
    if got == int(np.prod(shape)) and len(shape) > 1:
        return ("len() counted every element (data.size); like a numpy array's, it is the "
                "length of the first axis: the number of rows.")
    if got == len(shape):
        return "len() gave the number of axes (ndim); it is the length of the first axis."
    return "len() is the length of the first axis, as for a numpy array or a list of rows."


def ch02_variable_class(Variable: type[Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check mygrad's ``Variable(data, requires_grad=False)``: ``data`` (a float ndarray),
    ``grad`` and ``grad_fn`` (None at first), ``requires_grad``; properties ``is_leaf``,
    ``shape``, ``ndim``, ``dtype``; ``numpy()`` (the array itself), ``len()``, ``item()`` and a repr like PyTorch's."""
    ck = Checker("ch02-variable-class", seed=seed, hidden=hidden)
    ck.check(isinstance(Variable, type), "Variable is not a class.", received=Variable,
             hint="Pass the class itself: check.ch02_variable_class(Variable).")
    asarray = "Store the array in __init__: self.data = np.asarray(data)."
    with ck.case("a list becomes a numpy array in .data"):
        v = ck.call(Variable, [1.0, 2.0, 3.0])
        data = _attr(ck, v, "data", asarray)
        ck.check(isinstance(data, np.ndarray), "data is not a numpy array.",
                 expected="np.ndarray", received=type(data).__name__,
                 hint="Convert what you are given: self.data = np.asarray(data).")
        ck.close(data, np.array([1.0, 2.0, 3.0]), what="data")
    with ck.case("integers become float64, float32 stays float32"):
        v = ck.call(Variable, [1, 2, 3])
        data = _attr(ck, v, "data", asarray)
        ck.check(np.asarray(data).dtype == np.float64, "integer data was not turned into floats.",
                 expected="float64", received=str(np.asarray(data).dtype),
                 hint="Gradients are fractions, so a Variable holds floats: after np.asarray, "
                      "convert when data.dtype.kind is not 'f' (float) or 'c' (complex).")
        v = ck.call(Variable, np.ones(2, dtype=np.float32))
        data = _attr(ck, v, "data", asarray)
        ck.check(np.asarray(data).dtype == np.float32, "float32 data changed its dtype.",
                 expected="float32", received=str(np.asarray(data).dtype),
                 hint="Convert only integers and bools; keep float data as it is.")
    with ck.case("a Variable passed in: its data is used"):
        inner = ck.call(Variable, [4.0, 5.0])
        v = ck.call(Variable, inner)
        data = _attr(ck, v, "data", asarray)
        ck.check(isinstance(data, np.ndarray) and data.dtype.kind in "fc",
                 "Variable(another Variable) did not take the other one's numbers.",
                 expected="a float array [4., 5.]", received=data,
                 hint="np.asarray cannot read a Variable: if data is a Variable, use data.data.")
        ck.close(data, np.array([4.0, 5.0]), what="data")
    with ck.case("a new Variable has grad None, requires_grad False, grad_fn None"):
        v = ck.call(Variable, np.zeros((2, 3)))
        grad = _attr(ck, v, "grad", "Start with self.grad = None: there is no gradient yet.")
        ck.check(grad is None, "grad of a new Variable is not None.", expected=None,
                 received=grad, hint="The gradient only exists after a backward pass: "
                                     "self.grad = None in __init__.")
        rg = _attr(ck, v, "requires_grad", "Store the flag: self.requires_grad = requires_grad.")
        ck.check(rg is False, "requires_grad should default to False.", expected=False,
                 received=rg, hint="def __init__(self, data, requires_grad=False).")
        fn = _attr(ck, v, "grad_fn",
                   "A new Variable was made by no operation: self.grad_fn = None.")
        ck.check(fn is None, "grad_fn of a new Variable should be None.", expected=None,
                 received=fn, hint="A Variable you make yourself was made by no Function: "
                                   "self.grad_fn = None (apply sets it later, chapter 03).")
    with ck.case("requires_grad=True (or 1) is stored as True"):
        for flag in (True, 1):
            v = ck.call(Variable, np.ones(2), requires_grad=flag)
            rg = _attr(ck, v, "requires_grad", "self.requires_grad = requires_grad")
            ck.check(rg is True, f"requires_grad={flag!r} was not stored as True.",
                     expected=True, received=rg, hint="Store a real bool: "
                     "self.requires_grad = bool(requires_grad).")
    with ck.case("is_leaf is a property: True without grad_fn, False once grad_fn is set"):
        leaf = ck.call(Variable, 1.0, requires_grad=True)
        is_leaf = _prop(ck, Variable, leaf, "is_leaf", "return self.grad_fn is None")
        ck.check(is_leaf is True, "a Variable without grad_fn should be a leaf.", expected=True,
                 received=is_leaf, hint="A leaf is a Variable no operation made.")
        leaf.grad_fn = _node("MulBackward")
        ck.check(_attr(ck, leaf, "is_leaf", "return self.grad_fn is None") is False,
                 "is_leaf did not change after grad_fn was set.", expected=False, received=True,
                 hint="Compute is_leaf from grad_fn each time it is read (return self.grad_fn "
                      "is None) instead of storing a flag in __init__.")
    shapes = [(2, 3), (4,), ()]
    if hidden:
        shapes += [tuple(int(n) for n in ck.rng.integers(1, 5, size=k)) for k in (1, 3)]
    for shape in shapes:
        with ck.case(f"shape, ndim, dtype of a {shape} array"):
            data = np.round(ck.rng.normal(size=shape), 3)
            v = ck.call(Variable, data)
            got = _prop(ck, Variable, v, "shape", "return self.data.shape")
            ck.check(tuple(got) == shape, "shape is wrong.", expected=shape, received=got,
                     hint="shape is the shape of the array: return self.data.shape")
            ndim = _prop(ck, Variable, v, "ndim", "ndim is the array's number of axes.")
            ck.check(ndim == len(shape), "ndim is wrong.", expected=len(shape), received=ndim,
                     hint=_ndim_hint(ndim, shape))
            dtype = _prop(ck, Variable, v, "dtype", "dtype is the array's element type.")
            ck.check(isinstance(dtype, np.dtype) and dtype == np.float64,
                     "dtype is not the numpy dtype of the data.", expected="dtype('float64')",
                     received=dtype, hint=_dtype_hint(dtype))
            ck.close(_attr(ck, v, "data", asarray), data, what="data")
    with ck.case("numpy() gives the array itself, item() a Python float"):
        v = ck.call(Variable, [[2.5]])
        arr = ck.call(v.numpy, hint="numpy() gives the array the Variable holds.")
        ck.check(arr is v.data, "numpy() did not return the Variable's own array.",
                 expected="the array in .data itself", received=format_value(arr),
                 hint=_numpy_hint(arr, v.data))
        for value in (v, ck.call(Variable, 7.0)):
            got = ck.call(value.item, hint="return self.data.item()")
            ck.check(type(got) is float, "item() did not return a Python float.",
                     expected="float", received=type(got).__name__,
                     hint="numpy's ndarray.item() turns a one-element array into a Python number.")
        ck.close(got, 7.0, what="item()")
    lengths = [(3, 2), (5,)] + ([(1, 4, 2)] if hidden else [])
    for shape in lengths:
        with ck.case(f"len() of a {shape} Variable is the length of its first axis"):
            v = ck.call(Variable, np.zeros(shape))
            got = ck.call(lambda: len(v), hint="Write __len__(self), returning the length of "
                          "the first axis.")
            ck.check(got == shape[0], "len() is not the length of the first axis.",
                     expected=shape[0], received=got, hint=_len_hint(got, shape))
    with ck.case("repr shows the numbers, and requires_grad or grad_fn"):
        body = np.array2string(np.array([1.0, 2.0]), separator=", ")
        plain = ck.call(Variable, [1.0, 2.0])
        text = ck.call(lambda: repr(plain), hint="Write __repr__ returning a string.")
        ck.check(isinstance(text, str) and _squash(text) == _squash(f"Variable({body})"),
                 "repr of a plain Variable is not Variable(<the numbers>).",
                 expected=f"Variable({body})", received=text,
                 hint="Start from body = np.array2string(self.data, separator=', ') and return "
                      "f'Variable({body})'.")
        wants = ck.call(Variable, [1.0, 2.0], requires_grad=True)
        text = repr(wants)
        ck.check(_squash(text) == _squash(f"Variable({body}, requires_grad=True)"),
                 "repr of a Variable that requires grad does not say so.",
                 expected=f"Variable({body}, requires_grad=True)", received=text,
                 hint="Add ', requires_grad=True' when self.requires_grad is True.")
        wants.grad_fn = _node("MulBackward")
        text = repr(wants)
        want = f"Variable({body}, grad_fn=<MulBackward>)"
        ck.check(_squash(text) == _squash(want), "repr of a computed Variable does not name its "
                 "grad_fn as PyTorch does.", expected=want, received=text,
                 hint="When grad_fn is set, show it instead of requires_grad: "
                      "', grad_fn=<' + type(self.grad_fn).__name__ + '>'.")
    ck.done()


def ch02_propagation_rule(output_requires_grad: Callable[..., bool], *, seed: int = 0,
                          hidden: bool = False) -> None:
    """Check ``output_requires_grad(inputs, grad_enabled=True)``: True exactly when grad mode
    is on and at least one input is a Variable that requires grad (other inputs count as no)."""
    ck = Checker("ch02-propagation-rule", seed=seed, hidden=hidden)
    w = tensor(ck.rng.normal(size=3), requires_grad=True)
    x = tensor(ck.rng.normal(size=3))
    computed = w * 2.0
    with no_grad():
        frozen = w * 2.0
    duck = types.SimpleNamespace(requires_grad=True)
    cases: list[tuple[str, list, bool, bool, str]] = [
        ("[w] with w.requires_grad=True", [w], True, True,
         "An output requires grad when any input does."),
        ("[x] with x.requires_grad=False", [x], True, False,
         "No input requires grad, so the output does not."),
        ("[x, w]: one of two inputs requires grad", [x, w], True, True,
         "One input that requires grad is enough: use any(...), not all(...)."),
        ("[w, x]: the order does not matter", [w, x], True, True,
         "Look at every input, not only the first one: any(...)."),
        ("[w, x] with grad_enabled=False", [w, x], False, False,
         "In al.no_grad() nothing is recorded: return False when grad_enabled is False."),
        ("[x, 3.0, an ndarray]: numbers and arrays never require grad",
         [x, 3.0, np.ones(2)], True, False,
         "Use getattr(a, 'requires_grad', False) so numbers and arrays count as False."),
        ("[2.5, w]: a number next to a Variable that requires grad", [2.5, w], True, True,
         "Numbers count as False, but w requires grad."),
        ("[w * 2]: a computed Variable made from w requires grad", [computed], True, True,
         "A computed Variable that requires grad passes the flag on, like a leaf does."),
        ("[]: no inputs", [], True, False, "With no inputs nothing requires grad."),
    ]
    if hidden:
        cases += [
            ("[w * 2 made under no_grad]", [frozen, x], True, False,
             "frozen was made under no_grad, so it does not require grad."),
            ("[any object with requires_grad=True]", [duck], True, True,
             "Read the attribute requires_grad, whatever the class."),
            ("five inputs, the last requires grad", [x, 1.0, x, np.zeros(1), w], True, True,
             "any(...) over all inputs."),
        ]
    for name, inputs, enabled, want, hint in cases:
        with ck.case(name):
            got = ck.call(output_requires_grad, list(inputs), grad_enabled=enabled, hint=hint)
            ck.check(isinstance(got, (bool, np.bool_)), "the result is not True or False.",
                     expected=want, received=got, hint="Return a bool, e.g. any(...) and grad_enabled.")
            ck.check(bool(got) == want, f"returned {bool(got)}.", expected=want, received=got,
                     hint=hint)
    ck.done()


def _example(w1: float, w2: float, w3: float) -> dict[str, np.ndarray]:
    """The chapter's graph run by the engine: d loss / d every named Variable."""
    inp = ones(2, 2)
    ws = [tensor(float(v), requires_grad=True) for v in (w1, w2, w3)]
    l1 = inp * ws[0]
    l2 = l1 + ws[1]
    l3 = l1 * ws[2]
    l4 = l2 * l3
    for v in (l1, l2, l3, l4):
        v.retain_grad()
    l4.mean().backward()
    out = {name: grad_data(v) for name, v in zip(["l1", "l2", "l3", "l4"], [l1, l2, l3, l4])}
    out.update({name: grad_data(v) for name, v in zip(["w1", "w2", "w3"], ws)})
    return out


def ch02_hand_gradients(hand_gradients: Callable[..., dict], *, seed: int = 0,
                        hidden: bool = False) -> None:
    """Check ``hand_gradients(w1, w2, w3)``: a dict of d loss / d l4, l3, l2, l1 ((2, 2) arrays)
    and d loss / d w1, w2, w3 (numbers) for the chapter's example with input = ones(2, 2)."""
    ck = Checker("ch02-hand-gradients", seed=seed, hidden=hidden)
    points: list[tuple[float, ...]] = [(2.0, 3.0, 4.0), (1.0, -1.0, 0.5)]
    if hidden:
        points += [tuple(float(v) + 0.0 for v in np.round(ck.rng.uniform(-3, 3, size=3), 2))
                   for _ in range(3)]
    for w1, w2, w3 in points:
        with ck.case(f"w1={w1:g}, w2={w2:g}, w3={w3:g}"):
            got = ck.call(hand_gradients, w1, w2, w3)
            ck.check(isinstance(got, dict), "the result is not a dict.",
                     expected="{'l4': ..., 'l3': ..., 'l2': ..., 'l1': ..., 'w1': ..., 'w2': ..., "
                              "'w3': ...}", received=type(got).__name__,
                     hint="Return a dict with one entry per Variable of the graph.")
            want = _example(w1, w2, w3)
            missing = [k for k in want if k not in got]
            ck.check(not missing, f"the dict has no entry for {missing}.",
                     expected=sorted(want), received=sorted(map(str, got)),
                     hint="Give d loss / d x for l4, l3, l2, l1, w1, w2 and w3.")
            d = want
            mistakes = {
                "l4": [(np.ones((2, 2)), "loss is the mean of 4 numbers, so each one counts 1/4.")],
                "l3": [(4 * d["l3"], "Remember the 1/4 from the mean."),
                       (d["l2"], "d loss/d l3 multiplies by l2 (the other factor of l4 = l2 * l3), "
                                 "not by l3.")],
                "l2": [(4 * d["l2"], "Remember the 1/4 from the mean."),
                       (d["l3"], "d loss/d l2 multiplies by l3 (the other factor), not by l2.")],
                "l1": [(d["l2"], "l1 feeds two Variables: add the path through l2 AND the path "
                                 "through l3 (d l3/d l1 = w3)."),
                       (w3 * d["l3"], "l1 feeds two Variables: add the path through l2 (d l2/d l1 "
                                      "= 1) to the path through l3.")],
                "w1": [(d["l1"][0, 0], "w1 is a scalar used in all 4 elements of l1 = input * w1: "
                                       "sum the contributions of all 4."),
                       (d["w1"] / 4, "Sum over the 4 elements, do not average.")],
                "w2": [(d["w2"] / 4, "w2 is added to all 4 elements of l1: sum the 4 gradients "
                                     "of l2.")],
                "w3": [(d["w3"] / 4, "w3 multiplies all 4 elements of l1: sum the 4 "
                                     "contributions of l3.")],
            }
            for key in ["l4", "l3", "l2", "l1", "w1", "w2", "w3"]:
                value = got[key]
                if isinstance(value, Variable):
                    value = value.data  # a Variable is fine too
                expected = want[key] if key.startswith("l") else float(want[key])
                shape_hint = ("Give the gradient of each element: an array of shape (2, 2), "
                              "e.g. np.full((2, 2), value)." if key.startswith("l") else
                              "w1, w2 and w3 are scalars: give a single number.")
                if np.shape(value) != np.shape(expected):
                    ck.fail(f"d loss / d {key} has shape {np.shape(value)}, expected "
                            f"{np.shape(expected)}.", expected=expected, received=value,
                            hint=shape_hint)
                ck.close(value, expected, atol=1e-8, rtol=1e-8, what=f"d loss / d {key}",
                         mistakes=mistakes[key],
                         hint="Go backwards from loss one step at a time: the gradient of a "
                              "Variable is the sum, over the Variables it feeds, of their "
                              "gradient times the local derivative.")
    ck.done()


def ch02_find_leaves(find_leaves: Callable[[Variable], list], *, seed: int = 0,
                     hidden: bool = False) -> None:
    """Check ``find_leaves(var)``: the leaf Variables that require grad and that ``var`` was
    computed from, each once, found through ``grad_fn.next_functions``."""
    ck = Checker("ch02-find-leaves", seed=seed, hidden=hidden)
    rng = ck.rng

    def leaf(*shape: int) -> Variable:
        return tensor(np.round(rng.normal(size=shape), 3), requires_grad=True)

    cases: list[tuple[str, Variable, list[Variable], str]] = []
    inp = ones(2, 2)
    w1, w2, w3 = leaf(), leaf(), leaf()
    l1 = inp * w1
    loss = ((l1 + w2) * (l1 * w3)).mean()
    cases.append(("the chapter's example: w1, w2, w3 (not input)", loss, [w1, w2, w3],
                  "Follow every edge: push each node in next_functions you have not seen, and "
                  "collect node.variable from the AccumulateGrad nodes."))
    a = leaf(3)
    cases.append(("a leaf used twice: a * a + a", a * a + a, [a],
                  "Remember the nodes (or leaves) you have already seen, so each leaf is "
                  "listed once (compare with `is`, or keep a set of id(...))."))
    b, c = leaf(2), leaf(2)
    cases.append(("b.exp() * 3 + c: a Python number in the graph", b.exp() * 3 + c, [b, c],
                  "Skip the entries of next_functions whose node is None."))
    d = leaf(4)
    cases.append(("the leaf itself", d, [d], "A leaf that requires grad has no grad_fn: "
                                             "then the answer is [var] itself."))
    e = leaf(3)
    cases.append(("(e.detach() * 2).sum(): no leaves", (e.detach() * 2).sum(), [],
                  "A Variable with grad_fn None that does not require grad has no leaves: []."))
    x = leaf(2)
    y = x
    for _ in range(deeper_than_recursion(3000)):
        y = y * 1.0
    cases.append(("a chain deeper than Python's recursion limit", y, [x],
                  "A function that calls itself for each node needs one Python frame per node, "
                  "and Python stops at about 1,000 (RecursionError): keep the nodes still to "
                  "visit in a list (a stack) instead."))
    if hidden:
        ps = [leaf(2) for _ in range(4)]
        h = ps[0]
        for p in ps[1:]:
            h = (h * p).tanh() + h
        cases.append(("four leaves, every step reuses h", h.sum(), ps,
                      "Use a stack (or queue) and a seen set over the nodes."))
        x = leaf(2)
        y = x
        for _ in range(150):
            y = y * 1.01
        cases.append(("a chain of 150 steps", y, [x], "Walk all the way down the chain."))
    for name, var, want, hint in cases:
        with ck.case(name):
            got = ck.call(find_leaves, var, hint=hint)
            ck.check(got is not None and not isinstance(got, (str, Variable)) and
                     hasattr(got, "__iter__"), "the result is not a list.",
                     expected="a list of Variables", received=got, hint="Return a list.")
            got = list(got)
            bad = [g for g in got if not isinstance(g, Variable)]
            ck.check(not bad, "the list holds something that is not a Variable.",
                     received=format_value(bad[0]) if bad else None,
                     hint="Collect node.variable from the AccumulateGrad nodes (not the nodes).")
            ids = [id(g) for g in got]
            ck.check(len(set(ids)) == len(ids), "a leaf is listed more than once.",
                     expected=f"{len(set(ids))} leaves", received=f"{len(ids)} entries", hint=hint)
            names = {id(v): f"leaf {i} (shape {v.shape})" for i, v in enumerate(want)}
            missing = [names[id(v)] for v in want if id(v) not in set(ids)]
            extra = [g for g in got if id(g) not in names]
            ck.check(not missing and not extra, "the leaves found are not the right ones.",
                     expected=f"{len(want)} leaves", received=f"{len(got)} Variables"
                     + (f"; missing {missing}" if missing else "")
                     + (f"; {len(extra)} that are not leaves requiring grad" if extra else ""),
                     hint=hint)
    ck.done()


def mygrad_variable(pkg: types.ModuleType) -> None:
    """The loader's check of the learner's ``mygrad/variable.py``: the exercise's cases."""
    ch02_variable_class(pkg.Variable)
