"""Check Module's parameter walk: assigning a ``Parameter`` (or a ``Module``) to an
attribute registers it under that name, in assignment order; assigning anything else to the
name unregisters it; ``named_modules()`` yields ``("", self)`` then every module inside, with
dotted names, depth first; ``named_parameters()`` yields each parameter once (a parameter
shared by two layers is listed under its first name), with dotted names; ``parameters()``
yields the same objects; ``zero_grad()`` sets every gradient, children's too, to ``None``;
``train(mode)`` reaches every module; ``state_dict``/``load_state_dict`` copy by dotted name.

Only the learner's ``Module`` is exercised; ``Parameter`` is the given class."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from ._shared import call, case, class_name, expect_raised, put_class_name, seen
from .messages import HINTS

ID = "ch08-module"
PARTS: tuple[str, ...] = ()

MISTAKES = (
    Mistake("names without the prefix", ('yield (f"{name}.{pname}" if name else pname), p',
                                         "yield pname, p"), None, "module.prefix"),
    Mistake("a shared parameter twice", ("if id(p) not in seen:", "if True:"), None,
            "module.twice"),
    Mistake("zero_grad writes zeros", ("p.grad = None", "p.grad = p.grad * 0"), None,
            "module.zero-none"),
    Mistake("train switches only the model", ("for m in self.modules():\n"
                                              "            m.training = bool(mode)",
                                              "self.training = bool(mode)"), None,
            "module.train-walk"),
    Mistake("state_dict without copies", ("p.data.copy() for name", "p.data for name"), None,
            "module.snapshot"),
    Mistake("load rebinds the arrays", ("p.data[...] = state[name]", "p.data = state[name]"),
            None, "module.load-in-place"),
    Mistake("load without a name check", ("if set(own) != set(state):", "if False:"), None,
            "module.load-keys"),
    Mistake("load without a shape check", ("if np.shape(state[name]) != p.shape:", "if False:"),
            None, "module.load-shapes"),
)

C_PLAIN = "assigning Parameters and Modules to a {name} registers them, in order"
C_MODULES = "named_modules(): the model first, then every module inside, dotted names"
C_SHARED = "a parameter shared by two layers is listed once, under its first name"
C_REASSIGN = "assigning something else to a name unregisters what it held"
C_ZERO = "zero_grad() sets every gradient, the children's too, to None"
C_TRAIN = "train(False) switches the model and every module inside it; train() back"
C_STATE = ("state_dict() copies every parameter by its dotted name; load_state_dict copies back "
           "in place and refuses another architecture")


def _builder(MyModule: type[Any], Parameter: type[Any], rng: np.random.Generator) -> Any:
    def param(*shape: int) -> Any:
        return Parameter(rng.normal(size=shape))

    def build(kind: str) -> Any:
        """A small model, built through the learner's __setattr__."""
        class Leaf(MyModule):
            def __init__(self, *params: Any) -> None:
                super().__init__()
                for i, p in enumerate(params):
                    setattr(self, f"p{i}", p)

        class Tree(MyModule):
            def __init__(self) -> None:
                super().__init__()
                self.scale = param(1)
                self.note = "not registered"
                self.body = Leaf(param(2, 3), param(3))
                self.shift = param(2)
                if kind == "nested":
                    self.body.inner = Leaf(param(4))
                if kind == "shared":
                    self.head = Leaf(self.body.p0, param(5))
                if kind == "reassigned":
                    self.scale = np.ones(1)          # a plain array: scale is no parameter now
                    self.body = Leaf(param(6))       # a new module under the old name
        return Tree()
    return build


def _names(ob: Observer, model: Any, key: str = "names") -> list[str]:
    pairs = call(ob, "named_parameters", lambda: list(model.named_parameters()))
    names = [n for n, _ in pairs]
    ob.put(key, names)
    return names


