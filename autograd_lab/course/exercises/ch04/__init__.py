"""Checkers for chapter 04, The engine: one module per exercise written as an ``observe`` and
a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`), and the loader's check
``mygrad_engine``."""
from __future__ import annotations

import contextlib
import io
from types import ModuleType

from .._exercise import checker
from ._engine_kernel import decide
from ._scalars import _leaf, _random_graph, _reference_grads, _reused_graph  # noqa: F401
from . import (backward, engine_backward, hooks, reused_node, second_backward,
               topological_order, topological_sort)

EXERCISES = (topological_sort, backward, reused_node, second_backward, topological_order,
             hooks, engine_backward)
"""The chapter's exercises written as data, in the notebook's order."""

__all__ = ["ch04_topological_sort", "ch04_backward", "ch04_reused_node", "ch04_second_backward",
           "ch04_topological_order", "ch04_hooks", "ch04_engine_backward", "mygrad_engine"]

ch04_topological_sort = checker(topological_sort)
ch04_backward = checker(backward)
ch04_reused_node = checker(reused_node)
ch04_second_backward = checker(second_backward)
ch04_topological_order = checker(topological_order)
ch04_hooks = checker(hooks)
ch04_engine_backward = checker(engine_backward)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""


def mygrad_engine(pkg: ModuleType) -> None:
    """The loader's check of the learner's ``mygrad/engine.py`` (run at the start of every later
    chapter): the chapter's three engine exercises on the package, quietly, observed and judged
    here (in the grader's sandbox too)."""
    with contextlib.redirect_stdout(io.StringIO()):
        decide(topological_order, pkg.topological_order, pkg)
        decide(hooks, pkg.register_hook, pkg.retain_grad, getattr(pkg.engine, "_run_hooks", None),
               pkg)
        decide(engine_backward, pkg.backward, pkg)
