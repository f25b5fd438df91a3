"""The benchmark code runs (one tiny repeat each; no timing is asserted)."""
import math

import pytest

figures = pytest.importorskip("benchmarks.figures")
from benchmarks.report import render  # noqa: E402


def test_figures_run_and_render(tmp_path):
    figs = [figures.engine_chain(repeats=1, length=20),
            figures.softmax_ce(8, 5, repeats=1),
            figures.conv(2, 1, 2, 6, 0.5, repeats=1)]
    for f in figs:
        assert f.timings["ours"].samples and all(s > 0 for s in f.timings["ours"].samples)
        r = f.ratio()
        assert r is None or (r > 0 and math.isfinite(r))
    info = {"machine": {"cpu": "cpu", "cores": 2, "os": "os", "load": (0.0, 0.0, 0.0)},
            "versions": {"python": "3", "numpy": "2", "numba": "0", "torch": "-", "blas": "-"},
            "threads": {"numba": 1, "layer": "omp", "torch": 1}}
    cold = {"empty_cache": {"import": 0.1, "kernels": 5.0, "total": 5.1},
            "warm_cache": {"import": 0.1, "kernels": 0.5, "total": 0.6}}
    text = render(figs, cold, info, None, 1.0)
    assert "| figure |" in text and "softmax-cross-entropy" in text and "warm cache" in text
