"""Checkers for chapter 13, attention: an embedding lookup, LayerNorm as a Function, causal
scaled dot-product attention and the heads of multi-head attention, all on the learner's
``mygrad`` (graded cells pass ``pkg=mygrad``). One module per exercise, each an ``observe`` and
a ``judge`` (:mod:`autograd_lab.course.exercises._exercise`).

The references are numpy formulas and ``autograd_lab``'s own ``F.layer_norm`` and
``F.scaled_dot_product_attention`` (the PyTorch-exact library); each exercise's typical mistakes
are computed next to them, so that a wrong answer gets the hint that names its cause.
"""
from __future__ import annotations

from typing import Any

from . import attention, embedding, heads, layer_norm
from .._exercise import checker

EXERCISES = (embedding, layer_norm, attention, heads)
"""The chapter's exercise modules, in the notebook's order."""

__all__ = ["ch13_embedding", "ch13_layer_norm", "ch13_attention", "ch13_heads",
           "attention_reference", "mygrad_attention"]

ch13_embedding = checker(embedding, keywords=("pkg",))
ch13_layer_norm = checker(layer_norm, keywords=("pkg",))
ch13_attention = checker(attention, keywords=("pkg",))
ch13_heads = checker(heads, keywords=("pkg",))

attention_reference = attention.reference


def mygrad_attention(pkg: Any) -> None:
    """``mygrad.attention``: Embedding, LayerNormFunction, attend, split_heads/merge_heads."""
    att = pkg.attention
    ch13_embedding(att.Embedding, pkg=pkg)
    ch13_layer_norm(att.LayerNormFunction, pkg=pkg)
    ch13_attention(att.attend, pkg=pkg)
    ch13_heads(att.split_heads, att.merge_heads, pkg=pkg)
