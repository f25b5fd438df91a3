"""Cold start: a fresh process imports autograd_lab and compiles every kernel for float32 (serial
and parallel versions), once with an empty numba cache and once with that cache warm."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

_PROBE = """
import json, time
t0 = time.perf_counter()
import autograd_lab
t1 = time.perf_counter()
from autograd_lab.kernels import warmup
import numpy as np
secs = warmup(dtypes=(np.float32,))
print(json.dumps({"import": t1 - t0, "kernels": secs, "total": time.perf_counter() - t0}))
"""


def _run(cache_dir: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                         check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_start(warm_runs: int = 3) -> dict:
    """{'empty_cache': {...}, 'warm_cache': {...}} with seconds for import, kernels and total."""
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = _run(cache)
        warm = [_run(cache) for _ in range(warm_runs)]
    warm.sort(key=lambda r: r["total"])
    return {"empty_cache": cold, "warm_cache": warm[len(warm) // 2]}
