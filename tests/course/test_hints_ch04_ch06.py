"""Hints name the cause: realistic mistakes in the newer exercises of chapters 04 and 06.

Each mistake is one edit of the key's code (the course's exported ``mygrad`` for chapter 04,
the key's notebook cell for chapter 06); the exercise's checker must fail it with a message
that starts with the exercise's id and contains words naming the cause.
"""
from __future__ import annotations

import pytest

from autograd_lab.course.exercises import check

from .test_exercises_ch04 import engine_package

# -- ch04-hooks: _run_hooks, register_hook and its handle, retain_grad --------------------------
HOOKS_MISTAKES = [
    # the hooks' results are ignored: a hook can watch, never change the gradient
    (("            grad = as_variable(changed)\n", "            pass\n"),
     ["ignored the results"]),
    # every result replaces the gradient, None included: a watching hook takes it away
    (("        changed = hook(grad)\n        if changed is not None:\n"
      "            grad = as_variable(changed)\n", "        grad = hook(grad)\n"),
     ["took the gradient away", "only watched"]),
    # no return: the walk gets None
    (("            grad = as_variable(changed)\n    return grad\n",
      "            grad = as_variable(changed)\n"),
     ["returned None", "forget the `return`"]),
    # a hook's numpy array flows on as it is
    (("            grad = as_variable(changed)\n", "            grad = changed\n"),
     ["not a Variable", "as_variable"]),
    # hooks read from an attribute register_hook does not fill
    (('    for hook in list(getattr(v, "_hooks", ())):',
      '    for hook in list(getattr(v, "hooks", ())):'),
     ["called none of v's hooks", "v._hooks"]),
    # one list for all Variables, on the class
    (('    if "_hooks" not in self.__dict__:\n        self._hooks = []\n',
      '    if "_hooks" not in Variable.__dict__:\n        Variable._hooks = []\n'),
     ["ran for other Variables too", "shared by all Variables"]),
    # a new list at each registration: the earlier hooks are dropped
    (('    if "_hooks" not in self.__dict__:\n        self._hooks = []\n',
      '    self._hooks = []\n'),
     ["not every hook registered on h ran", "dropped the ones before it"]),
    # remove() empties the list: the other hooks go too
    (("            self._hooks.remove(self._hook)", "            self._hooks.clear()"),
     ["took off more than its own hook"]),
    # remove() a second time raises ValueError
    (("        if self._hook in self._hooks:\n            self._hooks.remove(self._hook)",
      "        self._hooks.remove(self._hook)"),
     ["a second time must do nothing"]),
    # remove() does nothing
    (("            self._hooks.remove(self._hook)", "            pass"),
     ["left the hook in place"]),
    # register_hook returns nothing
    (("    return _HookHandle(self._hooks, hook)", "    _HookHandle(self._hooks, hook)"),
     ["did not return a handle"]),
    # retain_grad leaves a note the engine does not read
    (("    self._retains_grad = True", "    self.retains_grad = True"),
     ["v._retains_grad = True"]),
]


def run_hooks_check(pkg, **kwargs):
    check.ch04_hooks(pkg.register_hook, pkg.retain_grad, pkg.engine._run_hooks, pkg, **kwargs)


@pytest.mark.parametrize("change,words", HOOKS_MISTAKES,
                         ids=[f"hooks-{i}" for i in range(len(HOOKS_MISTAKES))])
def test_ch04_hooks_names_the_cause(tmp_path, change, words):
    pkg = engine_package(tmp_path, change)
    with pytest.raises(AssertionError) as info:
        run_hooks_check(pkg)
    message = str(info.value)
    assert message.startswith("Exercise ch04-hooks failed"), message
    for word in words:
        assert word in message, (word, message)


def test_ch04_hooks_passes_the_key_and_is_not_done_for_a_stub(capsys):
    pkg = engine_package()
    run_hooks_check(pkg, hidden=True)
    assert "All 8 cases of ch04-hooks passed (with hidden cases)." in capsys.readouterr().out

    def stub(*args):
        raise NotImplementedError("Exercise ch04-hooks: write your code here")
    with pytest.raises(NotImplementedError, match="ch04-hooks is not done yet"):
        check.ch04_hooks(stub, stub, stub, pkg)


