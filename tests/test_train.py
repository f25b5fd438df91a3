"""fit/evaluate on real digits, the history they return, the progress bar and the train command."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.nn as nn
from autograd_lab.data import DataLoader, TensorDataset, load_digits
from autograd_lab.optim import SGD
from autograd_lab.train import evaluate, fit, make_model, train_main


@pytest.fixture(scope="module")
def digits():
    return load_digits()


def loaders(digits, batch_size=64):
    x_train, y_train, x_test, y_test = digits
    return (DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True, seed=0),
            DataLoader(TensorDataset(x_test, y_test), batch_size=256))


def test_short_training_run_lowers_the_loss(digits):
    train_loader, test_loader = loaders(digits)
    model = make_model("mlp", seed=0)
    loss_fn = nn.CrossEntropyLoss()
    before, acc_before = evaluate(model, test_loader, loss_fn)
    history = fit(model, train_loader, loss_fn, SGD(model.parameters(), lr=0.1, momentum=0.9), epochs=3,
                  val_loader=test_loader, progress=False)
    assert sorted(history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert all(len(v) == 3 for v in history.values())
    assert history["loss"][0] > history["loss"][1] > history["loss"][2]
    after, acc_after = evaluate(model, test_loader, loss_fn)
    assert after < before / 4 and acc_before < 0.3 < 0.9 < acc_after
    assert history["val_loss"][-1] == pytest.approx(after)
    assert history["val_accuracy"][-1] == pytest.approx(acc_after)


def test_history_accuracy_is_the_fraction_of_correct_predictions(digits):
    x_train, y_train, _, _ = digits
    model = make_model("mlp", seed=1)
    loader = DataLoader(TensorDataset(x_train[:128], y_train[:128]), batch_size=128)
    opt = SGD(model.parameters(), lr=0.0)  # lr 0: the weights stay put, so the epoch's accuracy is known
    history = fit(model, loader, nn.CrossEntropyLoss(), opt, epochs=1, progress=False)
    with al.no_grad():
        logits = model(al.tensor(x_train[:128])).data
    assert history["accuracy"][0] == pytest.approx(np.mean(logits.argmax(1) == y_train[:128]))


def test_evaluate_records_no_graph_and_restores_the_mode(digits):
    _, test_loader = loaders(digits)
    model = make_model("mlp", seed=0)
    loss, acc = evaluate(model, test_loader, nn.CrossEntropyLoss())
    assert model.training
    assert all(p.grad is None for p in model.parameters())
    model.eval()
    evaluate(model, test_loader, nn.CrossEntropyLoss())
    assert not model.training
    assert 0.0 <= acc <= 1.0 and loss > 0


def test_regression_history_has_no_accuracy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    model = nn.Linear(3, 1, seed=0)
    loader = DataLoader(TensorDataset(x, y), batch_size=16)
    history = fit(model, loader, nn.MSELoss(), SGD(model.parameters(), lr=0.1), epochs=5,
                  val_loader=loader, progress=False)
    assert sorted(history) == ["loss", "val_loss"]
    assert history["loss"][-1] < history["loss"][0] / 10
    assert evaluate(model, loader, nn.MSELoss())[1] is None


def test_progress_bar_shows_and_hides(digits, capsys):
    x_train, y_train, _, _ = digits
    loader = DataLoader(TensorDataset(x_train[:64], y_train[:64]), batch_size=32)
    model = make_model("mlp", seed=0)
    fit(model, loader, nn.CrossEntropyLoss(), SGD(model.parameters(), lr=0.1), epochs=2, progress=False)
    assert capsys.readouterr().err == ""
    fit(model, loader, nn.CrossEntropyLoss(), SGD(model.parameters(), lr=0.1), epochs=2, progress=True)
    err = capsys.readouterr().err
    assert "epoch 2/2" in err and "4/4" in err and "loss=" in err


def test_fit_rejects_zero_epochs(digits):
    train_loader, _ = loaders(digits)
    model = make_model("mlp")
    with pytest.raises(ValueError, match="epochs"):
        fit(model, train_loader, nn.CrossEntropyLoss(), SGD(model.parameters(), lr=0.1), epochs=0)


def test_make_model_names():
    assert isinstance(make_model("cnn")[0], nn.Conv2d)
    with pytest.raises(ValueError, match="'mlp' or 'cnn'"):
        make_model("resnet")


def test_train_command_writes_a_png(tmp_path, capsys):
    out = tmp_path / "curves.png"
    assert train_main(["--model", "mlp", "--epochs", "2", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "mlp: test accuracy" in printed and str(out) in printed
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_training_benchmark_runs():
    bench = pytest.importorskip("benchmarks.training")
    rows = bench.bench_model("mlp", seeds=(0,), epochs=1, repeats=1, with_torch=False)
    assert [r["contender"] for r in rows] == ["autograd_lab", "numpy (hand backprop)"]
    assert all(r["seconds"] > 0 and 0.0 <= r["accuracy_mean"] <= 1.0 for r in rows)
    # same initial weights and batches: one epoch of ours and of the hand-written backprop agree
    assert rows[0]["accuracy_fixed_split_mean"] == pytest.approx(rows[1]["accuracy_mean"], abs=0.02)
    assert "autograd_lab" in bench.format_rows(rows)
