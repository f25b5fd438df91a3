"""Every hint the chapter 02 checks give, by id: reviewed, counted and translated here.

A few are templates (``{name}``, ``{got}``): the check fills them in with ``str.format``."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # shared
    "common.return": "Did you forget the `return` statement?",
    # ch02-variable-class
    "variable.class": "Pass the class itself: check.ch02_variable_class(Variable).",
    "variable.asarray": "Store the array in __init__: self.data = np.asarray(data).",
    "variable.convert": "Convert what you are given: self.data = np.asarray(data).",
    "variable.ints": "Gradients are fractions, so a Variable holds floats: after np.asarray, "
                     "convert when data.dtype.kind is not 'f' (float) or 'c' (complex).",
    "variable.floats": "Convert only integers and bools; keep float data as it is.",
    "variable.nested": "np.asarray cannot read a Variable: if data is a Variable, use data.data.",
    "variable.grad-start": "Start with self.grad = None: there is no gradient yet.",
    "variable.grad-none": "The gradient only exists after a backward pass: "
                          "self.grad = None in __init__.",
    "variable.store-flag": "Store the flag: self.requires_grad = requires_grad.",
    "variable.flag-default": "def __init__(self, data, requires_grad=False).",
    "variable.grad-fn-start": "A new Variable was made by no operation: self.grad_fn = None.",
    "variable.grad-fn-none": "A Variable you make yourself was made by no Function: "
                             "self.grad_fn = None (apply sets it later, chapter 03).",
    "variable.flag": "self.requires_grad = requires_grad",
    "variable.bool": "Store a real bool: self.requires_grad = bool(requires_grad).",
    "variable.is-leaf": "return self.grad_fn is None",
    "variable.leaf": "A leaf is a Variable no operation made.",
    "variable.leaf-computed": "Compute is_leaf from grad_fn each time it is read (return "
                              "self.grad_fn is None) instead of storing a flag in __init__.",
    "variable.property.is_leaf": "Put @property above def is_leaf(self), so that v.is_leaf works "
                                 "without brackets and is computed each time it is read.",
    "variable.property.shape": "Put @property above def shape(self), so that v.shape works "
                               "without brackets and is computed each time it is read.",
    "variable.property.ndim": "Put @property above def ndim(self), so that v.ndim works "
                              "without brackets and is computed each time it is read.",
    "variable.property.dtype": "Put @property above def dtype(self), so that v.dtype works "
                               "without brackets and is computed each time it is read.",
    "variable.shape-read": "return self.data.shape",
    "variable.shape": "shape is the shape of the array: return self.data.shape",
    "variable.ndim-read": "ndim is the array's number of axes.",
    "variable.ndim-rows": "ndim counted the rows (the length of the first axis, len(data)); it is "
                          "the number of axes: 2 for a matrix, 0 for a single number.",
    "variable.ndim-size": "ndim counted the elements (data.size); it is the number of axes, the "
                          "length of the shape.",
    "variable.ndim": "ndim is the number of axes of the array: the length of its shape.",
    "variable.dtype-read": "dtype is the array's element type.",
    "variable.dtype-string": "dtype gave the name as a string; give numpy's dtype object itself "
                             "(the array's .dtype), which compares equal to np.float64.",
    "variable.dtype-class": "dtype gave a Python class ({name}); the dtype is the type of the "
                            "array's elements, which the array itself reports.",
    "variable.dtype": "dtype is the type of the array's elements, as the array itself reports it.",
    "variable.numpy-read": "numpy() gives the array the Variable holds.",
    "variable.numpy-copy": "numpy() made a copy: it must give the array the Variable holds, so "
                           "that a change through one shows in the other, as PyTorch's t.numpy() "
                           "shares memory.",
    "variable.numpy-type": "numpy() did not give a numpy array; it gives the array the Variable "
                           "holds, not the Variable itself or a list.",
    "variable.numpy": "numpy() gives the array the Variable holds, unchanged.",
    "variable.item-read": "return self.data.item()",
    "variable.item": "numpy's ndarray.item() turns a one-element array into a Python number.",
    "variable.len-write": "Write __len__(self), returning the length of the first axis.",
    "variable.len-size": "len() counted every element (data.size); like a numpy array's, it is "
                         "the length of the first axis: the number of rows.",
    "variable.len-ndim": "len() gave the number of axes (ndim); it is the length of the first "
                         "axis.",
    "variable.len": "len() is the length of the first axis, as for a numpy array or a list of "
                    "rows.",
    "variable.repr-write": "Write __repr__ returning a string.",
    "variable.repr": "Start from body = np.array2string(self.data, separator=', ') and return "
                     "f'Variable({body})'.",
    "variable.repr-flag": "Add ', requires_grad=True' when self.requires_grad is True.",
    "variable.repr-grad-fn": "When grad_fn is set, show it instead of requires_grad: "
                             "', grad_fn=<' + type(self.grad_fn).__name__ + '>'.",
    # ch02-propagation-rule
    "rule.bool": "Return a bool, e.g. any(...) and grad_enabled.",
    "rule.one": "An output requires grad when any input does.",
    "rule.none": "No input requires grad, so the output does not.",
    "rule.any": "One input that requires grad is enough: use any(...), not all(...).",
    "rule.every": "Look at every input, not only the first one: any(...).",
    "rule.grad-mode": "In al.no_grad() nothing is recorded: return False when grad_enabled is "
                      "False.",
    "rule.getattr": "Use getattr(a, 'requires_grad', False) so numbers and arrays count as False.",
    "rule.number": "Numbers count as False, but w requires grad.",
    "rule.computed": "A computed Variable that requires grad passes the flag on, like a leaf "
                     "does.",
    "rule.empty": "With no inputs nothing requires grad.",
    "rule.frozen": "frozen was made under no_grad, so it does not require grad.",
    "rule.duck": "Read the attribute requires_grad, whatever the class.",
    "rule.all-inputs": "any(...) over all inputs.",
    # ch02-hand-gradients
    "hand.dict": "Return a dict with one entry per Variable of the graph.",
    "hand.keys": "Give d loss / d x for l4, l3, l2, l1, w1, w2 and w3.",
    "hand.l-shape": "Give the gradient of each element: an array of shape (2, 2), "
                    "e.g. np.full((2, 2), value).",
    "hand.w-shape": "w1, w2 and w3 are scalars: give a single number.",
    "hand.chain": "Go backwards from loss one step at a time: the gradient of a Variable is the "
                  "sum, over the Variables it feeds, of their gradient times the local derivative.",
    "hand.l4-mean": "loss is the mean of 4 numbers, so each one counts 1/4.",
    "hand.mean": "Remember the 1/4 from the mean.",
    "hand.l3-factor": "d loss/d l3 multiplies by l2 (the other factor of l4 = l2 * l3), not by "
                      "l3.",
    "hand.l2-factor": "d loss/d l2 multiplies by l3 (the other factor), not by l2.",
    "hand.l1-l3": "l1 feeds two Variables: add the path through l2 AND the path through l3 "
                  "(d l3/d l1 = w3).",
    "hand.l1-l2": "l1 feeds two Variables: add the path through l2 (d l2/d l1 = 1) to the path "
                  "through l3.",
    "hand.w1-sum": "w1 is a scalar used in all 4 elements of l1 = input * w1: sum the "
                   "contributions of all 4.",
    "hand.w-average": "Sum over the 4 elements, do not average.",
    "hand.w2": "w2 is added to all 4 elements of l1: sum the 4 gradients of l2.",
    "hand.w3": "w3 multiplies all 4 elements of l1: sum the 4 contributions of l3.",
    # ch02-find-leaves
    "find.list": "Return a list.",
    "find.variables": "Collect node.variable from the AccumulateGrad nodes (not the nodes).",
    "find.example": "Follow every edge: push each node in next_functions you have not seen, and "
                    "collect node.variable from the AccumulateGrad nodes.",
    "find.once": "Remember the nodes (or leaves) you have already seen, so each leaf is listed "
                 "once (compare with `is`, or keep a set of id(...)).",
    "find.none": "Skip the entries of next_functions whose node is None.",
    "find.leaf": "A leaf that requires grad has no grad_fn: then the answer is [var] itself.",
    "find.detached": "A Variable with grad_fn None that does not require grad has no leaves: [].",
    "find.deep": "A function that calls itself for each node needs one Python frame per node, "
                 "and Python stops at about 1,000 (RecursionError): keep the nodes still to "
                 "visit in a list (a stack) instead.",
    "find.reuse": "Use a stack (or queue) and a seen set over the nodes.",
    "find.chain": "Walk all the way down the chain.",
}
