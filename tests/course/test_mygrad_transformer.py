"""Chapter 13's tiny transformer, as the key notebook defines it, trained on the key's mygrad with
five seeds: the mean exact-match accuracy on the held-out sorting sequences is at least 99 %."""
from __future__ import annotations

import types
from collections.abc import Iterator

import numpy as np
import pytest

from autograd_lab.course.authoring.notebooks import read_notebook
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import _forget_package, build_package

from ._checker_helpers import ROOT

pytestmark = pytest.mark.slow
DEFINITIONS = ("class TinyTransformer", "def as_example", "def sort_with")


@pytest.fixture(scope="module")
def mygrad() -> Iterator[types.ModuleType]:
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES
             if (REFERENCE_ROOT / PACKAGE / f"{m.name}.py").exists()}
    yield build_package(files, REFERENCE_ROOT / PACKAGE)
    _forget_package()


def chapter_namespace(mygrad: types.ModuleType) -> dict:
    """The names the chapter's cells use, and its cells that define the model, the data and the
    greedy sorting, run as the notebook runs them."""
    ns: dict = {"np": np, "mygrad": mygrad}
    ns.update({k: v for k, v in vars(mygrad).items() if not k.startswith("_")})
    ns.update({"Module": mygrad.nn.Module, "Parameter": mygrad.nn.Parameter, "Linear": mygrad.nn.Linear,
               "Sequential": mygrad.nn.Sequential, "Adam": mygrad.optim.Adam,
               "cross_entropy": mygrad.functional.cross_entropy})
    cells = [c.source for c in read_notebook(ROOT / "solutions" / "13_attention.ipynb").cells
             if c.cell_type == "code" and any(d in c.source for d in DEFINITIONS)]
    assert len(cells) == len(DEFINITIONS), "the chapter's model, data or sorting cell is missing"
    for source in cells:
        exec(compile(source, "13_attention.ipynb", "exec"), ns)
    return ns


def held_out_accuracy(ns: dict, seed: int, steps: int = 200) -> float:
    mygrad, digits, length = ns["mygrad"], ns["DIGITS"], ns["LENGTH"]
    mygrad.manual_seed(seed)
    model = ns["TinyTransformer"](vocab=digits, context=2 * length - 1, seed=seed)
    optimizer = ns["Adam"](model.parameters(), lr=0.005)
    rng = np.random.default_rng(seed + 1)
    x_train, y_train = ns["x_train"], ns["y_train"]
    for _ in range(steps):
        batch = rng.integers(0, len(x_train), 64)
        logits = model(x_train[batch])[:, length - 1:]
        loss = ns["cross_entropy"](logits.reshape(-1, digits), y_train[batch, length - 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    predicted = ns["sort_with"](model, ns["held_out"])
    return float((predicted == np.sort(ns["held_out"], axis=1)).all(axis=1).mean())


def test_the_tiny_transformer_sorts_held_out_sequences_over_five_seeds(mygrad):
    from threadpoolctl import threadpool_limits
    ns = chapter_namespace(mygrad)
    with threadpool_limits(1):
        accuracies = [held_out_accuracy(ns, seed) for seed in range(5)]
    assert np.mean(accuracies) >= 0.99, f"held-out exact match per seed: {accuracies}"
