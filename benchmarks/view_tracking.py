"""What tracking views costs: basic indexing, reshape, transpose and expand record that their
result shares its base's memory (a shared version counter, a place in the base's set of views),
so that an in-place change through either side is seen by the other, as in PyTorch.

This times each view op on a small and a larger Variable that requires grad, with the tracking on
and with it switched off for the measurement (``as_view`` replaced by the identity), interleaved in
one process; an op that makes no view (``x + 1``) is the control. Ratios above 1 are the price of
the tracking. ``python3 -m benchmarks.view_tracking``."""
from __future__ import annotations

import argparse

import numpy as np

import autograd_lab as al
from autograd_lab.ops import shape as S

from .timing import compare

OPS = {
    "x[1:3]": lambda x: x[1:3],
    "x.reshape(-1)": lambda x: x.reshape(-1),
    "x.t()": lambda x: x.t(),
    "x[:1].expand(...)": lambda x: x[:1].expand(x.shape),
    "x + 1 (control)": lambda x: x + 1,
}


def measure(shape: tuple[int, ...], repeats: int) -> list[tuple[str, float, float, float]]:
    """(op, µs tracked, µs untracked, ratio) for each op on a Variable of ``shape``."""
    x = al.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    tracked = S.as_view
    rows = []
    for name, op in OPS.items():
        def untracked(op=op):
            S.as_view = lambda out, base, fn: out
            try:
                return op(x)
            finally:
                S.as_view = tracked
        # the untracked contender pays for swapping the function in and out: time that alone too
        def swap_only():
            S.as_view = tracked
            S.as_view = tracked
        t = compare({"tracked": lambda op=op: op(x), "untracked": untracked, "swap": swap_only},
                    repeats=repeats)
        on, off = t["tracked"].median, t["untracked"].median - t["swap"].median
        rows.append((name, on * 1e6, off * 1e6, on / off))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    for shape in [(4, 4), (256, 256)]:
        print(f"Variable of shape {shape}, requires_grad=True (medians of {args.repeats}):")
        print(f"  {'op':<20} {'tracked µs':>11} {'untracked µs':>13} {'ratio':>6}")
        for name, on, off, ratio in measure(shape, args.repeats):
            print(f"  {name:<20} {on:>11.2f} {off:>13.2f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
