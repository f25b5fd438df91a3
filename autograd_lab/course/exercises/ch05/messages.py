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
