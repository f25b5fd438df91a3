"""Course tooling: release the student notebooks, check one, grade a class, and the learner's
own library ``mygrad`` (the ``%%mygrad`` magic, ``autograd-lab export``, the chapter loader).

Instructor commands live here (``autograd-lab release``, ``autograd-lab grade``),
next to the learner's ``autograd-lab start`` and ``autograd-lab check``. Nothing in
the autograd core imports this package. Releasing and grading need nbgrader
(the ``instructor`` extra); starting and checking do not.
"""
from __future__ import annotations

from typing import Any


def load_mygrad(chapter: int, **kwargs: Any) -> Any:
    """Import the learner's ``mygrad`` for a chapter; see :mod:`autograd_lab.course.loader`."""
    from .loader import load_mygrad as load
    return load(chapter, **kwargs)
