"""Every hint the chapter 05 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # Functions called by hand (every Function exercise of the chapter)
    "fn.input-changed": "Compute new arrays from the inputs' data; never write into them.",
    "fn.grad-output-changed": "grad_output belongs to the engine: compute new Variables from it.",
    "fn.variables": "Compute the gradients with Variable operations (grad_output * b, not "
                    "grad_output.data * b.data) and return Variables: the engine adds "
                    "Variables, and chapter 11 differentiates backward itself, which needs its "
                    "formulas recorded like any other computation.",
    "fn.grad-shape.a": "a was broadcast in forward: sum its gradient down to its shape, "
                       "sum_to(grad, a.shape).",
    "fn.grad-shape.b": "b was broadcast in forward: sum its gradient down to its shape, "
                       "sum_to(grad, b.shape).",
    "fn.grad-shape.x": "x was broadcast in forward: sum its gradient down to its shape, "
                       "sum_to(grad, x.shape).",
    "fn.one-per-input": "Return one gradient per input of forward.",
    "fn.keep-on-ctx": "backward sees only ctx and grad_output, so forward must store on ctx "
                      "what backward needs from its inputs (a shape, an axis, a key).",
    # ch05-reshape-transpose
    "moved.none": "Return one gradient per argument of forward: (grad_x, None).",
    "moved.shape": "move its elements back to where they came from, into x's shape (forward "
                   "can keep on ctx what backward needs for that).",
    "moved.values": "Each element's gradient must go back to the position its element had in x.",
    "moved.arity": "The shape or the axes are not Variables: their gradient is None.",
    "reshape.keep-shape": "backward needs x's shape: forward must keep it on ctx (forward gets "
                          "x, backward only ctx and grad_output).",
    "reshape.forward": "forward returns x's data in the new shape.",
    "transpose.keep-axes": "backward needs forward's axes: forward must keep them on ctx.",
    "transpose.forward": "forward returns x's data with its axes permuted by axes (all reversed "
                         "when axes is None).",
    "transpose.same-axes": "backward permuted the gradient by the same axes as forward; it "
                           "needs the permutation that undoes forward's (np.argsort gives it).",
    "transpose.reversed": "backward reversed all axes; that undoes forward only when forward "
                          "reversed them all too (axes=None).",
    # ch05-sum-backward
    "sum.shape": "backward must return a gradient shaped like x. Put the summed axes back as "
                 "size 1 (reshape grad_output to _kept_shape(x_shape, axis), or "
                 "np.expand_dims(g, axis) when keepdims is False), then broadcast it to x's shape "
                 "(BroadcastTo.apply or np.broadcast_to); return (grad_x, None, None).",
    "sum.forward": "forward returns x.data.sum(axis=axis, keepdims=keepdims).",
    "sum.grad-none": "backward must return the gradient for x as its first value.",
    "sum.not-put-back": "The summed axis was not put back before broadcasting, so numpy lined "
                        "the gradient up with the wrong axis. Reshape it to the kept shape (the "
                        "summed axes as size 1) first, e.g. np.expand_dims(g, axis) when "
                        "keepdims is False.",
    "sum.ones": "The gradient is all ones: multiply by (broadcast) the incoming grad_output, do "
                "not ignore it.",
    "kept.none": "axis=None sums over every axis, so every axis becomes 1.",
    "kept.tuple": "axis may be a tuple: every axis in it becomes 1.",
    "kept.negative": "A negative axis counts from the end (-1 is the last axis): take it modulo "
                     "the number of axes before using it as a position.",
    "kept.int": "The axis summed over becomes 1; the others keep their sizes.",
    "kept.tuple-type": "Return a tuple, as numpy's shapes are (a list does not compare equal to "
                       "one).",
    # ch05-matmul-backward
    "mm.shape": "Read the formula off the shapes: a is (n, k), b is (k, m), grad is (n, m). "
                "grad_a must be (n, k): only grad @ b.T fits. grad_b must be (k, m): only "
                "a.T @ grad fits. Return (grad_a, grad_b).",
    "mm.save": "backward found nothing saved: forward must keep both inputs for it with "
               "ctx.save_for_backward(a, b).",
    "mm.forward": "forward returns a.data @ b.data wrapped in a Variable.",
    "mm.grad-none": "backward returns two gradients: (grad_a, grad_b).",
    "mm.a-no-transpose": "grad_a = grad @ b is missing the transpose: grad @ b.T.",
    "mm.a-order": "Wrong order: grad_a = grad @ b.T (grad on the left).",
    "mm.swapped": "did you swap the two gradients? Return (grad_a, grad_b) in the order of "
                  "forward's inputs.",
    "mm.b-no-transpose": "grad_b = a @ grad is missing the transpose: a.T @ grad.",
    "mm.b-order": "Wrong order: grad_b = a.T @ grad (grad on the right).",
    # ch05-softmax
    "sm.stable": "Subtract the maximum along the axis before exp (x - x.max(axis, "
                 "keepdims=True)): softmax does not change, and exp never overflows.",
    "sm.keepdims-forward": "Shapes did not line up in forward. A sum or max along the axis "
                           "without keepdims=True drops that axis, so the result no longer lines "
                           "up with x (a (2, 5) input gives (2,), which cannot divide (2, 5)). "
                           "Keep the axis: keepdims=True in every reduction of forward.",
    "sm.keepdims-backward": "Shapes did not line up in backward. The sum of g * y along the "
                            "axis must keep that axis (keepdims=True), so that it lines up with "
                            "y again: without it a (2, 5) gradient sums to (2,), which cannot be "
                            "subtracted from (2, 5).",
    "sm.input-changed": "Compute on new arrays (z = x.data - m), never x.data -= m.",
    "sm.forward": "softmax(x) = exp(x) / exp(x).sum(axis, keepdims=True) along the given axis.",
    "sm.forward-lost-axis": "The sum along the axis lost that axis (no keepdims=True), and numpy "
                            "lined it up with the wrong axis of exp(x): keepdims=True keeps each "
                            "row's sum next to its row.",
    "sm.grad-none": "backward returns (grad_x, None): one gradient per forward argument.",
    "sm.backward": "With y = softmax(x) saved in forward: grad_x = y * (g - (g * y).sum(axis, "
                   "keepdims=True)).",
    "sm.backward-lost-axis": "The sum of g * y lost the axis it was taken along (no "
                             "keepdims=True), so numpy lined it up with another axis: "
                             "keepdims=True.",
    "sm.input-saved": "backward used the input x where the formula needs the output "
                      "y = softmax(x): the tensor saved in forward must be the output (as Exp "
                      "saves its output), not the input.",
    "sm.diagonal": "That is only the diagonal of the Jacobian (i = j). Each output depends on "
                   "every input along the axis: grad_x = y * (g - (g * y).sum(axis, "
                   "keepdims=True)).",
    "sm.passthrough": "backward passed grad_output through unchanged; multiply by the softmax "
                      "Jacobian.",
    "sm.finite-wrong": "The result is finite but wrong: compare your forward with exp(x - max) "
                       "/ exp(x - max).sum(axis, keepdims=True), both along the axis argument.",
    # ch05-mean-backward
    "mean.broadcast": "If numpy could not broadcast: the averaged axes must come back as size 1 "
                      "before the copy along them (keepdims=False removed them), as in "
                      "Sum.backward; then divide by n.",
    "mean.forward": "forward returns the mean of x.data over axis, with keepdims.",
    "mean.sum-grad": "The gradient is Sum's: each element moved the mean by 1/n of its own "
                     "change, so divide the spread gradient by n.",
    "mean.times-n": "The gradient is n times too large: divide by n, do not multiply.",
    "mean.all-elements": "(the product of the sizes of the averaged axes).",
    "mean.output-size": "The gradient was divided by the number of means (the output's size); "
                        "divide by the number of elements each mean averages.",
    "mean.shape": "The averaged axes must come back as size 1 before the copy along them, as "
                  "in Sum.backward (keepdims=False removed them).",
    "mean.arity": "axis and keepdims are not Variables: their gradients are None.",
    # ch05-log-softmax
    "logsoftmax.keepdims": "The sum along the axis lost that axis, so numpy lined it up with "
                           "another one: sum with keepdims=True so it broadcasts back along the "
                           "same axis.",
    "logsoftmax.overflow": "exp of a score of a few hundred overflows: subtract the maximum "
                           "along the axis before exp (it cancels out of log softmax), as "
                           "Softmax does.",
    "logsoftmax.forward-lost-axis": "The sum inside the log lost its axis, so numpy subtracted "
                                    "it along another one: keepdims=True.",
    "logsoftmax.forward": "The output is the log of the softmax along axis: compare it with the "
                          "log of your Softmax's output for the same x.",
    "logsoftmax.no-z": "The output does not depend on each score: keep z itself in "
                       "z - log(sum exp z).",
    "logsoftmax.max-inside": "The maximum was subtracted inside the log but not from x itself: "
                             "z - log(sum exp z), with the same z in both places.",
    "logsoftmax.no-sum": "The sum over the axis is missing: every output depends on every score "
                         "through the sum, so each gradient takes the sum of all of grad_output "
                         "along the axis.",
    "logsoftmax.log-prob": "The saved output is a log-probability: the derivative of the sum is "
                           "the probability, exp of it.",
    "logsoftmax.sign": "The gradient has the wrong sign: raising x_i raises y_i itself "
                       "(+grad_output) and lowers every output through the sum.",
    "logsoftmax.arity": "axis is not a Variable: its gradient is None.",
    # ch05-index-function
    "index.keep": "backward needs x's shape and the key: forward must keep them on ctx "
                  "(backward sees only ctx and grad_output).",
    "index.forward": "forward returns the elements of x at key, as numpy's x.data[key] reads "
                     "them.",
    "index.none": "Return one gradient per argument of forward: (grad_x, None).",
    "index.shape": "grad_output has the shape of the elements read, not of x: put each of its "
                   "values back at the position it was read from, into zeros of x's shape "
                   "(that is Scatter).",
    "index.values": "Each element read sends its gradient back to its own position; positions "
                    "never read get 0, positions read twice get the sum.",
    "index.arity": "The key is not a Variable: its gradient is None.",
    "index.assigned": "A position read more than once got only one of its gradients: "
                      "out[key] = g (and out[key] += g) keeps the last write for a repeated "
                      "position. np.add.at(out, key, g) adds every one of them.",
    "index.ones": "The positions that were never read must get gradient 0: start from zeros, "
                  "not ones.",
    "scatter.keep": "backward needs the key: forward must keep it on ctx.",
    "scatter.forward": "forward returns zeros of shape with g added at key.",
    "scatter.none": "Return (grad_g, None, None).",
    "scatter.shape": "Each value of g was added at one position: its gradient is grad_output "
                     "read at that position, at key again (Index).",
    "scatter.values": "The gradient of g is grad_output read at the positions g was written to.",
    "scatter.arity": "shape and key are not Variables: their gradients are None.",
    # ch05-unbroadcast-function
    "ubf.setup": "Define class Unbroadcast(Function) with static forward and backward in the "
                 "%%mygrad cell above, run it, then this check.",
    "ubf.keep": "backward needs the shape of forward's input g: forward must keep it on ctx.",
    "ubf.forward": "forward returns g's data summed down to shape (unbroadcast).",
    "ubf.none": "Return (grad_g, None).",
    "ubf.backward-shape": "The backward of summing down is copying back up: each element of g "
                          "went into one sum, so it gets that sum's gradient.",
    "ubf.backward": "Each element of g gets the gradient of the sum it went into.",
    "ubf.arity": "shape is not a Variable: its gradient is None.",
    "sum_to.variable": "sum_to works on Variables and returns one, so that backward formulas "
                       "can use it.",
    "sum_to.values": "sum_to sums grad down to shape.",
    "sum_to.graph": "Build it with the Function (its apply records the node), not with "
                    "Variable(...) around an array.",
    "sum_to.same": "Summing nothing adds a node for nothing: return grad itself when its shape "
                   "is the one asked for.",
    # ch05-matmul-vectors
    "mv.setup": "Pass the function itself: check.ch05_matmul_vectors(matmul), after running the "
                "%%mygrad cell above.",
    "mv.row-column": "The two operands do not line up: a 1-D left operand is a row, shape "
                     "(1, k), and a 1-D right operand a column, shape (k, 1), so that the k's "
                     "meet in the middle.",
    "mv.drop": "a @ b keeps only the axes the operands really had (a vector @ a vector is one "
               "number, shape ()).",
    "mv.matrices": "Two matrices need no reshaping: hand them to MatMul as they are.",
    "mv.values": "The result must be numpy's a @ b.",
    "mv.graph": "The result was built from .data outside the graph. Reshape Variables "
                "(x.reshape, which records a node) instead of wrapping a numpy array in a new "
                "Variable.",
    "mv.grad-none": "Build the result from a and b with MatMul and reshape only, so that the "
                    "graph leads back to both.",
    "mv.grads": "Hand the reshaped operands to MatMul; the gradients then follow.",
    # ch05-unbroadcast
    "unbroadcast.shapes": "Two usual causes: axis numbers taken from one shape and used on an "
                          "array that already lost some axes (after the leading axes are summed "
                          "away, the axes of the rest are numbered like the target's), or a "
                          "size-1 axis summed without keepdims=True, so later steps see one "
                          "axis fewer than they expect.",
    "unbroadcast.none": "Did you forget the `return` statement?",
    "unbroadcast.grad-changed": "Use grad.sum(...), which returns a new array; do not assign "
                                "into grad.",
    "unbroadcast.sum": "Sum (do not average or pick) the copies: every copy of an element sends "
                       "its gradient back to that one element.",
    "unbroadcast.averaged": "You averaged; a broadcast element was used in every copy, so the "
                            "gradients of the copies add up: use sum.",
    "unbroadcast.keepdims": "The size-1 axes of the target must stay in the result: sum over "
                            "them with keepdims=True.",
    "unbroadcast.right-align": "Line the shapes up from the right: the target's last axis "
                               "matches the grad's last axis, and only axes where the target "
                               "has a 1 are summed.",
    "unbroadcast.raise": "After summing, compare the result's shape with the shape asked for "
                         "and raise ValueError naming both if they differ.",
    "unbroadcast.raise-message": "For example: f'cannot sum shape {grad.shape} down to {shape}'.",
    # ch05-sub-function
    "sub.forward": "a.data - b.data.",
    "sub.a-sign": "a's gradient has the wrong sign: d(a - b)/da = +1.",
    "sub.b-sign": "b's gradient has the wrong sign: d(a - b)/db = -1, so it is -grad_output.",
    # ch05-div-function
    "div.forward": "a.data / b.data.",
    "div.a-multiplied": "d(a/b)/da = 1/b: divide grad_output by b, do not multiply.",
    "div.b-square": "d(a/b)/db = -a/b**2: the square of b is missing.",
    "div.b-sign": "b's gradient has the wrong sign: d(a/b)/db = -a/b**2.",
    "div.b-chain": "grad_output is missing from b's gradient (the chain rule).",
    # ch05-pow-function
    "pow.forward": "x.data ** p.",
    "pow.factor": "The factor p is missing: d x**p/dx = p * x**(p - 1).",
    "pow.exponent": "The exponent must drop by one: p * x**(p - 1).",
    "pow.chain": "grad_output is missing (the chain rule).",
    "pow.p-none": "p is a plain number, not an input that needs a gradient: return "
                  "(grad_x, None).",
    # ch05-log-function
    "log.forward": "np.log(x.data).",
    "log.multiplied": "d log x/dx = 1/x: divide grad_output by x, do not multiply.",
    "log.chain": "grad_output is missing (the chain rule).",
    "log.times-log": "That is grad_output times log x; the derivative of log x is 1/x.",
}
