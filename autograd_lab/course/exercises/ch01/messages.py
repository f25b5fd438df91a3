"""Every hint the chapter 01 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch01-central-difference
    "central.formula": "Evaluate f once on each side of x: (f(x + h) - f(x - h)) / (2 * h).",
    "central.forward": "That is the forward difference (f(x + h) - f(x)) / h; the central one "
                       "uses both sides: (f(x + h) - f(x - h)) / (2 * h).",
    "central.backward": "That is the backward difference (f(x) - f(x - h)) / h; use "
                        "(f(x + h) - f(x - h)) / (2 * h).",
    "central.twice": "Twice the expected value: the two points are 2*h apart, so divide by 2 * h.",
    "central.times-h": "Divide by 2 * h, not multiply by it.",
    "central.ignores-h": "That is the exact derivative, so your function ignores the h it is "
                         "given: use h, not a fixed step.",
    "central.scalar": "Return a float.",
    "central.default-missing": "Give h a default value: def central_difference(f, x, h=1e-5).",
    "central.default-h": "With a default h near 1e-5 the central difference is accurate to about "
                         "1e-10; a much smaller h drowns in round-off, a larger one in truncation.",
    # ch01-numerical-gradient
    "numgrad.array": "Start from grad = np.zeros(x.shape) and fill it in element by element.",
    "numgrad.shape": "The gradient has one entry per element of x: np.zeros(x.shape).",
    "numgrad.input-changed": "Work on a float64 copy (x = np.array(x, dtype=np.float64)), or put "
                             "each element back exactly: old = x[idx]; ...; x[idx] = old.",
    "numgrad.float64": "Compute in float64: np.zeros(x.shape, dtype=np.float64), and convert x to "
                       "a float64 copy so that x + h is not rounded away.",
    "numgrad.values": "Nudge one element at a time by +h and -h (the others stay put) and use "
                      "(f(x + h e_i) - f(x - h e_i)) / (2 h); compute on a float64 copy of x (an "
                      "integer array cannot hold x + h).",
    # ch01-gradcheck
    "gradcheck.rejected": "Your gradcheck rejected a correct derivative: compare df(x) with "
                          "numerical_gradient(f, x, h) and allow |analytical - numerical| <= "
                          "atol + rtol * |numerical| in every element.",
    "gradcheck.x-changed": "numerical_gradient must restore (or copy) x.",
    "gradcheck.raise": "When the check fails and raise_exception is True, raise RuntimeError with "
                       "a message naming the worst element's index.",
    "gradcheck.rtol": "Allow atol + rtol * |numerical| per element: with gradients near 3000 a "
                      "difference of 0.3 is within rtol=1e-3.",
    "gradcheck.atol": "Where the numerical gradient is 0 only atol=1e-5 applies: "
                      "|analytical - numerical| <= atol + rtol * |numerical|.",
    "gradcheck.shapes": "Compare shapes before values (numpy would broadcast (3,) against (2, 3) "
                        "silently) and raise ValueError naming both shapes.",
    "gradcheck.shapes-message": "For example: f'df(x) has shape {analytical.shape}, x has shape "
                                "{x.shape}'.",
    "gradcheck.bool": "Return a bool, e.g. bool(np.all(ok)).",
    "gradcheck.should-pass": "The analytical gradient is correct here: compare it with "
                             "numerical_gradient(f, x, h) within atol + rtol * |numerical|.",
    "gradcheck.should-fail": "The analytical gradient is wrong here, so gradcheck must not pass.",
    "gradcheck.index": "Find it with np.unravel_index(np.argmax(error), x.shape) and put it in the "
                       "message, e.g. f'worst element at index {idx}'.",
}
