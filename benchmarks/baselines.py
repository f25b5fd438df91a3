"""Plain numpy baselines for the benchmark figures (what a learner would write without numba)."""
from __future__ import annotations

import numpy as np


def conv2d_fwd_bwd(x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray, pad: int):
    """conv2d forward + backward by im2col and matmul in numpy (stride 1)."""
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    ho, wo = win.shape[2], win.shape[3]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, c * kh * kw)   # copy
    w2 = w.reshape(co, -1)
    y = (cols @ w2.T + b).reshape(n, ho, wo, co).transpose(0, 3, 1, 2)
    g2 = g.transpose(0, 2, 3, 1).reshape(-1, co)
    dw = (g2.T @ cols).reshape(w.shape)
    db = g2.sum(axis=0)
    dcols = (g2 @ w2).reshape(n, ho, wo, c, kh, kw)
    dxp = np.zeros_like(xp)
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i:i + ho, j:j + wo] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return y, dxp[:, :, pad:pad + h, pad:pad + wd], dw, db


def max_pool2x2_fwd_bwd(x: np.ndarray, g: np.ndarray):
    """2x2 / stride-2 max-pool forward + backward by reshaping (even H and W)."""
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2)
    y = win.max(axis=(3, 5))
    mask = win == y[:, :, :, None, :, None]
    dx = (mask * g[:, :, :, None, :, None]).reshape(x.shape)
    return y, dx


def softmax_ce_fwd_bwd(x: np.ndarray, t: np.ndarray):
    """Mean cross-entropy and its gradient, stable, in numpy."""
    z = x - x.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(x.shape[0])
    loss = (np.log(s[:, 0]) - z[rows, t]).mean()
    p = e / s
    p[rows, t] -= 1
    return loss, p / x.shape[0]
