"""Loaded by pytest before any test module: decides once whether PyTorch is usable (tests/_oracle.py)."""
from . import _oracle  # noqa: F401
