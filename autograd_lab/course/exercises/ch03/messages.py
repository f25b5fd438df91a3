"""Every hint the chapter 03 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # shared by the checks that run one Function of the learner's
    "setup.globals": "Run the chapter's first cell (load_mygrad) and the %%mygrad cells above "
                     "this one, in order, then this check again.",
    "setup.subclass": "Write class {name}(Function): with static forward and backward, and pass "
                      "the class itself (not an instance, not .apply).",
    "by-hand.input-changed": "Compute a new array (np.exp(x.data), x.data.sum()); never write "
                             "into x.data.",
    "by-hand.grad-output-changed": "grad_output belongs to the engine: compute a new Variable "
                                   "from it.",
    "by-hand.no-gradient": "Return the gradient of x (one per input of forward).",
    "by-hand.not-variable": "Compute the gradients with Variable operations (grad_output * b, "
                            "not grad_output.data * b.data) and return Variables: the engine "
                            "adds Variables, and chapter 11 differentiates backward itself, "
                            "which needs its formulas recorded like any other computation.",
    # ch03-context
    "context.class": "Pass the class itself: check.ch03_context(Context).",
    "context.new": "Context() takes no arguments.",
    "context.inputs": "__init__ starts every node with inputs = () (apply fills them in).",
    "context.needs": "__init__ starts every node with needs_input_grad = ().",
    "context.new-saved": "A new node saved nothing, so saved_tensors gives () -- set what it "
                         "reads in __init__.",
    "context.tuple": "Give the tensors back as a tuple: backward unpacks it, and a tuple cannot "
                     "be changed by accident.",
    "context.empty": "A node that saved nothing (Add and Neg never call save_for_backward) gives "
                     "an empty tuple.",
    "context.give-back": "Return what save_for_backward kept.",
    "context.tuple-order": "Give the tensors back as a tuple, in the order saved: backward "
                           "unpacks it (a, b = ctx.saved_tensors).",
    "context.same-objects": "Keep the tensors themselves (not copies, not their data).",
    "context.read-twice": "Reading saved_tensors must not use the tensors up.",
    "context.read-only": "saved_tensors only reads; release() is what frees.",
    "context.saved-attribute": "Keep them in self._saved, as the exercise says: chapter 06 adds "
                               "version checks to this node and reads self._saved.",
    "context.on-self": "Keep the tensors on the node (self), not on the class.",
    "context.shared": "Keep what was saved on self (this node): stored on the class or in a "
                      "global, the last node to save overwrites everyone's.",
    "context.new-nothing": "A new node saved nothing.",
    "context.fresh": "Keep what was saved on self, and start each node with () in __init__.",
    "context.none-saved": "None is saved like any tensor.",
    "context.none-kept": "Keep every argument, None included, in its position.",
    "context.freed": "release() frees the tensors (the engine calls it after a backward); "
                     "reading them afterwards is a second backward without retain_graph. Free "
                     "them in a way saved_tensors can tell apart from 'saved nothing', and raise "
                     "there.",
    "context.retain-graph": "Raise with the given message: it names retain_graph=True.",
    "context.others-kept": "release() of one node must leave the others alone.",
    "context.release-self": "release() frees this node's tensors only (self).",
    "context.saved-none": "release() sets self._saved to None, as the exercise says: that is how "
                          "saved_tensors (here and in chapter 06) tells 'freed' from 'saved "
                          "nothing'.",
    # ch03-neg-function
    "neg.output": "-x elementwise: Variable(-x.data).",
    "neg.gradient": "d(-x)/dx = -1: the gradient is -grad_output.",
    "neg.through": "You passed grad_output through; negate it.",
    "neg.local": "That is the local derivative alone: multiply it by grad_output (the chain "
                 "rule).",
    "neg.returned-output": "You returned the output; backward returns -grad_output.",
    # ch03-exp-function
    "exp.output": "exp(x) elementwise: np.exp(x.data).",
    "exp.gradient": "d e**x / dx = e**x: the gradient is grad_output times the output.",
    "exp.input": "You multiplied grad_output by the input x; the derivative of e**x is e**x, "
                 "the output (save it in forward).",
    "exp.chain": "That is e**x alone: multiply it by grad_output (the chain rule).",
    "exp.through": "You passed grad_output through unchanged: multiply it by e**x.",
    # ch03-reductions
    "reductions.forward-sum": "forward gives one number: x.data.sum().",
    "reductions.forward-mean": "forward gives one number: x.data.mean().",
    "reductions.spread": "A gradient has the shape of its input: every element of x gets "
                         "grad_output (BroadcastTo.apply(grad_output, x's shape) spreads it).",
    "reductions.mean": "Every element gets grad_output / n, n the number of elements.",
    "reductions.chain": "grad_output is missing: multiply by it (the chain rule).",
    "reductions.mean-is-sum": "That is Sum's gradient: the mean divides by the number of "
                              "elements, n.",
    "reductions.first-axis": "n is the number of *all* elements, not the length of the first "
                             "axis.",
    # ch03-clone-function
    "clone.variable": "forward returns a new Variable.",
    "clone.same": "A clone is a new Variable: FixedReLU zeroes elements of its clone of "
                  "grad_output, and with x itself it would zero the engine's gradient.",
    "clone.shares": "Variable(x.data) wraps the same numpy array: copy the data first, so that "
                    "the clone can be changed on its own.",
    "clone.output": "The clone holds the same numbers as x.",
    "clone.gradient": "A copy changes nothing: its derivative is 1, so backward gives "
                      "grad_output as it is.",
    "clone.local": "That is the local derivative alone: multiply it by grad_output (the chain "
                   "rule), which leaves grad_output.",
    "clone.zeros": "Gradients flow through a clone unchanged; a zero gradient is what detach "
                   "(chapter 06) means, not clone.",
    "clone.returned-data": "You returned the data; backward returns the gradient, grad_output.",
    # ch03-sum-to
    "sumto.as-variable-same": "A Variable is returned as it is: wrapping it again would cut it "
                              "off from its graph.",
    "sumto.as-variable-wrap": "Wrap anything else: Variable(x).",
    "sumto.broadcast-forward": "Repeat x along the stretched axes: np.broadcast_to(x.data, "
                               "shape).",
    "sumto.read-only": "np.broadcast_to gives a read-only view sharing x's memory; copy it, so "
                       "that the result is an array of its own.",
    "sumto.shares": "Return an array of its own (np.broadcast_to(x.data, shape).copy()), also "
                    "where the shapes agree: a result sharing x's memory changes when x does.",
    "sumto.broadcast-backward": "A gradient has the shape of its input: sum grad_output back "
                                "down to x's shape (SumTo.apply), the opposite of forward.",
    "sumto.broadcast-gradient": "Every copy of an element sends its gradient back to that "
                                "element: they add up (SumTo).",
    "sumto.sum-forward": "Sum over the axes broadcasting added (the leading ones) and, keeping "
                         "them, over the axes where the target has a 1 (unbroadcast_array does "
                         "both).",
    "sumto.sum-backward": "The backward of a sum repeats grad_output over what was summed: "
                          "BroadcastTo.apply(grad_output, the input's shape).",
    "sumto.sum-to": "Where the shapes differ, sum_to is SumTo.apply(grad, shape).",
    # the node and backward of a Function run with the course's apply
    "node.variable": "forward must return a Variable, e.g. Variable(np.maximum(x.data, 0)).",
    "node.apply": "Call the Function through .apply(...): apply records the node. Inside "
                  "forward, compute and return a new Variable.",
    "node.saved-nothing.a, b": "backward can only read what forward kept: call "
                              "ctx.save_for_backward(a, b) in forward, before it returns.",
    "node.saved-nothing.x": "backward can only read what forward kept: call "
                              "ctx.save_for_backward(x) in forward, before it returns.",
    "node.saved-nothing.input_": "backward can only read what forward kept: call "
                              "ctx.save_for_backward(input_) in forward, before it returns.",
    "node.backward-raised": "Read the traceback above to find the failing line.",
    # ch03-mul-function
    "mul.added": "You added; multiply: a.data * b.data.",
    "mul.output": "Return Variable(a.data * b.data).",
    "mul.two": "One gradient per input of forward: return grad_a, grad_b.",
    "mul.none-a": "a requires grad: return grad_output * b for it.",
    "mul.shape-a": "a was broadcast in forward: sum its gradient back to its shape, "
                   "sum_to(grad, a.shape), as Add does.",
    "mul.chain-a": "Multiply by grad_output (the chain rule): grad_output * b.",
    "mul.swapped-a": "That is the other input's gradient: the gradient of a is grad_output "
                     "times b.",
    "mul.gradient-a": "d(a*b)/da = b: the gradient of a is grad_output * b.",
    "mul.none-b": "b requires grad: return grad_output * a for it.",
    "mul.shape-b": "b was broadcast in forward: sum its gradient back to its shape, "
                   "sum_to(grad, b.shape), as Add does.",
    "mul.chain-b": "Multiply by grad_output (the chain rule): grad_output * a.",
    "mul.swapped-b": "That is the other input's gradient: the gradient of b is grad_output "
                     "times a.",
    "mul.gradient-b": "d(a*b)/db = a: the gradient of b is grad_output * a.",
    # ch03-relu-function
    "relu.input-changed": "Return a new Variable: Variable(np.maximum(x.data, 0)).",
    "relu.min": "That is min(x, 0); relu keeps the positive values: np.maximum(x.data, 0).",
    "relu.output": "relu(x) = max(x, 0), elementwise: np.maximum(x.data, 0).",
    "relu.one": "ReLU has one input: return one gradient.",
    "relu.grad-output-changed": "grad_output belongs to the engine: compute a new Variable "
                                "(grad_output * mask), or zero a copy (grad_output.clone()).",
    "relu.none": "x requires grad: return grad_output where x > 0, 0 elsewhere.",
    "relu.at-zero": "At x = 0 you passed the gradient through. relu has no derivative there; "
                    "PyTorch (and autograd_lab) use 0, which is a valid subgradient: keep the "
                    "gradient only where x > 0.",
    "relu.through": "You passed grad_output through unchanged: zero it where x <= 0.",
    "relu.mask": "You returned the mask of positive inputs; multiply it by grad_output (the "
                 "chain rule).",
    "relu.negative": "You kept the gradient where x was negative; keep it where x is positive.",
    "relu.gradient": "The gradient is grad_output where x > 0, and 0 elsewhere.",
    "relu.keep-dtype": "np.maximum(x.data, 0) keeps the input's dtype; do not convert it.",
    "relu.float32": "A gradient has its input's dtype. Something in backward is float64: the "
                    "mask, probably (a Variable of bools becomes float64). Build the mask in "
                    "grad_output's dtype.",
    # ch03-find-the-bug
    "find.input-builtin": "backward still reads the name `input`; without a variable of that "
                          "name it is Python's built-in input() (in Jupyter, the kernel's "
                          "version of it), which cannot be compared with a number. Which tensor "
                          "should the mask come from?",
    "find.grad-output-changed": "grad_output belongs to the engine, which may hand the same "
                                "object to other nodes: zero the entries of a copy "
                                "(grad_output.clone()), as the old tutorial did, not of "
                                "grad_output itself.",
    "find.through-global": "The gradient passed through everywhere, also where the input was "
                         "negative: the mask was computed from the global `input`, not from the tensor "
                         "forward saved.",
    "find.zeros-global": "The gradient is 0 everywhere: the mask was computed from the global `input`, not "
                       "from the tensor forward saved.",
    "find.through-other": "The gradient passed through everywhere, also where the input was "
                         "negative: the mask was computed from something other than the input, not from the tensor "
                         "forward saved.",
    "find.zeros-other": "The gradient is 0 everywhere: the mask was computed from something other than the input, not "
                       "from the tensor forward saved.",
    "find.gradient": "Zero the gradient where the input forward saved was negative, and "
                     "nowhere else.",
    # ch03-own-apply
    "apply.class": "Pass the class itself: check.ch03_own_apply(Function).",
    "apply.none": "Return forward's output.",
    "apply.variable": "Return the output of forward.",
    "apply.output": "output = cls.forward(ctx, *inputs)",
    "apply.restore": "Put the value you read before forward back afterwards (in a finally: "
                     "block, so it is restored even if forward raises).",
    "apply.restore-true": "Restore the value you read before forward, not True.",
    "apply.requires-no-node": "After output.requires_grad = True, also set output.grad_fn = "
                              "ctx, so the output remembers the node that made it.",
    "apply.reads-when-off": "apply reads grad mode while it is switched off for forward, so it "
                            "always reads False. Read GradMode.enabled once, before switching it "
                            "off, keep it in a variable (enabled = GradMode.enabled) and decide "
                            "with that.",
    "apply.not-recorded": "When grad mode was on and any(ctx.needs_input_grad): set "
                          "output.requires_grad = True and output.grad_fn = ctx.",
    "apply.off-in-forward": "Switch it off around the call: GradMode.enabled = False, then "
                            "forward, then switch it back.",
    "apply.same-ctx": "Make one node, ctx = cls.Node(), pass it to forward and record that same "
                      "object: output.grad_fn = ctx.",
    "apply.node-class": "__init_subclass__ gives each Function a node class, cls.Node: create "
                        "the ctx with cls.Node().",
    "apply.requires-grad": "Set output.requires_grad = True when you record the node.",
    "apply.inputs": "ctx.inputs = inputs: the edges of the graph, pointing back to what the "
                    "output was computed from.",
    "apply.needs": "One bool per argument: isinstance(x, Variable) and x.requires_grad.",
    "apply.needs-number": "A number never needs a gradient: test isinstance(x, Variable) before "
                          "reading x.requires_grad.",
    "apply.raw-raised": "This forward returns a numpy array: wrap anything that is not a "
                        "Variable as one, Variable(output), before recording.",
    "apply.wrap": "If forward's result is not a Variable, wrap it: Variable(output).",
    "apply.no-grad-needed": "Record only if any(ctx.needs_input_grad).",
    "apply.grad-mode-off": "Record only if grad mode was on when apply was called: enabled and "
                           "any(ctx.needs_input_grad).",
    "apply.let-through": "Let forward's error pass (do not catch it).",
    "apply.finally": "Restore grad mode in a finally: block: try: forward ... finally: "
                     "GradMode.enabled = enabled.",
    "apply.node-function": "The node class that __init_subclass__ makes carries function = cls; "
                           "create the ctx with cls.Node().",
    "apply.walk": "Each node keeps its inputs (ctx.inputs = inputs) and each output its node "
                  "(output.grad_fn = ctx).",
}
