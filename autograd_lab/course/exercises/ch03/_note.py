"""The note the checks of Mul, ReLU and FixedReLU print when the learner's ``apply`` fails its
own exercise (they run the learner's forward and backward with the course's apply instead);
chapter 05's checks print it too, so it lives in ``exercises/_functions.py``."""
from __future__ import annotations

from .._functions import note_apply, own_apply_fails

__all__ = ["note_apply", "own_apply_fails"]
