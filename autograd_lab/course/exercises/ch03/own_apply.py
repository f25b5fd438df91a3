"""Check mygrad's ``Function.apply``: a new node ``cls.Node()`` is forward's ``ctx``;
``ctx.needs_input_grad`` has one bool per argument; forward runs with grad mode off (and
grad mode is restored, even if forward raises); a non-Variable result is wrapped; the node
is recorded as ``output.grad_fn`` (with ``ctx.inputs``) exactly when grad mode was on and
some input requires grad."""
from __future__ import annotations

from typing import Any


from .._common import Checker
from .._exercise import Mistake
from .._observe import Case, Observations, Observer, Raised
from . import _apply_probes as probes
from ._apply_probes import C_MODE, C_NEEDS, C_NODE, C_NO_GRAD, C_OFF, C_RAISES, C_RAW, \
    C_VALUE, cases, depth_title
from ._shared import judge_setup, ok, setup
from .messages import HINTS

ID = "ch03-own-apply"
PARTS: tuple[str, ...] = ()

_TRY = ("        try:\n            output = cls.forward(ctx, *inputs)\n        finally:\n"
        "            GradMode.enabled = enabled\n")
MISTAKES = (
    Mistake("grad mode read after switching it off", (
        "        enabled = GradMode.enabled\n        GradMode.enabled = False",
        "        GradMode.enabled = False\n        enabled = GradMode.enabled"), None,
            "apply.restore"),
    Mistake("grad mode read inside forward's region", (
        _TRY + "        if not isinstance(output, Variable):\n            output = Variable(output)"
               "\n        if enabled and",
        "        try:\n            output = cls.forward(ctx, *inputs)\n"
        "            recording = GradMode.enabled\n        finally:\n"
        "            GradMode.enabled = enabled\n        if not isinstance(output, Variable):\n"
        "            output = Variable(output)\n        if recording and"), None,
            "apply.reads-when-off"),
    Mistake("grad mode never restored", (_TRY, "        output = cls.forward(ctx, *inputs)\n"),
            None, "apply.restore"),
    Mistake("restored without finally", (_TRY, "        output = cls.forward(ctx, *inputs)\n"
                                               "        GradMode.enabled = enabled\n"), None,
            "apply.finally"),
    Mistake("restored to True", ("            GradMode.enabled = enabled\n",
                                 "            GradMode.enabled = True\n"), None,
            "apply.restore-true"),
    Mistake("forward's raw output", ("        return output\n",
                                     "        return cls.forward(cls.Node(), *inputs)\n"), None,
            "apply.not-recorded"),
    Mistake("no grad_fn", ("            output.grad_fn = ctx\n", ""), None,
            "apply.requires-no-node"),
    Mistake("no inputs", ("            ctx.inputs = inputs\n", ""), None, "apply.inputs"),
    Mistake("a plain Context", ("ctx = cls.Node()", "ctx = Context()"), None, "apply.node-class"),
    Mistake("records without a grad", ("if enabled and any(ctx.needs_input_grad):",
                                       "if enabled:"), None, "apply.no-grad-needed"),
    Mistake("records in no_grad", ("if enabled and any(ctx.needs_input_grad):",
                                   "if any(ctx.needs_input_grad):"), None, "apply.grad-mode-off"),
    Mistake("a number needs a grad", ("isinstance(x, Variable) and x.requires_grad",
                                      "getattr(x, 'requires_grad', True)"), None,
            "apply.needs-number"),
)

def observe(ob: Observer, Function: type[Any], *, seed: int, hidden: bool) -> None:
    with ob.case("class"):
        ob.put("is class", isinstance(Function, type))
        ob.put("text", probes.text(Function))
    if not isinstance(Function, type):
        return
    ns = setup(ob, Function, "apply", ("Variable", "GradMode"))
    if ns is None:
        return
    GradMode = ns["GradMode"]
    with probes.grad_mode_kept(GradMode):
        GradMode.enabled = True
        probes.observe_cases(ob, Function, ns["Variable"], GradMode, cases(seed, hidden))


# -- judge ------------------------------------------------------------------------------------
def judge(ck: Checker, obs: Observations) -> None:
    seen = obs.case(ck, "class")
    ck.check(seen["is class"], "Function is not a class.", received=seen["text"],
             hint=HINTS["apply.class"])
    judge_setup(ck, obs, "apply", HINTS)
    inputs = cases(obs.seed, obs.hidden)
    what = "your Function.apply"
    with ck.case(C_VALUE):
        seen = obs.case(ck, C_VALUE, what=what)
        _applied(ck, seen, "apply")
        ck.check(not seen["is None"], "apply returned None.", hint=HINTS["apply.none"])
        ck.check(seen["is a Variable"], "apply did not return a Variable.",
                 received=seen["type"], hint=HINTS["apply.variable"])
        (a, _), (b, _) = inputs[C_VALUE]
        ck.close(seen["output"], a * b, what="output", hint=HINTS["apply.output"])
    with ck.case(C_MODE):
        seen = obs.case(ck, C_MODE, what=what)
        _applied(ck, seen, "apply")
        _recorded(ck, seen)
        ck.check(seen["off in forward"], "grad mode was on inside forward.",
                 expected="GradMode.enabled == False inside forward", received=True,
                 hint=HINTS["apply.off-in-forward"])
    with ck.case(C_NODE):
        _judge_node(ck, obs.case(ck, C_NODE, what=what))
    with ck.case(C_NEEDS):
        _judge_needs(ck, obs.case(ck, C_NEEDS, what=what))
    with ck.case(C_RAW):
        seen = obs.case(ck, C_RAW, what=what)
        _applied(ck, seen, "apply", hint=HINTS["apply.raw-raised"])
        ck.check(seen["is a Variable"], "forward's numpy array was not made a Variable.",
                 received=seen["type"], hint=HINTS["apply.wrap"])
        ck.close(seen["output"], 2.5 * inputs[C_RAW][0][0], what="output")
    for title, problem, hint in ((C_NO_GRAD, "an output whose inputs need no gradient got a "
                                  "graph node.", "apply.no-grad-needed"),
                                 (C_OFF, "apply recorded a node while grad mode was off.",
                                  "apply.grad-mode-off")):
        with ck.case(title):
            seen = obs.case(ck, title, what=what)
            _applied(ck, seen, "apply")
            ck.check(seen["nothing recorded"], problem,
                     expected="grad_fn None, requires_grad False", received=seen["text"],
                     hint=HINTS[hint])
    with ck.case(C_RAISES):
        _judge_raises(ck, obs.case(ck, C_RAISES, what=what))
    for depth, _ in inputs["depths"]:
        with ck.case(depth_title(depth)):
            _judge_walk(ck, obs.case(ck, depth_title(depth), what=what), depth,
                        inputs["depths"])
    ck.done()


