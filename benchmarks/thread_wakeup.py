"""What waking numba's second thread costs the fused bias + activation kernels.

    python -m benchmarks.thread_wakeup [--repeats 15] [--rounds 3] [--size 1000]

The kernels' forward and backward (``bias_act_fwd`` / ``bias_act_bwd`` on a (size, size) float32
batch) are timed on one thread and on two, interleaved by ``timing.compare`` as every benchmark
here is, and numpy's composite of the same step beside them.
This runs twice, each time in a fresh process: once with the library's default (OpenMP's
passive waiting: the second thread sleeps between parallel loops, and each loop wakes it) and
once with ``OMP_WAIT_POLICY=ACTIVE`` (it spins, awake). The OpenMP runtime reads the policy once,
when numba loads it, hence the processes. benchmarks/PROFILE.md, section 16, quotes this output.

    python -m benchmarks.thread_wakeup --probe [--repeats 15]

measures instead what starting one parallel loop costs on this machine (the median time of a
parallel loop over 64 numbers minus that of a serial one, alternating) and prints the serial/parallel
thresholds it suggests beside the library's fixed ones (``autograd_lab.kernels.THRESHOLDS``). The
library used to run this probe in every process and scale its thresholds by it, so the choice moved
with the machine's load; it now keeps fixed thresholds, and this probe is where to start when
choosing them for another machine (or deciding on ``set_parallel(True)``).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from .timing import compare

ACTIVATIONS = ("relu", "tanh")
POLICIES = {"passive (the default)": None, "awake (OMP_WAIT_POLICY=ACTIVE)": "ACTIVE"}


def measure(size: int = 1000, repeats: int = 15, rounds: int = 3,
            sample_seconds: float = 0.02) -> dict[str, list[float]]:
    """µs per call, one median of ``repeats`` samples per round, for every kernel on 1 and 2
    threads and for numpy's composite (tanh's, on one thread: numpy runs elementwise work on one)."""
    import numba

    from autograd_lab.kernels import _jit
    from autograd_lab.kernels import activation as A

    _jit.num_threads()  # start numba's threads the library's way (passive unless the policy is set)
    rng = np.random.default_rng(0)
    z = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal(size).astype(np.float32)
    g = rng.standard_normal((size, size)).astype(np.float32)

    def composite() -> None:
        y = np.tanh(z + b)
        (g * (1 - y * y)).sum(0)

    threads = [t for t in (1, 2) if t <= numba.config.NUMBA_NUM_THREADS]
    before = numba.get_num_threads()
    results: dict[str, list[float]] = {}
    try:
        for _ in range(rounds):
            for t in threads:
                numba.set_num_threads(t)
                on = "1 thread" if t == 1 else f"{t} threads"
                kernels = {}
                for act in ACTIVATIONS:
                    y = A.bias_act_fwd(z, b, act)
                    kernels[f"{act} forward, {on}"] = functools.partial(A.bias_act_fwd, z, b, act)
                    kernels[f"{act} backward, {on}"] = functools.partial(A.bias_act_bwd, y, g, act)
                if t == 1:  # numpy runs it on one thread whatever numba's count
                    kernels["numpy's composite (tanh)"] = composite
                for name, timing in compare(kernels, repeats, sample_seconds).items():
                    results.setdefault(name, []).append(1e6 * timing.median)
    finally:
        numba.set_num_threads(before)
    return results


# The thresholds as first measured, on a machine where waking numba's second thread took about
# 2 us (PROFILE.md, section 13); a probe of w us suggests them times w / 2, from 1 to 10 times.
# The column sums (sum_rows, the fused backward) have more than one block of rows to share out only
# from BLOCKS_MIN_SIZE values on (the library's PARALLEL_MIN_SIZE), so neither goes below it.
FIRST_THRESHOLDS = {"elementwise": 60_000, "exp": 8_000, "bias_act_bwd": 8_000, "sum_rows": 60_000,
                    "rows": 16_000, "conv": 32_000, "pool": 131_072}
BLOCKS_MIN_SIZE = 60_000
BLOCKED = ("bias_act_bwd", "sum_rows")
REFERENCE_WAKE_UP_US = 2.0
MAX_SCALE = 10.0


def probe_us(repeats: int = 15, clock=time.perf_counter) -> float:
    """What starting a parallel loop costs here, in µs: the median time of a parallel loop over 64
    numbers minus the median of the serial one, the two alternating (0 without JIT)."""
    import numba

    if numba.config.DISABLE_JIT:
        return 0.0
    from autograd_lab.kernels import _jit

    _jit.num_threads()  # numba's threads start as the library starts them (passive waiting)

    def add_one(x):
        for i in numba.prange(x.size):
            x[i] += 1.0

    serial, parallel = numba.njit(add_one), numba.njit(parallel=True)(add_one)
    x = np.zeros(64)
    serial(x), parallel(x)  # compiled before anything is timed
    serial_times, parallel_times = [], []
    for _ in range(repeats):
        start = clock()
        serial(x)
        middle = clock()
        parallel(x)
        serial_times.append(middle - start)
        parallel_times.append(clock() - middle)
    return max(0.0, (statistics.median(parallel_times) - statistics.median(serial_times)) * 1e6)


def suggested_thresholds(wake_up_us: float) -> dict[str, int]:
    """The first thresholds scaled by the measured wake-up over the 2 µs they were measured with,
    by 1 to 10 (beyond ten times the measurements say nothing). A starting point only: where
    PROFILE.md measured a crossover (the sums stayed faster serial up to a million values, say),
    the measurement wins, which is why the library's own table differs from this in places."""
    scale = min(MAX_SCALE, max(1.0, wake_up_us / REFERENCE_WAKE_UP_US))
    return {name: max(BLOCKS_MIN_SIZE if name in BLOCKED else 0, int(round(size * scale)))
            for name, size in FIRST_THRESHOLDS.items()}


