"""Checkers for chapter 04, The engine: one module per exercise written as an ``observe`` and
a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`); ch04-engine-backward is still
a classic checker, in ``_legacy``."""
from __future__ import annotations

from .._exercise import checker
from ._scalars import _leaf, _random_graph, _reference_grads, _reused_graph  # noqa: F401
from . import (backward, hooks, reused_node, second_backward, topological_order,
               topological_sort)
from ._legacy import ch04_engine_backward, mygrad_engine

EXERCISES = (topological_sort, backward, reused_node, second_backward, topological_order,
             hooks)
"""The chapter's exercises written as data, in the notebook's order."""

__all__ = ["ch04_topological_sort", "ch04_backward", "ch04_reused_node", "ch04_second_backward",
           "ch04_topological_order", "ch04_hooks", "ch04_engine_backward", "mygrad_engine"]

ch04_topological_sort = checker(topological_sort)
ch04_backward = checker(backward)
ch04_reused_node = checker(reused_node)
ch04_second_backward = checker(second_backward)
ch04_topological_order = checker(topological_order)
ch04_hooks = checker(hooks)

PARTS = {m.ID: m.PARTS for m in EXERCISES if m.PARTS}
"""Exercises made of independent parts (none in this chapter)."""
