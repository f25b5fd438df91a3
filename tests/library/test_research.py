"""research/protocol_ladder.py, the minimal autograds that measured how low a Python engine can
go: each computes what it times (one tiny repeat; no timing is asserted)."""
import math

import pytest


def test_every_rung_of_the_protocol_ladder_computes_the_chains_gradient(capsys):
    """The ladder's minimal autograds time the chain only if they compute it: each rung, the
    library (recorded and captured) and PyTorch give d(sum of x * c**n)/dx = c**n."""
    ladder = pytest.importorskip("research.protocol_ladder")
    n = 30
    want = ladder.C ** n
    for name, run in ladder.contenders(n).items():
        if run is None:
            continue
        got = run()
        assert got.shape == ladder.X0.shape, name
        assert all(math.isclose(float(g), want, rel_tol=1e-12) for g in got), (name, got)
    # --threads 0: the tests after this one keep their thread counts
    assert ladder.main(["--repeats", "1", "--length", "20", "--epochs", "1", "--threads", "0"]) == 0
    table = capsys.readouterr().out
    for name in list(ladder.RUNGS) + ["+ differentiable, replayed", "numpy (hand backprop)"]:
        assert f"| {name} |" in table


def test_the_mlp_floor_trains_exactly_as_the_hand_written_numpy_step():
    """The ladder's MLP step on its last rung runs the hand-written numpy lines as Functions,
    recorded or replayed: after an epoch its weights equal the hand-written step's bit for bit,
    and the library's (other kernels, same arithmetic) agree to float32 rounding."""
    import numpy as np

    ladder = pytest.importorskip("research.protocol_ladder")
    runs, steps = ladder.mlp_contenders(1)
    assert steps > 10
    want = runs["numpy (hand backprop)"]()
    for name in ("+ differentiable", "+ differentiable, replayed"):
        floor = runs[name]()
        assert all(np.array_equal(a, b) for a, b in zip(want, floor)), name
    for name in ("autograd_lab, recorded", "autograd_lab, captured"):
        got = [p.data for p in runs[name]().parameters()]
        for a, b in zip(want, got):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-5, err_msg=name)
    untrained = ladder.mlp_contenders(0)[0]["numpy (hand backprop)"]()  # no epoch: the initial weights
    assert not np.array_equal(want[0], untrained[0])
