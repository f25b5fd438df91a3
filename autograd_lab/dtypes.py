"""PyTorch's names for dtypes (``al.float32``, ``al.float``, ``al.double``, ``al.long``, …) and
its ``device`` (CPU only), so that programs written for PyTorch run with ``torch.`` → ``al.``.

The dtypes are numpy dtypes: ``al.float32 is np.dtype(np.float32)``.

>>> import autograd_lab as al
>>> al.zeros(2, dtype=al.float).dtype
dtype('float32')
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

# dtype names as in PyTorch: al.float32, al.float (= float32), al.double, al.long, ...
float16 = half = np.dtype(np.float16)
float32 = float = np.dtype(np.float32)  # noqa: A001
float64 = double = np.dtype(np.float64)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
int16 = short = np.dtype(np.int16)
int32 = int = np.dtype(np.int32)  # noqa: A001
int64 = long = np.dtype(np.int64)
bool = np.dtype(np.bool_)  # noqa: A001
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)


class device:
    """PyTorch's device object, for code that names one: only the CPU exists here."""

    def __init__(self, type: str = "cpu") -> None:  # noqa: A002
        name = getattr(type, "type", type)
        if str(name).split(":")[0] != "cpu":
            raise ValueError(f"autograd_lab runs on the CPU only; got device {type!r}. Use 'cpu'.")
        self.type = "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __eq__(self, other: object) -> builtins.bool:
        return isinstance(other, device) or other == "cpu"

    def __hash__(self) -> builtins.int:
        return hash("cpu")


def check_device(dev: Any) -> None:
    """Accept ``device=None``, ``'cpu'`` or ``al.device('cpu')``; refuse anything else."""
    if dev is not None:
        device(dev)


