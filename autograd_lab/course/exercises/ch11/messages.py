"""Every hint the chapter 11 checks written as data give, by id: reviewed, counted and
translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    "return": "Did you forget the `return` statement?",
    # ch11-hvp
    "hvp.recipe": "Compute the gradient with create_graph=True, so that it is itself a Variable "
                  "with a history: g, = grad(f(xv), xv, create_graph=True); then differentiate "
                  "the scalar (g * v).sum() with respect to xv once more: "
                  "hv, = grad((g * Variable(v)).sum(), xv).",
    "hvp.approx": "Your H v is close to the exact product but not equal to it, as an "
                  "approximation is: finite differences of the gradient, "
                  "(∇f(x + εv) − ∇f(x − εv)) / 2ε, lose digits to rounding and to the step ε "
                  "(or the arithmetic ran in float32). The exercise asks for the exact product: "
                  "differentiate twice with grad, the first time with create_graph=True.",
    "hvp.gradient": "You returned the gradient of f, not the Hessian times v: differentiate "
                    "(g * v).sum() once more.",
    "hvp.accumulated": "You returned gradient + H v: x.grad still held the first gradient when "
                       "the second backward added into it. Use grad (which leaves .grad alone), "
                       "or set x.grad = None between the two backward calls.",
    "hvp.g-times-v": "You returned g * v; its gradient with respect to x is H v.",
    "hvp.in-place": "Make a new Variable from a copy of x (Variable(np.array(x), "
                    "requires_grad=True)) and leave the caller's arrays alone.",
    "hvp.fd": "(∇f(x + εv) − ∇f(x − εv)) / 2ε should be close to your H v.",
    "hvp.fresh": "Nothing may carry over between calls: make a fresh Variable each time.",
    # ch11-hessian
    "hessian.recipe": "Column i of the Hessian is H eᵢ, where eᵢ is 1 at position i and 0 "
                      "elsewhere: call hvp(f, x, e) for each i and stack the results with "
                      "np.stack(columns, axis=1).",
    "hessian.outer": "That is the outer product of the gradient with itself (ggᵀ), not the "
                     "matrix of second derivatives.",
    "hessian.diagonal": "Only the diagonal is filled in: column i is H eᵢ, a whole vector.",
    "hessian.rows": "Every row is the gradient: differentiate the gradient once more for each "
                    "column.",
    "hessian.symmetric": "A Hessian of a smooth function is symmetric.",
    # ch11-newton-step
    "newton.recipe": "The Newton step solves H d = ∇f(x) and returns x − d: "
                     "np.linalg.solve(hessian(f, x), gradient) with the gradient from grad.",
    "newton.in-place": "Return a new array x − d; leave the caller's x alone.",
    "newton.gd": "That is a gradient-descent step with step size 1; Newton's step divides by the "
                 "curvature: solve H d = g.",
    "newton.uphill": "The step points uphill: subtract the solution d of H d = g.",
    "newton.times-h": "You multiplied the gradient by H; Newton's step multiplies by H⁻¹ "
                      "(np.linalg.solve(H, g)).",
    "newton.diagonal": "You divided by the diagonal of H only; use the whole matrix.",
    # ch11-tanh-function
    "tanh.class": "Pass the class itself (not an instance, not .apply).",
    "tanh.variable-ops": "Write backward with Variable operations on Variables "
                         "(grad_output * (1 - y * y), with y from ctx.saved_tensors), not with "
                         "numpy arrays (.data, np.tanh): only Variable operations are recorded "
                         "when create_graph=True.",
    "tanh.recorded": "forward returns a new Variable, e.g. al.Variable(np.tanh(x.data)).",
    "tanh.forward": "forward computes tanh(x).",
    "tanh.derivative": "d tanh(x)/dx = 1 − tanh²(x); multiply by grad_output.",
    "tanh.chain": "Multiply by grad_output (the chain rule).",
    "tanh.square": "d tanh/dx is 1 − tanh², not 1 − tanh.",
    "tanh.gradcheck": "The first derivative disagrees with central differences; the message "
                      "above names the numbers.",
    "tanh.once": "Remove @al.once_differentiable: that decorator promises the backward is NOT "
                 "differentiable. ",
    "tanh.saved-copy": "forward saved a new Variable holding tanh(x) (e.g. "
                       "ctx.save_for_backward(al.Variable(y_np))), not the output it returns. "
                       "That copy is a new leaf with no grad_fn, cut off from the graph, so a "
                       "second derivative loses the path through y back to x. Save the very "
                       "Variable that forward returns; under create_graph=True it comes back "
                       "with MyTanh's node as grad_fn.",
    "tanh.second-zero": "The second derivative came out as 0: the first gradient was computed "
                        "outside the graph. ",
    "tanh.second": "If backward uses the saved output y, the second derivative also flows "
                   "through y (y has MyTanh's node as grad_fn); use y from ctx.saved_tensors, "
                   "not a copy.",
    # ch11-grad
    "grad.walk": "Walk the graph from the outputs in _walk_order (each Variable after all its "
                 "users); pop its complete gradient, keep it if it is an input, call its node's "
                 "backward and ADD each input's share into the dict of gradients.",
    "grad.tuple": "Return tuple(found): one gradient per input, as torch.autograd.grad.",
    "grad.restore-first": "Save GradMode.enabled before the walk and restore it in a finally: "
                          "block at its end.",
    "grad.paths": "Only one of the two paths through x arrived: when a gradient for a Variable "
                  "is already in the dict, add the new share to it instead of replacing it.",
    "grad.dot-grad": "grad returns the gradients and leaves .grad alone: do not call "
                     "backward(); keep the gradients in your own dict.",
    "grad.no-history": "Record the backward only when create_graph is True: set "
                       "GradMode.enabled = bool(create_graph) during the walk.",
    "grad.record": "Turn recording ON during the walk when create_graph is True: enabled, "
                   "GradMode.enabled = GradMode.enabled, bool(create_graph), and call the "
                   "backward of each node on Variables, so that the engine records it.",
    "grad.second": "The second grad differentiates the recorded first one: keep the graph "
                   "(retain_graph follows create_graph) and record with Variable operations "
                   "only.",
    "grad.restore": "Restore GradMode.enabled to its old value in a finally: block at the end "
                    "of the walk.",
    "grad.finally": "Restore GradMode.enabled in a finally: block, so that an error inside the "
                    "walk cannot leave recording switched off.",
    "grad.unused": "An input the walk never reached keeps None in found.",
}
