"""Function: an operation with a forward and a backward, and how a call of it is recorded.

Write a Function the way PyTorch does: static ``forward(ctx, ...)`` and ``backward(ctx, ...)``
and call it with ``MyFunction.apply(...)``. The ``ctx`` handed to ``forward`` *is* the graph
node: after the call it becomes the output's ``grad_fn``, and the engine hands it back to
``backward``. The node of ``class Mul(Function)`` is an instance of ``MulBackward``, a subclass
of ``node.Node`` made when ``Mul`` is defined.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from typing import Any, Callable, Iterator

import numpy as np

from .errors import BackwardError, LegacyFunctionError
from .grad_mode import STATE
from .node import AccumulateGrad, Node, PlainCtx, SavedOutput
from .variable import Variable, VersionCounter

_LEGACY_HELP = """\
{name} is used in the old instance style (the only one before PyTorch 0.2): `{name}()(x)`
with a non-static forward(self, ...) that calls self.save_for_backward(...). Functions are now stateless; what
backward needs travels in a `ctx` object. Write it like this and call {name}.apply(x):

    class {name}(al.Function):
        @staticmethod
        def forward(ctx, input_):
            ctx.save_for_backward(input_)
            return ...
        @staticmethod
        def backward(ctx, grad_output):
            input_, = ctx.saved_tensors
            return ...
"""


class Function:
    """Base class of operations that know their own derivative.

    Subclasses define ``forward(ctx, *args, **kwargs)`` and ``backward(ctx, *grad_outputs)``
    as static methods and are called with ``apply``. Each subclass gets a node class named
    ``<Name>Backward``; its instances are the ``ctx`` objects and the outputs' ``grad_fn``.
    """

    _backward_cls: type[Node] = Node

    _legacy = False
    _setup_style = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (Node,), {"_forward_cls": cls,
                                                                        "__module__": cls.__module__})
        # the old style (before PyTorch 0.2) defines forward/backward as plain (instance) methods
        cls._legacy = any(name in cls.__dict__ and not isinstance(cls.__dict__[name], staticmethod)
                          for name in ("forward", "backward"))
        # the PyTorch >= 2.0 style: forward(*args) without ctx, and setup_context(ctx, inputs, output)
        cls._setup_style = cls.setup_context is not Function.setup_context

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise LegacyFunctionError(_LEGACY_HELP.format(name=type(self).__name__))

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define a static backward(ctx, *grad_outputs)")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Override (as a static method) to write forward without ``ctx``: ``forward(*args)``
        computes, ``setup_context(ctx, inputs, output)`` saves what backward needs."""
        raise NotImplementedError("setup_context is not overridden")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward and, if any input requires grad (and grad mode is on), record a node.

        Arguments given by keyword are matched to forward's parameters first, so a Variable
        passed as ``b=x`` is tracked as the argument it names."""
        if cls._legacy:
            raise LegacyFunctionError(_LEGACY_HELP.format(name=cls.__name__))
        if kwargs or cls._setup_style:
            args, kwargs = _bind(cls, args, kwargs)
        record = False
        if STATE.enabled:
            for a in args:
                if isinstance(a, Variable) and a._requires_grad:
                    record = True
                    break
        if not record:
            ctx = PlainCtx()
            prev = STATE.enabled
            STATE.enabled = False
            try:
                result = call_forward(cls, ctx, args, kwargs)
            finally:
                STATE.enabled = prev
            if ctx._dirty:
                for t in ctx._dirty:
                    t._bump_version()
            return wrap_outputs(cls, result)
        return _record(cls, args, kwargs)


@functools.lru_cache(maxsize=None)
def _signature(forward: Callable, setup_style: bool) -> inspect.Signature | None:
    try:
        sig = inspect.signature(forward)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return None
    params = list(sig.parameters.values())
    return sig.replace(parameters=params if setup_style else params[1:])  # drop ctx


def _bind(cls: type[Function], args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Match keyword arguments to forward's parameters, as PyTorch does, so that every Variable
    reaches forward in a position the graph records (and backward returns a gradient for)."""
    sig = _signature(cls.forward, cls._setup_style)
    if sig is not None:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{cls.__name__}.apply: {exc} (forward's parameters are "
                            f"{list(sig.parameters)})") from None
        if cls._setup_style:
            bound.apply_defaults()
        args, kwargs = bound.args, bound.kwargs
    for name, value in kwargs.items():
        if isinstance(value, Variable) and value._requires_grad:
            raise TypeError(
                f"{cls.__name__}.apply got the Variable {name!r} as a keyword-only argument, which "
                "the graph cannot record (backward returns one gradient per positional argument). "
                "Make it a positional parameter of forward."
            )
    return args, kwargs


