"""The benchmark code runs (one tiny repeat each; no timing is asserted)."""
import datetime as dt
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


def test_the_engine_profile_splits_every_part(capsys):
    """`python -m benchmarks.engine_profile` (PROFILE.md section 1 quotes it) times each part of
    the chain, the replayed one too, and prints a positive figure for each."""
    from benchmarks import engine_profile

    assert engine_profile.main(["--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    parts = {name: float(us) for name, us, _ in (line.rsplit(maxsplit=2) for line in lines if line.endswith("µs/op"))}
    for part in ("ours: forward, recorded", "ours: backward", "captured: forward, replayed",
                 "captured: backward, replayed"):
        assert parts[part] > 0, part


def test_the_engine_profile_takes_each_item_out_and_puts_it_back():
    """``--ablate`` times the chain without one item at a time. Each stand-in must give the
    chain's gradient bit for bit (ablation raises otherwise); afterwards the library's own code
    is back in place. (What an item costs is measured, not asserted.)"""
    import math

    from autograd_lab import engine, function
    from autograd_lab.ops import elementwise
    from benchmarks import engine_profile

    before = (function._record, function._is_plain_output, function.STATE, engine._run_node,
              elementwise.Mul.__dict__["forward"], elementwise.Mul.__dict__["backward"])
    costs = engine_profile.ablation(2)
    assert set(costs) == set(engine_profile._ablations())
    assert "all of the above" in costs and all(math.isfinite(t) for pair in costs.values() for t in pair)
    assert before == (function._record, function._is_plain_output, function.STATE,
                      engine._run_node,
                      elementwise.Mul.__dict__["forward"], elementwise.Mul.__dict__["backward"])


def test_the_wakeup_benchmark_times_every_kernel_on_each_thread_count():
    """`python -m benchmarks.thread_wakeup` (PROFILE.md section 16 quotes it): every kernel's
    forward and backward on one thread and on two, numpy's composite beside them, and numba's
    thread count as it was afterwards. (The times are measured, not asserted.)"""
    import numba

    from benchmarks import thread_wakeup

    before = numba.get_num_threads()
    times = thread_wakeup.measure(size=64, repeats=2, rounds=2, sample_seconds=0.001)
    assert numba.get_num_threads() == before
    threads = ["1 thread"] + (["2 threads"] if numba.config.NUMBA_NUM_THREADS >= 2 else [])
    expected = {f"{act} {part}, {on}" for act in thread_wakeup.ACTIVATIONS
                for part in ("forward", "backward") for on in threads} | {"numpy's composite (tanh)"}
    assert set(times) == expected
    assert all(len(v) == 2 and all(t > 0 for t in v) for v in times.values())


def test_the_wakeup_benchmark_runs_each_policy_in_its_own_process(capsys):
    """Each column comes from a fresh process that ran with its own OMP_WAIT_POLICY (the child
    reports the policy it saw, and the parent refuses a mismatch)."""
    from benchmarks import thread_wakeup

    thread_wakeup.main(["--size", "32", "--repeats", "2", "--rounds", "1", "--sample-seconds", "0.001"])
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("| µs per call"))
    assert all(name in header for name in thread_wakeup.POLICIES)
    rows = [line for line in lines if line.startswith("| ") and "µs per call" not in line and "---" not in line]
    assert any(row.startswith("| numpy's composite") for row in rows)
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert len(cells) == len(thread_wakeup.POLICIES) and all(c != "—" for c in cells), row


def test_the_wakeup_probe_is_the_median_parallel_time_over_the_serial_one():
    """`python -m benchmarks.thread_wakeup --probe`: medians, so one slow loop does not move it."""
    import numba

    from benchmarks import thread_wakeup

    if numba.config.DISABLE_JIT:
        assert thread_wakeup.probe_us() == 0.0  # nothing runs in parallel
        return
    # a clock on which each serial loop takes 1 us and each parallel one 41 (one 500 us outlier)
    ticks = []
    for k in range(5):
        parallel = 500e-6 if k == 2 else 41e-6
        ticks += [k * 1e-3, k * 1e-3 + 1e-6, k * 1e-3 + 1e-6 + parallel]
    clock = iter(ticks)
    assert thread_wakeup.probe_us(repeats=5, clock=lambda: next(clock)) == pytest.approx(40.0)
    assert thread_wakeup.probe_us(repeats=3) >= 0.0  # the real clock: measured, not asserted


def test_the_wakeup_probe_suggests_thresholds_in_proportion_capped_at_ten_times(capsys):
    from autograd_lab.kernels import THRESHOLDS
    from benchmarks import thread_wakeup

    first = thread_wakeup.FIRST_THRESHOLDS
    assert set(first) == set(THRESHOLDS)  # a suggestion for every kernel family the library has

    def scaled(factor):  # the column sums have one block below 60,000 values: never suggested lower
        return {k: max(60_000 if k in ("sum_rows", "bias_act_bwd") else 0, factor * v) for k, v in first.items()}

    assert thread_wakeup.suggested_thresholds(0.5) == scaled(1)  # faster than where they were measured
    assert thread_wakeup.suggested_thresholds(12.0) == scaled(6)
    assert thread_wakeup.suggested_thresholds(2000.0) == scaled(10)
    assert scaled(10)["bias_act_bwd"] == 80_000 and scaled(1)["bias_act_bwd"] == 60_000
    thread_wakeup.main(["--probe", "--repeats", "3"])
    out = capsys.readouterr().out
    assert out.startswith("starting a parallel loop costs ")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split("|")[1].strip() for row in rows] == list(THRESHOLDS)


