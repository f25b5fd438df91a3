"""benchmarks.peers: every contender that runs must reproduce the numpy reference's training, and
a contender that trains differently is left out of the table with its losses (no time asserted)."""
from __future__ import annotations

import numpy as np
import pytest

peers = pytest.importorskip("benchmarks.peers")


def test_the_reference_steps_along_the_numerical_gradient() -> None:
    weights, batches = peers.problem()
    x, y = batches[0]

    def loss(ws: list) -> float:
        return peers.reference_run(ws, [(x, y)], 1)[0][0]

    _, after = peers.reference_run(weights, [(x, y)], 1)
    rng = np.random.default_rng(1)
    for k, w in enumerate(weights):
        for index in [tuple(rng.integers(0, n) for n in w.shape) for _ in range(3)]:
            plus = [v.copy() for v in weights]
            minus = [v.copy() for v in weights]
            plus[k][index] += 1e-6
            minus[k][index] -= 1e-6
            numerical = (loss(plus) - loss(minus)) / 2e-6
            assert np.isclose(after[k][index], w[index] - peers.LR * numerical, rtol=1e-6, atol=1e-9)


def test_autograd_lab_trains_as_the_reference_both_ways() -> None:
    weights, batches = peers.problem()
    losses, want = peers.reference_run(weights, batches, peers.CHECK_STEPS)
    for captured in (False, True):
        step, now = peers.autograd_lab_step(weights, batches, captured=captured)
        got = [step(i) for i in range(peers.CHECK_STEPS)]
        np.testing.assert_allclose(got, losses, rtol=1e-9)
        for a, b in zip(now(), want):
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_a_contender_that_trains_differently_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong(weights: list, batches: list) -> tuple:
        step, now = peers.autograd_lab_step([w * 1.01 for w in weights], batches)
        return step, now

    monkeypatch.setattr(peers, "STEPS", {"right": ("numpy", peers.autograd_lab_step),
                                         "wrong": ("numpy", wrong)})
    weights, batches = peers.problem()
    steps, missing = peers.build_steps(weights, batches)
    assert list(steps) == ["right"]
    assert missing["wrong"].startswith("wrong: losses")


def test_the_page_says_which_targets_are_met() -> None:
    result = {"step": {"autograd_lab recorded": 2.0, "autograd_lab captured": 0.4,
                       "PyTorch eager": 1.0, "JAX jit": 0.5, "DeZero": 1.0},
              "chain": {"autograd_lab recorded": 1.0, "PyTorch eager": 1.0, "MyGrad": 4.0},
              "missing": {"micrograd": "not installed"}}
    text = peers.markdown(result, 1.0)
    assert "recorded step faster than every pure-Python peer: missed (ours / DeZero's = 2.00)" in text
    assert "recorded chain faster than every pure-Python peer: met (ours / MyGrad's = 0.25)" in text
    assert "captured step at most 0.5x PyTorch eager: met (0.40x)" in text
    assert "captured step faster than JAX jit: met (0.80x)" in text
    assert "- micrograd: not installed" in text
