"""Check Sequential: ``Sequential(m0, m1, ...)`` registers its modules under the names
``"0"``, ``"1"``, ... (through Module's ``__setattr__``); ``forward(x)`` feeds ``x`` through
them in that order, each module getting the previous one's output; ``len`` and ``[i]``
give the number of modules and the i-th one.

The modules fed in are small ``Module`` subclasses (of the learner's given ``Module``)
whose effect is known, so only Sequential's own lines are exercised."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker, data_of, shaped_mistakes
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import call, case, class_name, put_class_name, seen
from .messages import HINTS

ID = "ch08-sequential"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("reverse order", ("for m in self._modules.values():",
                              "for m in reversed(list(self._modules.values())):"), None,
            "seq.reverse"),
    Mistake("each module on the input", ("            x = m(x)\n        return x",
                                         "            y = m(x)\n        return y"), None,
            "seq.last"),
    Mistake("modules kept in a list", ("setattr(self, str(i), m)",
                                       "self.__dict__.setdefault('layers', []).append(m)"),
            None, "seq.register-list"),
    Mistake("named from 1", ("setattr(self, str(i), m)", "setattr(self, str(i + 1), m)"), None,
            "seq.register-name"),
)

def _indices(n: int) -> tuple[int, ...]:
    return (0, n - 1, -1)


def cases(seed: int, hidden: bool) -> tuple[int, list[tuple[float, float]], np.ndarray]:
    """(n, the modules' (a, b), the forward input): the same from the same seed."""
    rng = np.random.default_rng(seed)
    n = 3 if not hidden else 4
    coeffs = [(float(rng.integers(2, 5)), float(rng.integers(1, 9))) for _ in range(n)]
    x = np.round(rng.normal(size=(2, 3)), 3)
    return n, coeffs, x


def _titles(name: str, n: int) -> tuple[str, str, str]:
    return (f"{name}(m0, ..., m{n - 1}) registers them as '0', '1', ...",
            "forward feeds each module the previous one's output, in order",
            "len() and indexing")


def observe(ob: Observer, MySequential: type[Any], Module: type[Any], *, seed: int,
            hidden: bool) -> None:
    class Affine(Module):
        def __init__(self, a: float, b: float) -> None:
            super().__init__()
            self.a, self.b = a, b

        def forward(self, x: Any) -> Any:
            return x * self.a + self.b

    n, coeffs, x = cases(seed, hidden)
    first, second, third = _titles(MySequential.__name__, n)
    layers = [Affine(a, b) for a, b in coeffs]
    seq = None
    put_class_name(ob, MySequential)
    with case(ob, first):
        seq = call(ob, "build", lambda: MySequential(*layers))
        modules = call(ob, "named_modules", lambda: list(seq.named_modules()))[1:]
        ob.put("names", [name for name, _ in modules])
        ob.put("same", [m is layers[i] for i, (_, m) in enumerate(modules)
                        if i < len(layers)] + [False] * max(0, len(modules) - len(layers)))
    if seq is None:
        return
    with case(ob, second):
        got = call(ob, "forward", seq, x)
        ob.put("output", data_of(got))
    with case(ob, third):
        ob.put("len", call(ob, "len", lambda: len(seq)))
        for i in _indices(n):
            ob.put(f"seq[{i}] is module {i}", call(ob, f"seq[{i}]", lambda: seq[i]) is layers[i])


def judge(ck: Checker, obs: Observations) -> None:
    n, coeffs, x = cases(obs.seed, obs.hidden)
    name = "Sequential"
    first, second, third = _titles(name, n)
    first = _titles(class_name(ck, obs, name), n)[0]
    with ck.case(first):
        got = seen(ck, obs, first)
        got.called("build", f"your {first.partition('(')[0]}", HINTS["seq.init"])
        got.called("named_modules", "your named_modules")
        names = got["names"]
        want = [str(i) for i in range(n)]
        ck.check(names == want, "the modules are not registered under '0', '1', ...",
                 expected=want, received=names,
                 hint=HINTS["seq.register-list" if not names else "seq.register-name"])
        ck.check(all(got["same"]), "the registered modules are not the ones passed in.",
                 hint=HINTS["seq.same"])
    with ck.case(second):
        got = seen(ck, obs, second)
        got.called("forward", "your Sequential's forward")
        want_out = x.copy()
        for a, b in coeffs:
            want_out = want_out * a + b
        reverse = x.copy()
        for a, b in reversed(coeffs):
            reverse = reverse * a + b
        last = x * coeffs[-1][0] + coeffs[-1][1]
        ck.close(got["output"], want_out, what="output", hint=HINTS["seq.forward"],
                 mistakes=shaped_mistakes(want_out.shape,
                                          (lambda: reverse, HINTS["seq.reverse"]),
                                          (lambda: last, HINTS["seq.last"])))
    with ck.case(third):
        got = seen(ck, obs, third)
        got.called("len", "your __len__")
        ck.check(got["len"] == n, "len() is not the number of modules.", expected=n,
                 received=got["len"], hint=HINTS["seq.len"])
        for i in _indices(n):
            got.called(f"seq[{i}]", "your __getitem__", f"seq[{i}] raised. " + HINTS["seq.index"])
            ck.check(got[f"seq[{i}] is module {i}"] is True, f"seq[{i}] is not module {i}.",
                     hint=HINTS["seq.index"])
    ck.done()
