"""Chapter 09's library modules: the key's mygrad/functional.py and mygrad/data.py, their loader
checks (``ch09.mygrad_functional``, ``ch09.mygrad_data``), the graded checks on mygrad, and the
chapter's fixes (the training-step order, no stale progress bar, "test" in the legends)."""
from __future__ import annotations

import json
import types

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.course.exercises import ch09, check

from ._checker_helpers import ROOT, SEEDS, assert_all_passed
from ._mygrad_key import mygrad  # noqa: F401  (a fixture)
from .._oracle import require_torch


def _fail(checker, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        checker(*args, **kwargs)
    return str(info.value)


def test_the_key_passes_the_loader_checks(mygrad, capsys):
    ch09.mygrad_functional(mygrad)
    ch09.mygrad_data(mygrad)
    out = capsys.readouterr().out
    assert "All 7 cases of mygrad-functional passed." in out
    assert "All 3 cases of mygrad-data passed." in out


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_graded_checks(mygrad, seed, hidden, capsys):
    check.ch09_cross_entropy(mygrad.functional.cross_entropy_ref, Variable=mygrad.Variable,
                             seed=seed, hidden=hidden)
    check.ch09_batches(mygrad.data.batches, seed=seed, hidden=hidden)
    check.ch09_train_step(mygrad.data.train_step, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 3, hidden)


def test_cross_entropy_matches_torch_with_array_and_variable_targets(mygrad):
    torch = require_torch()
    rng = np.random.default_rng(4)
    data, targets = 50 * rng.normal(size=(7, 5)), rng.integers(0, 5, size=7)
    ref = torch.tensor(data, requires_grad=True)
    torch.nn.functional.cross_entropy(ref, torch.tensor(targets)).backward()
    for t in (targets, mygrad.Variable(targets)):
        x = mygrad.Variable(data.copy(), requires_grad=True)
        loss = mygrad.nn.functional.cross_entropy(x, t)
        loss.backward()
        np.testing.assert_allclose(loss.item(),
                                   torch.nn.functional.cross_entropy(ref, torch.tensor(targets)).item(),
                                   rtol=1e-12)
        np.testing.assert_allclose(x.grad.data, ref.grad.numpy(), rtol=1e-10, atol=1e-15)


def test_cross_entropy_rejects_bad_targets_with_a_message(mygrad):
    F = mygrad.functional
    x = mygrad.Variable(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"targets of shape \(3,\)"):
        F.cross_entropy(x, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"class indices in 0..3"):
        F.cross_entropy(x, np.array([0, 1, 4]))
    with pytest.raises(ValueError, match=r"logits of shape \(N, C\)"):
        F.cross_entropy(mygrad.Variable(np.zeros(4)), np.array([0]))


def test_dataloader_input_errors(mygrad):
    with pytest.raises(ValueError, match="same number of samples"):
        mygrad.DataLoader(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="positive int"):
        mygrad.DataLoader(np.zeros((3, 2)), np.zeros(3), batch_size=0)


def test_fit_reports_a_summary_line_not_a_progress_bar(mygrad, capsys):
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int)
    mygrad.manual_seed(0)
    model = mygrad.nn.Sequential(mygrad.nn.Linear(3, 2))
    opt = mygrad.optim.SGD(model.parameters(), lr=0.1)
    history = mygrad.fit(model, mygrad.DataLoader(x, y, batch_size=8), opt, 4, test=(x, y),
                         log_every=2)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["epoch  2/4", "epoch  4/4"]
    assert f"accuracy {history['test_accuracy'][-1]:.3f}" in lines[-1]
    assert model.training                       # evaluate puts the model back in training mode


# -- the checks reject typical mistakes -----------------------------------------------------
def test_cross_entropy_summed_over_the_batch_gets_the_mean_hint(mygrad):
    def summed(logits, targets):
        log_p = mygrad.functional.log_softmax(logits, dim=-1)
        return -log_p[np.arange(len(targets)), targets].sum()

    msg = _fail(check.ch09_cross_entropy, summed, Variable=mygrad.Variable)
    assert "You summed over the batch; take the mean." in msg


