"""Check ``split_heads(x, n_heads)``: (B, T, D) → (B, H, T, D/H), head h holding features
h·D/H … (h+1)·D/H − 1 of every token, and ``merge_heads(x)``, its inverse; both recorded, so
gradients flow back through them."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker, format_value
from .._exercise import Mistake
from .._observe import Case, Observations, Observer, Raised
from . import _shared as sh
from .messages import HINTS

ID = "ch13-heads"
PARTS: tuple[str, ...] = ()

_SPLIT = "return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)"
MISTAKES = (
    Mistake("split without the transpose", (_SPLIT, "return x.reshape(B, n_heads, T, D // n_heads)"),
            None, "heads.split"),
    Mistake("features the wrong way round",
            (_SPLIT, "return x.reshape(B, T, D // n_heads, n_heads).transpose(1, 3).transpose(2, 3)"),
            None, "heads.split"),
    Mistake("merge without the transpose", ("return x.transpose(1, 2).reshape(B, T, H * d)",
                                            "return x.reshape(B, T, H * d)"), None, "heads.merge"),
    Mistake("split with numpy", (_SPLIT, "return Variable(x.data.reshape(B, T, n_heads, "
                                         "D // n_heads).transpose(0, 2, 1, 3))"), None,
            "heads.graph"),
)

UNEVEN = "D not divisible by the number of heads raises ValueError"


def cases(seed: int, hidden: bool) -> list[tuple[str, int, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, heads, x, the heads merged, grad_output of the split): the same from the seed."""
    rng = np.random.default_rng(seed)
    configs = [(2, 3, 8, 2), (1, 5, 6, 3)] + ([(3, 2, 4, 4), (2, 4, 6, 1)] if hidden else [])
    found = []
    for b, t, d, h in configs:
        x = np.round(rng.normal(size=(b, t, d)), 3)
        y = np.round(rng.normal(size=(b, h, t, d // h)), 3)
        g = np.round(rng.uniform(-1, 1, size=(b, h, t, d // h)), 3)
        found.append((f"x of shape ({b}, {t}, {d}), {h} head{'s' if h > 1 else ''}: split, merge, "
                      "gradients", h, x, y, g))
    return found


def observe(ob: Observer, split_heads: Callable[..., Any], merge_heads: Callable[..., Any],
            pkg: Any = None, *, seed: int, hidden: bool) -> None:
    if not sh.observe_pkg(ob, pkg):
        return
    for name, h, x, y, g in cases(seed, hidden):
        with ob.case(name):
            xs = pkg.Variable(x.copy(), requires_grad=True)
            parts = ob.attempt("split raised", split_heads, xs, h)
            sh.put_data(ob, "split", parts)
            merged = ob.attempt("merge raised", merge_heads,
                                pkg.Variable(y.copy(), requires_grad=True))
            sh.put_data(ob, "merge", merged)
            if parts is None:
                continue
            sh.put_data(ob, "back", ob.attempt("back raised", merge_heads, parts))
            ob.put("in the graph", getattr(parts, "grad_fn", None) is not None)
            ob.put("split shown", format_value(parts))
            sh.backward(ob, "backward raised", parts, pkg.Variable(g))
            sh.put_grad(ob, "grad", xs)
    with ob.case(UNEVEN):
        result = ob.attempt("raised", split_heads, pkg.Variable(np.zeros((1, 2, 6))), 4)
        ob.put("returned", format_value(result))


def judge(ck: Checker, obs: Observations) -> None:
    sh.judge_pkg(ck, obs)
    for name, h, x, y, g in cases(obs.seed, obs.hidden):
        with ck.case(name):
            _judge_case(ck, obs.case(ck, name, what="your split_heads"), h, x, y, g)
    with ck.case(UNEVEN):
        seen = obs.case(ck, UNEVEN, what="your split_heads")
        _expect_value_error(ck, seen["raised"], seen["returned"])
    ck.done()


def _judge_case(ck: Checker, seen: Case, h: int, x: np.ndarray, y: np.ndarray,
                g: np.ndarray) -> None:
    b, t, d = x.shape
    want = x.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)
    sh.raised(ck, seen, "split raised", "your split_heads")
    ck.close(sh.data(ck, seen, "split", "split"), want, atol=0, what="split heads",
             hint=HINTS["heads.split"],
             mistakes=[(x.reshape(b, h, t, d // h), HINTS["heads.split"]),
                       (x.reshape(b, t, d // h, h).transpose(0, 3, 1, 2), HINTS["heads.split"])])
    sh.raised(ck, seen, "merge raised", "your merge_heads")
    ck.close(sh.data(ck, seen, "merge", "merge"), y.transpose(0, 2, 1, 3).reshape(b, t, d),
             atol=0, what="merged heads", hint=HINTS["heads.merge"],
             mistakes=[(y.reshape(b, t, d), HINTS["heads.merge"])])
    sh.raised(ck, seen, "back raised", "your merge_heads")
    ck.close(sh.data(ck, seen, "back", "merge_heads(split_heads(x))"), x, atol=0,
             what="merge_heads(split_heads(x, H))", hint=HINTS["heads.merge"])
    ck.check(seen["in the graph"] is True, "split_heads' result is not in the graph (it has no "
             "grad_fn), so no gradient can reach x.", received=seen["split shown"],
             hint=HINTS["heads.graph"])
    sh.raised(ck, seen, "backward raised", "your backward")
    ck.close(sh.grad(ck, seen, "grad", "x", HINTS["heads.recorded"]),
             g.transpose(0, 2, 1, 3).reshape(b, t, d), atol=0, what="gradient of x",
             hint=HINTS["heads.split"])


def _expect_value_error(ck: Checker, err: Any, returned: Any) -> None:
    hint = HINTS["heads.divisible"]
    if err is None:
        ck.fail("your split_heads did not raise.", expected="ValueError",
                received=f"it returned {returned}", hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError"):
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a("ValueError"):
        ck.fail("your split_heads raised the wrong kind of error.", expected="ValueError",
                received=f"{err.name}: {err.message}", hint=hint)
