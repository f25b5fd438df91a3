"""Every hint the chapter 07 checks give, by id: reviewed, counted and translated here.

A few are templates (``{name}``, ``{threshold}``...): the check fills them in with ``str.format``.
"""
from __future__ import annotations

HINTS: dict[str, str] = {
    # every kernel
    "kernel.numba": "If numba could not compile your function, the first lines of the message name "
                    "the line and the types it could not handle. Inside @njit use loops, scalars, "
                    "math functions and the numpy arrays you were given.",
    "kernel.pass-function": "Pass the function itself: check.…({name}).",
    "kernel.decorate": "Put {decorator} on the line above `def {name}(...)` and run the cell "
                       "again.",
    "kernel.parallel": "Use @njit(parallel=True): without it, prange is just range and the "
                       "blocks run one after the other on one thread.",
    "kernel.scalars": "Loop over the elements and compute with single numbers, e.g. "
                      "v = a * x[i] + b, writing each result straight into the output you were "
                      "given (index every array down to one element).",
    "kernel.prange": "Write the loop over the blocks as `for c in prange(nblocks):` "
                     "(prange comes from numba, next to njit).",
    "kernel.unwritten": "Some elements still hold the NaN the buffer was filled with: write every "
                        "element (a buffer from np.empty holds garbage, not zeros).",
    "kernel.return-out": "End with `return out` (the array you were given, not a new one).",
    "kernel.race": "This is a race: `{text}` is written inside `for {var} in prange(...)`, and its "
                   "index is not `{var}` itself, so two iterations that run at the same time on "
                   "different threads can write the same element; one thread's `+=` then "
                   "overwrites the other's and the totals are wrong in some runs. Give every "
                   "iteration a slot of its own: run prange over the blocks (`for c in "
                   "prange(nblocks)`) and write only partial[c, ...] in iteration c.",
    "kernel.runs-differ": "Results that change from run to run are the mark of a race: two "
                          "iterations of your prange loop wrote the same element at the same "
                          "time. Iteration c of `for c in prange(nblocks)` must write only "
                          "partial[c, ...].",
    # ch07-affine-relu-forward
    "fwd.x-changed": "Compute a * x[i] + b into a local variable and write only into out.",
    "fwd.formula": "out[i] = max(a * x[i] + b, 0): multiply, add, then clip at 0.",
    "fwd.no-relu": "The relu is missing: negative values must become 0.",
    "fwd.relu-on-x": "The relu is applied to x; apply it last, to a * x[i] + b.",
    "fwd.b-after": "b is added after the relu; clip a * x[i] + b as a whole.",
    # ch07-affine-relu-backward
    "bwd.formula": "With z = a * x[i] + b and g = grad_out[i]: where z > 0, grad_x[i] = a * g, and "
                   "add g * x[i] to grad_a and g to grad_b; where z <= 0, grad_x[i] = 0 and "
                   "nothing is added.",
    "bwd.changed": "Write only into grad_x.",
    "bwd.two-numbers": "Accumulate both sums in local variables in the loop and end with "
                       "`return grad_a, grad_b`.",
    "bwd.no-mask": "The mask is missing: where a * x[i] + b <= 0 the gradient is 0.",
    "bwd.no-a": "The factor a is missing: d(a * x + b)/dx = a, so grad_x[i] = a * grad_out[i] "
                "where z > 0.",
    "bwd.at-zero": "At z == 0 exactly, take relu's derivative as 0 (test z > 0, not z >= 0), as "
                   "PyTorch does.",
    "bwd.swapped": "Return them in this order: grad_a, grad_b.",
    "bwd.grad-a": "grad_a adds g * x[i], not g: d(a * x + b)/da = x.",
    "bwd.grad-b": "grad_b sums grad_out only where z > 0.",
    # ch07-softmax-rows
    "softmax.x-changed": "Keep the row maximum in a local variable and compute exp(x[i, j] - m) "
                         "without assigning into x.",
    "softmax.formula": "Per row i: m = max of the row, e_j = exp(x[i, j] - m), then "
                       "out[i, j] = e_j / sum_j e_j.",
    "softmax.overflow": "exp overflowed: subtract the row maximum before exp (softmax does not "
                        "change, and exp(x - max) <= 1).",
    "softmax.global-max": "You subtracted the maximum of the whole array, not of each row: in a "
                          "row whose values all lie far below that maximum, every exp underflows "
                          "to 0 and 0 / 0 gives nan. Take m as the maximum of row i alone (a "
                          "loop over j in that row).",
    "softmax.unnormalised": "The rows are not normalised: divide every e_j by the sum of its row.",
    "softmax.columns": "That is the softmax of each column; take the maximum and the sum along "
                       "each row (over j).",
    "softmax.whole-sum": "You divided by the sum of the whole array; divide by the sum of each row.",
    # ch07-cross-entropy-rows
    "xent.shift": "exp overflowed (or every exp underflowed to 0): subtract the row maximum m "
                  "before exp and add it back, loss_i = log(sum_j exp(x[i, j] - m)) + m - "
                  "x[i, t_i]; then no exp exceeds 1 and the largest is exactly 1.",
    "xent.x-changed": "Keep the row maximum in a local variable; write only into grad.",
    "xent.loss": "Per row: loss_i = log(sum_j exp(x[i, j] - m)) + m - x[i, t_i]; return the sum "
                 "over the rows.",
    "xent.mean": "You returned the mean: the kernel returns the SUM over the rows (the Function "
                 "divides by N).",
    "xent.sign": "The sign is wrong: the loss is log-sum-exp MINUS the target's logit.",
    "xent.grad": "grad[i, j] = exp(x[i, j] - m) / s, then grad[i, t_i] -= 1.",
    "xent.no-onehot": "grad is the softmax: subtract 1 at each row's target class, "
                      "grad[i, t_i] -= 1 (softmax - onehot).",
    "xent.grad-mean": "Leave grad per row, without dividing by N: the Function scales it by 1/N.",
    # ch07-column-sums
    "colsum.x-changed": "Write only into partial.",
    "colsum.formula": "Block c covers rows c*step .. min(rows, (c+1)*step) - 1 with step = "
                      "(rows + nblocks - 1) // nblocks. In `for c in prange(nblocks)`: set "
                      "partial[c, :] to 0, then add each of the block's rows into partial[c, :].",
    "colsum.empty-block": "A block with no rows must still be set to 0: zero partial[c, :] before "
                          "the loop over the block's rows.",
    "colsum.all-rows": "Every block summed all the rows; block c adds only its own rows.",
    "colsum.floor": "Rows are missing at the end: step = rows // nblocks rounds down; use "
                    "(rows + nblocks - 1) // nblocks.",
    "colsum.assign": "Each block holds only its last row: add with +=, do not assign.",
    "colsum.return": "End with `return partial`.",
    # ch07-column-sums-wrapper
    "wrapper.rule": "column_sums(x) makes x C-contiguous (np.ascontiguousarray), then: for "
                    "x.size >= PARALLEL_MIN_SIZE one block per thread (numba.get_num_threads()) "
                    "with column_sums_blocked; below it one block with _column_sums_serial. "
                    "partial is np.empty((nblocks, x.shape[1]), dtype=x.dtype); return its sum "
                    "over axis 0.",
    "wrapper.pass-function": "Pass the function column_sums itself.",
    "wrapper.names": "Run the given lines of the cell (PARALLEL_MIN_SIZE, _column_sums_serial) "
                     "and the column_sums_blocked exercise above first.",
    "wrapper.large": "From PARALLEL_MIN_SIZE = {threshold} elements on, threads pay: use "
                     "column_sums_blocked with one block per thread.",
    "wrapper.small": "Below PARALLEL_MIN_SIZE = {threshold} elements, waking threads costs more "
                     "than they save (section 7): call _column_sums_serial, with one block.",
    "wrapper.partial-shape": "partial has one row per block and one column per column of x: "
                             "np.empty((nblocks, x.shape[1]), dtype=x.dtype).",
    "wrapper.blocks-large": "One block per thread: nblocks = numba.get_num_threads().",
    "wrapper.blocks-small": "Below PARALLEL_MIN_SIZE the serial kernel gets a single block.",
    "wrapper.dtype": "Allocate partial with dtype=x.dtype, so a float32 x is summed in float32 "
                     "(as x.sum(axis=0)) and numba compiles one version per dtype.",
    "wrapper.contiguous": "The kernel reads x row by row, in the order it lies in memory; pass "
                          "np.ascontiguousarray(x), which copies only when it has to.",
    "wrapper.sum-partial": "partial holds one row of sums per block: return the sum of its rows, "
                           "partial.sum(axis=0).",
    "wrapper.keep-dtype": "Keep x's dtype, as x.sum(axis=0).",
    # ch07-softmax-ce-function
    "sce.rule": "forward runs cross_entropy_rows on a C-contiguous copy of logits.data with a new "
                "grad array, saves logits, keeps ctx.targets and ctx.grad = grad / N, and returns "
                "the mean loss (the kernel's sum / N) as a Variable; backward (not recorded) "
                "returns ctx.grad times grad_output, and None for the targets.",
    "fn.class": "Pass the class itself (not an instance, not .apply).",
    "sce.variable": "forward returns Variable(the mean loss).",
    "sce.sum": "This is the SUM over the rows, which is what the kernel returns: divide it by N, "
               "the number of rows.",
    "sce.grad-none": "backward returns the gradient of the logits first, then None for the "
                     "targets.",
    "sce.not-mean": "The gradient is not divided by N: the kernel writes softmax - onehot per "
                    "row, and the loss is the MEAN over N rows.",
    "sce.chain": "Multiply by grad_output (the chain rule): ctx.grad * grad_output.item().",
    "sce.chain-short": "Multiply by grad_output (the chain rule).",
    "sce.targets": "The given recorded branch of backward reads ctx.targets: keep the targets on "
                   "ctx in forward (ctx.targets = targets).",
    # ch07-relu-function
    "relu.rule": "forward saves x and runs affine_relu_forward (a = 1, b = 0) on x.data flattened "
                 "into a C-contiguous 1-d array, returning a Variable of x's shape; backward (not "
                 "recorded) runs affine_relu_backward on the flattened x and grad_output and "
                 "returns grad_x in x's shape.",
    "relu.variable": "forward returns a Variable.",
    "relu.reshape": "The kernel works on the flattened array: reshape its result to x's shape "
                    "(.reshape(x.shape)).",
    "relu.dtype": "Give the kernel an output of x's dtype (np.empty_like of the flattened x).",
    "relu.grad-none": "backward returns the gradient of x.",
    "relu.grad-shape": "The backward kernel writes a flat grad_x: reshape it to x's shape.",
    "relu.chain": "Pass grad_output to the backward kernel (the chain rule): x.grad is "
                  "grad_output where x > 0.",
    "relu.saved": "The given recorded branch reads x from ctx.saved_tensors: save x in forward "
                  "(ctx.save_for_backward(x)).",
}
