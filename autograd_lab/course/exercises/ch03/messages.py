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
}
