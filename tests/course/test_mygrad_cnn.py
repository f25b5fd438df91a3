"""The chapter 10 goal: the key's ``mygrad`` trains the digits CNN to >= 98 % test accuracy as
a mean over seeds, not on one lucky seed.

``python3 -m autograd_lab export solutions --to DIR`` rebuilds the key's library from the
notebooks; a fresh Python process with only ``DIR`` on ``sys.path`` (the digits come as arrays in
an ``.npz`` file, so the program imports nothing of ``autograd_lab``) trains chapter 10's network:
two blocks of ``mygrad.nn.Conv2d(.., 3, padding=1)``, ``ReLU``, ``MaxPool2d(2)`` (32 and 32
channels), ``Flatten`` and ``Linear(128, 10)``, on the standard split of
``load_digits(as_images=True)`` standardised pixel by pixel with the training set's mean and
standard deviation, with SGD (momentum 0.9, weight decay 1e-3), batches of 64, 16 epochs and one
learning-rate step. The chapter trains the same network with the same settings. Seeds 0 to 5
gave 97.5 % to 98.9 % (mean 98.2 %); the test takes the mean of seeds 0 to 4.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.data import load_digits

ROOT = Path(__file__).resolve().parents[2]

# Training to the accuracy goal says nothing about the kernels' parity with their references,
# which is what the pass without numba's JIT checks, and there it would take many minutes.
pytestmark = pytest.mark.slow

EPOCHS, STEP, WEIGHT_DECAY = 16, 13, 1e-3   # the learning rate drops tenfold at epoch STEP
SEEDS = range(5)

PROGRAM = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import mygrad

epochs, step, weight_decay, seed = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
digits = np.load(sys.argv[2])
x_train, y_train, x_test, y_test = (digits[k] for k in ("x_train", "y_train", "x_test", "y_test"))
mean, std = x_train.mean(axis=0), x_train.std(axis=0)
std = np.where(std > 0, std, 1.0)
x_train, x_test = (x_train - mean) / std, (x_test - mean) / std

nn = mygrad.nn
mygrad.manual_seed(seed)
model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(32 * 2 * 2, 10))
optimizer = mygrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=weight_decay)
loader = mygrad.DataLoader(x_train, y_train, batch_size=64, shuffle=True, seed=seed)
losses, accuracies = [], []
for epoch in range(1, epochs + 1):
    if epoch == step:
        optimizer.lr = 0.005
    total = 0.0
    for xb, yb in loader:
        loss = mygrad.nn.functional.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(yb)
    losses.append(total / len(y_train))
    model.eval()
    with mygrad.no_grad():
        logits = model(mygrad.Variable(x_test))
    model.train()
    accuracies.append(float((logits.data.argmax(axis=1) == y_test).mean()))
print(json.dumps({
    "accuracies": accuracies,
    "losses": losses,
    "layers": [type(m).__name__ for m in model._modules.values()],
    "same_classes": [mygrad.nn.Conv2d is mygrad.conv.Conv2d, mygrad.nn.MaxPool2d is mygrad.conv.MaxPool2d,
                     mygrad.nn.Flatten is mygrad.conv.Flatten],
    "parameters": [list(p.shape) for p in model.parameters()],
    "foreign": sorted(m for m in sys.modules if m.split(".")[0] in ("autograd_lab", "torch")),
}))
'''


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The key notebooks' export: DIR/mygrad/ as the learner who did every chapter has it."""
    folder = tmp_path_factory.mktemp("export")
    subprocess.run([sys.executable, "-m", "autograd_lab", "export", str(ROOT / "solutions"),
                    "--to", str(folder)], check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (folder / PACKAGE / "conv.py").exists(), "the key notebooks do not export mygrad/conv.py"
    missing = [m.name for m in MODULES if m.chapter <= 10 and not (folder / PACKAGE / f"{m.name}.py").exists()]
    assert not missing, ("the key notebooks do not export "
                         f"{', '.join(m + '.py' for m in missing)}")
    return folder


@pytest.fixture(scope="module")
def digits_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x_train, y_train, x_test, y_test = load_digits(as_images=True)
    path = tmp_path_factory.mktemp("digits") / "digits_images.npz"
    np.savez(path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    return path


def run_program(folder: Path, digits: Path, tmp_path: Path, seed: int) -> dict:
    script = tmp_path / "train_cnn.py"
    script.write_text(PROGRAM, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"  # small products: threads only wait
    done = subprocess.run([sys.executable, "-I", str(script), str(folder), str(digits), str(EPOCHS),
                           str(STEP), str(WEIGHT_DECAY), str(seed)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_result(result: dict) -> None:
    assert result["foreign"] == [], "the program must run on mygrad alone"
    assert result["layers"] == ["Conv2d", "ReLU", "MaxPool2d", "Conv2d", "ReLU", "MaxPool2d",
                                "Flatten", "Linear"]
    assert all(result["same_classes"]), "mygrad.nn.Conv2d/MaxPool2d/Flatten are conv.py's layers"
    assert result["parameters"] == [[32, 1, 3, 3], [32], [32, 32, 3, 3], [32], [10, 128], [10]]
    assert result["losses"][-1] < 0.5 * result["losses"][0]


def test_the_key_library_trains_the_digits_cnn_to_98_percent_on_average(digits_file, tmp_path):
    """The shipped key library (course/reference/mygrad) reaches >= 98 % as the mean test
    accuracy of seeds 0-4 (each seed: other initial weights, another order of batches)."""
    folder = tmp_path / "lib"
    shutil.copytree(REFERENCE_ROOT / PACKAGE, folder / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__"))
    finals = []
    for seed in SEEDS:
        result = run_program(folder, digits_file, tmp_path, seed=seed)
        check_result(result)
        finals.append(result["accuracies"][-1])
    assert np.mean(finals) >= 0.98, (f"mean test accuracy {np.mean(finals):.4f} < 0.98 over "
                                     f"seeds {list(SEEDS)}: {np.round(finals, 4).tolist()}")
    assert min(finals) >= 0.97, f"a seed ended below 97 %: {np.round(finals, 4).tolist()}"


def test_the_export_of_the_key_notebooks_trains_the_digits_cnn(exported, digits_file, tmp_path):
    """The export of the notebooks trains the same network (one seed; the test above takes
    the mean over seeds of the shipped key, which another test keeps equal to this export)."""
    result = run_program(exported, digits_file, tmp_path, seed=0)
    check_result(result)
    assert result["accuracies"][-1] >= 0.975, f"seed 0 ended at {result['accuracies'][-1]:.4f}"
