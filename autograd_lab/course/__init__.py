"""Course tooling, one subpackage per role; the autograd library never imports it.

* :mod:`.commands`: the ``autograd-lab`` subcommands, one module each (parser and run), and
  the dispatcher that ``autograd_lab.cli`` hands the command line to;
* :mod:`.learner`: the learner's commands (``autograd-lab start``, ``check``, ``export``,
  ``ownership``), the ``%%mygrad`` magic and each chapter's loader (:func:`load_mygrad`);
* :mod:`.grading`: grading a class (``autograd-lab grade``, ``term``), its sandbox, nbgrader's side;
* :mod:`.authoring`: releasing the student notebooks from the key, and the shared notebook helpers;
* :mod:`.exercises`: the checkers the graded cells call;
* ``reference/``: the key's ``mygrad``, written by ``autograd-lab export``.

Releasing and grading need nbgrader (the ``instructor`` extra); the learner's tools do not.
"""
from __future__ import annotations

from typing import Any


def load_mygrad(chapter: int, **kwargs: Any) -> Any:
    """Import the learner's ``mygrad`` for a chapter; see :mod:`autograd_lab.course.learner.loader`."""
    from .learner.loader import load_mygrad as load
    return load(chapter, **kwargs)
