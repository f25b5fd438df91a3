"""What the exercise-checker tests share: the seeds they run and how they read a failure."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

# (seed, hidden) pairs: the plain notebook run, then two graded runs with hidden cases.
SEEDS = [(0, False), (1, True), (2024, True)]


def failure(checker: Callable[..., None], obj: Any, seed: int = 0, hidden: bool = False) -> str:
    """The message of the ``AssertionError`` that ``checker`` must raise on ``obj``."""
    with pytest.raises(AssertionError) as info:
        checker(obj, seed=seed, hidden=hidden)
    return str(info.value)
