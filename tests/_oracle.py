"""PyTorch as an oracle when it is installed: tests that use it skip cleanly otherwise."""
from __future__ import annotations

import numpy as np
import pytest

try:  # torch is optional; importing it is slow, so do it once here
    import torch  # type: ignore
except Exception:  # pragma: no cover - depends on the machine
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (pip install torch==2.13.0)")


def to_torch(a: np.ndarray, requires_grad: bool = True):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)
