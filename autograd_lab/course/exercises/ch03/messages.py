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
}