def call_forward(cls: type[Function], ctx: Any, args: tuple, kwargs: dict) -> Any:
    if not cls._setup_style:
        return cls.forward(ctx, *args, **kwargs)
    result = cls.forward(*args, **kwargs)
    cls.setup_context(ctx, args, result)
    return result


def wrap_outputs(cls: type[Function], result: Any) -> Any:
    if isinstance(result, Variable):
        return result
    if isinstance(result, tuple):
        return tuple(r if isinstance(r, Variable) or r is None else _to_var(cls, r) for r in result)
    return _to_var(cls, result)


def _to_var(cls: type[Function], r: Any) -> Any:
    """A numeric array or number returned by forward becomes a Variable; any other object (a
    string, a list) is passed through unchanged and outside the graph, as PyTorch does."""
    if isinstance(r, (np.ndarray, np.generic, int, float, complex)) and not isinstance(r, bool):
        arr = np.asarray(r)
        if arr.dtype.kind not in "biufc":
            raise TypeError(
                f"{cls.__name__}.forward returned an array of dtype {arr.dtype}; outputs must be "
                "numeric Variables or arrays (other objects are returned as they are)."
            )
        return Variable._make(arr)
    return r


def _grad_capable(cls: type[Function], out: Variable) -> bool:
    """Whether a recorded output requires grad: floating point yes, integer and bool no,
    complex refused (this library has no complex autograd)."""
    kind = out._data.dtype.kind
    if kind == "c":
        raise TypeError(
            f"{cls.__name__}.forward returned a complex output ({out._data.dtype}) from inputs that "
            "require grad; autograd_lab does not differentiate complex functions (PyTorch uses "
            "conjugate Wirtinger derivatives). Compute with real and imaginary parts instead."
        )
    return kind == "f"


def _is_one_of(x: Any, items: tuple | list) -> bool:
    for item in items:
        if item is x:
            return True
    return False


NO_EDGE = (None, 0)


def _meta(data: np.ndarray) -> tuple:
    """``(shape, dtype)`` of an array: what the engine checks a gradient against."""
    return (data.shape, data.dtype)


# ---- speed: what the recorded path does only to be faster --------------------------------
# One shortcut. ``python -m benchmarks.engine_profile --ablate`` measures it: on the 1000-op chain
# it saves about 1.0 µs of a recorded op's forward and 0.3 of its backward (benchmarks/PROFILE.md,
# section 17). Without it the results are the same, only slower.

def _is_plain_output(node: Node, args: tuple, result: Any) -> bool:
    """The common case: forward returned one new Variable that owns its memory, is not an input
    and was not marked (dirty, non-differentiable). ``_attach_outputs`` would do for it what
    ``_attach_plain_output`` does, through its general loop."""
    if (type(result) is not Variable or result.grad_fn is not None or result._requires_grad
            or node._dirty or node._non_differentiable or result._data.base is not None):
        return False
    return not _is_one_of(result, args)


def _attach_plain_output(cls: type[Function], node: Node, result: Variable) -> Variable:
    data = result._data
    node._output_meta = (_meta(data),)
    result.grad_fn = node
    result._requires_grad = data.dtype.kind == "f" or _grad_capable(cls, result)
    saved = node._saved
    if saved and _is_one_of(result, saved):  # forward saved its own output (Exp, Sigmoid, …)
        _keep_saved_outputs_as_parts(node, (result,))
    return result


class TracingError(RuntimeError):
    """A second ``tracing`` block opened while one is active."""