def observe(ob: Observer, MyModule: type[Any], Parameter: type[Any], *, seed: int,
            hidden: bool) -> None:
    put_class_name(ob, MyModule)
    build = _builder(MyModule, Parameter, np.random.default_rng(seed))
    name = MyModule.__name__
    with case(ob, C_PLAIN.format(name=name)):
        model = call(ob, "build", build, "plain")
        _names(ob, model)
        params = [p for _, p in model.named_parameters()]
        ob.put("same objects", all(a is b for a, b in zip(params, (
            model.scale, model.shift, model.body.p0, model.body.p1))))
        listed = call(ob, "parameters", lambda: list(model.parameters()))
        ob.put("parameters", [len(listed), len(params),
                              all(a is b for a, b in zip(listed, params))])
        ob.put("note stored", getattr(model, "note", None) == "not registered")
    with case(ob, C_MODULES):
        model = call(ob, "build", build, "nested")
        ob.put("modules", [n for n, _ in call(ob, "named_modules",
                                              lambda: list(model.named_modules()))])
        _names(ob, model)
    for title, kind in ((C_SHARED, "shared"), (C_REASSIGN, "reassigned")):
        with case(ob, title):
            _names(ob, call(ob, "build", build, kind))
    with case(ob, C_ZERO):
        model = call(ob, "build", build, "nested" if not hidden else "shared")
        for p in model.parameters():
            p.grad = Parameter(np.ones(p.shape))
        call(ob, "zero_grad", model.zero_grad)
        ob.put("grads", {n: None if p.grad is None else getattr(p.grad, "data", p.grad)
                         for n, p in model.named_parameters()})
    with case(ob, C_TRAIN):
        model = call(ob, "build", build, "nested")
        out = call(ob, "train(False)", lambda: model.train(False))
        ob.put("modes off", {n: m.training for n, m in model.named_modules()})
        ob.put("returns self", out is model)
        call(ob, "train()", model.train)
        ob.put("modes on", {n: m.training for n, m in model.named_modules()})
    with case(ob, C_STATE):
        _observe_state(ob, call(ob, "build", build, "nested"))


def _observe_state(ob: Observer, model: Any) -> None:
    state = call(ob, "state_dict", lambda: model.state_dict())
    ob.put("keys", list(state) if isinstance(state, dict) else state)
    want = _names(ob, model)
    by_name = dict(model.named_parameters())
    ob.put("state", dict(state) if isinstance(state, dict) else None)
    ob.put("params", {k: p.data for k, p in by_name.items()})
    if not (isinstance(state, dict) and all(isinstance(v, np.ndarray) for v in state.values())
            and set(state) == set(by_name)):
        return
    before = {k: v.copy() for k, v in state.items()}
    for p in by_name.values():
        p.data += 1.0
    ob.put("state after a change", dict(state))
    arrays = {k: p.data for k, p in by_name.items()}
    call(ob, "load_state_dict", lambda: model.load_state_dict(before))
    ob.put("loaded", {k: p.data for k, p in by_name.items()})
    ob.put("same arrays", all(p.data is arrays[k] for k, p in by_name.items()))
    for p in by_name.values():
        p.data += 1.0
    ob.put("loaded from, after training", dict(before))
    extra = dict(before)
    extra["head.weight"] = np.zeros(2)
    ob.put("extra returned", ob.attempt("extra raised", model.load_state_dict, extra))
    wrong = dict(before)
    wrong[max(want, key=lambda k: before[k].size)] = np.zeros(1)
    ob.put("wrong returned", ob.attempt("wrong raised", model.load_state_dict, wrong))


def _explain(got: list[str], want: list[str]) -> str:
    walk = HINTS["module.walk"]
    short = [w.rpartition(".")[2] for w in want]
    if got == short:
        return HINTS["module.prefix"] + walk
    if set(got) < set(want) and all("." not in g for g in got):
        return HINTS["module.children"] + walk
    if len(got) > len(set(got)) or len(got) > len(want):
        return HINTS["module.twice"] + walk
    if sorted(got) == sorted(want):
        return HINTS["module.order"]
    return walk


def _judge_names(ck: Checker, got: Any, want: list[str], problem: str,
                 hint: str | None = None) -> None:
    got.called("named_parameters", "your named_parameters", HINTS["module.walk"])
    names = got["names"]
    ck.check(names == want, problem, expected=want, received=names,
             hint=hint or _explain(names if isinstance(names, list) else [], want))