# -- ch04-engine-backward: the pieces added to the learner's part -------------------------------
ENGINE_MISTAKES = [
    # a leaf's gradient is accumulated before its hooks run: a hook on a leaf changes nothing
    (("            g = _run_hooks(v, grads.pop(id(v)))   # complete: every user of v came earlier\n"
      "            if v.grad_fn is None or getattr(v, \"_retains_grad\", False):\n"
      "                _accumulate(v, g)\n",
      "            g = grads.pop(id(v))\n"
      "            if v.grad_fn is None or getattr(v, \"_retains_grad\", False):\n"
      "                _accumulate(v, g)\n"
      "            g = _run_hooks(v, g)\n"),
     ["y's hook did not change y.grad", "running the hooks after accumulating is too late"]),
    # the walk runs with grad mode on: the gradients are recorded
    (("    enabled, GradMode.enabled = GradMode.enabled, bool(create_graph)",
      "    enabled = GradMode.enabled"),
     ["ran with grad mode on", "does not build a graph of them"]),
    # the mode is put back only when the walk ends without an error
    (("    finally:\n        GradMode.enabled = enabled",
      "    finally:\n        pass\n    GradMode.enabled = enabled"),
     ["stayed off after a backward that raised", "finally: block"]),
    # the mode is switched on afterwards instead of put back
    (("    finally:\n        GradMode.enabled = enabled",
      "    finally:\n        GradMode.enabled = True"),
     ["switched on by a backward called with recording off", "not True"]),
    # the root's gradient is the number 1 whatever its shape
    (("Variable(np.ones_like(root.data)) if gradient is None",
      "Variable(1.0) if gradient is None"),
     ["does not have shape (1, 1)", "ones shaped like the root's data"]),
    # retain_graph=None taken as False, also with create_graph=True
    (("    retain_graph = create_graph if retain_graph is None else retain_graph",
      "    retain_graph = bool(retain_graph)"),
     ["retain_graph then follows create_graph"]),
    # the hooks are not called at all
    (("            g = _run_hooks(v, grads.pop(id(v)))", "            g = grads.pop(id(v))"),
     ["never passed h's gradient through _run_hooks"]),
    # no refusal of a root that recorded nothing
    (("    if not root.requires_grad:\n        raise RuntimeError(_NOTHING_RECORDED)\n", ""),
     ["Nothing was recorded: raise RuntimeError"]),
    # no refusal of a root of several numbers without gradient=
    (("    if gradient is None and root.data.size != 1:\n"
      "        raise RuntimeError(_NEEDS_GRADIENT.format(root.shape))\n", ""),
     ["only makes sense for a single-number output"]),
]


# -- ch04-topological-order: _inputs_to_visit, now the learner's --------------------------------
ORDER_INPUT_MISTAKES = [
    # a leaf's grad_fn is None: no inputs
    (("    if v.grad_fn is None:\n        return []\n    return [x for x in v.grad_fn.inputs",
      "    return [x for x in v.grad_fn.inputs"),
     ["A leaf has no node", "no inputs to follow"]),
    # every input taken for a Variable: a plain number has no requires_grad
    (("if isinstance(x, Variable) and x.requires_grad]", "if x.requires_grad]"),
     ["plain number 3.0", "(isinstance)"]),
]


@pytest.mark.parametrize("change,words", ORDER_INPUT_MISTAKES,
                         ids=[f"inputs-{i}" for i in range(len(ORDER_INPUT_MISTAKES))])
def test_ch04_topological_order_names_the_cause_in_inputs_to_visit(tmp_path, change, words):
    pkg = engine_package(tmp_path, change)
    with pytest.raises(AssertionError) as info:
        check.ch04_topological_order(pkg.topological_order, pkg)
    message = str(info.value)
    assert message.startswith("Exercise ch04-topological-order failed"), message
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize("change,words", ENGINE_MISTAKES,
                         ids=[f"engine-{i}" for i in range(len(ENGINE_MISTAKES))])
def test_ch04_engine_backward_names_the_cause_of_the_new_pieces(tmp_path, change, words):
    pkg = engine_package(tmp_path, change)
    try:
        with pytest.raises(AssertionError) as info:
            check.ch04_engine_backward(pkg.backward, pkg)
    finally:
        pkg.GradMode.enabled = True
    message = str(info.value)
    assert message.startswith("Exercise ch04-engine-backward failed"), message
    for word in words:
        assert word in message, (word, message)