def _zero_grad_between(model, loss_fn, optimizer, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def _zero_grad_first(model, loss_fn, optimizer, x, y):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def test_train_step_accepts_zero_grad_anywhere_before_backward(capsys):
    """The fix of the ordering contradiction: both places of zero_grad are correct."""
    check.ch09_train_step(_zero_grad_first, hidden=True)
    assert "All 6 cases of ch09-train-step passed" in capsys.readouterr().out


def test_train_step_with_zero_grad_between_backward_and_step_gets_its_own_hint():
    msg = _fail(check.ch09_train_step, _zero_grad_between)
    assert "did not change the parameters" in msg
    assert "zero_grad() must not come between them" in msg


def test_dataloader_that_repeats_its_order_fails_the_data_check(mygrad):
    class Repeating(mygrad.DataLoader):
        def __iter__(self):
            for xb, yb in mygrad.batches(self.X, self.y, self.batch_size, self.shuffle, 0):
                yield mygrad.Variable(xb), yb

    pkg = types.SimpleNamespace(**{n: getattr(mygrad, n) for n in ("Variable", "nn", "optim",
                                                                   "fit", "evaluate",
                                                                   "manual_seed")})
    pkg.DataLoader = Repeating
    msg = _fail(ch09.mygrad_data, pkg)
    assert "two epochs came in the same order" in msg and "one generator" in msg


def test_missing_nn_functional_fails_the_functional_check(mygrad):
    pkg = types.SimpleNamespace(Variable=mygrad.Variable, functional=mygrad.functional,
                                nn=types.SimpleNamespace())
    msg = _fail(ch09.mygrad_functional, pkg)
    assert "mygrad.nn.functional" in msg


# -- the chapter's fixes ----------------------------------------------------------------------
def _cells(name):
    return json.loads((ROOT / "solutions" / name).read_text(encoding="utf-8"))["cells"]


def test_chapter_09_shows_no_stale_progress_bar_and_says_test():
    cells = _cells("09_training_digits.ipynb")
    text = json.dumps(cells)
    assert "0/184" not in text and "tqdm(" not in "".join(
        "".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "val_loss" not in text
    plots = [("".join(c["source"])) for c in cells if c["cell_type"] == "code"
             and "legend" in "".join(c["source"]) and "test_loss" in "".join(c["source"])]
    assert plots and all('label="test"' in s for s in plots)


def test_chapters_08_and_09_agree_on_the_training_step_order():
    prose = {name: " ".join("".join(c["source"]) for c in _cells(name) if c["cell_type"] == "markdown")
             for name in ("08_modules_optimizers.ipynb", "09_training_digits.ipynb")}
    assert "always the same five lines, in this order" not in prose["08_modules_optimizers.ipynb"]
    assert "their order matters" not in prose["09_training_digits.ipynb"]
    for text in prose.values():
        assert "before `loss.backward()`" in text or "before this step's `backward`" in text


def test_chapter_09_trains_with_mygrad_to_97_percent():
    """The chapter's goal is the mean over seeds of its recipe (shifted images, a cosine
    schedule), on the learner's mygrad, and the prose states the mean and range it shows."""
    cells = _cells("09_training_digits.ipynb")
    run = [c for c in cells if c["cell_type"] == "code"
           and "fit(model, loader, optimizer, epochs=20" in "".join(c["source"])]
    assert len(run) == 1 and "al." not in "".join(run[0]["source"])
    recipe = [c for c in cells if c["cell_type"] == "code"
              and "recipe = [train_recipe(seed)" in "".join(c["source"])]
    assert len(recipe) == 1 and "al." not in "".join(recipe[0]["source"])
    source = "".join(recipe[0]["source"])
    assert "range(10)" in source and "lr_schedule=cosine(epochs)" in source
    out = "".join("".join(o.get("text", "")) for o in recipe[0]["outputs"])
    accuracies = [float(a) for a in out.split("[", 1)[1].split("]", 1)[0].split()]
    assert len(accuracies) == 10
    mean = float(np.mean(accuracies))
    assert mean >= 0.97, accuracies
    assert f"mean {mean:.3f}, from {min(accuracies):.3f} to {max(accuracies):.3f}" in out
    index = cells.index(recipe[0])
    prose = "".join(cells[index + 1]["source"])
    assert (f"{100 * mean:.1f} % on average, from {100 * min(accuracies):.1f} % to "
            f"{100 * max(accuracies):.1f} %") in prose
    timing = [c for c in cells if c["cell_type"] == "code" and "perf_counter" in "".join(c["source"])]
    assert timing and all("".join(c["source"]).startswith("# NBVAL_IGNORE_OUTPUT") for c in timing)


def test_the_oracle_of_the_cross_entropy_check_is_right():
    logits = al.Variable(np.array([[2.0, 0.5, -1.0]]), requires_grad=True)
    loss = al.functional.cross_entropy(logits, np.array([0]))
    p = np.exp([2.0, 0.5, -1.0]) / np.exp([2.0, 0.5, -1.0]).sum()
    np.testing.assert_allclose(loss.item(), -np.log(p[0]))


# -- the fused loss of chapter 07 behind cross_entropy, the reference behind a flag ------------
@pytest.fixture
def flag(mygrad):
    before = mygrad.functional.USE_KERNELS
    yield mygrad.functional
    mygrad.functional.USE_KERNELS = before


@pytest.mark.parametrize("use", [True, False])
def test_cross_entropy_runs_the_kernel_or_the_reference_by_the_flag(mygrad, flag, use):
    torch = require_torch()
    flag.USE_KERNELS = use
    rng = np.random.default_rng(12)
    data, targets = 20 * rng.normal(size=(9, 4)), rng.integers(0, 4, size=9)
    x = mygrad.Variable(data.copy(), requires_grad=True)
    loss = mygrad.nn.functional.cross_entropy(x, targets)
    loss.backward()
    kernel = type(loss.grad_fn).__name__ == "SoftmaxCrossEntropyBackward"
    assert kernel is use
    ref = torch.tensor(data, requires_grad=True)
    want = torch.nn.functional.cross_entropy(ref, torch.tensor(targets))
    want.backward()
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.data, ref.grad.numpy(), rtol=1e-10, atol=1e-15)


def test_the_graded_check_also_passes_the_kernel_path(mygrad, flag, capsys):
    flag.USE_KERNELS = True
    check.ch09_cross_entropy(mygrad.functional.cross_entropy, Variable=mygrad.Variable,
                             hidden=True)
    assert "passed (with hidden cases)" in capsys.readouterr().out


def test_the_loader_check_fails_when_the_flag_is_ignored(mygrad, flag, monkeypatch):
    monkeypatch.setattr(flag, "cross_entropy",
                        lambda logits, targets: flag.softmax_cross_entropy(logits, targets))
    assert "still runs the fused kernel" in _fail(ch09.mygrad_functional, mygrad)


def test_the_loader_check_fails_when_the_kernel_is_not_used(mygrad, flag, monkeypatch):
    monkeypatch.setattr(flag, "cross_entropy", flag.cross_entropy_ref)
    message = _fail(ch09.mygrad_functional, mygrad)
    assert "not by the fused kernel" in message and "softmax_cross_entropy" in message


def test_bad_targets_raise_valueerror_on_both_paths(mygrad, flag):
    for use in (True, False):
        flag.USE_KERNELS = use
        with pytest.raises(ValueError, match="class indices in 0..3"):
            flag.cross_entropy(mygrad.Variable(np.zeros((2, 4))), np.array([0, 4]))


@pytest.mark.parametrize("use", [True, False])
def test_softmax_runs_the_row_kernel_or_chapter_05s_by_the_flag(mygrad, flag, use):
    torch = require_torch()
    flag.USE_KERNELS = use
    rng = np.random.default_rng(13)
    data, g = 30 * rng.normal(size=(5, 7)), rng.normal(size=(5, 7))
    x = mygrad.Variable(data.copy(), requires_grad=True)
    y = flag.softmax(x, dim=-1)
    y.backward(mygrad.Variable(g))
    assert (type(y.grad_fn).__name__ == "SoftmaxRowsBackward") is use
    ref = torch.tensor(data, requires_grad=True)
    want = torch.softmax(ref, dim=-1)
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(y.data, want.detach().numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(x.grad.data, ref.grad.numpy(), rtol=1e-10, atol=1e-14)
    # other shapes and axes always take chapter 05's Softmax
    x3 = mygrad.Variable(rng.normal(size=(2, 3, 4)))
    assert type(flag.softmax(x3, dim=-1).grad_fn).__name__ != "SoftmaxRowsBackward"
    assert type(flag.softmax(mygrad.Variable(data), dim=0).grad_fn).__name__ != "SoftmaxRowsBackward"


def test_softmax_rows_can_be_differentiated_twice(mygrad, flag):
    torch = require_torch()
    flag.USE_KERNELS = True
    rng = np.random.default_rng(14)
    data, w = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    x = mygrad.Variable(data.copy(), requires_grad=True)
    (flag.softmax(x, dim=1) * mygrad.Variable(w)).sum().backward(create_graph=True)
    gx = x.grad
    x.grad = None
    (gx * gx).sum().backward()
    ref = torch.tensor(data, requires_grad=True)
    (g,) = torch.autograd.grad((torch.softmax(ref, 1) * torch.tensor(w)).sum(), ref,
                               create_graph=True)
    (g * g).sum().backward()
    np.testing.assert_allclose(x.grad.data, ref.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_the_loader_check_fails_when_softmax_ignores_its_kernel(mygrad, flag, monkeypatch):
    monkeypatch.setattr(flag, "softmax", lambda x, dim=-1: flag.Softmax.apply(x, dim))
    assert "SoftmaxRows.apply(x)" in _fail(ch09.mygrad_functional, mygrad)


# -- ch09-class-indices: the labels are checked before they index -------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_class_indices_check(mygrad, seed, hidden, capsys):
    check.ch09_class_indices(mygrad.functional._class_indices, Variable=mygrad.Variable,
                             seed=seed, hidden=hidden)
    assert "All 4 cases of ch09-class-indices passed" in capsys.readouterr().out


def _indices_without(check_name):
    """A _class_indices that leaves out one of the key's checks."""
    def class_indices(targets, logits):
        t = np.asarray(getattr(targets, "data", targets))
        if check_name != "ndim" and logits.ndim != 2:
            raise ValueError(f"cross_entropy expects logits of shape (N, C), got {logits.shape}.")
        if check_name != "shape" and t.shape != (logits.shape[0],):
            raise ValueError(f"cross_entropy expects targets of shape ({logits.shape[0]},), "
                             f"got shape {t.shape}.")
        if check_name != "negative" and t.size and t.min() < 0:
            raise ValueError(f"targets must be class indices >= 0, got {t.min()}.")
        if check_name != "upper" and t.size and t.max() >= logits.shape[1]:
            raise ValueError(f"targets must be class indices < {logits.shape[1]}, got {t.max()}.")
        if check_name != "whole" and np.any(t != np.round(t)):
            raise ValueError("targets must be whole numbers, got a fraction.")
        return t.astype(np.intp if check_name != "dtype" else np.float64)
    return class_indices


@pytest.mark.parametrize("left_out,words", [
    ("negative", "silently pick the LAST class"),
    ("upper", "out of range"),
    ("whole", "truncate 1.5"),
    ("shape", "would broadcast"),
    ("ndim", "logits.ndim == 2"),
    ("dtype", "indices have to be ints"),
])
def test_class_indices_mistakes_get_hints_naming_the_cause(mygrad, left_out, words):
    msg = _fail(check.ch09_class_indices, _indices_without(left_out), Variable=mygrad.Variable)
    assert "ch09-class-indices" in msg and words in msg


def test_class_indices_raising_index_error_gets_the_error_kind_named(mygrad):
    def class_indices(targets, logits):
        t = np.asarray(getattr(targets, "data", targets))
        if logits.ndim != 2 or t.shape != (logits.shape[0],) or t.min() < 0 \
                or t.max() >= logits.shape[1] or np.any(t != np.round(t)):
            raise IndexError("bad targets")
        return t.astype(np.intp)
    msg = _fail(check.ch09_class_indices, class_indices, Variable=mygrad.Variable)
    assert "wrong kind of error" in msg and "ValueError" in msg


def test_class_indices_with_a_bare_message_is_asked_for_one(mygrad):
    def class_indices(targets, logits):
        t = np.asarray(getattr(targets, "data", targets))
        if logits.ndim != 2 or t.shape != (logits.shape[0],) or t.min() < 0 \
                or t.max() >= logits.shape[1] or np.any(t != np.round(t)):
            raise ValueError("bad")
        return t.astype(np.intp)
    msg = _fail(check.ch09_class_indices, class_indices, Variable=mygrad.Variable)
    assert "has no message" in msg


# -- ch09-dataloader: one generator, every sample once, the partial batch ----------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_dataloader_check(mygrad, seed, hidden, capsys):
    check.ch09_dataloader(mygrad.data.DataLoader, Variable=mygrad.Variable, seed=seed,
                          hidden=hidden)
    assert "All 4 cases of ch09-dataloader passed" in capsys.readouterr().out


def _loader(mygrad, **methods):
    return type("DataLoader", (mygrad.data.DataLoader,), methods)


def test_a_loader_that_reseeds_every_epoch_gets_the_one_generator_hint(mygrad):
    def __init__(self, X, y, batch_size=64, shuffle=True, seed=0, drop_last=False):
        mygrad.data.DataLoader.__init__(self, X, y, batch_size, shuffle, seed, drop_last)
        self.seed = seed

    def __iter__(self):
        for xb, yb in mygrad.data.batches(self.X, self.y, self.batch_size, self.shuffle,
                                          self.seed, self.drop_last):
            yield mygrad.Variable(xb), yb
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __init__=__init__, __iter__=__iter__),
                Variable=mygrad.Variable)
    assert "two epochs come in the same order" in msg and "ONE generator" in msg


def test_a_loader_whose_len_forgets_the_partial_batch_gets_the_ceil_hint(mygrad):
    def __len__(self):
        return len(self.X) // self.batch_size
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __len__=__len__),
                Variable=mygrad.Variable)
    assert "len(loader) is 2, expected 3" in msg and "partial batch counts" in msg


