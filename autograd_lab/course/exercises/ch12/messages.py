"""Every hint the chapter 12 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

_WEIGHT = ("The residual is r = y − t (forecast minus demand). Baking too few means y < t, so "
           "r < 0 gets the weight alpha; r ≥ 0 gets weight 1.")
_STABLE = ("cosh(r) overflows for |r| > 710 (and sinh(r/2) for |r| > 1420). For large |r| use "
           "log cosh r = |r| + log(1 + exp(−2|r|)) − log 2 (np.log1p for the middle term): "
           "exp(−2|r|) is at most 1, so nothing overflows. np.where computes both of its "
           "branches for every element, so give a branch that would overflow only arguments "
           "it can take (e.g. np.minimum(|r|, 1)).")
_BACKWARD = ("d/dr log cosh r = tanh r, so dL/dy = w · tanh(r) (divided by the number of "
             "elements for 'mean'), times grad_output; dL/dt = −dL/dy. Return one gradient per "
             "forward argument: (grad_y, grad_t, None, None).")

HINTS: dict[str, str] = {
    "return": "Did you forget the `return` statement?",
    # ch12-log-cosh
    "cosh.stable": _STABLE,
    "cosh.tiny": "Cancellation: near 0, log cosh r ≈ r²/2 is far smaller than log 2, and "
                 "|r| + log1p(exp(−2|r|)) − log 2 gets it by subtracting numbers close to log 2 "
                 "(log(cosh r) by taking the log of a number that rounds to 1), so what is left "
                 "is rounding noise. Near 0 use cosh r = 1 + 2 sinh²(r/2): log cosh r = "
                 "log1p(2 sinh²(r/2)) has no subtraction. Keep the |r| form for large |r|.",
    "cosh.log2": "You are off by log 2 everywhere: cosh r = (eʳ + e⁻ʳ)/2, so subtract log 2.",
    "cosh.in-place": "Compute new arrays (np.abs(r), ...) instead of writing into r.",
    "cosh.even": "Use |r|: cosh(-r) = cosh(r).",
    # ch12-loss-forward
    "loss.weight": _WEIGHT,
    "loss.wrong-side": "The weights are on the wrong side. " + _WEIGHT,
    "loss.no-alpha": "Every residual has weight 1: multiply by alpha where r < 0.",
    "loss.summed": "You summed; reduction='mean' divides by the number of elements.",
    "loss.averaged": "You took the mean; reduction='sum' adds the elements up.",
    "loss.defaults": "Give the parameters defaults: def bakery_loss_np(y, t, alpha=3.0, "
                     "reduction='mean').",
    "loss.stable": "Use your stable log_cosh. " + _STABLE,
    "loss.reduction": "Accept 'mean', 'sum' and 'none'; raise ValueError(...) naming them "
                      "otherwise.",
    "loss.shapes": "(4, 1) − (4,) broadcasts to (4, 4): sixteen residuals instead of four. "
                   "Compare y.shape with t.shape and raise ValueError naming both.",
    # ch12-bakery-function
    "bakery.function": "Pass the class itself (not an instance, not .apply).",
    "bakery.apply": "forward returns {lib}.Variable(value); call it as BakeryLoss.apply(y, t, "
                    "alpha, reduction).",
    "bakery.backward": _BACKWARD,
    "bakery.chain": "Multiply by grad_output (the chain rule).",
    "bakery.sign": "The derivative of log cosh r is tanh r, not sign r.",
    "bakery.mean": "Divide by the number of elements for reduction='mean'.",
    "bakery.only-mean": "Only reduction='mean' divides by the number of elements.",
    "bakery.dt": "r = y − t, so dL/dt = −dL/dy.",
    "bakery.gradcheck": "Your backward disagrees with central differences; the message above "
                        "names the input (0 is y, 1 is t) and the numbers. " + _BACKWARD,
    "bakery.tanh": "tanh never overflows: use np.tanh(r) (or r.tanh()) in backward, not a "
                   "formula with exp(r).",
    "bakery.defaults": "Give forward defaults, forward(ctx, y, t, alpha=3.0, reduction=\"mean\"), "
                       "and let backward return (grad_y, grad_t, None, None): the engine drops "
                       "the surplus trailing Nones when alpha and reduction were left out.",
    # ch12-train-step
    "step.inside": "Inside: optimizer.zero_grad(); loss = BakeryLoss.apply(model(X), t, 3.0, "
                   "'mean'); loss.backward(); optimizer.step(); return loss.item().",
    "step.float": "Return the loss as a float: loss.item().",
    "step.after": "You returned the loss after the update; return the one computed before "
                  "optimizer.step().",
    "step.loss": "Return BakeryLoss.apply(model(X), t, 3.0, 'mean') before the update. If the "
                 "values differ, check ch12-bakery-function first.",
    "step.moved": "Call loss.backward() and then optimizer.step().",
    "step.zero-grad": "Gradients accumulate in .grad across backward calls: call "
                      "optimizer.zero_grad() (or model.zero_grad()) every step, before backward.",
    "step.falls": "Step against the gradient: optimizer.step().",
    # ch12-pinball
    "pinball.rule": "With u = t − y the loss is tau·u where u ≥ 0 (too few baked) and (tau − 1)·u "
                    "elsewhere, so dL/dy = −tau where y < t and 1 − tau where y > t (times "
                    "grad_output, divided by n for 'mean'); dL/dt = −dL/dy.",
    "pinball.defaults": "forward(ctx, y, t, tau=0.75, reduction=\"mean\"); backward returns "
                        "(grad_y, grad_t, None, None).",
    "pinball.reduction": "Accept 'mean', 'sum' and 'none' only, as the bakery loss.",
}
