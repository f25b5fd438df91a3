"""PyTorch as an oracle when it is installed: tests that use it skip cleanly otherwise.

One rule for every test: torch counts as available only if ``import torch`` succeeds. A torch that
is installed but broken (a missing shared library, an ABI mismatch) is treated as absent, and
``sys.modules`` is told so, so that ``pytest.importorskip("torch")`` elsewhere skips as well
(``tests/conftest.py`` imports this module first).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

TORCH_ERROR: str | None = None
try:  # torch is optional; importing it is slow, so do it once here
    import torch  # type: ignore
except Exception as exc:  # pragma: no cover - depends on the machine
    torch = None
    TORCH_ERROR = f"{type(exc).__name__}: {exc}"
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[name]
    sys.modules["torch"] = None  # later `import torch` raises ImportError: importorskip skips

REASON = ("PyTorch is not installed (pip install torch==2.13.0)" if TORCH_ERROR is None or
          "No module named 'torch'" in TORCH_ERROR else
          f"PyTorch is installed but fails to import ({TORCH_ERROR[:200]})")

needs_torch = pytest.mark.skipif(torch is None, reason=REASON)


def require_torch():
    """torch, or skip the calling test (the same rule as ``needs_torch``)."""
    if torch is None:
        pytest.skip(REASON)
    return torch


def to_torch(a: np.ndarray, requires_grad: bool = True):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)