def test_a_loader_that_yields_numpy_inputs_gets_the_variable_hint(mygrad):
    def __iter__(self):
        yield from mygrad.data.batches(self.X, self.y, self.batch_size, self.shuffle, self.rng,
                                       self.drop_last)
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __iter__=__iter__),
                Variable=mygrad.Variable)
    assert "not a Variable" in msg and "Variable(xb)" in msg


def test_a_loader_drawing_from_the_global_generator_gets_the_seed_hint(mygrad):
    def __iter__(self):
        order = np.random.permutation(len(self.X)) if self.shuffle else np.arange(len(self.X))
        stop = len(order) - len(order) % self.batch_size if self.drop_last else len(order)
        for start in range(0, stop, self.batch_size):
            idx = order[start:start + self.batch_size]
            yield mygrad.Variable(self.X[idx]), self.y[idx]
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __iter__=__iter__),
                Variable=mygrad.Variable)
    assert "same seed give different epochs" in msg and "never from np.random" in msg


def test_a_loader_that_ignores_drop_last_gets_the_sizes_hint(mygrad):
    def __iter__(self):
        for xb, yb in mygrad.data.batches(self.X, self.y, self.batch_size, self.shuffle,
                                          self.rng):
            yield mygrad.Variable(xb), yb
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __iter__=__iter__),
                Variable=mygrad.Variable)
    assert "expected sizes" in msg and "drop_last" in msg