def format_probe(wake_up_us: float) -> str:
    from autograd_lab.kernels import THRESHOLDS

    suggested = suggested_thresholds(wake_up_us)
    lines = [f"starting a parallel loop costs {wake_up_us:.1f} µs here "
             f"(the thresholds were first measured where it cost {REFERENCE_WAKE_UP_US:g} µs)",
             "| kernel family | the library's threshold | suggested by this probe |", "| --- | --- | --- |"]
    for name, size in THRESHOLDS.items():
        lines.append(f"| {name} | {size:,} | {suggested.get(name, size):,} |")
    return "\n".join(lines)


def _in_fresh_process(policy: str | None, args: argparse.Namespace) -> dict[str, list[float]]:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-m", "benchmarks.thread_wakeup", "--child", "--size", str(args.size),
                          "--repeats", str(args.repeats), "--rounds", str(args.rounds),
                          "--sample-seconds", str(args.sample_seconds)],
                         env=env, capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    report = json.loads(out.stdout.strip().splitlines()[-1])
    if report["policy"] != policy:  # the measurement would be of another policy than its column says
        raise RuntimeError(f"the child process ran with OMP_WAIT_POLICY={report['policy']!r}, "
                           f"expected {policy!r}")
    return report["times"]


def format_table(by_policy: dict[str, dict[str, list[float]]]) -> str:
    """One row per kernel and thread count, one column per policy: the range over rounds."""
    names = list(dict.fromkeys(name for r in by_policy.values() for name in r))
    lines = ["| µs per call | " + " | ".join(by_policy) + " |", "| --- |" + " --- |" * len(by_policy)]
    for name in names:
        cells = []
        for r in by_policy.values():
            v = r.get(name)
            cells.append(f"{min(v):.0f}–{max(v):.0f}" if v else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="samples per median (default 15)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the table gives their range (default 3)")
    parser.add_argument("--size", type=int, default=1000, help="the batch is size x size float32 (default 1000)")
    parser.add_argument("--sample-seconds", type=float, default=0.02,
                        help="each sample repeats a call for about this long (default 0.02)")
    parser.add_argument("--probe", action="store_true",
                        help="measure the wake-up of one parallel loop and print the thresholds it suggests")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one policy, as JSON
    args = parser.parse_args(argv)
    if args.probe:
        print(format_probe(probe_us(args.repeats)))
        return
    if args.child:
        print(json.dumps({"policy": os.environ.get("OMP_WAIT_POLICY"),
                          "times": measure(args.size, args.repeats, args.rounds, args.sample_seconds)}))
        return
    by_policy = {name: _in_fresh_process(policy, args) for name, policy in POLICIES.items()}
    print(f"fused bias + activation, ({args.size}, {args.size}) float32, medians of {args.repeats} samples, "
          f"{args.rounds} round(s)")
    print(format_table(by_policy))


if __name__ == "__main__":
    main()
