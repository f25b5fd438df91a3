"""Check ``attend(q, k, v, causal=False) -> (output, weights)`` on Variables of shape
(..., T, d): softmax(q kᵀ/√d) v, with future keys given exactly zero weight when ``causal``;
gradients of q, k and v as autograd_lab's F.scaled_dot_product_attention, never NaN."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import functional as F
from autograd_lab import tensor
from .._common import Checker, grad_data
from .._exercise import Mistake
from .._observe import Case, Observations, Observer, Raised, raise_learner_error
from . import _shared as sh
from .messages import HINTS

ID = "ch13-attention"
PARTS: tuple[str, ...] = ()

_SCORES = "scores = bmm(q, k.transpose(-1, -2)) * (1.0 / np.sqrt(d))"
MISTAKES = (
    Mistake("scaled by 1/d", ("* (1.0 / np.sqrt(d))", "* (1.0 / d)"), None, "attn.scale"),
    Mistake("not scaled", (_SCORES, "scores = bmm(q, k.transpose(-1, -2))"), None, "attn.scale"),
    Mistake("softmax over the queries", ("Softmax.apply(scores, -1)", "Softmax.apply(scores, -2)"),
            None, "attn.axis"),
    Mistake("the upper triangle", ("allowed = np.tril(", "allowed = np.triu("), None,
            "attn.triangle"),
    Mistake("only the output", ("return bmm(weights, v), weights", "return bmm(weights, v)"),
            None, "attn.pair"),
)

LARGE = "large scores: no overflow, masked weights exactly 0, no NaN"


def cases(seed: int, hidden: bool) -> dict[str, Any]:
    """Every input of the cases: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    configs = [((5, 4), False), ((2, 5, 4), True), ((2, 3, 6, 8), True)]
    if hidden:
        configs += [((1, 7, 2), True), ((3, 4, 3), False)]
    shaped = []
    for shape, causal in configs:
        q, k, v = (np.round(rng.normal(size=shape), 3) for _ in range(3))
        g = np.round(rng.uniform(-1, 1, size=shape), 3)
        shaped.append((f"q, k, v of shape {shape}, causal={causal}: output, weights, gradients",
                       causal, q, k, v, g))
    large = tuple(rng.normal(size=(4, 3)) * 40 for _ in range(3))
    return {"shaped": shaped, "large": large}


def observe(ob: Observer, attend: Callable[..., Any], pkg: Any = None, *, seed: int,
            hidden: bool) -> None:
    if not sh.observe_pkg(ob, pkg):
        return
    inputs = cases(seed, hidden)
    for name, causal, q, k, v, g in inputs["shaped"]:
        with ob.case(name):
            qs, ks, vs = (pkg.Variable(a.copy(), requires_grad=True) for a in (q, k, v))
            result = attend(qs, ks, vs, causal=causal)
            pair = isinstance(result, tuple) and len(result) == 2
            ob.put("a pair", pair)
            ob.put("type", type(result).__name__)
            if not pair:
                continue
            out, weights = result
            sh.put_data(ob, "weights", weights)
            if sh.put_data(ob, "output", out):
                sh.backward(ob, "backward raised", out, pkg.Variable(g))
                for key, var in zip("qkv", (qs, ks, vs)):
                    sh.put_grad(ob, key, var)
    with ob.case(LARGE):
        q, k, v = inputs["large"]
        qs = pkg.Variable(q.copy(), requires_grad=True)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            result = ob.attempt("raised", _large, attend, pkg, qs, pkg.Variable(k),
                                pkg.Variable(v))
        if result is not None:
            sh.put_data(ob, "output", result[0])
            sh.put_data(ob, "weights", result[1])
            sh.put_grad(ob, "q", qs)


def _large(attend: Callable[..., Any], pkg: Any, q: Any, k: Any, v: Any) -> tuple[Any, Any]:
    out, w = attend(q, k, v, causal=True)
    out.backward(pkg.Variable(np.ones(out.shape)))
    return out, w


