"""PyTorch as an oracle when it is installed: tests that use it skip cleanly otherwise.

One rule for every test: PyTorch that is missing, or installed but failing to import (a broken
wheel, a missing system library), skips the test with ``TORCH_SKIP_REASON``; it never fails it.
Use ``@needs_torch`` on a test, or ``torch = require_torch()`` inside one.
"""
from __future__ import annotations

import numpy as np
import pytest

try:  # torch is optional; importing it is slow, so do it once here
    import torch  # type: ignore
    _WHY = ""
except Exception as err:  # pragma: no cover - depends on the machine
    torch = None
    _WHY = f"{type(err).__name__}: {err}".splitlines()[0]

TORCH_SKIP_REASON = (f"PyTorch is not available ({_WHY}); the comparison with it needs "
                     "pip install torch==2.13.0")

needs_torch = pytest.mark.skipif(torch is None, reason=TORCH_SKIP_REASON)


def require_torch():
    """The ``torch`` module, or skip the calling test with ``TORCH_SKIP_REASON``."""
    if torch is None:
        pytest.skip(TORCH_SKIP_REASON)
    return torch


def to_torch(a: np.ndarray, requires_grad: bool = True):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)
