"""Ways to make Variables: from data, filled, random (seeded), ranges."""
from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import check_device as _check_device
from .variable import Variable, as_array


def _shape(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(int(s) for s in shape[0])
    return tuple(int(s) for s in shape)


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None, *, device: Any = None) -> Variable:
    """A new leaf Variable holding a copy of ``data`` (PyTorch's ``torch.tensor``).

    Python floats give float64 (numpy's default); pass ``dtype=np.float32`` for single precision."""
    _check_device(device)
    return Variable(np.array(as_array(data, dtype)), requires_grad=requires_grad)


def zeros(*shape: Any, dtype: Any = np.float64, requires_grad: bool = False, device: Any = None) -> Variable:
    _check_device(device)
    return Variable(np.zeros(_shape(shape), dtype=dtype), requires_grad=requires_grad)


def ones(*shape: Any, dtype: Any = np.float64, requires_grad: bool = False, device: Any = None) -> Variable:
    _check_device(device)
    return Variable(np.ones(_shape(shape), dtype=dtype), requires_grad=requires_grad)


def full(shape: Any, fill_value: float, dtype: Any = np.float64, requires_grad: bool = False, *, device: Any = None) -> Variable:
    _check_device(device)
    return Variable(np.full(_shape((shape,)), fill_value, dtype=dtype), requires_grad=requires_grad)


def zeros_like(x: Any, dtype: Any = None, requires_grad: bool = False, *, device: Any = None) -> Variable:
    _check_device(device)
    return Variable(np.zeros_like(np.asarray(x.data if isinstance(x, Variable) else x), dtype=dtype),
                    requires_grad=requires_grad)


def ones_like(x: Any, dtype: Any = None, requires_grad: bool = False, *, device: Any = None) -> Variable:
    _check_device(device)
    return Variable(np.ones_like(np.asarray(x.data if isinstance(x, Variable) else x), dtype=dtype),
                    requires_grad=requires_grad)


class Generator:
    """A seeded source of random numbers (like ``torch.Generator``), wrapping numpy's."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        self._seed = seed

    def manual_seed(self, seed: int) -> "Generator":
        self._rng = np.random.default_rng(seed)
        self._seed = seed
        return self

    def initial_seed(self) -> int | None:
        return self._seed

    @property
    def numpy(self) -> np.random.Generator:
        return self._rng


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator used by ``randn``/``rand`` when no seed is given."""
    return default_generator.manual_seed(seed)


def numpy_rng(seed: int | None, generator: Generator | None) -> np.random.Generator:
    if seed is not None and generator is not None:
        raise TypeError("pass either seed= or generator=, not both")
    if seed is not None:
        return np.random.default_rng(seed)
    return (generator or default_generator).numpy


def randn(*shape: Any, seed: int | None = None, generator: Generator | None = None,
          dtype: Any = np.float64, requires_grad: bool = False, device: Any = None) -> Variable:
    """Standard normal samples. ``seed=`` makes this call reproducible on its own."""
    _check_device(device)
    data = numpy_rng(seed, generator).standard_normal(_shape(shape)).astype(dtype, copy=False)
    return Variable(data, requires_grad=requires_grad)


def rand(*shape: Any, seed: int | None = None, generator: Generator | None = None,
         dtype: Any = np.float64, requires_grad: bool = False, device: Any = None) -> Variable:
    """Uniform samples in [0, 1)."""
    _check_device(device)
    data = numpy_rng(seed, generator).random(_shape(shape)).astype(dtype, copy=False)
    return Variable(data, requires_grad=requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False, *, device: Any = None) -> Variable:
    """``arange(5)`` is 0..4; ``arange(1, 3, 0.5)`` is 1.0, 1.5, 2.0, 2.5 (end excluded)."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    return Variable(np.arange(start, end, step, dtype=dtype), requires_grad=requires_grad)


def empty(*shape: Any, dtype: Any = np.float64, requires_grad: bool = False, device: Any = None) -> Variable:
    """A Variable of ``shape`` whose values are not set (here: zeros, so runs are reproducible)."""
    _check_device(device)
    return zeros(*shape, dtype=dtype, requires_grad=requires_grad)


def eye(n: Any, m: Any = None, *, dtype: Any = np.float64, requires_grad: bool = False,
        device: Any = None) -> Variable:
    """The n x m identity matrix (m = n by default)."""
    _check_device(device)
    return Variable(np.eye(int(n), None if m is None else int(m), dtype=dtype),
                    requires_grad=requires_grad)


def full_like(x: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Variable:
    return Variable(np.full_like(np.asarray(x.data if isinstance(x, Variable) else x), fill_value, dtype=dtype),
                    requires_grad=requires_grad)


def randn_like(x: Any, *, seed: Any = None, generator: "Generator | None" = None, dtype: Any = None,
               requires_grad: bool = False) -> Variable:
    d = np.asarray(x.data if isinstance(x, Variable) else x)
    return randn(*d.shape, seed=seed, generator=generator, dtype=dtype or d.dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Variable:
    """A Variable sharing ``array``'s memory (a change to one shows in the other), as torch.from_numpy."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return Variable(array)


def linspace(start: float, end: float, steps: int, dtype: Any = np.float64,
             requires_grad: bool = False, *, device: Any = None) -> Variable:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included."""
    _check_device(device)
    if steps < 1:
        raise ValueError(f"linspace needs steps >= 1; got {steps}")
    return Variable(np.linspace(start, end, int(steps), dtype=dtype), requires_grad=requires_grad)
