"""Chapter 09's recipe exercises: ``fit``/``evaluate`` (ch09-fit), ``shift_pixels``
(ch09-shift-pixels) and the loader's ``transform`` (ch09-dataloader): the key passes, and each
realistic mistake fails with a hint that names its cause."""
from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course.exercises import check

from . import _mygrad_key
from ._checker_helpers import SEEDS, assert_all_passed

mygrad = _mygrad_key.mygrad     # the key's mygrad up to chapter 09 (a fixture)


def _fail(checker, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        checker(*args, **kwargs)
    return str(info.value)


# -- ch09-shift-pixels -------------------------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_shift_pixels_check(mygrad, seed, hidden, capsys):
    check.ch09_shift_pixels(mygrad.data.shift_pixels, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 1, hidden)


def _rolling(images, rng, fraction=0.25):
    out = images.copy()
    for i in np.flatnonzero(rng.random(len(images)) < fraction):
        out[i] = np.roll(images[i], tuple(rng.integers(-1, 2, size=2)), axis=(0, 1))
    return out


def _every_image(images, rng, fraction=0.25):
    out = images.copy()
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    h, w = images.shape[1:]
    for i, (dy, dx) in enumerate(rng.integers(-1, 2, size=(len(images), 2))):
        out[i] = padded[i, 1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
    return out


def _in_place(images, rng, fraction=0.25):
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    h, w = images.shape[1:]
    for i in np.flatnonzero(rng.random(len(images)) < fraction):
        dy, dx = rng.integers(-1, 2, size=2)
        images[i] = padded[i, 1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
    return images


def _global_generator(images, rng, fraction=0.25):
    out = images.copy()
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    h, w = images.shape[1:]
    for i in np.flatnonzero(np.random.random(len(images)) < fraction):
        dy, dx = np.random.randint(-1, 2, size=2)
        out[i] = padded[i, 1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
    return out


def _sideways_only(images, rng, fraction=0.25):
    out = images.copy()
    padded = np.pad(images, ((0, 0), (0, 0), (1, 1)))
    w = images.shape[2]
    for i in np.flatnonzero(rng.random(len(images)) < fraction):
        dx = rng.integers(-1, 2)
        out[i] = padded[i, :, 1 - dx:1 - dx + w]
    return out


@pytest.mark.parametrize("wrong,words", [
    (_rolling, "np.roll wraps around"),
    (_every_image, "Move only the chosen images"),
    (_in_place, "changed the images it was given"),
    (_global_generator, "never from np.random"),
    (_sideways_only, "Draw dy and dx separately"),
])
def test_shift_pixels_mistakes_get_hints_naming_the_cause(wrong, words):
    msg = _fail(check.ch09_shift_pixels, wrong)
    assert "ch09-shift-pixels" in msg and words in msg


# -- ch09-dataloader: the transform ----------------------------------------------------------
def _loader(mygrad, **methods):
    return type("DataLoader", (mygrad.data.DataLoader,), methods)


def test_a_loader_that_ignores_its_transform_gets_the_transform_hint(mygrad):
    def __iter__(self):
        for xb, yb in mygrad.data.batches(self.X, self.y, self.batch_size, self.shuffle,
                                          self.rng, self.drop_last):
            yield mygrad.Variable(xb), yb
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __iter__=__iter__),
                Variable=mygrad.Variable)
    assert "the transform ran 0 times" in msg and "self.transform(xb)" in msg


def test_a_loader_that_transforms_all_of_x_once_gets_the_per_batch_hint(mygrad):
    def __init__(self, X, y, batch_size=64, shuffle=True, seed=0, drop_last=False,
                 transform=None):
        mygrad.data.DataLoader.__init__(self, X, y, batch_size, shuffle, seed, drop_last)
        self.transformed = X if transform is None else transform(np.asarray(X))

    def __iter__(self):
        for idx, yb in mygrad.data.batches(np.arange(len(self.X)), self.y, self.batch_size,
                                           self.shuffle, self.rng, self.drop_last):
            yield mygrad.Variable(self.transformed[idx]), yb
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __init__=__init__, __iter__=__iter__),
                Variable=mygrad.Variable)
    assert "while the loader was made" in msg and "every epoch would see the same" in msg


def test_a_loader_without_the_transform_argument_is_told_to_take_it(mygrad):
    def __init__(self, X, y, batch_size=64, shuffle=True, seed=0, drop_last=False):
        mygrad.data.DataLoader.__init__(self, X, y, batch_size, shuffle, seed, drop_last)
    msg = _fail(check.ch09_dataloader, _loader(mygrad, __init__=__init__),
                Variable=mygrad.Variable)
    assert "transform" in msg and "transform=None" in msg


# -- ch09-fit ----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_key_passes_the_fit_check(mygrad, seed, hidden, capsys):
    check.ch09_fit(mygrad.data.fit, mygrad.data.evaluate, Variable=mygrad.Variable, seed=seed,
                   hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 1, hidden)


def _evaluate(mygrad, *, eval_mode=True, grad=False, restore=True, weigh=True):
    """The key's evaluate with one of its parts left out or changed."""
    def evaluate(model, X, y, loss_fn=None, batch_size=512):
        was_training = model.training
        if eval_mode:
            model.eval()
        losses, correct = [], 0
        with mygrad.set_grad_enabled(grad):
            for start in range(0, len(X), batch_size):
                xb, yb = X[start:start + batch_size], y[start:start + batch_size]
                out = model(mygrad.Variable(xb))
                losses.append(loss_fn(out, yb).item() * (len(yb) if weigh else 1))
                correct += int((out.data.argmax(axis=1) == yb).sum())
        model.train(was_training if restore else True)
        total = sum(losses) / len(X) if weigh else float(np.mean(losses))
        return total, correct / len(X)
    return evaluate