def judge(ck: Checker, obs: Observations) -> None:
    sh.judge_pkg(ck, obs)
    inputs = cases(obs.seed, obs.hidden)
    for name, causal, q, k, v, g in inputs["shaped"]:
        with ck.case(name):
            _judge_shaped(ck, obs.case(ck, name, what="your attend"), causal, q, k, v, g)
    with ck.case(LARGE):
        seen = obs.case(ck, LARGE, what="your attend")
        err = seen["raised"]
        if isinstance(err, Raised):
            if err.is_a("FloatingPointError"):
                ck.fail(f"numpy raised {err.message}.", hint=HINTS["attn.overflow"])
            raise_learner_error(ck, err, "your attend")
        q, k, v = inputs["large"]
        ck.close(sh.data(ck, seen, "output", "output"), reference(q, k, v, True)[0], atol=1e-8,
                 what="output", hint=HINTS["attn.after"])
        ck.check(bool(np.all(np.triu(sh.data(ck, seen, "weights", "weights"), 1) == 0.0)),
                 "a masked weight is not exactly 0.", hint=HINTS["attn.after"])
        ck.check(bool(np.all(np.isfinite(sh.grad(ck, seen, "q", "q", HINTS["attn.after"])))),
                 "the gradient of q holds NaN or inf.", hint=HINTS["attn.after"])
    ck.done()


def _judge_shaped(ck: Checker, seen: Case, causal: bool, q: np.ndarray, k: np.ndarray,
                  v: np.ndarray, g: np.ndarray) -> None:
    want, want_w = reference(q, k, v, causal)
    ck.check(seen["a pair"] is True, "attend should return two things, (output, weights).",
             received=seen["type"], hint=HINTS["attn.pair"])
    ck.close(sh.data(ck, seen, "output", "output"), want, atol=1e-9, what="output",
             hint=HINTS["attn.scale"], mistakes=_mistakes(q, k, v, causal))
    w = sh.data(ck, seen, "weights", "weights")
    ck.close(w, want_w, atol=1e-9, what="weights", hint=HINTS["attn.axis"])
    if causal:
        ck.check(bool(np.all(np.triu(w, 1) == 0.0)),
                 "a masked (future) position has a weight that is not exactly 0.",
                 hint=HINTS["attn.after"])
    sh.raised(ck, seen, "backward raised", "your backward")
    for name, ref in zip("qkv", _grads(q, k, v, causal, g)):
        got = sh.grad(ck, seen, name, name, HINTS["attn.recorded"])
        ck.check(bool(np.all(np.isfinite(got))), f"the gradient of {name} holds NaN or inf.",
                 hint=HINTS["attn.after"])
        ck.close(got, ref, atol=1e-8, what=f"gradient of {name}", hint=HINTS["attn.scale"])


def _softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False, *,
              scale: float | None = None, axis: int = -1, mask_after: bool = False,
              upper: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q kᵀ · scale + mask) v and its weights, in numpy; the keywords make the typical
    mistakes (another scale, the softmax's axis, masking after the softmax, the wrong triangle)."""
    d = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(d) if scale is None else scale)
    t_q, t_k = s.shape[-2:]
    allowed = np.triu(np.ones((t_q, t_k), bool)) if upper else np.tril(np.ones((t_q, t_k), bool))
    if causal and not mask_after:
        s = np.where(allowed, s, -np.inf)
    w = _softmax(s, axis)
    if causal and mask_after:
        w = w * allowed
    return w @ v, w


def _mistakes(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> list:
    d = q.shape[-1]
    out = [(reference(q, k, v, causal, scale=1 / d)[0], HINTS["attn.scale"]),
           (reference(q, k, v, causal, scale=1.0)[0], HINTS["attn.scale"]),
           (reference(q, k, v, causal, axis=-2)[0], HINTS["attn.axis"])]
    if causal:
        out += [(reference(q, k, v, True, mask_after=True)[0], HINTS["attn.after"]),
                (reference(q, k, v, True, upper=True)[0], HINTS["attn.triangle"])]
    return out


def _grads(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
           g: np.ndarray) -> tuple[np.ndarray, ...]:
    qs, ks, vs = (tensor(a, requires_grad=True) for a in (q, k, v))
    F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).backward(tensor(g))
    return grad_data(qs), grad_data(ks), grad_data(vs)
