"""Every hint the chapter 06 checks give, by id: reviewed, counted and translated here.

Entries with ``{...}`` fields are formatted by the check that uses them."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch06-predict-raises
    "predict.dict": "Fill in the dict given in the exercise cell.",
    "predict.fill": 'Add an entry "{name}": True (raises) or False (runs).',
    "predict.bool": "Replace None (or a string) by True or False.",
    "predict.ask": "Ask of every snippet: what did each operation save for backward, and was it "
                   "changed (through any alias) after it was saved?",
    # the rule each snippet hits, as a question to ask of it: it names the rule and where to
    # look, not the verdict of any other snippet
    "predict.rule.a": "Look at what each operation saved and when: `sum` saves nothing but a shape, and "
                      "`x * 2` keeps only what x's gradient reads, the 2. Which saved tensor does the "
                      "in-place line change?",
    "predict.rule.b": "`detach()` shares memory *and* the version counter with the tensor it came from, so "
                      "a change through the detached alias counts as a change of that tensor. What does "
                      "`log` save for its backward?",
    "predict.rule.c": "`enable_grad` switches recording back on inside `no_grad`. What is the rule for an "
                      "in-place change of a leaf that requires grad while recording is on?",
    "predict.rule.d": "A clone is a new, computed tensor, not a leaf, so changing it in place is recorded "
                      "like any operation. Did anything save `y` *before* the change?",
    "predict.rule.e": "`clone()` copies the data into new memory with a fresh version counter. Which "
                      "tensor does the in-place line change, and did `sigmoid` save it?",
    "predict.rule.f": "The version counter counts in-place operations, not changed values: `mul_(1.0)` "
                      "still counts. What does `sqrt` save for its backward?",
    "predict.rule.g": "`no_grad` stops recording, but it does not stop the version counter. Which tensor "
                      "did the product save, and what happens to it before backward?",
    "predict.rule.h": "`z = z + 1` is out of place: it makes a new tensor and rebinds the name. Is any "
                      "tensor that `tanh` saved changed?",
}

_INPLACE = ("Update the parameters in place inside `with al.no_grad():` (w -= lr * w.grad), then "
            "clear the gradients (w.grad = None or w.grad.zero_()).")

HINTS.update({
    # ch06-train-step
    "train.update": _INPLACE,
    "train.raised": "If this is the in-place error, that is the bug to fix: " + _INPLACE,
    "train.return": "Return the loss before the update, as a float: loss.item().",
    "train.float": "Return loss.item(), not the loss Variable: a caller keeping the Variable "
                   "keeps its whole graph alive, and adding losses up would record a graph "
                   "across steps.",
    "train.before": "Return mean((X @ w + b - y) ** 2) computed before the update.",
    "train.inplace": "An update recorded in the graph (w = w - lr * w.grad outside no_grad) "
                     "turns the parameter into a computed Variable. " + _INPLACE,
    "train.rebinding": "Rebinding a name inside the function (w = w - lr * w.grad) makes a new "
                       "Variable the caller never sees. " + _INPLACE,
    "train.uphill": "You stepped uphill: subtract lr * w.grad.",
    "train.clear": "Gradients accumulate in .grad across backward calls: clear them every step "
                   "(w.grad = None, or w.grad.zero_() under no_grad).",
    "train.clear-short": "Gradients accumulate in .grad across backward calls: clear them "
                         "every step.",
})

HINTS.update({
    # ch06-inplace-rules
    "rules.setup": "Run the chapter's first cell (it imports them from mygrad), then the cell "
                   "above, then this check.",
    "rules.leaf": "A leaf that requires grad is an input of the graph: with grad mode on, "
                  "changing it in place must raise RuntimeError.",
    "rules.leaf-message": "A leaf that requires grad gets the given _LEAF_IN_PLACE; _NOT_RECORDED "
                          "is for the other refusals. Test for the leaf first.",
    "rules.computed": "mygrad does not record in-place operations, and a computed Variable that "
                      "requires grad is part of a graph: changing it would need a new node. "
                      "Refuse it with _NOT_RECORDED (not only leaves).",
    "rules.other": "c.add_(w) would make c depend on w, a dependence that would have to be "
                   "recorded: look at other's requires_grad too, not only at self's.",
    "rules.plain": "A change that involves no Variable requiring grad needs no recording: data, "
                   "masks and constants may change in place. Refuse only when a Variable "
                   "involved requires grad.",
    "rules.number": "other may be a plain number (x.add_(2.0)) or None (zero_()): read its "
                    "requires_grad with getattr(other, \"requires_grad\", False).",
    "rules.none": "other may be None (zero_() has no other operand): a None other requires no "
                  "grad.",
    "rules.no-grad": "While grad mode is off nothing is recorded, so there is nothing to refuse: "
                     "return at once when GradMode.enabled is False (that is how an optimizer "
                     "changes its parameters, under no_grad).",
    "rules.any-other": "A leaf that requires grad is refused whatever the other operand.",
    "rules.mode": "Only read GradMode.enabled; never set it here.",
})

HINTS.update({
    # ch06-detach
    "detach.setup": "Run the chapter's first cell, then the cell above, then this check again.",
    "detach.counter-setup": "Run the cell above (it defines _counter next to detach) and this "
                            "check again.",
    "counter.zero": "A new Variable has made no change yet: its counter starts as [0], a "
                    "one-element list (a list, so that a detached alias can share it).",
    "counter.once": "Make the list only the first time (when v has none yet) and keep it: a new "
                    "list on every call forgets the changes counted so far.",
    "counter.keep": "Keep the counter in v._counter: detach gives the new Variable its counter by "
                    "setting out._counter, and _counter must then return that one.",
    "counter.one-each": "Each Variable gets its own list (kept on the Variable, not on the class "
                        "or in a global); only detach shares one, on purpose.",
    "detach.variable": "Return a new Variable.",
    "detach.new": "detach makes a *new* Variable; y keeps its place in the graph.",
    "detach.leaf": "A new Variable starts with grad_fn None.",
    "detach.requires-grad": "A detached Variable is a constant for autograd: do not pass "
                            "requires_grad on to it.",
    "detach.original": "Leave self as it was: y must stay in its graph.",
    "detach.shares-data": "Pass self.data itself to the new Variable, not a copy: detach is cheap "
                          "because nothing is copied.",
    "detach.counter-shared": "Give the new Variable the counter object of self (_counter(self)), "
                             "not a new one and not a copy of its value.",
    "detach.return-self": "Return self, so that calls can be chained.",
    "detach.flag-default": "With no argument the flag is True (the default).",
    "detach.flag-bool": "Store the flag as a bool.",
    "detach.only-leaves": "requires_grad_ only changes leaves: whether a computed Variable (one "
                          "with a grad_fn) requires grad follows from its inputs. Raise "
                          "RuntimeError with the given _ONLY_LEAVES for it, before changing "
                          "anything.",
    "detach.only-leaves-message": "Raise it with the given message _ONLY_LEAVES (format it with "
                                  "the name of the node's class): it points to .detach().",
    "detach.refuse-first": "Refuse first, then change: a refused call leaves the Variable as it "
                           "was.",
})

_RESTORE = ("Read the mode in __enter__, when the block begins, keep it on the object, and put "
            "exactly that value back in __exit__.")

HINTS.update({
    # ch06-grad-mode-switch
    "switch.classes": "Pass the classes themselves: check.ch06_grad_mode_switch(set_grad_enabled, "
                      "no_grad, enable_grad).",
    "switch.setup": "Run the chapter's first cell (it imports GradMode from mygrad), then the cell "
                    "above, then this check.",
    "switch.restore": _RESTORE,
    "switch.no-grad-args": "no_grad() takes no arguments: it calls set_grad_enabled's __init__ "
                           "with False.",
    "switch.enter": "__enter__ sets GradMode.enabled to the mode given to __init__.",
    "switch.bool": "Keep the mode as a bool (a flag may come as 0 or 1) and set GradMode.enabled "
                   "to it in __enter__.",
    "switch.nested-outer": "The end of the inner block must give back the mode of the outer block "
                           "(False), not the default True: ",
    "switch.read-enter": "The object was made while recording was on and used after it was "
                         "switched off (as a decorator's object is): read the mode to restore in "
                         "__enter__, not in __init__.",
    "switch.error-through": "An error inside the with block must reach the caller unchanged: "
                            "only the block's own error may come out of it.",
    "switch.swallow": "__exit__ decides whether an error in the block is swallowed: a true return "
                      "value swallows it. A grad mode must let it go on up.",
    "switch.error-restore": "__exit__ runs whether or not the block raised; the error comes in "
                            "its arguments. Restore the mode in every case, not only when they "
                            "are None.",
    "switch.call": "@no_grad() calls the object with the function: __call__(self, fn) returns "
                   "the function to use instead.",
    "switch.wrapper": "__call__ returns a new function that runs fn.",
    "switch.decorate": "Decorating only wraps the function: switch the mode in the wrapper, each "
                       "time it is called, not in __call__ itself.",
    "switch.result": "The wrapper passes its arguments on, runs fn inside the mode, and returns "
                     "what fn returns.",
    "switch.name": "Copy fn's __name__ (and __doc__) onto the wrapper.",
    "switch.recursion": "The inner call entered the same object again and overwrote the mode it "
                        "had kept for the outer call. Give each call a switch of its own (a new "
                        "set_grad_enabled per call).",
})

HINTS.update({
    # ch06-inplace-ops
    "ops.setup": "Run the cell above (its last lines install the methods on Variable) and pass "
                 "the class: check.ch06_inplace_ops(Variable).",
    "ops.grad-mode": "Run the chapter's first cell, then the cells above, then this check.",
    "ops.traceback": "Read the traceback above: it points at the line of your {name} that fails.",
    "ops.return-self": "Return self: `x += 1` binds the method's result to x again, so returning "
                       "nothing would turn x into None.",
    "ops.same-array": "Change the numbers in self.data itself (numpy's in-place operators, or "
                      "data[...] = ...): a Variable that shares the array (a detached alias) "
                      "must see the change.",
    "ops.unchanged": "does not write into the array it is given.",
    "ops.swapped": "the operands are swapped.",
    "ops.bump": "Each in-place call bumps the version exactly once (bump_version(self)); without "
                "it, a stale saved tensor goes unnoticed and backward gives a wrong gradient.",
    "ops.bump-once": "Bump once per call, not once per element or twice.",
    "ops.setitem-array": "Write into self.data[key].",
    "ops.bump-one": "Bump the version once.",
    "ops.number": "value may be a plain number: make it a Variable (as_variable) first.",
    "ops.zero-return": "Return self, so that x.zero_().add_(1) chains.",
    "ops.zero-in-place": "Set the numbers of self.data to 0 in place (data[...] = 0).",
    "ops.refuse": "Call _check_inplace(self, other) first: it raises while grad mode is on and a "
                  "Variable involved requires grad.",
    "ops.check-first": "Check first, then change: a refused operation must leave the Variable as "
                       "it was.",
    "ops.allowed": "With GradMode.enabled False, _check_inplace allows it: nothing else may "
                   "refuse.",
    "ops.bump-every": "Bump the version in every in-place call.",
})

_RAISE = ("In save_for_backward keep, next to the tensors, the version each one has at that "
          "moment (t._version); in saved_tensors compare each stored number with the tensor's "
          "current _version and raise RuntimeError if they differ.")
_OWN_CTX = ("Keep what was saved on ctx (the instance), not on Context or in a global: every node "
            "of the graph has its own.")

HINTS.update({
    # ch06-version-check
    "version.package": "Pass the package: check.ch06_version_check(mygrad).",
    "version.property": "Install it as a property: Context.saved_tensors = property(saved_tensors), "
                        "so that ctx.saved_tensors (without parentheses) runs your function.",
    "version.context": "Context() must work without arguments.",
    "version.raise": _RAISE,
    "version.unchanged": "Nothing changed since save_for_backward (b was saved at version 3), so "
                         "nothing may raise: compare with the version recorded when each tensor "
                         "was saved, not with 0.",
    "version.tuple": "Return tuple(...) of the saved tensors, in the order they were saved.",
    "version.objects": "Return the tensors themselves: not copies, not their data, not the "
                       "versions.",
    "version.twice": "saved_tensors must not consume what was saved.",
    "version.none": "None has no _version: keep None for it instead of reading one.",
    "version.none-unpack": "Skip the version check for a saved None.",
    "version.none-kept": "Store None as it is and skip the version check for it.",
    "version.empty": "A new Context has _saved = () and nothing else (Add and Neg never call "
                     "save_for_backward): when no versions were stored, there is nothing to "
                     "compare.",
    "version.empty-global": "A new Context saved nothing, yet saved_tensors returned tensors: they "
                            "come from another ctx. Keep what was saved on ctx itself "
                            "(ctx._saved), not on Context or in a global.",
    "version.not-zero": "Compare with the version recorded when the tensor was saved, not with 0: "
                        "a tensor may have been changed before it was saved.",
    "version.kept-right": "save_for_backward kept the version the tensor had when it was saved "
                          "({before}), so that half is right.",
    "version.never-compared": "saved_tensors never compared it with the tensor's _version now: "
                              "compare each kept number with the tensor's current _version and "
                              "raise RuntimeError when they differ.",
    "version.kept-other": "save_for_backward kept numbers, but not the version the tensor had at "
                          "that moment ({before}): read t._version for each tensor when it is "
                          "saved.",
    "version.kept-none": "save_for_backward kept no version next to the tensors (ctx holds only "
                         "the tensors), so saved_tensors has nothing to compare with.",
    "version.both": "Say what happened and both numbers, like PyTorch: '... modified by an "
                    "inplace operation: ... is at version 5; expected version 2 instead.'",
    "version.own-ctx": _OWN_CTX,
    "version.every": "Check every saved tensor, not only the first.",
    "version.freed": "Keep the given first lines of saved_tensors: the engine frees the saved "
                     "tensors (ctx._saved = None) after a backward.",
    "version.freed-message": "Keep the given first lines of saved_tensors.",
    "version.library-mul": "c's version moved from 0 to 1 after Mul saved it, yet backward ran: "
                           "Mul's backward reads ctx.saved_tensors, so check that the last two "
                           "lines of your cell ran (they install your functions on Context) and "
                           "that save_for_backward keeps the versions of the tensors it saves.",
    "version.library-exp": "Exp saves its output y, and y's version moved after that, yet backward "
                           "ran: saved_tensors must compare every saved tensor's version, outputs "
                           "included.",
    "version.every-middle": "Check every saved tensor, not only the first or the last.",
})
