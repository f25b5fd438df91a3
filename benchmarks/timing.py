"""A small interleaved timer: medians and min-max over repeats, several contenders per figure."""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Timing:
    """Seconds per call of one contender: all repeats, with the median and the range."""

    samples: list[float] = field(default_factory=list)
    cpu_samples: list[float] = field(default_factory=list)  # process CPU seconds per call

    @property
    def median(self) -> float:
        s = sorted(self.samples)
        n = len(s)
        return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])

    @property
    def cpu_median(self) -> float:
        s = sorted(self.cpu_samples)
        return s[len(s) // 2] if s else float("nan")

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)


def _calls_per_sample(fn: Callable[[], object], target: float) -> int:
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    return max(1, min(10_000, int(target / max(once, 1e-7))))


def compare(contenders: dict[str, Callable[[], object] | None], repeats: int = 15,
            sample_seconds: float = 0.02) -> dict[str, Timing]:
    """Time each callable ``repeats`` times (interleaved, so drift hits all alike).

    Each sample runs a callable enough times to last about ``sample_seconds`` and records the
    mean time per call.  ``None`` contenders (e.g. torch not installed) are skipped.
    The garbage collector is left on: it is part of what a user pays."""
    active = {k: f for k, f in contenders.items() if f is not None}
    for f in active.values():  # warm up: compile, fill caches, let allocators settle
        f()
        f()
    number = {k: _calls_per_sample(f, sample_seconds) for k, f in active.items()}
    out = {k: Timing() for k in active}
    for _ in range(repeats):
        for k, f in active.items():
            n = number[k]
            c0 = time.process_time()
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            out[k].samples.append((time.perf_counter() - t0) / n)
            out[k].cpu_samples.append((time.process_time() - c0) / n)
    gc.collect()
    return out
