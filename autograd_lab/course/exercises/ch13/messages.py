"""Every hint the chapter 13 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # shared
    "common.pkg": "Call the check as in the graded cell: check.ch13_...(..., pkg=mygrad).",
    "common.return": "Did you forget the `return` statement?",
    # ch13-embedding
    "embedding.lookup": "forward returns Variable(weight.data[idx]): one row per index.",
    "embedding.scatter": "A token that appears several times in the batch was looked up several "
                         "times, so its row receives the sum of all those gradients. "
                         "`grad[idx] = g` and even `grad[idx] += g` keep only one of them "
                         "(numpy's fancy-index += is buffered); np.add.at(grad, idx, g) adds "
                         "every one.",
    "embedding.count": "Each looked-up row receives the gradient arriving at its position, "
                       "grad_output, not 1: np.add.at(grad, idx, grad_output.data).",
    "embedding.table": "weight's gradient has weight's shape (num_embeddings, dim), one row per "
                       "token id: start from zeros of that shape and add each position's "
                       "gradient into its token's row; grad_output itself has one row per "
                       "position.",
    # ch13-layer-norm
    "ln.var": "LayerNorm divides by the *biased* standard deviation, as PyTorch's: var = mean((x "
              "- mean)²) over the last axis, dividing by D, not D - 1 (np.var's default ddof=0, "
              "not ddof=1).",
    "ln.eps": "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (std + eps).",
    "ln.axis": "Normalize each row (each token's features) on its own: mean and variance over "
               "the last axis only, with keepdims=True, not over the whole array or the first "
               "axis.",
    "ln.backward": "The mean and the variance depend on x too. With x̂ = (x - mean)·rstd and "
                   "ĝ = grad_output·weight: grad_x = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)), means "
                   "over the last axis. Leaving out the last two terms treats mean and rstd as "
                   "constants.",
    "ln.param": "weight and bias are shared by every row, so their gradients add up over all "
                "the leading axes: grad_weight = (grad_output·x̂).sum over every axis but the "
                "last, grad_bias = grad_output.sum over the same axes; each has weight's shape "
                "(D,).",
    "ln.returns": "backward returns one gradient per input (and None for eps), each shaped like "
                  "its input. ",
    # ch13-attention
    "attn.scale": "Scale the scores by 1/√d, d = the last axis of q (the size of each query), "
                  "not by 1/d and not by nothing: q·k of two random d-vectors has a spread of "
                  "about √d.",
    "attn.axis": "Each query's weights over the keys sum to 1: softmax over the last axis of "
                 "the scores (..., T_q, T_k), not over the queries (axis -2).",
    "attn.after": "Mask before the softmax: set the scores of future keys to -inf (add a mask "
                  "of 0 and -inf), so that their exp is exactly 0 and the weights of the rest "
                  "still sum to 1. Zeroing weights after the softmax leaves rows that sum to "
                  "less than 1.",
    "attn.triangle": "The causal mask lets query i see keys 0..i: allowed where key ≤ query, "
                     "the lower triangle with the diagonal (np.tril), not the upper one.",
    "attn.pair": "return the output and the softmax weights: return out, weights.",
    "attn.recorded": "attend must be built from recorded operations (bmm, Softmax, ...) on q, k "
                     "and v.",
    "attn.overflow": "Subtract each row's max before exp (your Softmax of chapter 05 does) and "
                     "use -inf (or a very negative number) for masked scores: -inf minus a "
                     "finite max is still -inf, and exp(-inf) = 0.",
    # ch13-heads
    "heads.split": "Split the feature axis first: (B, T, D) → reshape (B, T, H, D/H) → transpose "
                   "to (B, H, T, D/H). Reshaping straight to (B, H, T, D/H) mixes features of "
                   "different tokens into one head.",
    "heads.merge": "merge_heads undoes split_heads in reverse order: transpose (B, H, T, d) back "
                   "to (B, T, H, d), then reshape to (B, T, H·d). Reshaping without the transpose "
                   "interleaves the tokens.",
    "heads.graph": "Build split_heads from recorded operations: x.reshape(...) and "
                   "x.transpose(...) of mygrad, not numpy on x.data.",
    "heads.recorded": "Build split_heads from recorded operations: x.reshape(...) and "
                      "x.transpose(...) of mygrad.",
    "heads.divisible": "Check D % n_heads == 0 and raise ValueError naming D and n_heads.",
}