# -- ch06-inplace-rules: _check_inplace ---------------------------------------------------------
RULES_MISTAKES = [
    # grad mode not looked at: an optimizer's step under no_grad is refused
    ([("    if not GradMode.enabled:\n        return\n", "")],
     ["return at once when GradMode.enabled is False"]),
    # only leaves refused: a computed Variable that requires grad changes unrecorded
    ([('    if self.requires_grad or getattr(other, "requires_grad", False):\n'
       "        raise RuntimeError(_NOT_RECORDED)\n", "")],
     ["did not raise", "(not only leaves)"]),
    # the other operand not looked at
    ([('self.requires_grad or getattr(other, "requires_grad", False)', "self.requires_grad")],
     ["did not raise", "look at other's requires_grad too"]),
    # other.requires_grad read directly: a plain number has none
    ([('getattr(other, "requires_grad", False)', "other.requires_grad")],
     ["raised AttributeError", 'getattr(other, "requires_grad", False)']),
    # the leaf gets the other message
    ([("raise RuntimeError(_LEAF_IN_PLACE)", "raise RuntimeError(_NOT_RECORDED)")],
     ["the message for a leaf is not PyTorch's", "_LEAF_IN_PLACE"]),
    # everything refused while recording, constants too
    ([('    if self.requires_grad or getattr(other, "requires_grad", False):\n'
       "        raise RuntimeError(_NOT_RECORDED)\n", "    raise RuntimeError(_NOT_RECORDED)\n")],
     ["data, masks and constants may change in place"]),
]


def rules_namespace(source: str) -> dict:
    """The rules cell ``source`` run on a fresh copy of the key's ``mygrad``."""
    from .test_exercises_ch06 import reference_package
    namespace = dict(vars(reference_package().grad_mode))
    exec(source, namespace)  # noqa: S102 - the key's cell, or a mistake made from it
    return namespace


@pytest.mark.parametrize("replacements,words", RULES_MISTAKES,
                         ids=[f"rules-{i}" for i in range(len(RULES_MISTAKES))])
def test_ch06_inplace_rules_names_the_cause(replacements, words):
    from .test_exercises_ch06 import mutated
    namespace = rules_namespace(mutated("ch06-inplace-rules-code", *replacements))
    with pytest.raises(AssertionError) as info:
        check.ch06_inplace_rules(namespace["_check_inplace"])
    message = str(info.value)
    assert message.startswith("Exercise ch06-inplace-rules failed"), message
    for word in words:
        assert word in message, (word, message)
    assert namespace["GradMode"].enabled is True          # the check puts the mode back


def test_ch06_inplace_rules_passes_the_key_and_reports_a_stub(capsys):
    from .test_exercises_ch06 import key_cell
    namespace = rules_namespace(key_cell("ch06-inplace-rules-code"))
    check.ch06_inplace_rules(namespace["_check_inplace"], hidden=True)
    assert "All 7 cases of ch06-inplace-rules passed" in capsys.readouterr().out
    exec("def _check_inplace(self, other=None):\n"  # noqa: S102
         "    raise NotImplementedError('Exercise ch06-inplace-rules: write your code here')\n",
         namespace)
    with pytest.raises(NotImplementedError, match="ch06-inplace-rules is not done yet"):
        check.ch06_inplace_rules(namespace["_check_inplace"])


# -- the chapter 06 cases: hints that name the cause (already in place; verified) -------
def test_an_inplace_op_without_the_version_bump_is_named_not_the_install_lines(capsys):
    """A mul_ that forgets the bump: the version check passes a correct save/unpack and names
    ch06-inplace-ops; the in-place check says the count is missing. Neither speaks of the
    last two lines of the cell."""
    from .test_exercises_ch06 import INPLACE_MISTAKES, mutated, reference_package
    pkg = reference_package()
    namespace = dict(vars(pkg.grad_mode))
    exec(mutated("ch06-inplace-ops-code", *INPLACE_MISTAKES[0][0]), namespace)  # noqa: S102
    check.ch06_version_check(pkg)
    out = capsys.readouterr().out
    assert "exercise ch06-inplace-ops fails" in out and "last two lines" not in out
    with pytest.raises(AssertionError) as info:
        check.ch06_inplace_ops(pkg.Variable)
    assert "did not count one change" in str(info.value)
    assert "last two lines" not in str(info.value)
