"""Check ``predictions``: for each snippet name, True if it raises, False if it runs.

The snippets are judged together: a failure says how many predictions are wrong and explains
the rule behind the first wrong one, without confirming the others one by one.
"""
from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from .._common import Checker, library
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch06-predict-raises"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("b runs", ("b=True", "b=False"), None, "predict.rule.b"),
    Mistake("e raises", ("e=False", "e=True"), None, "predict.rule.e"),
    Mistake("h raises (a hidden snippet)", ("h=False", "h=True"), None, "predict.rule.h"),
    Mistake("a prediction left None", ("a=False, ", ""), None, "predict.bool"),
    Mistake("a string for a prediction", ("h=False)", "h='no')"), None, "predict.bool"),
)

# The snippets the learner predicts. The notebook shows exactly this code; the checker runs it
# to find the truth, so the answers come from the library itself, not from a table. None of
# them repeats a demo of the chapter: each applies one of its rules to a new case.
SNIPPETS: dict[str, str] = {
    "a": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        s = y.sum()
        y.add_(1)
        s.backward()
        """,
    "b": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.log()
        x.detach().mul_(2)
        y.sum().backward()
        """,
    "c": """\
        w = al.tensor([1.0, 2.0], requires_grad=True)
        with al.no_grad():
            with al.enable_grad():
                w.mul_(0.5)
        """,
    "d": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.clone()
        y[0] = 0.0
        (y * y).sum().backward()
        """,
    "e": """\
        x = al.tensor([0.5, -1.0], requires_grad=True)
        y = x.sigmoid()
        y.detach().clone().zero_()
        y.sum().backward()
        """,
    "f": """\
        x = al.tensor([1.0, 4.0], requires_grad=True)
        y = x.sqrt()
        y.mul_(1.0)
        y.sum().backward()
        """,
    "g": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        loss = (x * x).sum()
        with al.no_grad():
            x -= 0.1
        loss.backward()
        """,
    "h": """\
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = x.tanh()
        z = y.detach()
        z = z + 1
        y.sum().backward()
        """,
}
VISIBLE_SNIPPETS = ("a", "b", "c", "d", "e", "f")

RULES: dict[str, str] = {name: HINTS[f"predict.rule.{name}"] for name in SNIPPETS}
"""For a wrong prediction: the rule the snippet hits, as a question to ask of it."""

C_INPUT = "predictions is a dict with a True/False for every snippet"


def snippet_raises(code: str) -> bool:
    """Run one snippet (with ``al`` and ``np`` defined) and say whether it raised."""
    namespace: dict[str, Any] = {"al": library(), "np": np}
    try:
        exec(textwrap.dedent(code), namespace)  # noqa: S102 - our own fixed snippets
    except Exception:
        return True
    return False


def _verdict(raises: bool) -> str:
    return "raises" if raises else "runs"


def observe(ob: Observer, predictions: Any, *, seed: int, hidden: bool) -> None:
    with ob.case(C_INPUT):
        ob.put("type", type(predictions).__name__)
        is_dict = ob.put("is a dict", isinstance(predictions, dict))
        if is_dict:
            for name in SNIPPETS:
                if ob.put(f"has {name}", name in predictions):
                    value = predictions[name]
                    ob.put(f"{name} is a bool", isinstance(value, (bool, np.bool_)))
                    ob.put(f"{name}", value)


def _groups(hidden: bool) -> list[list[str]]:
    groups = [list(VISIBLE_SNIPPETS)]
    if hidden:
        groups.append([n for n in SNIPPETS if n not in VISIBLE_SNIPPETS])
    return groups


def judge(ck: Checker, obs: Observations) -> None:
    predictions: dict[str, bool] = {}
    with ck.case(C_INPUT):
        seen = obs.case(ck, C_INPUT, what="your predictions")
        ck.check(seen["is a dict"] is True, "predictions is not a dict.",
                 expected='a dict like {"a": True, "b": False, ...}', received=seen["type"],
                 hint=HINTS["predict.dict"])
        for name in SNIPPETS:
            ck.check(seen[f"has {name}"] is True, f"there is no prediction for snippet {name!r}.",
                     hint=HINTS["predict.fill"].format(name=name))
            value = seen[name]
            ck.check(seen[f"{name} is a bool"] is True,
                     f"the prediction for snippet {name!r} is not True or False.",
                     expected="True (it raises) or False (it runs)", received=value,
                     hint=HINTS["predict.bool"])
            predictions[name] = bool(value)
    for names in _groups(obs.hidden):
        span = f"{', '.join(names[:-1])} and {names[-1]}"
        with ck.case(f"snippets {span}"):
            wrong = [n for n in names if predictions[n] != snippet_raises(SNIPPETS[n])]
            if wrong:
                first = wrong[0]
                said = predictions[first]
                others = len(wrong) - 1
                more = (f" {others} more of snippets {span} "
                        f"{'is' if others == 1 else 'are'} wrong too." if others else
                        " It is the only wrong one among these.")
                ck.fail(f"{len(wrong)} of {len(names)} predictions are wrong. Snippet {first}: "
                        f"you predicted that it {_verdict(said)}, but it "
                        f"{_verdict(not said)}.{more}",
                        hint=f"{RULES[first]} {HINTS['predict.ask']}")
    if not obs.hidden:
        rest = [n for n in SNIPPETS if n not in VISIBLE_SNIPPETS]
        print(f"(Snippets {', '.join(rest)} are checked when the notebook is graded.)")
    ck.done()
