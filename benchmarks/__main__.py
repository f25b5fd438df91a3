"""Run every benchmark in this process and write benchmarks/RESULTS.md.

    python -m benchmarks              # everything (a few minutes)
    python -m benchmarks --quick      # 3 repeats, no cold start: a quick look
"""
from __future__ import annotations

import argparse
import os
import pathlib
import time

from . import figures as fg
from .coldstart import cold_start
from .report import machine, previous_ratios, render, versions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15, help="samples per contender (default 15)")
    ap.add_argument("--quick", action="store_true", help="3 repeats and no cold-start measurement")
    ap.add_argument("--no-cold-start", action="store_true", help="skip the fresh-process measurement")
    ap.add_argument("--no-single-thread", action="store_true",
                    help="skip the second pass with 1 thread for numba, BLAS and torch")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for numba, torch and BLAS (default: numba's default)")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).with_name("RESULTS.md")),
                    help="where to write the table (default benchmarks/RESULTS.md)")
    args = ap.parse_args(argv)
    reps = 3 if args.quick else args.repeats
    start = time.perf_counter()
    info = {"machine": machine()}

    import numba
    from autograd_lab.kernels import warmup
    _set_threads(numba, args.threads or numba.get_num_threads())
    info["versions"] = versions()
    import numpy as np
    print(f"compiling / loading kernels ... {warmup(dtypes=(np.float32,)):.1f} s", flush=True)
    info["threads"] = {"numba": numba.get_num_threads(), "layer": _layer(numba),
                       "torch": fg.torch.get_num_threads() if fg.torch is not None else "—"}

    jobs = [
        lambda: fg.engine_chain(reps),
        lambda: fg.engine_chain(reps, captured=True),
        lambda: fg.bias_act("relu", reps),
        lambda: fg.bias_act("sigmoid", reps),
        lambda: fg.bias_act("tanh", reps),
        lambda: fg.elementwise("relu", reps),
        lambda: fg.elementwise("sigmoid", reps),
        lambda: fg.elementwise("tanh", reps),
        lambda: fg.softmax_ce(256, 10, reps),
        lambda: fg.softmax_ce(4096, 1000, reps),
        lambda: fg.conv(64, 1, 8, 8, 0.5, reps),
        lambda: fg.conv(64, 16, 32, 28, 2.0, reps),
        lambda: fg.max_pool(reps),
        lambda: fg.linear(max(3, reps * 2 // 3)),
    ]
    results = _run_jobs(jobs)
    single = None
    if not (args.quick or args.no_single_thread) and numba.get_num_threads() > 1:
        print("same figures with 1 thread everywhere ...", flush=True)
        _set_threads(numba, 1)
        single = _run_jobs(jobs)
    cold = None
    if not (args.quick or args.no_cold_start):
        print("cold start (fresh processes) ...", flush=True)
        cold = cold_start()
        print(f"  empty cache {cold['empty_cache']['total']:.1f} s, warm cache {cold['warm_cache']['total']:.2f} s")
    load_end = os.getloadavg() if hasattr(os, "getloadavg") else None
    out = pathlib.Path(args.out)
    previous = previous_ratios(out.read_text(encoding="utf-8")) if out.exists() else None
    text = render(results, cold, info, load_end, time.perf_counter() - start, single, previous)
    pathlib.Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _set_threads(numba, n: int) -> None:
    """The same thread count for numba, BLAS (via threadpoolctl, if installed) and torch."""
    numba.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(n, user_api="blas")
    except ImportError:
        pass
    if fg.torch is not None:
        fg.torch.set_num_threads(n)


def _run_jobs(jobs) -> list:
    results = []
    for job in jobs:
        f = job()
        r = f.ratio()
        print(f"{f.name:70s} ratio {'n/a' if r is None else f'{r:.2f}'} (target {f.target})", flush=True)
        results.append(f)
    return results


def _layer(numba) -> str:
    try:
        return numba.threading_layer()
    except ValueError:
        return "not started"


if __name__ == "__main__":
    raise SystemExit(main())
