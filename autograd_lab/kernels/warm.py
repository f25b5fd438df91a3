"""Compile (or load from numba's cache) every kernel ahead of time.

Kernels compile lazily, on first call; a notebook or a benchmark that wants its first timed call
to be representative calls ``warmup()`` first.
"""
from __future__ import annotations

import time

import numpy as np

from . import activation, attention, conv, embedding, special, optim, pool, reduce, softmax
from ._jit import REGISTRY


def _exercise(dtype) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(dtype)
    g = np.ones_like(x)
    for name in ("relu", "sigmoid", "tanh"):
        y = getattr(activation, f"{name}_fwd")(x)
        getattr(activation, f"{name}_bwd")(y, g)
    for act in activation.ACTIVATIONS:
        y = activation.bias_act_fwd(x, x[0], act)
        activation.bias_act_bwd(y, g, act)
    t = np.array([0, 1, 3])
    softmax.softmax_bwd(softmax.softmax_fwd(x), g)
    softmax.log_softmax_bwd(softmax.log_softmax_fwd(x), g)
    softmax.logsumexp(x)
    loss, stats = softmax.cross_entropy_fwd(x, t)
    softmax.cross_entropy_bwd(x, t, stats, loss)
    y = attention.masked_softmax_fwd(x, x[:1], x[:1] > 0, causal=3, scale=0.5)
    attention.masked_softmax_bwd(y, g, 0.5)
    special.erf(x)
    special.gelu_bwd(x, special.gelu_fwd(x))
    embedding.embedding_bwd(np.array([0, 2, 0]), x, 4, 1)
    img = rng.standard_normal((2, 2, 5, 5)).astype(dtype)
    w = rng.standard_normal((3, 2, 3, 3)).astype(dtype)
    y = conv.conv2d_fwd(img, w, np.zeros(3, dtype), 1, 1)
    conv.conv2d_bwd(y, img, w, 1, 1)
    conv.col2im(conv.im2col(img, (3, 3), 1, 1), img.shape, (3, 3), 1, 1)
    out, idx = pool.max_pool2d_fwd(img, 2)
    pool.max_pool2d_bwd(out, idx, img.shape)
    reduce.sum_rows(x)
    optim.sgd_momentum_(x.copy(), x.copy(), g, 0.1, 0.9)


def warmup(dtypes=(np.float32, np.float64), parallel: bool = True) -> float:
    """Compile every kernel for ``dtypes`` (serial and, if ``parallel``, prange versions).

    Returns the seconds it took: seconds on first use, a fraction of one when numba's cache
    already holds the machine code."""
    start = time.perf_counter()
    for dtype in dtypes:
        _exercise(np.dtype(dtype).type)
    if parallel:
        for serial, par in REGISTRY:
            for sig in getattr(serial, "signatures", ()):
                par.compile(sig)
    return time.perf_counter() - start
