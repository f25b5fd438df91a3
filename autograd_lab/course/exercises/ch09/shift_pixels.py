"""Check ``shift_pixels(images, rng, fraction=0.25)`` for images of shape (N, H, W): a new array
in which each image, with probability ``fraction``, is moved by (dy, dx), each of dy and dx drawn
from -1, 0, 1, with zeros moved in at the edge it leaves; the other images are unchanged; every
random number comes from ``rng``; the input is left alone."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import Checker
from .._exercise import Mistake
from .._observe import Observations, Observer
from .messages import HINTS

ID = "ch09-shift-pixels"
PARTS: tuple[str, ...] = ()

_MOVE = "out[i] = padded[i, 1 - dy:1 - dy + h, 1 - dx:1 - dx + w]"
MISTAKES = (
    Mistake("np.roll", (_MOVE, "out[i] = np.roll(images[i], (dy, dx), axis=(0, 1))"), None,
            "shift.roll"),
    Mistake("in place", ("out = images.copy()", "out = images"), None, "shift.copy"),
    Mistake("every image moved", ("chosen = np.flatnonzero(rng.random(n) < fraction)",
                                  "chosen = np.arange(n)"), None, "shift.too-many"),
    Mistake("numpy's global generator", ("rng.integers(-1, 2, size=(len(chosen), 2))",
                                         "np.random.randint(-1, 2, size=(len(chosen), 2))"),
            None, "shift.rng"),
    Mistake("only diagonal moves", ("rng.integers(-1, 2, size=(len(chosen), 2))",
                                    "np.repeat(rng.integers(-1, 2, size=(len(chosen), 1)), 2, "
                                    "axis=1)"), None, "shift.all-moves"),
)

FRACTIONS = (0.25, 1.0, 0.0)


def cases(seed: int, hidden: bool) -> list[np.ndarray]:
    """The images of each configuration: the same from the same seed, wherever run."""
    rng = np.random.default_rng(seed)
    shapes = [(400, 8, 8)] + ([(300, 5, 7)] if hidden else [])
    return [rng.integers(1, 17, size=shape).astype(np.float64) / 16.0 for shape in shapes]


def _title(images: np.ndarray, fraction: float) -> str:
    n, h, w = images.shape
    return f"{n} images of {h}x{w}, fraction={fraction}"


def observe(ob: Observer, shift_pixels: Callable[..., Any], *, seed: int, hidden: bool) -> None:
    for images in cases(seed, hidden):
        for fraction in FRACTIONS:
            with ob.case(_title(images, fraction)):
                out = shift_pixels(images, np.random.default_rng(seed + 5), fraction=fraction)
                ob.put("images after", images)
                ob.put("result", np.asarray(out))
                if fraction == 1.0:
                    ob.put("again", np.asarray(shift_pixels(
                        images, np.random.default_rng(seed + 5), fraction=1.0)))


def _shifts(img: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """The nine one-pixel moves (dy, dx) of one image, zeros shifted in."""
    h, w = img.shape
    padded = np.pad(img, 1)
    return {(dy, dx): padded[1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
            for dy in (-1, 0, 1) for dx in (-1, 0, 1)}


def move_of(got: np.ndarray, img: np.ndarray) -> tuple[int, int] | None:
    """The one-pixel move (dy, dx) that turns img into got; None if none does."""
    for move, moved in _shifts(img).items():
        if np.array_equal(got, moved):
            return move
    return None


def _rolled(got: np.ndarray, img: np.ndarray) -> bool:
    return any(np.array_equal(got, np.roll(img, (dy, dx), axis=(0, 1)))
               for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))


def judge(ck: Checker, obs: Observations) -> None:
    for images in cases(obs.seed, obs.hidden):
        for fraction in FRACTIONS:
            title = _title(images, fraction)
            with ck.case(title):
                _judge_case(ck, obs.case(ck, title, what="your shift_pixels"), images, fraction)
    ck.done()


def _judge_case(ck: Checker, seen: Any, images: np.ndarray, fraction: float) -> None:
    n = len(images)
    after = seen["images after"]
    ck.check(isinstance(after, np.ndarray) and np.array_equal(after, images),
             "your shift_pixels changed the images it was given.", hint=HINTS["shift.copy"])
    out = seen["result"]
    shape = getattr(out, "shape", None)
    ck.check(shape == images.shape, f"the result has shape {shape}, expected {images.shape}.",
             hint=HINTS["shift.shape"])
    moves = [move_of(o, i) for o, i in zip(out, images)]
    bad = [k for k, m in enumerate(moves) if m is None]
    if bad:
        k = bad[0]
        ck.fail(f"image {k} is not a one-pixel move of the image given.", expected=images[k],
                received=out[k],
                hint=HINTS["shift.roll" if _rolled(out[k], images[k]) else "shift.move"])
    if n * fraction / 9 >= 10:      # each move expected 10 times or more
        found = {m for m in moves if m is not None}
        missing = sorted(set(_shifts(images[0])) - found)
        ck.check(not missing, f"no image moved by {missing[0] if missing else ''} (dy, dx).",
                 received=sorted(found), hint=HINTS["shift.all-moves"])
    moved = sum(m != (0, 0) for m in moves)
    expected_moved = fraction * 8 / 9 * n
    if fraction == 0.0:
        ck.check(moved == 0, f"with fraction=0, {moved} images moved.", hint=HINTS["shift.none"])
    else:
        low, high = expected_moved * 0.75, min(n, expected_moved * 1.25 + 3)
        ck.check(low <= moved <= high, f"{moved} of {n} images moved; with fraction={fraction} "
                 f"about {expected_moved:.0f} should (a chosen image may draw dy = dx = 0 and "
                 "stay).", expected=f"{low:.0f} to {high:.0f}", received=moved,
                 hint=HINTS["shift.too-many" if moved > high else "shift.too-few"])
    if fraction == 1.0:
        again = seen["again"]
        ck.check(isinstance(again, np.ndarray) and np.array_equal(again, out),
                 "the same generator state gave different moves.", hint=HINTS["shift.rng"])