def test_view_tracking_benchmark_times_every_op_and_puts_tracking_back():
    from autograd_lab.ops import shape
    from benchmarks import view_tracking

    tracked = shape.as_view
    rows = view_tracking.measure((3, 3), repeats=1)
    assert [r[0] for r in rows] == list(view_tracking.OPS)
    assert all(on > 0 and math.isfinite(ratio) for _, on, _, ratio in rows)
    assert shape.as_view is tracked
    x = __import__("autograd_lab").ones(2, 2)
    view = x[0]
    x.add_(1)
    assert view.data.tolist() == [2.0, 2.0]  # views still see their base's changes afterwards


def test_the_grading_benchmark_builds_a_terms_class_of_every_kind(tmp_path):
    from benchmarks.grade_class import build_term_class
    from autograd_lab.course.authoring.notebooks import read_notebook
    subs, kinds = build_term_class(tmp_path, 10, ["00_welcome", "01_derivatives"])
    assert sorted(set(kinds.values())) == ["broken", "copied", "honest", "late", "partial"]
    late = [s for s, k in kinds.items() if k == "late"][0]
    handed_in = dt.datetime.fromtimestamp((subs / late / "00_welcome.ipynb").stat().st_mtime,
                                          dt.timezone.utc)
    assert handed_in.date() == dt.date(2026, 10, 14)
    assert not (subs / late / "timestamp.txt").exists()  # a submission's own file is not used
    assert "deadline" in (subs / "course.toml").read_text()
    copied = [s for s, k in kinds.items() if k == "copied"][0]
    sources = {s: (subs / s / "01_derivatives.ipynb").read_bytes() for s in kinds}
    assert any(sources[copied] == sources[s] for s, k in kinds.items() if k == "partial")
    partial = [s for s, k in kinds.items() if k == "partial"][0]
    assert "NotImplementedError" in str(read_notebook(subs / partial / "01_derivatives.ipynb"))
    broken = [s for s, k in kinds.items() if k == "broken"][0]
    text = (subs / broken / "00_welcome.ipynb").read_text()
    assert "not JSON" in text or "os._exit" in text


def test_the_grading_projection_scales_the_measured_rate_with_the_cores():
    from benchmarks.grade_class import project
    # 60 jobs in 10 minutes on 2 cores: 3 jobs per minute per core
    hours = dict(project(600.0, 60, 2, students=300, notebooks=13))
    assert hours[2] == pytest.approx(3900 / 6 / 60)
    assert hours[64] == pytest.approx(hours[2] / 32)


def test_the_step_profile_times_every_part_of_a_recorded_step():
    """`python -m benchmarks.step_profile` cuts the peers' MLP step into its parts; each part of
    autograd_lab's step gets a positive median, and the contenders not installed are named."""
    pytest.importorskip("sklearn")
    from benchmarks import step_profile

    medians, missing = step_profile.profile(steps=4, rounds=2)
    ours = medians["autograd_lab recorded"]
    assert set(ours) == set(step_profile.PARTS) and all(t > 0 for t in ours.values())
    assert set(medians) | set(missing) == set(step_profile.CONTENDERS)
    table = step_profile.render(medians, missing)
    assert "| backward |" in table and "**sum**" in table


def test_the_shared_mlp_holds_the_weights_it_is_given_in_every_library():
    """benchmarks.models builds the peers' MLP once for every benchmark: the weights handed in
    (x @ W1 + b1 layout) come back unchanged, in autograd_lab and in PyTorch (when installed)."""
    import numpy as np

    from benchmarks.models import mlp_weights, mlp_with_weights

    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s) for s in ((64, 128), (128,), (128, 10), (10,))]
    libs = ["autograd_lab"] + (["torch"] if figures.torch is not None else [])
    for lib in libs:
        got = mlp_weights(mlp_with_weights(lib, weights))
        assert all(np.array_equal(a, b) and a.dtype == np.float64 for a, b in zip(got, weights)), lib
    with pytest.raises(ValueError, match="'autograd_lab' or 'torch'"):
        mlp_with_weights("jax", weights)


def test_the_shared_training_step_gives_the_same_weights_recorded_and_captured():
    import numpy as np

    import autograd_lab as al
    from autograd_lab import functional as F
    from benchmarks.models import mlp_weights, mlp_with_weights, training_step

    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(s) * 0.1 for s in ((64, 128), (128,), (128, 10), (10,))]
    x, y = al.tensor(rng.standard_normal((8, 64))), al.tensor(rng.integers(0, 10, 8))
    results = []
    for captured in (False, True):
        model = mlp_with_weights("autograd_lab", weights)
        step = training_step(lambda a, b, m=model: F.cross_entropy(m(a), b),
                             al.optim.SGD(model.parameters(), lr=0.1), captured)
        losses = [float(step(x, y).data) for _ in range(3)]
        results.append((losses, mlp_weights(model)))
    assert results[0][0] == results[1][0] and results[0][0][2] < results[0][0][0]
    assert all(np.array_equal(a, b) for a, b in zip(results[0][1], results[1][1]))
    assert not np.array_equal(results[0][1][0], weights[0])  # the steps changed the weights
