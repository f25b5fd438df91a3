"""Grad modes: whether operations are recorded for backward.

>>> import autograd_lab as al
>>> with al.no_grad():
...     al.is_grad_enabled()
False
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradState(threading.local):
    """Grad mode is per thread, as in PyTorch: each thread starts with recording on, and a
    ``no_grad`` block (or a Function's forward, which runs with recording off) in one thread
    does not change what another thread records."""

    enabled = True  # the class attribute is every new thread's starting value


STATE = _GradState()


def is_grad_enabled() -> bool:
    """True when new operations are recorded in the graph."""
    return STATE.enabled


class _GradModeContext:
    """Base for context managers that also work as decorators (with or without parentheses)."""

    _mode: bool = True

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        self._func = func
        self._prev: list[bool] = []
        if func is not None:
            functools.update_wrapper(self, func)

    def __enter__(self) -> None:
        self._prev.append(STATE.enabled)
        STATE.enabled = self._mode

    def __exit__(self, *exc: object) -> None:
        STATE.enabled = self._prev.pop()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._func is None:  # used as @no_grad(): wrap the function given now
            (func,) = args
            return type(self)(func)
        with type(self)():
            return self._func(*args, **kwargs)


class no_grad(_GradModeContext):
    """Do not record operations: for inference and for updating parameters by hand."""

    _mode = False


class enable_grad(_GradModeContext):
    """Record operations even inside a ``no_grad`` block."""

    _mode = True


class set_grad_enabled:
    """Switch recording on or off; takes effect at once and, as a context manager, restores on exit."""

    def __init__(self, mode: bool) -> None:
        self._prev = STATE.enabled
        STATE.enabled = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        STATE.enabled = self._prev

    def __call__(self, func: F) -> F:
        # Used as a decorator: undo the switch made by __init__, apply it per call instead.
        mode = STATE.enabled
        STATE.enabled = self._prev

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
