"""Every hint the chapter 04 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch04-reused-node
    "reused.dict": 'Return {"a": ..., "h": ..., "x": ..., "y": ...}.',
    "reused.keys": "Use the keys 'a', 'h', 'x', 'y'.",
    "reused.a": "out = h * a, so d out / d a = h.",
    "reused.h": "h has two consumers: out = h * a directly (local gradient a) and a = h + x "
                "(local gradient 1, times d out / d a = h). Add both.",
    "reused.h-direct-only": "That is only the direct path out = h * a; h also reaches out "
                            "through a = h + x. Add h * 1.",
    "reused.h-through-a-only": "That is only the path through a; h is also a direct factor of "
                               "out = h * a. Add a.",
    "reused.x": "x has two consumers as well: h = x * y (local gradient y) and a = h + x (local "
                "gradient 1). Use the complete gradients of h and a.",
    "reused.x-through-h-only": "You followed x only through h; x also feeds a = h + x directly. "
                               "Add d out / d a.",
    "reused.x-partial-h": "Your gradient of h misses one of its consumers; with the full "
                          "d out / d h = a + h the rest follows.",
    "reused.y": "y only reaches out through h = x * y: d out / d y = (d out / d h) * x.",
    "reused.y-partial-h": "Your gradient of h misses the path through a: use "
                          "d out / d h = a + h.",
    # ch04-second-backward
    "second.grad": "One backward gives d out / d x = 6 x0 + 1. Each further call adds the same "
                   "amount into x.grad.",
    "second.one-call": "That is the gradient of one call: backward adds into x.grad, it does "
                       "not overwrite it.",
    "second.no-plus-x": "The + x term contributes 1 to the gradient too.",
    "second.out": "That is calls * out, not the gradient; d out / d x = 6 x0 + 1.",
    "second.doubles": "Each call adds one gradient; it does not double what is there.",
}