@contextlib.contextmanager
def tracing(on_record: Callable[[type, tuple, dict, Any], None]) -> Iterator[None]:
    """Report every node recorded inside the block: ``on_record(cls, args, kwargs, out)`` is called
    after ``cls.apply(*args, **kwargs)`` recorded its node and returned ``out``, in the thread that
    opened the block. This is the hook ``al.capture`` builds its plan from; nothing else changes
    (the same nodes, the same values). One block at a time.

    >>> import autograd_lab as al
    >>> seen = []
    >>> x = al.tensor([1.0, 2.0], requires_grad=True)
    >>> with al.function.tracing(lambda cls, args, kwargs, out: seen.append(cls.__name__)):
    ...     y = (x * x).sum()
    >>> seen
    ['Mul', 'Sum']
    """
    global _record
    untraced = _record
    if untraced is not _record_node:
        raise TracingError("another tracing block is active (one capture at a time): close it first")
    me = threading.get_ident()

    def traced(cls: type[Function], args: tuple, kwargs: dict) -> Any:
        out = untraced(cls, args, kwargs)
        if threading.get_ident() == me:
            on_record(cls, args, kwargs, out)
        return out

    _record = traced  # apply calls _record: the tracer sees what it records
    try:
        yield
    finally:
        _record = untraced


def _record_node(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """Record one call of ``cls`` (apply's path when grad mode is on and an input requires grad),
    in the three steps of the chapter-03 ``apply``: a new node (it is also forward's ``ctx``)
    connected to the inputs' nodes; forward with grad mode off; the node made the outputs'
    ``grad_fn``."""
    node = cls._backward_cls()
    _connect_inputs(node, args)
    STATE.enabled = False
    try:
        result = (call_forward(cls, node, args, kwargs) if cls._setup_style
                  else cls.forward(node, *args, **kwargs))
    finally:
        STATE.enabled = True
    if _is_plain_output(node, args, result):
        return _attach_plain_output(cls, node, result)
    return _attach_outputs(cls, node, args, result)


def _connect_inputs(node: Node, args: tuple) -> None:
    """One edge per argument: to the node of the input's producer (an ``AccumulateGrad`` for a
    leaf), or none for an argument that does not require grad; ``needs_input_grad`` says which."""
    edges: list[tuple[Any, int]] = []
    needs = []
    input_meta: list | None = None  # only inputs without an edge need it (to draw them); the others' is at the edge
    for i, a in enumerate(args):
        if isinstance(a, Variable):
            if a._requires_grad:
                needs.append(True)
                fn = a.grad_fn
                if fn is None and a._no_grad_view:  # as in PyTorch, its gradient goes nowhere
                    edges.append(NO_EDGE)
                    continue
                edges.append((fn, a._output_nr) if fn is not None else (AccumulateGrad.of(a), 0))
                continue
            if input_meta is None:
                input_meta = [None] * len(args)
            input_meta[i] = _meta(a._data)
        needs.append(False)
        edges.append(NO_EDGE)
    node.next_functions = tuple(edges)
    node.needs_input_grad = tuple(needs)
    if input_meta is not None:
        node._input_meta = input_meta


def _attach_outputs(cls: type[Function], node: Node, args: tuple, result: Any) -> Any:
    """Make ``node`` the ``grad_fn`` of forward's outputs, one or several. An output that forward
    changed in place (``mark_dirty``) counts a version; an input returned as it is gets a new
    Variable of its own (its history is left alone); an output viewing an input shares its version
    counter; a ``mark_non_differentiable`` output stays outside the graph."""
    is_tuple = isinstance(result, tuple)
    outputs = list(result) if is_tuple else [result]
    out_meta: list[tuple | None] = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Variable):
            out = outputs[i] = _to_var(cls, out) if out is not None else None
            if not isinstance(out, Variable):
                out_meta.append(None)
                continue
        out = outputs[i] = _own_output(cls, node, args, out)
        out_meta.append(_meta(out._data))
        _link_output(cls, node, out, i)
    node._output_meta = out_meta
    node._single = len(out_meta) < 2
    if node._saved:
        _keep_saved_outputs_as_parts(node, outputs)
    return tuple(outputs) if is_tuple else outputs[0]


