"""Check Dropout (inverted dropout, as PyTorch): in training mode each element is zeroed
with probability ``p`` and the others are scaled by ``1 / (1 - p)``, as a differentiable
product (the gradient is the same mask and scale); ``p = 0`` and evaluation mode give the
input unchanged; ``p = 1`` gives zeros."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import call, case, class_name, put_class_name, seen, variable_class
from .messages import HINTS

ID = "ch08-dropout"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("keeps a fraction p", ("keep = _generator.random(x.shape) >= self.p",
                                   "keep = _generator.random(x.shape) < self.p"), None,
            "drop.keep-prob"),
    Mistake("no rescaling", ("Variable((keep / (1 - self.p)).astype(x.dtype))",
                             "Variable(keep.astype(x.dtype))"), None, "drop.scale-missing"),
    Mistake("scaled by 1 - p", ("Variable((keep / (1 - self.p)).astype(x.dtype))",
                                "Variable((keep * (1 - self.p)).astype(x.dtype))"), None,
            "drop.scale-wrong"),
    Mistake("computed on numpy", ("return x * Variable((keep / (1 - self.p)).astype(x.dtype))",
                                  "return Variable(x.data * (keep / (1 - self.p)))"), None,
            "drop.graph"),
    Mistake("eval mode ignored", ("if not self.training or self.p == 0:", "if self.p == 0:"),
            None, "drop.eval"),
)


def cases(seed: int, hidden: bool) -> tuple[list[tuple[float, np.ndarray]], np.ndarray]:
    """([(p, x) of the training cases], x of the evaluation case): the same from the seed."""
    rng = np.random.default_rng(seed)
    training = [(p, rng.uniform(1.0, 2.0, size=(200, 100)))
                for p in ((0.25, 0.5) if not hidden else (0.3, 0.7))]
    return training, rng.uniform(1.0, 2.0, size=(30, 20))


def _train_title(name: str, p: float) -> str:
    return (f"{name}({p}) in training mode: about {p:.0%} zeros, the rest scaled by "
            f"1/(1 - p) = {1 / (1 - p):.4g}; the gradient is the same")


def _eval_title(name: str) -> str:
    return f"{name}(p) in evaluation mode, and p = 0, give the input; p = 1 gives zeros"


def observe(ob: Observer, MyDropout: type[Any], *, seed: int, hidden: bool) -> None:
    # the Variable of the library the class (or the class it extends) was written with
    Variable = next((v for v in (variable_class(c) for c in MyDropout.__mro__[:-1])
                     if v is not library().Variable), library().Variable)
    name = MyDropout.__name__
    put_class_name(ob, MyDropout)
    training, x_eval = cases(seed, hidden)
    for p, data in training:
        with case(ob, _train_title(name, p)):
            drop = call(ob, "build", lambda: MyDropout(p))
            x = Variable(data, requires_grad=True)
            y = call(ob, "forward", drop, x)
            ob.put("output", data_of(y))
            ob.put("has grad_fn", getattr(y, "grad_fn", None) is not None)
            out = np.ones(np.shape(data_of(y)))
            call(ob, "backward", lambda: y.backward(Variable(out)))
            ob.put("x.grad", getattr(x.grad, "data", None))
    with case(ob, _eval_title(name)):
        x = Variable(x_eval)
        drop = call(ob, "build eval", lambda: MyDropout(0.5))
        call(ob, "eval", drop.eval)
        ob.put("eval", data_of(call(ob, "forward eval", drop, x)))
        for p in (0, 1):
            drop = call(ob, f"build {p}", lambda: MyDropout(float(p)))
            with np.errstate(divide="ignore", invalid="ignore"):  # 1/(1 - p) of a wrong answer
                ob.put(f"p = {p}", data_of(call(ob, f"forward {p}", drop, x)))


def judge(ck: Checker, obs: Observations) -> None:
    name = class_name(ck, obs, "Dropout")
    training, x_eval = cases(obs.seed, obs.hidden)
    for p, data in training:
        title = _train_title(name, p)
        with ck.case(title):
            got = seen(ck, obs, title)
            got.called("build", f"your {name}")
            got.called("forward", f"your {name}", HINTS["drop.recipe"])
            try:
                out = np.asarray(got["output"], dtype=np.float64)
            except (TypeError, ValueError):
                ck.fail("the output is not an array of numbers.", received=got["output"],
                        hint=HINTS["drop.recipe"])
            ck.check(out.shape == data.shape, f"the output has shape {out.shape}, expected "
                     f"{data.shape}.", hint=HINTS["drop.recipe"])
            kept = out != 0
            frac = 1 - kept.mean()
            ck.check(abs(frac - p) < 0.03, f"{frac:.1%} of the elements are zeroed, expected "
                     f"about {p:.0%}.", expected=p, received=round(float(frac), 4),
                     hint=(HINTS["drop.keep-prob"] if abs(frac - (1 - p)) < 0.03
                           else HINTS["drop.recipe"]))
            ratio = out[kept] / data[kept]
            ck.check(bool(np.allclose(ratio, 1 / (1 - p), rtol=1e-5)),
                     "the kept elements are not scaled by 1/(1 - p).",
                     expected=1 / (1 - p), received=float(np.median(ratio)),
                     hint=HINTS["drop.scale-missing" if np.allclose(ratio, 1.0)
                                else "drop.scale-wrong"] + HINTS["drop.recipe"])
            ck.check(got["has grad_fn"] is True,
                     "the output has no grad_fn: nothing was recorded for backward.",
                     hint=HINTS["drop.graph"])
            got.called("backward", "your backward")
            ck.close(got["x.grad"], kept / (1 - p), rtol=1e-5, atol=1e-6, what="x.grad",
                     hint=HINTS["drop.grad"])
    title = _eval_title(name)
    with ck.case(title):
        got = seen(ck, obs, title)
        got.called("build eval", f"your {name}")
        got.called("eval", "your eval")
        got.called("forward eval", f"your {name}")
        ck.close(got["eval"], x_eval, what="output in eval mode", hint=HINTS["drop.eval"])
        for p, want, hint in ((0, x_eval, "drop.p0"), (1, np.zeros(x_eval.shape), "drop.p1")):
            got.called(f"build {p}", f"your {name}")
            got.called(f"forward {p}", f"your {name}")
            ck.close(got[f"p = {p}"], want, what=f"output with p = {p}", hint=HINTS[hint])
    ck.done()