@pytest.mark.parametrize("change,words", [
    ({"eval_mode": False}, "model.eval()"),
    ({"grad": True}, "with no_grad()"),
    ({"restore": False}, "model.train(was_training)"),
    ({"weigh": False}, "weight each batch's loss by its"),
])
def test_evaluate_mistakes_get_hints_naming_the_cause(mygrad, change, words):
    msg = _fail(check.ch09_fit, mygrad.data.fit, _evaluate(mygrad, **change),
                Variable=mygrad.Variable)
    assert "ch09-fit" in msg and "evaluate" in msg and words in msg


def _fit(mygrad, *, train_mode=True, offset=0, after=False, no_grad=False):
    """The key's fit with one of its parts left out or changed."""
    def fit(model, loader, optimizer, epochs, loss_fn=None, test=None, log_every=0,
            lr_schedule=None):
        history = {"loss": [], "accuracy": [], "test_loss": [], "test_accuracy": []}
        for epoch in range(epochs):
            if lr_schedule is not None and not after:
                optimizer.lr = lr_schedule(epoch + offset)
            if train_mode:
                model.train()
            with mygrad.set_grad_enabled(not no_grad):
                losses = [mygrad.data.train_step(model, loss_fn, optimizer, xb, yb)
                          for xb, yb in loader]
            if lr_schedule is not None and after:
                optimizer.lr = lr_schedule(epoch)
            history["loss"].append(float(np.mean(losses)))
            history["accuracy"].append(mygrad.data.evaluate(model, loader.X, loader.y,
                                                            loss_fn)[1])
            if test is not None:
                test_loss, test_acc = mygrad.data.evaluate(model, test[0], test[1], loss_fn)
                history["test_loss"].append(test_loss)
                history["test_accuracy"].append(test_acc)
        return history
    return fit


@pytest.mark.parametrize("change,words", [
    ({"train_mode": False}, "Call model.train() at the start of each epoch"),
    ({"offset": 1}, "Count the epochs from 0"),
    ({"after": True}, "Set the rate BEFORE the epoch's steps"),
    ({"no_grad": True}, "Only evaluate runs under no_grad"),
])
def test_fit_mistakes_get_hints_naming_the_cause(mygrad, change, words):
    msg = _fail(check.ch09_fit, _fit(mygrad, **change), mygrad.data.evaluate,
                Variable=mygrad.Variable)
    assert "ch09-fit" in msg and words in msg


def test_fit_with_a_wrong_epoch_loss_gets_the_mean_hint(mygrad):
    def fit(model, loader, optimizer, epochs, loss_fn=None, test=None, log_every=0,
            lr_schedule=None):
        history = _fit(mygrad)(model, loader, optimizer, epochs, loss_fn, test, log_every,
                               lr_schedule)
        history["loss"] = [x * 1.5 for x in history["loss"]]
        return history
    msg = _fail(check.ch09_fit, fit, mygrad.data.evaluate, Variable=mygrad.Variable)
    assert 'history["loss"]' in msg and "mean of what train_step returned" in msg


# -- the log_softmax exercise cell run again after section 3 --------------------------------
SECTION_3 = '''
USE_KERNELS = True


def log_softmax(x, dim=-1):
    return LogSoftmax.apply(as_variable(x), dim)


def cross_entropy_ref(logits, targets):
    logits = as_variable(logits)
    t = _class_indices(targets, logits)
    log_p = log_softmax(logits, dim=-1)
    return -log_p[np.arange(len(t)), t].mean()
'''
EXERCISE = '''
def log_softmax(x):
    z = x - x.data.max(axis=-1, keepdims=True)
    return z - z.exp().sum(axis=-1, keepdims=True).log()
'''


def _notebook(mygrad, *cells):
    """Run ``cells`` in one namespace, in order, as a notebook runs its cells."""
    names = {"np": np, "as_variable": mygrad.as_variable, "LogSoftmax": mygrad.LogSoftmax,
             "_class_indices": mygrad.functional._class_indices}
    for cell in cells:
        exec(cell, names)
    return names


def test_cross_entropy_after_the_exercise_cell_ran_again_names_the_shadowing(mygrad, capsys):
    fine = _notebook(mygrad, EXERCISE, SECTION_3)
    check.ch09_cross_entropy(fine["cross_entropy_ref"], Variable=mygrad.Variable)
    assert "All 3 cases of ch09-cross-entropy passed" in capsys.readouterr().out
    shadowed = _notebook(mygrad, EXERCISE, SECTION_3, EXERCISE)
    msg = _fail(check.ch09_cross_entropy, shadowed["cross_entropy_ref"], Variable=mygrad.Variable)
    assert "unexpected keyword argument 'dim'" in msg
    assert "one-argument function of exercise ch09-log-softmax" in msg
    assert "Run the `%%mygrad functional activations` cell again" in msg


def test_the_log_softmax_check_says_when_its_cell_replaced_section_3s(mygrad, capsys):
    before = _notebook(mygrad, EXERCISE)
    check.ch09_log_softmax(before["log_softmax"])
    assert "Note:" not in capsys.readouterr().out
    again = _notebook(mygrad, EXERCISE, SECTION_3, EXERCISE)
    check.ch09_log_softmax(again["log_softmax"])
    out = capsys.readouterr().out
    assert "All 5 cases of ch09-log-softmax passed" in out
    assert "replaced its `log_softmax(x, dim=-1)`" in out and "activations` cell again" in out