def _own_output(cls: type[Function], node: Node, args: tuple, out: Variable) -> Variable:
    """The Variable that will carry the node for one output of forward: a ``mark_dirty`` output
    itself, its version counted; an input (or another recorded Variable) returned as it is, a new
    Variable viewing the same data, so the input's history is left alone; an output viewing an
    input's memory, itself, sharing that input's version counter."""
    dirty = node._dirty
    if dirty and _is_one_of(out, dirty):
        if out._requires_grad and out.grad_fn is None:
            raise BackwardError(
                "a leaf Variable that requires grad is being used in an in-place operation "
                f"({cls.__name__} marked it dirty). Wrap the update in `with al.no_grad():`, or "
                "apply the Function to a clone()."
            )
        out._bump_version()
    elif out.grad_fn is not None or out._requires_grad or _is_one_of(out, args):
        alias = Variable._make(out._data)
        alias._version_counter = out._version_counter
        return alias
    elif out._data.base is not None:
        for a in args:
            if isinstance(a, Variable) and np.may_share_memory(out._data, a._data):
                out._version_counter = a._version_counter
                break
    return out


def _link_output(cls: type[Function], node: Node, out: Variable, i: int) -> None:
    """Make ``node`` the ``grad_fn`` of output ``i``, unless forward marked it
    non-differentiable (then it stays outside the graph)."""
    non_diff = node._non_differentiable
    if non_diff and _is_one_of(out, non_diff):
        return
    out.grad_fn = node
    out._output_nr = i
    out._requires_grad = _grad_capable(cls, out)


_record = _record_node  # what apply calls; tracing() puts its tracer here for a block


def _keep_saved_outputs_as_parts(node: Node, outputs: Any) -> None:
    """A saved output would form a cycle node -> output -> node: keep its data and version
    counter instead; ``saved_tensors`` rebuilds the Variable on demand."""
    saved: Any = node._saved  # a tuple until a saved output is found, then a list
    for j, t in enumerate(saved):
        if t is None:
            continue
        for i, out in enumerate(outputs):
            if t is out and out.grad_fn is node:
                if not node._saves_outputs:
                    saved = node._saved = list(saved)
                    node._saves_outputs = True
                saved[j] = SavedOutput(out, i)
                break


class _DelayedError(Function):
    """Stands in the recorded graph where a @once_differentiable backward ran."""

    @staticmethod
    def forward(ctx: Any, x: Variable) -> Variable:
        return x

    @staticmethod
    def backward(ctx: Any, grad: Variable) -> Any:
        raise BackwardError(
            f"{ctx.origin} is decorated with @once_differentiable: its backward is not itself "
            "differentiable, so a second derivative (create_graph=True, then backward again) cannot "
            "pass through it. Use an op whose backward is written with Variable operations."
        )


def once_differentiable(backward: Callable) -> Callable:
    """Decorate a ``backward`` that is not written with differentiable Variable operations.

    It runs with grad mode off. Under ``create_graph=True`` its results are marked so that a
    second backward through them raises a clear error instead of returning a wrong answer.
    """

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grad_outputs: Any) -> Any:
        recording = STATE.enabled
        STATE.enabled = False
        try:
            result = backward(ctx, *grad_outputs)
        finally:
            STATE.enabled = recording
        if not recording:
            return result
        single = not isinstance(result, tuple)
        marked: list[Variable | None] = []
        for g in ((result,) if single else result):
            if g is None:
                marked.append(None)
                continue
            data = np.asarray(g.data if isinstance(g, Variable) else g)
            node = _DelayedError._backward_cls()
            node.origin = type(ctx).__name__  # type: ignore[attr-defined]  # its backward reads it
            # the stand-in keeps the original inputs as its edges, so al.grad and gradgradcheck
            # find a path through it and reach the clear error instead of "not used in the graph"
            node.next_functions, node._input_meta = ctx.next_functions, ctx._input_meta
            node._output_meta = ((data.shape, data.dtype),)
            v = Variable._make(data)
            v.grad_fn, v._requires_grad = node, True
            marked.append(v)
        return marked[0] if single else tuple(marked)

    return wrapper


__all__ = ["Function", "Node", "AccumulateGrad", "once_differentiable", "VersionCounter"]
