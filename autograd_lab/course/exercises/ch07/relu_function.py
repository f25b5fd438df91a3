"""Check ``ReLU``, the Function behind ``Variable.relu``: values max(x, 0) in x's shape and
dtype, and the gradient grad_output * (x > 0) (0 at x = 0), on 1-d, 2-d and transposed inputs;
with ``create_graph=True`` the given recorded branch gives the same gradient.

The class runs on numpy stand-ins of ``affine_relu_forward`` and ``affine_relu_backward``
during the check, so that a mistake in those kernels costs only their own exercises."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._common import Checker, swapped_names
from .._exercise import Mistake
from .._functions import function_of
from .._observe import Observations, Observer, Raised, raise_learner_error
from ._shared import shown
from .messages import HINTS

ID = "ch07-relu-function"
PARTS: tuple[str, ...] = ()
SETUP = "ReLU is a Function class"
GRAPH = "with create_graph=True: the recorded branch gives the same gradient"
GRAPH_X = np.array([[-1.0, 0.0, 2.0], [0.5, -0.25, 3.0]])

MISTAKES = (
    Mistake("a flat output", ("np.empty_like(flat)).reshape(x.shape))", "np.empty_like(flat)))"),
            None, "relu.reshape"),
    Mistake("grad_output ignored", ("affine_relu_backward(flat, 1.0, 0.0, g, grad_x)",
                                    "affine_relu_backward(flat, 1.0, 0.0, np.ones_like(g), grad_x)"),
            None, "relu.chain"),
    Mistake("a flat gradient", ("return Variable(grad_x.reshape(x.shape))",
                                "return Variable(grad_x)"), None, "relu.grad-shape"),
    Mistake("a float64 output", ("np.empty_like(flat)).reshape", "np.empty(flat.shape)).reshape"),
            None, "relu.dtype"),
)


def affine_relu_forward(x: np.ndarray, a: float, b: float, out: np.ndarray) -> np.ndarray:
    """A numpy stand-in of the learner's forward kernel (the key's results)."""
    out[...] = np.maximum(a * x + b, 0)
    return out


def affine_relu_backward(x: np.ndarray, a: float, b: float, grad_out: np.ndarray,
                         grad_x: np.ndarray) -> tuple[float, float]:
    """A numpy stand-in of the learner's backward kernel (the key's results)."""
    g = grad_out * ((a * x + b) > 0)
    grad_x[...] = a * g
    return float((g * x).sum()), float(g.sum())


@contextlib.contextmanager
def course_kernels(cls: Any) -> Iterator[None]:
    """``cls``'s methods run on the stand-ins (where they use the kernels' names)."""
    with contextlib.ExitStack() as stack:
        for method in ("forward", "backward"):
            space = getattr(function_of(cls, method), "__globals__", None)
            if isinstance(space, dict):
                stand_ins = {"affine_relu_forward": affine_relu_forward,
                             "affine_relu_backward": affine_relu_backward}
                stack.enter_context(swapped_names(space, {k: v for k, v in stand_ins.items()
                                                          if k in space}))
        yield


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, x, incoming gradient): the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes = [("a (6,) input", (6,), False, np.float64),
              ("a (3, 4) input", (3, 4), False, np.float64),
              ("a transposed (4, 3) input (not C-contiguous)", (4, 3), True, np.float64)]
    if hidden:
        shapes += [("a float32 (2, 3, 2) input", (2, 3, 2), False, np.float32)]
    found = []
    for name, shape, transposed, dtype in shapes:
        data = np.round(rng.normal(size=shape[::-1] if transposed else shape), 2).astype(dtype)
        data = data.T if transposed else data
        data.flat[0] = 0.0                     # relu'(0) = 0
        g = np.round(rng.uniform(0.5, 2.0, size=shape), 2).astype(dtype)
        found.append((name + ": values and gradient", data, g))
    return found


def observe(ob: Observer, ReLU: type[Any], Variable: type[Any], *, seed: int,
            hidden: bool) -> None:
    with ob.case(SETUP):
        ob.put("object", ReLU)
        if not ob.put("class", isinstance(ReLU, type) and hasattr(ReLU, "apply")):
            return
    with course_kernels(ReLU):
        for name, data, g in cases(seed, hidden):
            with ob.case(name):
                x = Variable(data.copy(), requires_grad=True)
                y = ReLU.apply(x)
                ob.put("object", y)
                if not ob.put("variable", isinstance(y, Variable)):
                    continue
                ob.put("y", np.asarray(y.data))
                ob.attempt("backward raised", y.backward, Variable(g))
                ob.put("grad", None if x.grad is None else np.asarray(x.grad.data))
        with ob.case(GRAPH):
            x = Variable(GRAPH_X.copy(), requires_grad=True)
            y = ReLU.apply(x)
            ob.attempt("backward raised", lambda: y.sum().backward(create_graph=True))
            ob.put("grad", None if x.grad is None else np.asarray(x.grad.data))


def judge(ck: Checker, obs: Observations) -> None:
    rule = HINTS["relu.rule"]
    setup = obs.case(ck, SETUP, what="your ReLU")
    ck.check(setup["class"] is True, "ReLU is not a Function class.",
             received=shown(setup["object"]), hint=HINTS["fn.class"])
    for name, data, g in cases(obs.seed, obs.hidden):
        with ck.case(name):
            _judge_case(ck, obs.case(ck, name, what="your apply", hint=rule), data, g)
    with ck.case(GRAPH):
        seen = obs.case(ck, GRAPH, what="your apply", hint=rule)
        err = seen["backward raised"]
        if isinstance(err, Raised):
            if err.is_a("AttributeError", "ValueError"):
                ck.fail(f"backward with create_graph=True raised {err.name}: {err.message}",
                        hint=HINTS["relu.saved"])
            raise_learner_error(ck, err, "your backward", rule)
        ck.check(seen["grad"] is not None, "x.grad is None after backward.",
                 hint=HINTS["relu.grad-none"])
        ck.close(seen["grad"], (GRAPH_X > 0) * 1.0, atol=0, rtol=0,
                 what="x.grad (create_graph=True)", hint=rule)
    ck.done()


def _judge_case(ck: Checker, seen: Any, data: np.ndarray, g: np.ndarray) -> None:
    rule = HINTS["relu.rule"]
    shape = data.shape
    ck.check(seen["variable"] is True, "apply did not return a Variable.",
             received=shown(seen["object"]), hint=HINTS["relu.variable"])
    got = seen["y"]
    got_shape = np.shape(got)
    ck.check(got_shape == shape, f"relu(x) has shape {got_shape}, x has shape {shape}.",
             expected=shape, received=got_shape, hint=HINTS["relu.reshape"])
    ck.close(got, np.maximum(data, 0), atol=0, rtol=0, what="relu(x)", hint=rule)
    ck.check(got.dtype == data.dtype, f"relu(x) is {got.dtype} for a {data.dtype} x.",
             hint=HINTS["relu.dtype"])
    err = seen["backward raised"]
    if isinstance(err, Raised):  # the engine refuses a gradient of another shape than x's
        raise_learner_error(ck, err, "your backward",
                            HINTS["relu.grad-shape"] if "shape" in err.message else rule)
    gx = seen["grad"]
    if gx is None:
        ck.fail("x.grad is None after backward.", hint=HINTS["relu.grad-none"])
    ck.check(np.shape(gx) == shape, f"x.grad has shape {np.shape(gx)}, x has shape {shape}.",
             expected=shape, received=np.shape(gx), hint=HINTS["relu.grad-shape"])
    ck.close(gx, g * (data > 0), atol=0, rtol=0, what="x.grad",
             mistakes=[((data > 0) * 1.0, HINTS["relu.chain"])], hint=rule)
