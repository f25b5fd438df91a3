"""What waking numba's second thread costs the fused bias + activation kernels.

    python -m benchmarks.thread_wakeup [--repeats 15] [--rounds 3] [--size 1000]

The kernels' forward and backward (``bias_act_fwd`` / ``bias_act_bwd`` on a (size, size) float32
batch) are timed on one thread and on two, interleaved by ``timing.compare`` as every benchmark
here is, and numpy's composite of the same step beside them.
This runs twice, each time in a fresh process: once with the library's default (OpenMP's
passive waiting: the second thread sleeps between parallel loops, and each loop wakes it) and
once with ``OMP_WAIT_POLICY=ACTIVE`` (it spins, awake). The OpenMP runtime reads the policy once,
when numba loads it, hence the processes. benchmarks/PROFILE.md, section 16, quotes this output.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys

import numpy as np

from .timing import compare

ACTIVATIONS = ("relu", "tanh")
POLICIES = {"passive (the default)": None, "awake (OMP_WAIT_POLICY=ACTIVE)": "ACTIVE"}


def measure(size: int = 1000, repeats: int = 15, rounds: int = 3,
            sample_seconds: float = 0.02) -> dict[str, list[float]]:
    """µs per call, one median of ``repeats`` samples per round, for every kernel on 1 and 2
    threads and for numpy's composite (tanh's, on one thread: numpy runs elementwise work on one)."""
    import numba

    from autograd_lab.kernels import activation as A

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
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one policy, as JSON
    args = parser.parse_args(argv)
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