def judge(ck: Checker, obs: Observations) -> None:
    name = class_name(ck, obs, "Module")
    build = (f"your a {name} subclass", HINTS["module.init"])
    with ck.case(C_PLAIN.format(name=name)):
        got = seen(ck, obs, C_PLAIN.format(name=name))
        got.called("build", *build)
        _judge_names(ck, got, ["scale", "shift", "body.p0", "body.p1"],
                     "named_parameters() does not list the expected names.")
        ck.check(got["same objects"] is True,
                 "named_parameters() yields other objects than the attributes.",
                 hint=HINTS["module.objects"])
        got.called("parameters", "your parameters")
        listed, count, same = got["parameters"]
        ck.check(listed == count and same is True,
                 "parameters() does not yield the same objects as named_parameters().",
                 expected=count, received=listed, hint=HINTS["module.parameters"])
        ck.check(got["note stored"] is True, "a plain attribute was not stored.",
                 hint=HINTS["module.store"])
    with ck.case(C_MODULES):
        got = seen(ck, obs, C_MODULES)
        got.called("build", *build)
        got.called("named_modules", "your named_modules")
        want = ["", "body", "body.inner"]
        ck.check(got["modules"] == want, "named_modules() does not list the expected names.",
                 expected=want, received=got["modules"], hint=HINTS["module.named-modules"])
        _judge_names(ck, got, ["scale", "shift", "body.p0", "body.p1", "body.inner.p0"],
                     "the parameters of a module two levels down are not listed as expected.")
    with ck.case(C_SHARED):
        got = seen(ck, obs, C_SHARED)
        got.called("build", *build)
        _judge_names(ck, got, ["scale", "shift", "body.p0", "body.p1", "head.p1"],
                     "the shared parameter is not listed exactly once.")
    with ck.case(C_REASSIGN):
        got = seen(ck, obs, C_REASSIGN)
        got.called("build", *build)
        names = got.get("names")
        stale = isinstance(names, list) and ("scale" in names or "body.p1" in names)
        _judge_names(ck, got, ["shift", "body.p0"],
                     "a reassigned name still lists what it held before.",
                     HINTS["module.unregister"] if stale else None)
    _judge_zero_grad(ck, obs, build)
    _judge_train(ck, obs, build)
    with ck.case(C_STATE):
        got = seen(ck, obs, C_STATE)
        got.called("build", *build)
        _judge_state(ck, got)
    ck.done()


def _judge_zero_grad(ck: Checker, obs: Observations, build: tuple[str, str]) -> None:
    with ck.case(C_ZERO):
        got = seen(ck, obs, C_ZERO)
        got.called("build", *build)
        got.called("zero_grad", "your zero_grad")
        grads = got["grads"]
        left = [n for n, g in grads.items() if g is not None]
        zeros = bool(left) and all(isinstance(grads[n], np.ndarray) and np.all(grads[n] == 0)
                                   for n in left)
        ck.check(not left, "some gradients are not None after zero_grad().",
                 expected=[], received=left,
                 hint=HINTS["module.zero-none" if zeros else "module.zero-walk"]
                 + HINTS["module.zero"])


def _judge_train(ck: Checker, obs: Observations, build: tuple[str, str]) -> None:
    with ck.case(C_TRAIN):
        got = seen(ck, obs, C_TRAIN)
        got.called("build", *build)
        got.called("train(False)", "your <lambda>")
        modes = got["modes off"]
        ck.check(not any(modes.values()), "some modules are still in training mode after "
                 "train(False).", expected={n: False for n in modes}, received=modes,
                 hint=HINTS["module.train-walk"])
        ck.check(got["returns self"] is True, "train(mode) does not return the module itself.",
                 hint=HINTS["module.train-self"])
        got.called("train()", "your train")
        modes = got["modes on"]
        ck.check(all(modes.values()), "train() does not switch every module back to training.",
                 expected={n: True for n in modes}, received=modes,
                 hint=HINTS["module.train-back"])


def _judge_state(ck: Checker, got: Any) -> None:
    got.called("state_dict", "your <lambda>", HINTS["module.state-dict"])
    got.called("named_parameters", "your named_parameters", HINTS["module.walk"])
    want, keys, state = got["names"], got["keys"], got["state"]
    ck.check(isinstance(state, dict) and keys == want, "state_dict() does not have one entry "
             "per parameter, under its dotted name.", expected=want, received=keys,
             hint=HINTS["module.state-names"])
    params = got["params"]
    ck.check(all(isinstance(v, np.ndarray) and np.array_equal(v, params[k])
                 for k, v in state.items()), "state_dict() does not hold the parameters' "
             "values as numpy arrays.", hint=HINTS["module.state-arrays"])
    before = state
    after = got["state after a change"]
    ck.check(all(np.array_equal(after[k], before[k]) for k in before), "changing the "
             "parameters after state_dict() changed the saved arrays too.",
             hint=HINTS["module.snapshot"])
    got.called("load_state_dict", "your <lambda>", HINTS["module.load"])
    loaded = got["loaded"]
    ck.check(all(np.array_equal(loaded[k], before[k]) for k in before),
             "after load_state_dict the parameters do not hold the loaded values.",
             hint=HINTS["module.load-values"])
    ck.check(got["same arrays"] is True, "load_state_dict replaced the parameters' arrays "
             "instead of copying into them.", hint=HINTS["module.load-in-place"])
    later = got["loaded from, after training"]
    ck.check(all(np.array_equal(later[k], before[k]) for k in before), "training after "
             "load_state_dict changed the state_dict it was loaded from.",
             hint=HINTS["module.load-tied"])
    expect_raised(ck, got["extra raised"], got.get("extra returned"), "KeyError",
                  "your load_state_dict", HINTS["module.load-keys"])
    expect_raised(ck, got["wrong raised"], got.get("wrong returned"), "ValueError",
                  "your load_state_dict", HINTS["module.load-shapes"])
