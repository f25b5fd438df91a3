"""Check ``conv2d_forward(x, weight, bias, stride=1, padding=0)`` on numpy arrays: x
(N, C_in, H, W), weight (C_out, C_in, kh, kw), bias (C_out,) -> (N, C_out, H_out, W_out),
the cross-correlation that ``F.conv2d`` computes."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._parts import Parts
from ._shared import conv_cases, conv_ref, course_output_size
from .messages import HINTS

ID = "ch10-conv2d-forward"
PARTS = ("output with bias", "bias=None")

_RETURN = "return out if bias is None else out + bias[None, :, None, None]"
_LOOP = 'out += np.einsum("ncij,oc->noij", patch, weight[:, :, di, dj])'
MISTAKES = (
    Mistake("a flipped kernel", (_LOOP, 'out += np.einsum("ncij,oc->noij", patch, '
                                        'weight[:, :, kh - 1 - di, kw - 1 - dj])'),
            PARTS, "forward.flipped"),
    Mistake("no bias", (_RETURN, "return out"), PARTS[0], "forward.no-bias"),
    Mistake("the bias added always", (_RETURN, "return out + bias[None, :, None, None]"),
            PARTS[1], "forward.bias-none"),
    Mistake("a bias of ones where none is given",
            (_RETURN, "return out + (1 if bias is None else bias[None, :, None, None])"),
            PARTS[1], "forward.bias-none-values"),
    Mistake("the output transposed", (_RETURN, "out = out.transpose(0, 1, 3, 2)\n    " + _RETURN),
            PARTS, "forward.output-swapped"),
    Mistake("writes into x", ("xp = np.pad(", "x[...] = 0\n    xp = np.pad("), PARTS,
            "forward.changed-input"),
)

BIAS_NONE = "bias=None: nothing is added"


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, int,
                                                  int]]:
    """(name, x, weight, bias, stride, padding) of the cases with a bias."""
    rng = np.random.default_rng(seed)
    found = []
    for name, xs, ws, s, p in conv_cases(rng, hidden):
        x = np.round(rng.normal(size=xs), 3)
        w = np.round(rng.normal(size=ws), 3)
        b = np.round(rng.normal(size=ws[0]), 3)
        found.append((name, x, w, b, s, p))
    return found


def no_bias_case(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x and weight of the bias=None case (its own generator: the same whatever else ran)."""
    rng = np.random.default_rng(seed + 1000)
    return np.round(rng.normal(size=(2, 2, 5, 5)), 3), np.round(rng.normal(size=(3, 2, 3, 3)), 3)


def _stage(conv2d_forward: Any) -> dict[str, Any]:
    """The globals the learner's function runs in, given the course's output_size for the call
    (a wrong output_size costs its own exercise only)."""
    ns = getattr(conv2d_forward, "__globals__", None)
    return ns if isinstance(ns, dict) and "output_size" in ns else {}


def observe(ob: Observer, conv2d_forward: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    with course_output_size(_stage(conv2d_forward)):
        for name, x, w, b, s, p in cases(seed, hidden):
            with ob.case(name):
                args = (x.copy(), w.copy(), b.copy())
                ob.put("output", data_of(conv2d_forward(*args, stride=s, padding=p)))
                ob.put("x after", args[0])
                ob.put("weight after", args[1])
        x, w = no_bias_case(seed)
        with ob.case(BIAS_NONE):
            ob.put("output", data_of(conv2d_forward(x.copy(), w.copy(), None, stride=1,
                                                    padding=1)))


def judge(ck: Checker, obs: Observations) -> None:
    parts = Parts(ck, PARTS)
    with parts.part(PARTS[0]):
        for name, x, w, b, s, p in cases(obs.seed, obs.hidden):
            with ck.case(name):
                seen = obs.case(ck, name, what="your conv2d_forward")
                got = seen["output"]
                x_after, w_after = seen["x after"], seen["weight after"]
                ck.check(_same(x_after, x) and _same(w_after, w),
                         "your conv2d_forward changed x or weight.",
                         hint=HINTS["forward.changed-input"])
                ck.close(got, conv_ref(x, w, b, s, p), atol=1e-9, what="output",
                         hint=HINTS["forward.formula"], mistakes=_mistakes(x, w, b, s, p))
    with parts.part(PARTS[1]):
        x, w = no_bias_case(obs.seed)
        with ck.case(BIAS_NONE):
            got = obs.case(ck, BIAS_NONE, what="your conv2d_forward",
                           hint=HINTS["forward.bias-none"])["output"]
            ck.close(got, conv_ref(x, w, None, 1, 1), atol=1e-9, what="output without bias",
                     hint=HINTS["forward.bias-none-values"])
    parts.done()


def _same(after: Any, before: np.ndarray) -> bool:
    return isinstance(after, np.ndarray) and np.array_equal(after, before)


def _mistakes(x: np.ndarray, w: np.ndarray, b: np.ndarray, s: int,
              p: int) -> list[tuple[np.ndarray, str]]:
    expected = conv_ref(x, w, b, s, p)
    found = [(conv_ref(x, w[:, :, ::-1, ::-1], b, s, p), HINTS["forward.flipped"]),
             (conv_ref(x, w, None, s, p), HINTS["forward.no-bias"])]
    if w.shape[2] == w.shape[3]:
        found.append((conv_ref(x, w.transpose(0, 1, 3, 2), b, s, p),
                      HINTS["forward.kernel-swapped"]))
    if expected.shape[2] == expected.shape[3]:
        found.append((expected.transpose(0, 1, 3, 2), HINTS["forward.output-swapped"]))
    return found
