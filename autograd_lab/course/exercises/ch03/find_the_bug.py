"""Check the fixed old-style ReLU: its backward masks with the *saved* input, so the
gradient is right whether or not a global named ``input`` exists (and whatever it holds)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._functions import course_apply, course_ops, function_of, reference_apply
from .._observe import Case, Observations, Observer, Raised
from ._note import note_apply
from ._shared import apply_and_backward, array_or_type, judge_backward, judge_node, \
    judge_setup, setup
from .messages import HINTS

ID = "ch03-find-the-bug"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("the bug left in", ("grad_input[input_ < 0] = 0", "grad_input[input < 0] = 0"),
            None, "find.input-builtin"),
    Mistake("grad_output zeroed in place", ("        grad_input = grad_output.clone()\n",
                                            "        grad_input = grad_output\n"), None,
            "find.grad-output-changed"),
    Mistake("the mask from the clone", ("grad_input[input_ < 0] = 0",
                                        "grad_input[grad_input < 0] = 0"), None,
            "find.through-other"),
    Mistake("everything zeroed", ("grad_input[input_ < 0] = 0", "grad_input[input_ < 1e9] = 0"),
            None, "find.zeros-other"),
)

C_SOURCE = "the source of backward"
_MISSING = object()
_DECOYS = (("no global named input (input is Python's built-in function)", None),
           ("a global input of ones", 1.0), ("a global input of minus ones", -1.0))


def cases(seed: int, hidden: bool) -> list[tuple[str, float | None, np.ndarray, np.ndarray]]:
    """(title, the global input's value or None, x, grad_output): the same from the same seed,
    wherever run."""
    rng = np.random.default_rng(seed)
    found = []
    for shape in [(5,), (2, 3)] + ([(4, 2, 2)] if hidden else []):
        for label, decoy in _DECOYS:
            raw = rng.normal(size=shape)
            data = np.round(np.where(np.abs(raw) < 0.1, 0.5, raw), 4)
            g = np.round(rng.uniform(0.5, 2.0, size=shape), 3)
            found.append((f"{shape} input, {label}", decoy, data, g))
    return found


def _reads_global_input(cls: type[Any]) -> bool:
    """Whether cls.backward looks up a global (or built-in) named ``input``."""
    code = getattr(function_of(cls, "backward"), "__code__", None)
    return code is not None and "input" in code.co_names


@contextlib.contextmanager
def _global_input(ns: dict[str, Any], value: Any) -> Iterator[None]:
    """Run with ``input`` in ``ns`` set to ``value`` (or absent), then put back what was there."""
    before = ns.get("input", _MISSING)
    if value is _MISSING:
        ns.pop("input", None)
    else:
        ns["input"] = value
    try:
        yield
    finally:
        if before is _MISSING:
            ns.pop("input", None)
        else:
            ns["input"] = before


def observe(ob: Observer, FixedReLU: type[Any], *, seed: int, hidden: bool) -> None:
    ns = setup(ob, FixedReLU, "backward", ("Variable",), ((FixedReLU, "FixedReLU"),))
    if ns is None:
        return
    with ob.case(C_SOURCE):
        ob.put("reads input", _reads_global_input(FixedReLU))
    Variable = ns["Variable"]
    apply = reference_apply(FixedReLU, ns)
    note_apply(ns)
    with course_ops(ns), course_apply(FixedReLU, ns):
        for title, decoy, data, g in cases(seed, hidden):
            with ob.case(title):
                grad_output = Variable(g.copy())
                value = _MISSING if decoy is None else Variable(np.full(data.shape, decoy))
                with _global_input(ns, value):
                    apply_and_backward(ob, apply, FixedReLU, Variable,
                                       (Variable(data.copy(), requires_grad=True),), grad_output)
                ob.put("grad_output after", array_or_type(grad_output.data))


def judge(ck: Checker, obs: Observations) -> None:
    judge_setup(ck, obs, "backward", HINTS, ("FixedReLU",))
    reads = obs.case(ck, C_SOURCE)["reads input"]
    for title, _, data, g in cases(obs.seed, obs.hidden):
        with ck.case(title):
            _judge_case(ck, obs.case(ck, title, what="your FixedReLU"), reads, data, g)
    ck.done()


def _judge_case(ck: Checker, seen: Case, reads: bool, data: np.ndarray, g: np.ndarray) -> None:
    judge_node(ck, seen, "FixedReLU", HINTS)
    err = seen["backward raised"]
    if isinstance(err, Raised) and err.is_a("TypeError") and reads:
        ck.fail(f"FixedReLU.backward raised TypeError: {err.message}",
                hint=HINTS["find.input-builtin"])
    grads = judge_backward(ck, seen, "FixedReLU", "input_", HINTS)
    after = seen["grad_output after"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, g),
             "backward changed grad_output in place.", expected=g, received=after,
             hint=HINTS["find.grad-output-changed"])
    ck.check(len(grads) >= 1 and grads[0] is not None, "FixedReLU.backward returned no "
             "gradient for x.", hint=HINTS["by-hand.no-gradient"])
    source = "global" if reads else "other"
    ck.close(np.asarray(grads[0]["data"], dtype=float), g * (data > 0),
             what="gradient of the input",
             mistakes=[(g, HINTS[f"find.through-{source}"]),
                       (np.zeros_like(g), HINTS[f"find.zeros-{source}"])],
             hint=HINTS["find.gradient"])
