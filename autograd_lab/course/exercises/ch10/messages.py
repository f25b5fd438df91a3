"""Every hint the chapter 10 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch10-output-size
    "size.return": "Did you forget the `return` statement?",
    "size.int": "Use floor division //: a window that would stick out past the (padded) edge is "
                "not used.",
    "size.plus-one": "You forgot the + 1: the first window sits at position 0, before any step.",
    "size.both-sides": "Padding is added on BOTH sides: n + 2 * padding.",
    "size.no-padding": "You left out the padding: the padded length is n + 2 * padding.",
    "size.stride": "You ignored the stride: divide the free room (n + 2 * padding - k) by it.",
    "size.formula": "The formula is (n + 2 * padding - k) // stride + 1.",
    # ch10-conv2d-forward
    "forward.changed-input": "Pad into a new array (np.pad returns one) and do not write into x.",
    "forward.flipped": "You flipped the kernel (the textbook 'convolution'). Deep learning "
                       "libraries compute the cross-correlation: no flip.",
    "forward.no-bias": "You forgot to add the bias (one number per output channel).",
    "forward.kernel-swapped": "The kernel's rows and columns are swapped: in weight[o, c, di, dj], "
                              "di walks down the rows (height) together with i, and dj along the "
                              "columns (width) together with j.",
    "forward.output-swapped": "The output's rows and columns are swapped: out[n, o, i, j] has i "
                              "along the height (the window starts at row i*stride) and j along "
                              "the width.",
    "forward.formula": "out[n, o, i, j] = bias[o] + sum over c, di, dj of weight[o, c, di, dj] * "
                       "xpad[n, c, i*stride + di, j*stride + dj].",
    "forward.bias-none": "bias may be None (Conv2d(..., bias=False) passes None): add it only when "
                         "it is given, e.g. `if bias is not None: out = out + bias[None, :, None, "
                         "None]`.",
    "forward.bias-none-values": "With bias=None the output is the cross-correlation alone: add "
                                "nothing.",
    # ch10-conv2d-backward
    "backward.three": "return dx, dw, db",
    "backward.dbias": "Every output position of channel o adds bias[o]: dbias[o] is the sum of "
                      "grad[:, o] over the batch and both spatial axes.",
    "backward.dbias-mean": "Sum, do not average: the bias is added at every position, so every "
                           "position's gradient adds up.",
    "backward.dweight": "dweight[o, c, di, dj] = sum over n, i, j of grad[n, o, i, j] * xpad[n, c, "
                        "i*stride + di, j*stride + dj]: the same windows as the forward pass, "
                        "weighted by grad (with im2col: g2 @ cols.T).",
    "backward.dweight-flipped": "dweight came out flipped: read the window at offset (di, dj), as "
                                "forward does.",
    "backward.dx": "Scatter, do not gather: every window position (n, o, i, j) sends grad[n, o, i, "
                   "j] * weight[o, c, di, dj] back to xpad[n, c, i*stride + di, j*stride + dj] "
                   "(add with +=, windows overlap); then cut the padding off: dx = dxpad[:, :, "
                   "padding:padding + H, padding:padding + W].",
    # ch10-max-pool
    "pool.shape": "H_out = H // k and W_out = W // k: a window that does not fit is left out, as "
                  "in PyTorch.",
    "pool.forward": "Each output element is the max of one k×k window; windows start at rows and "
                    "columns 0, k, 2k, ...",
    "pool.backward": "backward: start from zeros shaped like x and add each grad_output[n, c, i, j] "
                     "at the position of its window's maximum (remember it in forward, e.g. with "
                     "argmax over the flattened window). Return (grad_x, None).",
    "pool.ties": "With a mask x == max, a window with several equal maxima (common after ReLU: "
                 "many zeros) passes its gradient to all of them, so the gradient is counted "
                 "twice. Send it to one position only: the first maximum, as argmax finds it.",
}
