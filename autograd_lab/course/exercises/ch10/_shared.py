"""What the chapter 10 exercises share: the convolution cases, the references (numpy, from
the library's kernels), and the course's ``output_size`` for the learner's convolution."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._common import swapped_names
from .._observe import Observations, Raised, decode


def conv_cases(rng: np.random.Generator, hidden: bool) -> list[tuple[str, tuple, tuple, int, int]]:
    """(name, x's shape, weight's shape, stride, padding) of the convolution cases."""
    cases = [
        ("one 5×5 image, one 3×3 kernel", (1, 1, 5, 5), (1, 1, 3, 3), 1, 0),
        ("2 images, 3 → 4 channels, padding 1", (2, 3, 6, 6), (4, 3, 3, 3), 1, 1),
        ("stride 2 on a 7×7 input, padding 1", (2, 2, 7, 7), (3, 2, 3, 3), 2, 1),
        ("a 2×3 kernel on a 5×6 input", (1, 2, 5, 6), (2, 2, 2, 3), 1, 0),
    ]
    if hidden:
        for _ in range(3):
            n, ci, co = (int(v) for v in rng.integers(1, 4, size=3))
            k = int(rng.integers(1, 4))
            h, w = (int(v) for v in rng.integers(k + 1, 9, size=2))
            s, p = int(rng.integers(1, 3)), int(rng.integers(0, 2))
            cases.append((f"random: x {(n, ci, h, w)}, weight {(co, ci, k, k)}, stride {s}, "
                          f"padding {p}", (n, ci, h, w), (co, ci, k, k), s, p))
    return cases


def output_size(n: int, k: int, stride: int = 1, padding: int = 0) -> int:
    """The course's output_size (the formula of exercise ch10-output-size)."""
    return (n + 2 * padding - k) // stride + 1


def conv_output_shape(xs: tuple, ws: tuple, stride: int, padding: int) -> tuple[int, ...]:
    """The shape of conv2d's output for inputs of these shapes."""
    return (xs[0], ws[0], output_size(xs[2], ws[2], stride, padding),
            output_size(xs[3], ws[3], stride, padding))


def conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: int,
             padding: int) -> np.ndarray:
    from autograd_lab.kernels.conv import conv2d_fwd_ref
    return conv2d_fwd_ref(x, w, b, stride, padding)


@contextlib.contextmanager
def course_output_size(ns: dict[str, Any]) -> Iterator[None]:
    """The learner's globals ``ns`` (where their conv2d_forward looks up ``output_size``) hold the
    course's output_size for the block; an empty ``ns`` is left alone."""
    if not ns:
        yield
        return
    with swapped_names(ns, {"output_size": output_size}):
        yield


def what_raised(obs: Observations, name: str, what: str) -> str:
    """How the judge names the code that raised in case ``name``: ``what`` for an Exception, and
    "your code" for a BaseException that is not one (a SystemExit, a forged PartsFailed), as
    :class:`~.._parts.Parts` names it when it catches one in a part."""
    entry = obs._cases.get(name)  # noqa: SLF001 - the raised entry, before obs.case raises it
    raised = entry.get("raised") if isinstance(entry, dict) else None
    err = decode(raised) if raised is not None else None
    return "your code" if isinstance(err, Raised) and not err.is_a("Exception") else what