def _applied(ck: Checker, seen: Case, key: str, hint: str | None = None) -> None:
    """The learner's apply returned (else its error, as the checker says it), and left grad
    mode as it found it."""
    ok(ck, seen, key, "your Function.apply", hint)
    before, after_true, after_false, after = seen[f"{key} mode"]
    if before and not after_true:
        ck.fail("grad mode is still off after apply returned.",
                expected="GradMode.enabled == True again", received=after,
                hint=HINTS["apply.restore"])
    if not before and not after_false:
        ck.fail("apply switched grad mode on although it was off before.",
                expected="GradMode.enabled == False after apply", received=after,
                hint=HINTS["apply.restore-true"])


def _recorded(ck: Checker, seen: Case) -> None:
    """Fail, saying why, when the output of a recorded call has no node."""
    if seen["recorded"]:
        return
    if seen["why: requires grad"]:
        ck.fail("the output requires grad but has no grad_fn.",
                hint=HINTS["apply.requires-no-node"])
    if seen["why: probe recorded"]:
        ck.fail("apply did not record the node although grad mode was on when it was called.",
                hint=HINTS["apply.reads-when-off"])
    ck.fail("apply did not record the node: the output has no grad_fn.",
            hint=HINTS["apply.not-recorded"])


def _judge_node(ck: Checker, seen: Case) -> None:
    _applied(ck, seen, "apply")
    _recorded(ck, seen)
    ck.check(seen["seen in forward"], "the output's grad_fn is not the ctx that forward received.",
             hint=HINTS["apply.same-ctx"])
    node = seen["node type"]
    ck.check(node == "RefMulBackward", "the node is not an instance of the Function's own node "
             "class.", expected="<RefMulBackward>", received=f"<{node}>",
             hint=HINTS["apply.node-class"])
    ck.check(seen["requires grad, not a leaf"], "the output must require grad and not be a leaf.",
             expected="requires_grad True, is_leaf False", received=seen["flags"],
             hint=HINTS["apply.requires-grad"])
    ck.check(seen["inputs"] == ["a", "b"], "node.inputs is not the tuple of the arguments.",
             expected="(a, b)", received=seen["inputs text"], hint=HINTS["apply.inputs"])


def _judge_needs(ck: Checker, seen: Case) -> None:
    for i, want in enumerate([(True, False), (False, True)]):
        _applied(ck, seen, f"apply {i}")
        needs = seen[f"needs {i}"]
        ck.check(needs is not None and tuple(needs) == want, "needs_input_grad is wrong.",
                 expected=want, received=seen[f"needs text {i}"], hint=HINTS["apply.needs"])
    _applied(ck, seen, "apply 2")
    needs = seen["needs 2"]
    ck.check(needs is not None and tuple(needs) == (True, False),
             "needs_input_grad is wrong for (Variable, number).", expected=(True, False),
             received=seen["needs text 2"], hint=HINTS["apply.needs-number"])


def _judge_raises(ck: Checker, seen: Case) -> None:
    err = seen["raised"]
    hint = HINTS["apply.let-through"]
    if err is None:
        ck.fail("your Function.apply did not raise.", expected="ValueError",
                received=f"it returned {seen['returned']}", hint=hint)
    if not isinstance(err, Raised):
        ck.fail("the observation of this case is not readable.")
    if err.is_a("NotImplementedError"):
        raise ck._not_done(NotImplementedError(err.message))
    if not err.is_a("ValueError"):
        ck.fail("your Function.apply raised the wrong kind of error.", expected="ValueError",
                received=f"{err.name}: {err.message}", hint=hint)
    ck.check(seen["on again"], "grad mode stayed off after forward raised.",
             expected="GradMode.enabled == True", received=seen["mode text"],
             hint=HINTS["apply.finally"])


def _judge_walk(ck: Checker, seen: Case, depth: int, depths: list) -> None:
    (a, _), (b, _) = dict(depths)[depth]
    want_a, want_b = b.copy(), a.copy()
    for i in range(depth):
        _applied(ck, seen, f"apply {i}")
        if i:
            want_a, want_b = want_a * float(i + 1), want_b * float(i + 1)
    if seen.get("no function"):
        ck.fail("a node does not know its Function (node.function).",
                hint=HINTS["apply.node-function"])
    ok(ck, seen, "walk", "your backward")
    reached = seen["reached"]
    ck.check("a" in reached and "b" in reached, "walking node.inputs from the output did not "
             "reach the leaves.", hint=HINTS["apply.walk"])
    ck.close(seen["gradient of a"], want_a, what="gradient of a")
    ck.close(seen["gradient of b"], want_b, what="gradient of b")
