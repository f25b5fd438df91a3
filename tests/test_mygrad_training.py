"""Issue 10's done-when for the MLP: the key's ``mygrad`` trains the digits MLP to >= 97 %.

The program runs in a fresh Python process with only ``mygrad`` importable from the folder
under test (the digits come as arrays in an ``.npz`` file, so the program imports nothing of
``autograd_lab``): ``Sequential(Linear(64, 128), ReLU(), Linear(128, 10))``, ``SGD(lr=0.05,
momentum=0.9)``, ``mygrad.nn.functional.cross_entropy``, batches of 64 for 20 epochs, on the
inputs standardised with the training set's statistics (chapter 09 does the same).
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

from autograd_lab.course.library import MODULES, PACKAGE, REFERENCE_ROOT, export
from autograd_lab.data import load_digits

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import mygrad

digits = np.load(sys.argv[2])
x_train, y_train, x_test, y_test = (digits[k] for k in ("x_train", "y_train", "x_test", "y_test"))
mean, std = x_train.mean(axis=0), x_train.std(axis=0)
std = np.where(std > 0, std, 1.0)
x_train, x_test = (x_train - mean) / std, (x_test - mean) / std

mygrad.manual_seed(1)
model = mygrad.nn.Sequential(mygrad.nn.Linear(64, 128), mygrad.nn.ReLU(), mygrad.nn.Linear(128, 10))
optimizer = mygrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loader = mygrad.DataLoader(x_train, y_train, batch_size=64, shuffle=True, seed=1)
losses = []
for epoch in range(20):
    for xb, yb in loader:
        loss = mygrad.nn.functional.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    losses.append(loss.item())
model.eval()
with mygrad.no_grad():
    logits = model(mygrad.Variable(x_test))
accuracy = float((logits.data.argmax(axis=1) == y_test).mean())
print(json.dumps({
    "accuracy": accuracy,
    "losses": losses,
    "same_cross_entropy": mygrad.functional.cross_entropy is mygrad.nn.functional.cross_entropy,
    "parameters": [list(p.shape) for p in model.parameters()],
    "foreign": sorted(m for m in sys.modules if m.split(".")[0] in ("autograd_lab", "torch")),
}))
'''


@pytest.fixture(scope="module")
def digits_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x_train, y_train, x_test, y_test = load_digits()
    path = tmp_path_factory.mktemp("digits") / "digits.npz"
    np.savez(path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    return path


def run_program(folder: Path, digits: Path, tmp_path: Path) -> dict:
    """Run PROGRAM in a fresh process with ``folder`` (holding ``mygrad/``) on sys.path."""
    script = tmp_path / "train_digits.py"
    script.write_text(PROGRAM, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"  # small matrices: threads only wait
    done = subprocess.run([sys.executable, "-I", str(script), str(folder), str(digits)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_result(result: dict) -> None:
    assert result["foreign"] == [], "the program must run on mygrad alone"
    assert result["same_cross_entropy"]
    assert result["parameters"] == [[128, 64], [128], [10, 128], [10]]
    assert result["losses"][-1] < result["losses"][0] < 2.5
    assert result["accuracy"] >= 0.97, f"test accuracy {result['accuracy']:.4f} < 0.97"


def test_the_key_library_trains_the_digits_mlp(digits_file, tmp_path):
    """The shipped key library (course/reference/mygrad) trains the MLP to >= 97 %."""
    folder = tmp_path / "lib"
    shutil.copytree(REFERENCE_ROOT / PACKAGE, folder / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__"))
    check_result(run_program(folder, digits_file, tmp_path))


def test_the_export_of_the_key_notebooks_trains_the_digits_mlp(digits_file, tmp_path):
    """``autograd-lab export solutions --to DIR`` gives a mygrad that trains the MLP to >= 97 %."""
    folder = tmp_path / "export"
    subprocess.run([sys.executable, "-m", "autograd_lab", "export", str(ROOT / "solutions"),
                    "--to", str(folder)], check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    needed = [m.name for m in MODULES if m.chapter <= 9]
    missing = [m for m in needed if not (folder / PACKAGE / f"{m}.py").exists()]
    for module in ("nn", "optim", "functional", "data"):     # chapters 08 and 09 must be there
        assert module not in missing, f"the key notebooks do not export mygrad/{module}.py"
    assert not missing, ("the key notebooks do not export "
                         f"{', '.join(m + '.py' for m in missing)}")
    check_result(run_program(folder, digits_file, tmp_path))


def test_exported_modules_of_chapters_08_and_09_equal_the_key_library(tmp_path):
    """The reference files of nn, optim, functional and data are the export of the notebooks."""
    export([ROOT / "solutions"], tmp_path, modules=["nn", "optim", "functional", "data"])
    for module in ("nn", "optim", "functional", "data"):
        ours = (tmp_path / PACKAGE / f"{module}.py").read_text(encoding="utf-8")
        assert ours == (REFERENCE_ROOT / PACKAGE / f"{module}.py").read_text(encoding="utf-8"), module


def test_the_benchmark_row_runs_side_by_side():
    """benchmarks/mygrad_training.py times the three contenders (no timed assertion here)."""
    from autograd_lab.course.loader import _forget_package
    from benchmarks.mygrad_training import bench, render
    try:
        rows = bench(repeats=1, with_torch=False)
    finally:
        _forget_package()
    assert [r["contender"] for r in rows] == ["mygrad (the key's)", "autograd_lab"]
    assert all(r["seconds"] > 0 for r in rows) and rows[1]["ratio_vs_autograd_lab"] == 1.0
    assert render(rows).count("| digits mlp, 1 epoch |") == 2
