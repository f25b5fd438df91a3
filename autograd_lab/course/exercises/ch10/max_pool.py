"""Check the Function ``MaxPool.apply(x, k)``: the maximum of each k×k window (stride k,
leftover rows and columns dropped), and a backward that sends each output gradient to the
position of its window's (first) maximum.

``Variable`` is the Variable class of the library MaxPool is written for (mygrad's in the
chapter); by default autograd_lab's."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._parts import Parts
from .messages import HINTS

ID = "ch10-max-pool"
PARTS = ("forward", "backward")

_PUT = "np.put_along_axis(dblocks, ctx.arg[..., None], g[..., None], axis=-1)"
_SAVE = "ctx.arg, ctx.k, ctx.x_shape = arg, k, x.shape"
_BETWEEN = ("\n        return Variable(np.take_along_axis(blocks, arg[..., None], axis=-1)[..., 0])"
            "\n        ### END SOLUTION\n\n    @staticmethod\n    def backward(ctx, grad_output):"
            "\n        ### BEGIN SOLUTION\n        n, c, h, w = ctx.x_shape"
            "\n        k, (ho, wo) = ctx.k, ctx.arg.shape[2:]\n        g = grad_output.data"
            "\n        dblocks = np.zeros((n, c, ho, wo, k * k), dtype=g.dtype)\n        ")
MISTAKES = (
    Mistake("the gradient to every maximum (a mask)", (
        _SAVE + _BETWEEN + _PUT,
        _SAVE + "; ctx.blocks = blocks" + _BETWEEN
        + "dblocks = (ctx.blocks == ctx.blocks.max(axis=-1, keepdims=True)) * g[..., None]"),
        "backward", "pool.ties"),
    Mistake("the gradient to the last maximum", ("arg = blocks.argmax(axis=-1)",
                                                 "arg = k * k - 1 - blocks[..., ::-1].argmax("
                                                 "axis=-1)"), "backward", "pool.backward"),
    Mistake("the gradient spread over the window", (_PUT, "dblocks[...] = g[..., None] / (k * k)"),
            "backward", "pool.backward"),
    Mistake("the mean, not the max", ("np.take_along_axis(blocks, arg[..., None], axis=-1)[..., 0]",
                                      "blocks.mean(axis=-1)"), PARTS, "pool.forward"),
)

TIES = np.array([[[[0.0, 0.0, 1.0, 2.0],
                   [0.0, 0.0, 2.0, 2.0],
                   [3.0, 1.0, 5.0, 0.0],
                   [1.0, 3.0, 0.0, 4.0]]]])
TIES_GRAD = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
TIES_CASE = "backward: ties: the gradient goes to ONE position per window (the first maximum)"
FD_CASE = "backward: central differences of a (1, 2, 4, 6) input, k=2"
_EPS = 1e-6


def _pooled(shape: tuple[int, ...], k: int) -> tuple[int, ...]:
    return (shape[0], shape[1], shape[2] // k, shape[3] // k)


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes = [("a (1, 1, 4, 4) input, k=2", (1, 1, 4, 4), 2),
              ("a (2, 3, 6, 6) input, k=3", (2, 3, 6, 6), 3),
              ("a (1, 2, 5, 7) input, k=2: the last row and column are dropped", (1, 2, 5, 7), 2)]
    if hidden:
        shapes += [("a (3, 2, 8, 8) input, k=2", (3, 2, 8, 8), 2),
                   ("a (2, 1, 9, 6) input, k=4", (2, 1, 9, 6), 4)]
    inputs = [(name, rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64) / 10, k)
              for name, shape, k in shapes]
    fd_grad = rng.normal(size=(1, 2, 2, 3))
    grads = np.random.default_rng(seed + 1000)  # the same whatever the forward part did
    backward = [(name, data, k, np.round(grads.normal(size=_pooled(data.shape, k)), 3))
                for name, data, k in inputs]
    return {"inputs": inputs, "backward": backward, "fd": grads.normal(size=(1, 2, 4, 6)),
            "fd grad": fd_grad}


def _run(ob: Observer, MaxPool: Any, Variable: Any, data: np.ndarray, k: int,
         g: np.ndarray) -> None:
    x = Variable(data.copy(), requires_grad=True)
    y = MaxPool.apply(x, k)
    y.backward(Variable(g))
    ob.put("grad is None", x.grad is None)
    if x.grad is not None:
        ob.put("grad", data_of(x.grad))


def observe(ob: Observer, MaxPool: Any, *, seed: int, hidden: bool,
            Variable: Any = None) -> None:
    Variable = Variable or library().Variable
    inputs = cases(seed, hidden)
    for name, data, k in inputs["inputs"] + [("ties", TIES, 2)]:
        with ob.case(f"forward: {name}"):
            x = Variable(data.copy(), requires_grad=True)
            ob.put("output", data_of(MaxPool.apply(x, k)))
    for name, data, k, g in inputs["backward"]:
        with ob.case(f"backward: {name}"):
            _run(ob, MaxPool, Variable, data, k, g)
    with ob.case(TIES_CASE):
        _run(ob, MaxPool, Variable, TIES, 2, TIES_GRAD)
    with ob.case(FD_CASE):
        data = inputs["fd"]
        _run(ob, MaxPool, Variable, data, 2, inputs["fd grad"])
        outputs = []
        for i in np.ndindex(data.shape):
            for step in (_EPS, -_EPS):
                moved = data.copy()
                moved[i] += step
                outputs.append(data_of(MaxPool.apply(Variable(moved), 2)))
        ob.put("outputs", outputs)


def judge(ck: Checker, obs: Observations) -> None:
    from autograd_lab.kernels.pool import max_pool2d_fwd_ref
    inputs = cases(obs.seed, obs.hidden)
    parts = Parts(ck, PARTS)
    with parts.part("forward"):
        for name, data, k in inputs["inputs"] + [("ties", TIES, 2)]:
            title = f"forward: {name}"
            with ck.case(title):
                got = obs.case(ck, title, what="your MaxPool")["output"]
                expected, _ = max_pool2d_fwd_ref(data, k, k)
                ck.check(np.shape(got) == expected.shape, f"the output has shape "
                         f"{np.shape(got)}, expected {expected.shape}.", hint=HINTS["pool.shape"])
                ck.close(got, expected, what="forward output", hint=HINTS["pool.forward"])
    with parts.part("backward"):
        for name, data, k, g in inputs["backward"]:
            title = f"backward: {name}"
            with ck.case(title):
                _judge_grad(ck, obs, title, _pool_grad(data, k, g))
        with ck.case(TIES_CASE):
            _judge_grad(ck, obs, TIES_CASE, _pool_grad(TIES, 2, TIES_GRAD),
                        mistakes=[(_tie_mask(), HINTS["pool.ties"])])
        with ck.case(FD_CASE):
            _judge_fd(ck, obs, inputs["fd"], inputs["fd grad"])
    parts.done()


def _pool_grad(x: np.ndarray, k: int, g: np.ndarray) -> np.ndarray:
    from autograd_lab.kernels.pool import max_pool2d_bwd_ref, max_pool2d_fwd_ref
    _, idx = max_pool2d_fwd_ref(x, k, k)
    return max_pool2d_bwd_ref(g, idx, x.shape)


def _tie_mask() -> np.ndarray:
    """The gradient of the ties case when every maximum of a window gets it."""
    mask = np.zeros_like(TIES)
    for i in range(2):
        for j in range(2):
            win = TIES[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            mask[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = (win == win.max()) * TIES_GRAD[0, 0, i, j]
    return mask


def _judge_grad(ck: Checker, obs: Observations, title: str, expected: np.ndarray,
                mistakes: list | None = None) -> Any:
    seen = obs.case(ck, title, what="your MaxPool", hint=HINTS["pool.backward"])
    ck.check(not seen["grad is None"], "x.grad is None after backward.",
             hint=HINTS["pool.backward"])
    ck.close(seen["grad"], expected, what="gradient of x", hint=HINTS["pool.backward"],
             mistakes=mistakes or [])
    return seen


def _judge_fd(ck: Checker, obs: Observations, data: np.ndarray, g: np.ndarray) -> None:
    """Central differences of sum(MaxPool(x) * g), from the learner's forward outputs, against
    the backward's gradient."""
    seen = obs.case(ck, FD_CASE, what="your MaxPool", hint=HINTS["pool.backward"])
    outputs = seen["outputs"]
    count = int(np.prod(data.shape))
    ck.check(isinstance(outputs, list) and len(outputs) == 2 * count,
             "the forward outputs of the moved inputs were not all observed.")
    ck.check(all(isinstance(v, np.ndarray) and v.shape == g.shape for v in outputs),
             f"the forward outputs of the moved inputs are not arrays of shape {g.shape}.",
             hint=HINTS["pool.shape"])
    numeric = np.zeros_like(data)
    for n, i in enumerate(np.ndindex(data.shape)):
        plus, minus = ((outputs[m].astype(np.float64) * g).sum() for m in (2 * n, 2 * n + 1))
        numeric[i] = (plus - minus) / (2 * _EPS)
    ck.check(not seen["grad is None"], "x.grad is None after backward.",
             hint=HINTS["pool.backward"])
    ck.close(seen["grad"], numeric, what="gradient of x against central differences",
             atol=1e-5, hint=HINTS["pool.backward"])
