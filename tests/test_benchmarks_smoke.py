"""The benchmark code runs (one tiny repeat each; no timing is asserted)."""
import math

import pytest

figures = pytest.importorskip("benchmarks.figures")
from benchmarks.report import previous_ratios, render  # noqa: E402


def test_figures_run_and_render(tmp_path):
    figs = [figures.engine_chain(repeats=1, length=20),
            figures.engine_chain(repeats=1, length=20, captured=True),
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
    assert figs[0].name != figs[1].name and "captured step" in figs[1].name
    # both chains give d(sum of 20 multiplications)/dx the same way
    assert math.isclose(float(figs[1].extra["grad"][0]), float(figs[0].extra["grad"][0]), rel_tol=1e-12)
    assert "| figure |" in text and "softmax-cross-entropy" in text and "warm cache" in text


def test_previous_ratios_come_back_beside_the_new_ones():
    """A run's RESULTS.md feeds the next run's "previous ratio" column, figure by figure."""
    fig = figures.engine_chain(repeats=1, length=20)
    info = {"machine": {"cpu": "cpu", "cores": 2, "os": "os", "load": (0.0, 0.0, 0.0)},
            "versions": {"python": "3", "numpy": "2", "numba": "0", "torch": "-", "blas": "-"},
            "threads": {"numba": 1, "layer": "omp", "torch": 1}}
    first = previous_ratios(render([fig], None, info, None, 1.0))
    key = ("targets", fig.name)
    assert first[key] == (f"{fig.ratio():.2f}" if fig.ratio() is not None else "")
    again = render([fig], None, info, None, 1.0, previous={key: "9.99"})
    assert "| 9.99 |" in again and previous_ratios(again)[key] == first[key]


def test_a_recorded_op_keeps_few_objects_alive():
    """The engine's lean path: until backward, one recorded op keeps at most 6 objects that the
    garbage collector tracks (node, output, edges, one edge pair, saved tuple, constants).
    A per-save wrapper or per-node metadata lists would push it back to 10-14."""
    from benchmarks.engine_profile import tracked_per_op

    assert tracked_per_op() <= 6
