"""Check ``output_requires_grad(inputs, grad_enabled=True)``: True exactly when grad mode is on
and at least one input is a Variable that requires grad (other inputs count as no)."""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import no_grad, tensor
from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch02-propagation-rule"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("all instead of any", ("any(", "all("), None, "rule.any"),
    Mistake("grad mode ignored", ("bool(grad_enabled) and ", ""), None, "rule.grad-mode"),
    Mistake("numbers and arrays crash", ('getattr(a, "requires_grad", False)', "a.requires_grad"),
            None, "rule.getattr"),
    Mistake("an int for the mode", ("bool(grad_enabled) and ", "int(grad_enabled) and "), None,
            "rule.bool"),
)


def cases(seed: int, hidden: bool) -> list[tuple[str, list, bool, bool, str]]:
    """(name, inputs, grad_enabled, expected, hint id): the same from the same seed."""
    rng = np.random.default_rng(seed)
    w = tensor(rng.normal(size=3), requires_grad=True)
    x = tensor(rng.normal(size=3))
    computed = w * 2.0
    with no_grad():
        frozen = w * 2.0
    duck = types.SimpleNamespace(requires_grad=True)
    found: list[tuple[str, list, bool, bool, str]] = [
        ("[w] with w.requires_grad=True", [w], True, True, "rule.one"),
        ("[x] with x.requires_grad=False", [x], True, False, "rule.none"),
        ("[x, w]: one of two inputs requires grad", [x, w], True, True, "rule.any"),
        ("[w, x]: the order does not matter", [w, x], True, True, "rule.every"),
        ("[w, x] with grad_enabled=False", [w, x], False, False, "rule.grad-mode"),
        ("[x, 3.0, an ndarray]: numbers and arrays never require grad",
         [x, 3.0, np.ones(2)], True, False, "rule.getattr"),
        ("[2.5, w]: a number next to a Variable that requires grad", [2.5, w], True, True,
         "rule.number"),
        ("[w * 2]: a computed Variable made from w requires grad", [computed], True, True,
         "rule.computed"),
        ("[]: no inputs", [], True, False, "rule.empty"),
    ]
    if hidden:
        found += [
            ("[w * 2 made under no_grad]", [frozen, x], True, False, "rule.frozen"),
            ("[any object with requires_grad=True]", [duck], True, True, "rule.duck"),
            ("five inputs, the last requires grad", [x, 1.0, x, np.zeros(1), w], True, True,
             "rule.all-inputs"),
        ]
    return found


def observe(ob: Observer, output_requires_grad: Callable[..., Any], *, seed: int,
            hidden: bool) -> None:
    for name, inputs, enabled, _, _ in cases(seed, hidden):
        with ob.case(name):
            ob.put("result", output_requires_grad(list(inputs), grad_enabled=enabled))


def judge(ck: Checker, obs: Observations) -> None:
    for name, _, _, want, hint_id in cases(obs.seed, obs.hidden):
        hint = HINTS[hint_id]
        with ck.case(name):
            got = obs.case(ck, name, what="your output_requires_grad", hint=hint)["result"]
            ck.check(isinstance(got, (bool, np.bool_)), "the result is not True or False.",
                     expected=want, received=got, hint=HINTS["rule.bool"])
            ck.check(bool(got) == want, f"returned {bool(got)}.", expected=want, received=got,
                     hint=hint)
    ck.done()
