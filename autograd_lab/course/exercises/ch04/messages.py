"""Every hint the chapter 04 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch04-reused-node
    "reused.dict": 'Return {"a": ..., "h": ..., "x": ..., "y": ...}.',
    "reused.keys": "Use the keys 'a', 'h', 'x', 'y'.",
    "reused.a": "out = h * a, so d out / d a = h.",
    "reused.h": "h has two consumers: out = h * a directly (local gradient a) and a = h + x "
                "(local gradient 1, times d out / d a = h). Add both.",
    "reused.h-direct-only": "That is only the direct path out = h * a; h also reaches out "
                            "through a = h + x. Add h * 1.",
    "reused.h-through-a-only": "That is only the path through a; h is also a direct factor of "
                               "out = h * a. Add a.",
    "reused.x": "x has two consumers as well: h = x * y (local gradient y) and a = h + x (local "
                "gradient 1). Use the complete gradients of h and a.",
    "reused.x-through-h-only": "You followed x only through h; x also feeds a = h + x directly. "
                               "Add d out / d a.",
    "reused.x-partial-h": "Your gradient of h misses one of its consumers; with the full "
                          "d out / d h = a + h the rest follows.",
    "reused.y": "y only reaches out through h = x * y: d out / d y = (d out / d h) * x.",
    "reused.y-partial-h": "Your gradient of h misses the path through a: use "
                          "d out / d h = a + h.",
    # ch04-second-backward
    "second.grad": "One backward gives d out / d x = 6 x0 + 1. Each further call adds the same "
                   "amount into x.grad.",
    "second.one-call": "That is the gradient of one call: backward adds into x.grad, it does "
                       "not overwrite it.",
    "second.no-plus-x": "The + x term contributes 1 to the gradient too.",
    "second.out": "That is calls * out, not the gradient; d out / d x = 6 x0 + 1.",
    "second.doubles": "Each call adds one gradient; it does not double what is there.",
    # ch04-topological-sort
    "sort.none": "Did you forget the `return` statement?",
    "sort.list": "Collect the nodes in a list and return it.",
    "sort.not-node": "Put the nodes themselves in the list (not their data, labels or ids).",
    "sort.duplicate": "A node that is used twice is reached along two paths. Keep a set of the "
                      "nodes you have already visited and skip them the second time.",
    "sort.missing": "Follow node.parents all the way down to the leaves; every node reachable "
                    "from the root belongs in the list, leaves included.",
    "sort.forward": "Backward runs from the output to the leaves: reverse your list.",
    "sort.order": "Do a depth-first search that appends a node only after all its parents have "
                  "been appended (post-order), then reverse the list: every node then comes "
                  "before the nodes it was computed from. (A breadth-first order is not enough "
                  "once a node is reused along paths of different lengths.)",
    "sort.work": "It walks through a reused node once per path, and the number of paths grows "
                 "exponentially. Expand each node only the first time you reach it (a `visited` "
                 "set), even if you de-duplicate the list afterwards.",
    "sort.twice": "Keep the visited set inside the function (a new one per call) instead of "
                  "marking the nodes themselves.",
    "sort.recursion": "A recursive function needs one Python frame per level, and Python stops "
                      "at about 1,000 (RecursionError). Use an explicit stack (a list you append "
                      "to and pop from) instead of recursion.",
    "sort.recursion-short": "Use an explicit stack, not recursion.",
    # ch04-backward
    "backward.dict": "Keep the gradients in a dict local to the call and return it at the end.",
    "backward.root": "d root / d root = 1: start with grads = {root: 1.0}.",
    "backward.visits": "A node used by several consumers is reached along several paths. In "
                       "topological_sort, keep a set of the nodes already visited and skip a "
                       "node the second time you reach it, so that the order lists each node "
                       "once.",
    "backward.missing": "Start with grads = {root: 1.0} and give every parent an entry as you "
                        "pass the gradient down to it.",
    "backward.sum": "Every consumer adds local_grad * (its own gradient) to each parent: "
                    "grads[p] = grads.get(p, 0.0) + local * grads[node].",
    "backward.non-leaf": "Keep non-leaf gradients in the dict (the engine's buffers); only "
                         "leaves add into .grad, as in PyTorch.",
    "backward.leaf": "A leaf adds its gradient to what .grad already holds: "
                     "leaf.grad += grads[leaf].",
    "backward.overwritten": "That is this call's gradient alone: .grad must accumulate across "
                            "calls (leaf.grad += ...), not be overwritten.",
    "backward.same-parent": "1.5 is one of the two contributions: x is a parent of x*x twice, "
                            "and the second one overwrote the first. Add: "
                            "grads[p] = grads.get(p, 0.0) + local * g.",
    "backward.h-square-only": "That is only the contribution of h*h; h also feeds the + "
                              "directly. Sum over every consumer.",
    "backward.h-plus-only": "That is only the contribution of the +; h also feeds h*h. Sum over "
                            "every consumer.",
    "backward.twice": "Each call must compute this call's gradients from scratch (a fresh dict) "
                      "and add them to the leaves once. If non-leaf gradients live in .grad, "
                      "the second call starts from the first call's leftovers.",
    "backward.recursion": "Your backward (or the topological_sort it calls) must not recurse: "
                          "use an explicit stack.",
    "backward.chain": "The gradient of a chain is the product of its local gradients.",
    # ch04-topological-order
    "order.none": "Did you forget the `return` statement?",
    "order.list": "Collect the Variables in a list; return it.",
    "order.no-grad": "Follow v.grad_fn.inputs, and skip inputs that are not Variables or do not "
                     "require grad (they get no gradient).",
    "order.duplicate": "A Variable used by several operations is reached along several paths: "
                       "keep a set of the Variables already visited (by id(v)) and skip them.",
    "order.missing": "Follow grad_fn.inputs down to the leaves; leaves that require grad belong "
                     "in the list too (that is where backward adds into .grad).",
    "order.forward": "Append each Variable after its inputs (post-order), then reverse the list.",
    "order.order": "Append a Variable only when all its inputs are done (post-order), then "
                   "reverse: as in your topological_sort for Scalars.",
    "order.twice": "Make a new visited set in every call.",
    "order.leaf": "A leaf has no node (its grad_fn is None): it was computed from nothing, so it "
                  "has no inputs to follow.",
    "order.number": "One input of this node is the plain number 3.0, which has no requires_grad "
                    "and no node: follow only the inputs that are Variables (isinstance) and "
                    "require grad.",
    "order.recursion": "Use an explicit stack, not recursion: Python stops at about 1,000 nested "
                       "calls.",
    # ch04-hooks
    "hooks.return": "Return the gradient that flows on: with no hooks, the one you were given. "
                    "Did you forget the `return` statement?",
    "hooks.none-called": "register_hook keeps a Variable's hooks in its list v._hooks: call each "
                         "of them, in that order (a Variable that never got a hook has no such "
                         "attribute).",
    "hooks.none-kept": "A hook that returns None only watched: keep the gradient as it was. "
                       "Only a result other than None replaces it.",
    "hooks.variable": "A hook may return a plain numpy array (the last hook here does): make its "
                      "result a Variable (as_variable) before it flows on.",
    "hooks.once-each": "Call the hooks in the order they were registered, each once.",
    "hooks.results-ignored": "A value a hook returns replaces the gradient: your _run_hooks "
                             "ignored the results.",
    "hooks.last-only": "Only the last hook's result counted: each result replaces the gradient "
                       "for the hooks after it.",
    "hooks.chain": "When a hook returns a value, that value is the gradient from then on: for "
                   "the next hook too, not only for what _run_hooks returns.",
    "hooks.handle": "Return an object whose remove() takes this hook off again (the given "
                    "_HookHandle).",
    "hooks.append": "The engine calls the functions in v._hooks: register_hook must append the "
                    "hook to that list (made the first time).",
    "hooks.shared": "The hook ran {count} times in one backward: the list is shared by all "
                    "Variables (kept on the class, in a global or as a default argument). Give "
                    "each Variable a list of its own, made the first time register_hook is "
                    "called on it.",
    "hooks.dropped": "Registering a hook dropped the ones before it: make h's list only the "
                     "first time (when h has none yet), then append to it.",
    "hooks.end": "Append each new hook at the end of the list.",
    "hooks.remove": "remove() takes this handle's hook off the Variable's list.",
    "hooks.remove-twice": "remove() a second time must do nothing: the hook is off already, so "
                          "check that it is still in the list first.",
    "hooks.remove-list": "remove() must take the hook off the very list the Variable holds (the "
                         "handle keeps that list, not a copy, and the Variable keeps appending "
                         "to the same list).",
    "hooks.halving": "The second hook (grad * 0.5) must still run after the first is removed.",
    "hooks.halving-lost": "The halving hook did not run: either registering a second hook "
                          "dropped the first list, or remove() took off more than its own "
                          "hook. Append to the Variable's list and remove only the handle's "
                          "hook.",
    "hooks.retain": "retain_grad only leaves the note the engine reads: v._retains_grad = True "
                    "(the walk then keeps v's complete gradient in v.grad).",
    "hooks.retain-same": "retain_grad must not change the gradients.",
    "hooks.retain-h": "Only set the note; h stays in its graph.",
    "hooks.leaf": "The hook's result replaces the gradient before the leaf keeps it.",
    "hooks.own-list": "Keep the hooks on the Variable itself (self._hooks), one list each.",
    # ch04-engine-backward
    "engine.grads": "Walk topological_order(root) with a dict of gradients by id(v): at each "
                    "Variable, call its node's backward and add each input's gradient into that "
                    "input's entry; a leaf (grad_fn None) adds its gradient into .grad.",
    "engine.one-user": "l1 is used by l2 and by l3, and only one of their gradients reached it: "
                       "add the gradients of all of a Variable's users (grads[id(x)] = "
                       "grads[id(x)] + gx when there is an entry already).",
    "engine.non-leaf": "Only leaves that require grad (and Variables that asked for retain_grad) "
                       "keep a gradient in .grad.",
    "engine.per-path": "x got three times its gradient: the Variable h was handled once per "
                       "path (three times).",
    "engine.one-of-h": "Only one contribution reached h: add the gradients of all of h's users "
                       "(grads[id(x)] = grads[id(x)] + gx when there is an entry already).",
    "engine.mode-off": "The walk computes gradients, it does not build a graph of them: switch "
                       "GradMode.enabled to create_graph (False here) while it runs.",
    "engine.mode-back": "Keep the caller's mode before the walk and put exactly that back "
                        "afterwards, in a finally: block.",
    "engine.accumulate": "Leaves accumulate: x.grad = x.grad + gradient, never overwrite.",
    "engine.accumulate-add": "That is one call's gradient: the second call must add to .grad, "
                             "not replace it.",
    "engine.copy": "Add hands the very same gradient to both of its inputs. The first time a "
                   "leaf gets a gradient, _accumulate must store a copy of its data, not the "
                   "object it was given.",
    "engine.release": "After a node's backward has run, call node.release() unless retain_graph "
                      "is true; its saved_tensors then raise on the second call.",
    "engine.mode-finally": "Put the caller's mode back in a finally: block around the walk, so "
                           "that it comes back whether the walk ends or raises.",
    "engine.gradient": "Start the dict with the given gradient for the root: grads = "
                       "{id(root): gradient}.",
    "engine.needs-gradient": "Without gradient=, backward only makes sense for a single-number "
                             "output: raise RuntimeError naming the shape and gradient=.",
    "engine.nothing-recorded": "Nothing was recorded: raise RuntimeError saying so (as PyTorch "
                               "does).",
    "engine.rule": "_check_grads (given in the cell) follows PyTorch's rule: surplus trailing "
                   "Nones are dropped, missing trailing gradients are fine for inputs that need "
                   "none, and any other count raises RuntimeError. Call it on what each node's "
                   "backward returns.",
    "engine.surplus-none": "Scale.apply(x) took one input, its backward returned (grad_x, None) "
                           "for the defaulted factor that was not passed. ",
    "engine.missing-number": "Scale.apply(x, 3.0) took two inputs, its backward returned only "
                             "grad_x: the factor 3.0 needs no gradient. ",
    "engine.cut-off": "Scale.apply(x) took one input, but its backward returned two gradients "
                      "that are not None: a mistake in that backward, to be reported, not cut "
                      "off. ",
    "engine.filled": "Scale.apply(x, w) with w requiring grad, but its backward returned one "
                     "gradient: w's is missing, to be reported, not filled with None. ",
    "engine.retain": "A Variable marked _retains_grad keeps its complete gradient in .grad "
                     "(with _accumulate), as a leaf does; its node still sends gradients on.",
    "engine.hooks-never": "When a Variable's turn comes in the order, its gradient is complete: "
                          "pass it through _run_hooks(v, g) before anything else uses it.",
    "engine.hooks-once": "Call _run_hooks when v's turn comes in the order (its gradient is "
                         "complete then, the sum of all its users'), and only then: not once per "
                         "contribution.",
    "engine.hooks-flow": "What _run_hooks returns is h's gradient from then on.",
    "engine.hooks-result": "The gradient _run_hooks returned was not used: go on with it (a "
                           "hook halved h's gradient here).",
    "engine.hooks-leaf": "A leaf's gradient goes through _run_hooks too, before it is "
                         "accumulated: a hook on a leaf can change what lands in its .grad (here "
                         "it halves it).",
    "engine.hooks-leaf-late": "y's hook did not change y.grad: pass a leaf's complete gradient "
                              "through _run_hooks first, then _accumulate what it returns "
                              "(running the hooks after accumulating is too late).",
    "engine.unchanged": "An error in a Function's backward must reach the caller unchanged.",
    "engine.mode-caller": "Put back the mode the caller had (read it before the walk), not True.",
    "engine.root-shape": "Without gradient=, start the walk from ones shaped like the root's "
                         "data, not from the number 1.",
    "engine.create-graph": "With create_graph=True the walk runs with grad mode on (the "
                           "gradients become a graph); read the traceback for the failing line.",
    "engine.retain-follows": "The first call had create_graph=True and retain_graph left at "
                             "None: retain_graph then follows create_graph, so that call must "
                             "not free the saved tensors.",
    "engine.twice-six": "Leaves accumulate: the second call adds 6 to the first call's 6.",
    "engine.iterative": "Use your iterative topological_order.",
}
