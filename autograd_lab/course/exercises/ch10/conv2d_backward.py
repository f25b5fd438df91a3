"""Check ``conv2d_backward(grad, x, weight, stride=1, padding=0) -> (dx, dweight, dbias)``
on numpy arrays, against the gradients of ``F.conv2d``. Each of dx, dweight and dbias is a
part of its own (it earns its share of the points alone)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, data_of
from .._exercise import Mistake
from .._observe import Observations, Observer
from .._parts import Parts
from ._shared import conv_cases, conv_output_shape, what_raised
from .messages import HINTS

ID = "ch10-conv2d-backward"
PARTS = ("dx", "dweight", "dbias")

_RETURN = "return dxp[:, :, padding:padding + h, padding:padding + w], dweight, dbias"
MISTAKES = (
    Mistake("dbias averaged", ("dbias = grad.sum(axis=(0, 2, 3))",
                               "dbias = grad.mean(axis=(0, 2, 3))"), "dbias",
            "backward.dbias-mean"),
    Mistake("dweight flipped", (_RETURN, "return dxp[:, :, padding:padding + h, padding:padding "
                                         "+ w], dweight[:, :, ::-1, ::-1], dbias"), "dweight",
            "backward.dweight-flipped"),
    Mistake("the padding kept on dx", (_RETURN, "return dxp, dweight, dbias"), "dx", "backward.dx"),
    Mistake("dx assigned, not added", ("dxp[:, :, rows, cols] += ", "dxp[:, :, rows, cols] = "),
            "dx", "backward.dx"),
    Mistake("two arrays returned", (_RETURN, "return dxp[:, :, padding:padding + h, "
                                             "padding:padding + w], dweight"), PARTS,
            "backward.three"),
)

_NAMES = ("dx", "dweight", "dbias")


def cases(seed: int, hidden: bool) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, int,
                                                  int]]:
    """(name, x, weight, grad, stride, padding) of every case."""
    rng = np.random.default_rng(seed)
    found = []
    for name, xs, ws, s, p in conv_cases(rng, hidden):
        x = np.round(rng.normal(size=xs), 3)
        w = np.round(rng.normal(size=ws), 3)
        g = np.round(rng.normal(size=conv_output_shape(xs, ws, s, p)), 3)
        found.append((name, x, w, g, s, p))
    return found


def observe(ob: Observer, conv2d_backward: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    for name, x, w, g, s, p in cases(seed, hidden):
        with ob.case(name):
            got = conv2d_backward(g.copy(), x.copy(), w.copy(), stride=s, padding=p)
            ob.put("kind", type(got).__name__)
            triple = isinstance(got, (tuple, list)) and len(got) == 3
            ob.put("length", len(got) if isinstance(got, (tuple, list)) else None)
            if triple:
                for key, value in zip(_NAMES, got):
                    ob.put(key, data_of(value))


def judge(ck: Checker, obs: Observations) -> None:
    from autograd_lab.kernels.conv import conv2d_bwd_ref
    parts = Parts(ck, PARTS)
    inputs = cases(obs.seed, obs.hidden)
    for part in ("dbias", "dweight", "dx"):
        with parts.part(part):
            for name, x, w, g, s, p in inputs:
                with ck.case(f"{part}: {name}"):
                    seen = obs.case(ck, name, what=what_raised(obs, name, "your conv2d_backward"))
                    ck.check(seen["length"] == 3,
                             "conv2d_backward should return three arrays (dx, dweight, dbias).",
                             received=_returned(seen["kind"], seen["length"]),
                             hint=HINTS["backward.three"])
                    expected = conv2d_bwd_ref(g, x, w, s, p)
                    _judge_part(ck, part, seen[part], expected, g, x)
    parts.done()


def _returned(kind: str, length: int | None) -> str:
    return f"a {kind}" + ("" if length is None else f" of {length} items")


def _judge_part(ck: Checker, part: str, value: Any, expected: tuple, g: np.ndarray,
                x: np.ndarray) -> None:
    if part == "dbias":
        ck.close(value, expected[2], atol=1e-9, what="dbias", hint=HINTS["backward.dbias"],
                 mistakes=[(g.mean(axis=(0, 2, 3)), HINTS["backward.dbias-mean"])])
    elif part == "dweight":
        ck.close(value, expected[1], atol=1e-9, what="dweight", hint=HINTS["backward.dweight"],
                 mistakes=[(expected[1][:, :, ::-1, ::-1], HINTS["backward.dweight-flipped"])])
    else:
        if value is not None and np.shape(value) != x.shape:
            ck.fail(f"dx has shape {np.shape(value)}, expected the input's shape {x.shape}.",
                    hint=HINTS["backward.dx"])
        ck.close(value, expected[0], atol=1e-9, what="dx", hint=HINTS["backward.dx"])
