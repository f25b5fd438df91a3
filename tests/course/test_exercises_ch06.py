"""Chapter 06: its checkers, its prediction snippets, and the learner's ``mygrad/grad_mode.py``.

Each checker must pass a correct solution (with and without hidden cases) and fail typical
wrong ones with a message that names the exercise and a hint naming the real cause. The
version-check exercise is the section ``saved versions`` of the learner's library: the wrong
solutions here are installed on a fresh copy of the key's ``mygrad``.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from typing import Any

import pytest

import autograd_lab as al
from autograd_lab.course.learner.export import MODULES, PACKAGE, REFERENCE_ROOT, export
from autograd_lab.course.learner.loader import build_package
from autograd_lab.course.exercises import check
from autograd_lab.course.exercises.ch06 import (RULES, SNIPPETS, VISIBLE_SNIPPETS, mygrad_grad_mode,
                                         snippet_raises)

from ._checker_helpers import (ROOT, SEEDS, assert_all_passed, assert_calls_own_checker,
                               assert_has_heading_and_solution, failure, graded_cells,
                               solution_cells)
from .._oracle import require_torch

NOTEBOOK = "06_grad_modes_inplace.ipynb"


def reference_package():
    """A fresh ``mygrad`` built from the key's modules of chapters 02-06 (new classes each call)."""
    files = {m.name: REFERENCE_ROOT / PACKAGE / f"{m.name}.py" for m in MODULES
             if m.chapter <= 6}
    return build_package(files)


# -- ch06-predict-raises ------------------------------------------------------------------------
PREDICTIONS = {"a": False, "b": True, "c": True, "d": False, "e": False, "f": True, "g": True,
               "h": False}


def test_snippet_truth_is_what_the_chapter_teaches():
    assert {name: snippet_raises(code) for name, code in SNIPPETS.items()} == PREDICTIONS
    assert set(VISIBLE_SNIPPETS) < set(SNIPPETS) and set(RULES) == set(SNIPPETS)


def test_snippets_behave_as_in_pytorch():
    torch = require_torch()
    for name, code in SNIPPETS.items():
        namespace = {"torch": torch}
        try:
            exec(textwrap.dedent(code).replace("al.", "torch."), namespace)  # noqa: S102
            raised = False
        except RuntimeError:
            raised = True
        assert raised == PREDICTIONS[name], f"snippet {name} differs from PyTorch"


def test_snippets_are_new_not_the_chapters_demos():
    """No snippet repeats a code cell of the chapter (the old exercise copied three demos)."""
    cells = solution_cells(NOTEBOOK)
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for name, snippet in SNIPPETS.items():
        lines = [ln for ln in textwrap.dedent(snippet).splitlines()
                 if ln.strip() and not ln.startswith("x = al.tensor") and
                 not ln.startswith("w = al.tensor")]
        body = "\n".join(lines)
        assert body not in code, f"snippet {name} repeats a demo of the chapter"


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch06_correct_solutions_pass(seed, hidden, capsys):
    check.ch06_predict_raises(dict(PREDICTIONS), seed=seed, hidden=hidden)
    check.ch06_train_step(train_step, seed=seed, hidden=hidden)
    check.ch06_train_step(train_step_zero_first, seed=seed, hidden=hidden)
    check.ch06_version_check(reference_package(), seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 4, hidden)


def test_ch06_predict_raises_explains_the_first_wrong_one_and_hides_the_rest(capsys):
    wrong = dict(PREDICTIONS, b=False, e=True)
    msg = failure(check.ch06_predict_raises, wrong)
    assert "2 of 6 predictions are wrong" in msg
    assert "Snippet b: you predicted that it runs, but it raises" in msg
    assert RULES["b"] in msg and "1 more" in msg
    # nothing about snippet e: not its name, not its rule, and no per-snippet tick marks
    assert "Snippet e" not in msg and RULES["e"] not in msg
    out = capsys.readouterr().out
    assert "✓ snippet" not in out
    only = failure(check.ch06_predict_raises, dict(PREDICTIONS, d=True))
    assert "Snippet d: you predicted that it raises, but it runs" in only
    assert "the only wrong one" in only and RULES["d"] in only


def test_ch06_predict_raises_input_errors():
    assert "not True or False" in failure(check.ch06_predict_raises, dict(PREDICTIONS, a="yes"))
    assert "not True or False" in failure(check.ch06_predict_raises, dict(PREDICTIONS, a=None))
    assert "no prediction" in failure(check.ch06_predict_raises, {"a": True})
    assert "not a dict" in failure(check.ch06_predict_raises, [True] * 8)


def test_ch06_predict_raises_hidden_snippets_only_when_graded(capsys):
    hidden_only = dict(PREDICTIONS, h=True)
    check.ch06_predict_raises(hidden_only)  # h is only checked when grading
    assert "checked when the notebook is graded" in capsys.readouterr().out
    msg = failure(check.ch06_predict_raises, hidden_only, hidden=True)
    assert "Snippet h: you predicted that it raises, but it runs" in msg and RULES["h"] in msg


# -- ch06-train-step (on autograd_lab) ----------------------------------------------------------
def train_step(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad = None
    b.grad = None
    return loss.item()


def train_step_zero_first(w, b, X, y, lr):
    for p in (w, b):
        if p.grad is not None:
            p.grad.zero_()
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w.sub_(lr * w.grad)
        b.sub_(lr * b.grad)
    return float(loss.data)


def _inplace_without_no_grad(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    b -= lr * b.grad
    return loss.item()


def _rebinding(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w = w - lr * w.grad
        b = b - lr * b.grad
    return loss.item()


def _no_zeroing(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    return loss.item()


def _uphill(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w += lr * w.grad
        b += lr * b.grad
    w.grad = b.grad = None
    return loss.item()


def _loss_after(w, b, X, y, lr):
    train_step(w, b, X, y, lr)
    return ((X @ w + b - y) ** 2).mean().item()


def _returns_the_variable(w, b, X, y, lr):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with al.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad = b.grad = None
    return loss


@pytest.mark.parametrize("wrong,words", [
    (_returns_the_variable, "not the loss Variable"),
    (_inplace_without_no_grad, "no_grad"),
    (_rebinding, "Rebinding"),
    (_no_zeroing, "clear them every step"),
    (_uphill, "uphill"),
    (_loss_after, "before the update"),
    (lambda w, b, X, y, lr: None, "returned None"),
])
def test_ch06_train_step_rejects_typical_mistakes(wrong, words):
    msg = failure(check.ch06_train_step, wrong)
    assert "ch06-train-step" in msg and words in msg


# -- ch06-version-check: the learner's section "saved versions" ---------------------------------
FREED = ("Trying to backward through {name} a second time, but its saved tensors were freed "
         "after the first backward. Pass retain_graph=True to the first backward() if you need "
         "to call it twice.")


def _freed_check(ctx):
    if ctx._saved is None:
        raise RuntimeError(FREED.format(name=type(ctx).__name__))


def _save_right(ctx, *tensors):
    ctx._saved = tensors
    ctx._saved_versions = tuple(None if t is None else t._version for t in tensors)


def _unpack_right(ctx):
    _freed_check(ctx)
    for t, v in zip(ctx._saved, ctx.__dict__.get("_saved_versions", ())):
        if t is not None and t._version != v:
            raise RuntimeError(f"modified by an inplace operation: is at version {t._version}; "
                               f"expected version {v} instead.")
    return tuple(ctx._saved)


def _save_lazy(ctx, *tensors):  # versions read at unpack time: never raises
    ctx._saved = tensors


def _unpack_lazy(ctx):
    _freed_check(ctx)
    ctx._saved_versions = tuple(None if t is None else t._version for t in ctx._saved)
    return _unpack_right(ctx)


def _unpack_never_compares(ctx):
    _freed_check(ctx)
    return tuple(ctx._saved)


def _unpack_against_zero(ctx):
    _freed_check(ctx)
    for t in ctx._saved:
        if t is not None and t._version != 0:
            raise RuntimeError(f"at version {t._version}; expected version 0 instead.")
    return tuple(ctx._saved)


def _unpack_vague(ctx):
    try:
        return _unpack_right(ctx)
    except RuntimeError:
        raise RuntimeError("a saved tensor was changed") from None


_GLOBAL: dict = {}


def _save_global(ctx, *tensors):
    _save_right(ctx, *tensors)
    _GLOBAL["saved"] = (ctx._saved, ctx._saved_versions)


def _unpack_global(ctx):
    _freed_check(ctx)
    ctx._saved, ctx._saved_versions = _GLOBAL["saved"]
    return _unpack_right(ctx)


def _unpack_copies(ctx):
    return tuple(None if t is None else t.detach() for t in _unpack_right(ctx))


def _unpack_value_error(ctx):
    try:
        return _unpack_right(ctx)
    except RuntimeError as err:
        raise ValueError(str(err)) from None


def _save_no_none(ctx, *tensors):
    ctx._saved = tensors
    ctx._saved_versions = tuple(t._version for t in tensors)


def _unpack_no_default(ctx):
    _freed_check(ctx)
    for t, v in zip(ctx._saved, ctx._saved_versions):
        if t is not None and t._version != v:
            raise RuntimeError(f"is at version {t._version}; expected version {v} instead.")
    return tuple(ctx._saved)


def _unpack_without_freed_check(ctx):
    for t, v in zip(ctx._saved, ctx.__dict__.get("_saved_versions", ())):
        if t is not None and t._version != v:
            raise RuntimeError(f"is at version {t._version}; expected version {v} instead.")
    return tuple(ctx._saved)


def _unpack_first_only(ctx):
    _freed_check(ctx)
    pairs = list(zip(ctx._saved, ctx.__dict__.get("_saved_versions", ())))[:1]
    for t, v in pairs:
        if t is not None and t._version != v:
            raise RuntimeError(f"is at version {t._version}; expected version {v} instead.")
    return tuple(ctx._saved)


def _unpack_list(ctx):
    return list(_unpack_right(ctx))


def _stub(ctx, *tensors):
    raise NotImplementedError("Exercise ch06-version-check: write your code here, then run the "
                              "check cell below")


def install(save, unpack, as_property=True):
    """A fresh key's mygrad whose Context uses these two functions, as the notebook cell does."""
    pkg = reference_package()
    pkg.Context.save_for_backward = save
    pkg.Context.saved_tensors = property(unpack) if as_property else unpack
    return pkg


def test_the_right_functions_written_here_pass(capsys):
    for seed, hidden in SEEDS:
        check.ch06_version_check(install(_save_right, _unpack_right), seed=seed, hidden=hidden)
    assert capsys.readouterr().out.count("passed") == len(SEEDS)


@pytest.mark.parametrize("save,unpack,hidden,words", [
    (_save_lazy, _unpack_lazy, False, "read t._version for each tensor when it is saved"),
    # the case: a saved_tensors that never raises; the hint names the half that is
    # missing, looking at what save_for_backward kept
    (_save_right, _unpack_never_compares, False, "saved_tensors never compared it"),
    (_save_lazy, _unpack_never_compares, False, "save_for_backward kept no version"),
    (_save_right, _unpack_against_zero, False, "not with 0"),
    (_save_right, _unpack_vague, False, "name both versions"),
    (_save_global, _unpack_global, False, "not on Context or in a global"),
    (_save_right, _unpack_copies, False, "not copies"),
    (_save_right, _unpack_value_error, False, "wrong kind of error"),
    (_save_no_none, _unpack_right, False, "None has no _version"),
    (_save_right, _unpack_no_default, False, "A new Context has _saved = ()"),
    (_save_right, _unpack_without_freed_check, False, "Keep the given first lines"),
    (_save_right, _unpack_first_only, True, "Check every saved tensor"),
    (_save_right, _unpack_list, False, "Return tuple(...)"),
])
def test_ch06_version_check_rejects_typical_mistakes(save, unpack, hidden, words):
    msg = failure(check.ch06_version_check, install(save, unpack), hidden=hidden)
    assert "ch06-version-check" in msg and words in msg, msg


def test_ch06_version_check_not_a_property():
    msg = failure(check.ch06_version_check, install(_save_right, _unpack_right,
                                                    as_property=False))
    assert "not a property" in msg and "property(saved_tensors)" in msg


def test_ch06_version_check_stub_reports_not_done():
    with pytest.raises(NotImplementedError, match="ch06-version-check is not done yet"):
        check.ch06_version_check(install(_stub, _unpack_right))


# -- the learner's grad_mode.py: the loader's check, and the key's export -----------------------
def test_loader_check_passes_the_key_and_fails_a_broken_counter(capsys):
    mygrad_grad_mode(reference_package())
    assert "All 3 cases of mygrad-grad-mode-versions passed." in capsys.readouterr().out
    pkg = reference_package()
    pkg.Variable.detach = lambda self: pkg.Variable(self.data)  # a fresh counter: not shared
    with pytest.raises(AssertionError, match="detach"):
        mygrad_grad_mode(pkg)
    pkg = reference_package()
    add = pkg.Variable.add_
    pkg.Variable.__iadd__ = lambda self, other: (add(self, other), None)[1]  # forgets `self`
    with pytest.raises(AssertionError, match="__iadd__ must return self"):
        mygrad_grad_mode(pkg)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The key's library with grad_mode.py rebuilt from the notebook by `export`."""
    folder = tmp_path_factory.mktemp("export06")
    shutil.copytree(REFERENCE_ROOT / PACKAGE, folder / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (folder / PACKAGE / "grad_mode.py").unlink()
    export([ROOT / "solutions" / NOTEBOOK], folder, modules=["grad_mode"])
    return folder


def test_export_of_the_notebook_is_the_reference_grad_mode(exported):
    mine = (exported / PACKAGE / "grad_mode.py").read_text(encoding="utf-8")
    assert mine == (REFERENCE_ROOT / PACKAGE / "grad_mode.py").read_text(encoding="utf-8"), (
        "run: python3 -m autograd_lab export solutions --to autograd_lab/course/reference "
        "--modules grad_mode")


DONE_WHEN = """
import numpy as np
from typing import Any
import mygrad
w = mygrad.Variable([1.0, 2.0], requires_grad=True)
with mygrad.no_grad():
    y = w * 2
assert y.grad_fn is None and not y.requires_grad
d = (w * 3).detach()
assert d.is_leaf and not d.requires_grad
c = mygrad.Variable([1.0, 1.0])
versions = [c._version]
c.add_(1.0); versions.append(c._version)
c.mul_(2.0); versions.append(c._version)
c += 1.0; versions.append(c._version)
assert versions == [0, 1, 2, 3], versions
loss = (w * c).sum()
c.mul_(2.0)
try:
    loss.backward()
except RuntimeError as err:
    assert "version 4" in str(err) and "version 3" in str(err), err
    print("stale saved tensor refused")
else:
    raise SystemExit("backward used a stale saved tensor")
"""


def test_done_when_in_a_fresh_process(exported):
    """Issue 9's done-when for chapter 06, on the export, with nothing of autograd_lab imported."""
    done = subprocess.run([sys.executable, "-c", DONE_WHEN], cwd=exported, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "stale saved tensor refused"


# -- the notebook uses these checkers consistently ----------------------------------------------
def test_graded_cells_call_their_own_checker():
    cells = solution_cells(NOTEBOOK)
    graded = graded_cells(cells)
    assert {c["metadata"]["nbgrader"]["grade_id"] for c in graded} == {
        "ch06-grad-mode-switch", "ch06-predict-raises", "ch06-train-step", "ch06-detach",
        "ch06-inplace-rules", "ch06-inplace-ops", "ch06-version-check"}
    for cell in graded:
        assert_calls_own_checker(cell)
        assert_has_heading_and_solution(cell, cells)


def test_chapter_06_shows_exactly_the_checked_snippets():
    cells = solution_cells(NOTEBOOK)
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for name, code in SNIPPETS.items():
        assert f"**Snippet {name}**\n\n```python\n{textwrap.dedent(code).rstrip()}\n```" in text


def test_chapter_06_builds_grad_mode_and_loads_mygrad_first():
    cells = [c for c in solution_cells(NOTEBOOK) if c["cell_type"] == "code"]
    assert "load_mygrad(chapter=6)" in "".join(cells[0]["source"])
    sections = [("".join(c["source"]).splitlines() or [""])[0] for c in cells]
    assert [s for s in sections if s.startswith("%%mygrad")] == [
        "%%mygrad grad_mode no_grad", "%%mygrad grad_mode detach", "%%mygrad grad_mode versions",
        "%%mygrad grad_mode inplace-rules", "%%mygrad grad_mode in-place",
        "%%mygrad grad_mode saved versions"]
    assert any("load_mygrad(chapter=6, including=True)" in "".join(c["source"]) for c in cells)


def test_no_answers_in_the_prose_after_the_prediction_check():
    """The markdown of the student copy must not list the snippets' verdicts."""
    cells = solution_cells(NOTEBOOK)
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for name in SNIPPETS:
        assert f"Snippet {name} is" not in text and f"snippet {name} raises" not in text
        assert f"In {name} the" not in text
    assert "are the instructive pair" not in text


# -- ch06-grad-mode-switch, ch06-detach, ch06-inplace-ops: the key's cells, one piece broken -----
def key_cell(grade_id: str) -> str:
    """The source of the key's solution cell ``grade_id`` without its ``%%mygrad`` line."""
    for cell in solution_cells(NOTEBOOK):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return "".join(cell["source"]).split("\n", 1)[1]
    raise LookupError(grade_id)


def mutated(grade_id: str, *replacements: tuple[str, str]) -> str:
    """The key's cell with each ``old`` replaced by ``new`` (each must occur)."""
    source = key_cell(grade_id)
    for old, new in replacements:
        assert old in source, f"{old!r} is not in the key's cell {grade_id}"
        source = source.replace(old, new)
    return source


def grad_mode_classes(source: str) -> tuple[type, type, type, Any]:
    """set_grad_enabled, no_grad, enable_grad of ``source``, on a GradMode of their own."""
    GradMode = type("GradMode", (), {"enabled": True})
    namespace: dict = {"GradMode": GradMode}
    exec(source, namespace)  # noqa: S102 - the key's cell, or a mistake made from it
    return namespace["set_grad_enabled"], namespace["no_grad"], namespace["enable_grad"], GradMode


def switch_failure(source: str, hidden: bool = False) -> str:
    classes = grad_mode_classes(source)[:3]
    with pytest.raises(AssertionError) as info:
        check.ch06_grad_mode_switch(*classes, hidden=hidden)
    return str(info.value)


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch06_grad_mode_switch_key_passes(seed, hidden, capsys):
    key = key_cell("ch06-grad-mode-switch-code")
    set_grad, no_grad, enable_grad, GradMode = grad_mode_classes(key)
    check.ch06_grad_mode_switch(set_grad, no_grad, enable_grad, seed=seed, hidden=hidden)
    assert GradMode.enabled is True
    assert_all_passed(capsys.readouterr().out, 1, hidden)


SWITCH_MISTAKES = [
    # __exit__ switches recording on instead of restoring what was there
    ([("GradMode.enabled = self.previous", "GradMode.enabled = True")],
     ["mode after the block is not the mode before it", "put exactly that value back"]),
    # the no_grad of the issue: the mode is not restored when the block raises
    ([("        GradMode.enabled = self.previous\n",
       "        if exc_info[0] is None:\n            GradMode.enabled = self.previous\n")],
     ["after an error inside", "whether or not the block raised"]),
    # __exit__ swallows the block's error
    ([("return False                       # an", "return True                        # an")],
     ["error raised inside the with block disappeared", "a true return value swallows it"]),
    # the mode to restore is read when the object is made
    ([("        self.mode = bool(mode)\n",
       "        self.mode = bool(mode)\n        self.previous = GradMode.enabled\n"),
      ("        self.previous = GradMode.enabled\n        GradMode.enabled = self.mode\n",
       "        GradMode.enabled = self.mode\n")],
     ["read when the block begins", "in __enter__, not in __init__"]),
    # the mode kept on the class: nested blocks share it
    ([("        self.previous = GradMode.enabled\n",
       "        set_grad_enabled.previous = GradMode.enabled\n")],
     ["nested blocks are wrong", "mode of the outer block (False)"]),
    # the decorator reuses the one object for every call
    ([("            with set_grad_enabled(mode):", "            with self:")],
     ["called itself, recording stayed off", "a switch of its own"]),
    # the decorator switches the mode once, when it decorates
    ([("        mode = self.mode\n",
       "        mode = self.mode\n        GradMode.enabled = mode\n")],
     ["decorating a function switched recording off", "in the wrapper, each time"]),
    # the wrapper forgets the function's result
    ([("                return fn(*args, **kwargs)", "                fn(*args, **kwargs)")],
     ["did not run in no_grad mode with its arguments, or did not give back its result",
      "returns what fn returns"]),
    # the wrapper loses the name
    ([("        run_in_mode.__name__, run_in_mode.__doc__ = fn.__name__, fn.__doc__\n", "")],
     ["lost its name", "__name__"]),
    # the flag is not made a bool
    ([("self.mode = bool(mode)", "self.mode = mode")],
     ["inside `with set_grad_enabled(0):` the mode was wrong", "as a bool"]),
]


@pytest.mark.parametrize("replacements,words", SWITCH_MISTAKES)
def test_ch06_grad_mode_switch_names_the_cause(replacements, words):
    message = switch_failure(mutated("ch06-grad-mode-switch-code", *replacements))
    assert message.startswith("Exercise ch06-grad-mode-switch failed")
    for word in words:
        assert word in message, (word, message)


def test_ch06_grad_mode_switch_gives_the_mode_back_even_when_it_fails():
    source = mutated("ch06-grad-mode-switch-code",
                     ("GradMode.enabled = self.previous", "pass"))
    classes = grad_mode_classes(source)
    with pytest.raises(AssertionError):
        check.ch06_grad_mode_switch(*classes[:3])
    assert classes[3].enabled is True


def test_ch06_grad_mode_switch_stub_says_not_done():
    def stub(self, *args):
        raise NotImplementedError("Exercise ch06-grad-mode-switch: write your code here")
    source = key_cell("ch06-grad-mode-switch-code")
    set_grad, no_grad, enable_grad, _ = grad_mode_classes(source)
    set_grad.__enter__ = stub
    with pytest.raises(NotImplementedError, match="ch06-grad-mode-switch is not done"):
        check.ch06_grad_mode_switch(set_grad, no_grad, enable_grad)


def grad_mode_namespace(pkg, grade_id: str, source: str) -> dict:
    """Run ``source`` (a cell of section 3 or 4) on the fresh package ``pkg``; its globals."""
    namespace = dict(vars(pkg.grad_mode))
    exec(source, namespace)  # noqa: S102 - the key's cell, or a mistake made from it
    return namespace


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch06_detach_and_inplace_keys_pass(seed, hidden, capsys):
    pkg = reference_package()
    ns = grad_mode_namespace(pkg, "detach", key_cell("ch06-detach-code"))
    check.ch06_detach(ns["detach"], ns["requires_grad_"], seed=seed, hidden=hidden)
    grad_mode_namespace(pkg, "in-place", key_cell("ch06-inplace-ops-code"))
    check.ch06_inplace_ops(pkg.Variable, seed=seed, hidden=hidden)
    assert_all_passed(capsys.readouterr().out, 2, hidden)


DETACH_MISTAKES = [
    ([("out = Variable(self.data)", "out = Variable(self.data.copy())")],
     ["holds a copy of the data", "not a copy"]),
    ([("out = Variable(self.data)", "out = Variable(self.data, requires_grad=self.requires_grad)")],
     ["the detached Variable requires grad", "do not pass"]),
    ([("    out = Variable(self.data)\n    out._counter = _counter(self)\n    return out",
       "    self.grad_fn = None\n    self.requires_grad = False\n    return self")],
     ["detach returned the Variable itself", "a *new* Variable"]),
    ([("out._counter = _counter(self)", "out._counter = list(_counter(self))")],
     ["has a version counter of its own", "the counter object of self"]),
    ([("    self.requires_grad = bool(requires_grad)\n    return self",
       "    self.requires_grad = bool(requires_grad)")],
     ["did not return the Variable itself", "Return self"]),
    # requires_grad_ switches any Variable: the refusal for a computed one is left out
    ([("    if not self.is_leaf:\n        raise RuntimeError(_ONLY_LEAVES.format(", "    if False:\n"
       "        raise RuntimeError(_ONLY_LEAVES.format(")],
     ["did not raise", "only changes leaves"]),
    # the refusal with a message of its own, which does not say what to do
    ([("raise RuntimeError(_ONLY_LEAVES.format(type(self.grad_fn).__name__))",
       "raise RuntimeError(\"not a leaf\")")],
     ["does not say what to do instead", "_ONLY_LEAVES"]),
    # _counter makes a new list on every call
    ([("    counter = v.__dict__.get(\"_counter\")\n    if counter is None:\n"
       "        counter = v._counter = [0]\n", "    counter = v._counter = [0]\n")],
     ["different list on the second call", "Make the list only the first time"]),
    # _counter keeps one list on the class: every Variable counts on it
    ([("    counter = v.__dict__.get(\"_counter\")\n    if counter is None:\n"
       "        counter = v._counter = [0]\n",
       "    counter = getattr(v, \"_counter\", None)\n    if counter is None:\n"
       "        counter = type(v)._counter = [0]\n")],
     ["did not keep its list in v._counter"]),
    # _counter starts at 1
    ([("counter = v._counter = [0]", "counter = v._counter = [1]")],
     ["not [0]", "starts as [0]"]),
]


@pytest.mark.parametrize("replacements,words", DETACH_MISTAKES)
def test_ch06_detach_names_the_cause(replacements, words):
    ns = grad_mode_namespace(reference_package(), "detach",
                             mutated("ch06-detach-code", *replacements))
    with pytest.raises(AssertionError) as info:
        check.ch06_detach(ns["detach"], ns["requires_grad_"])
    message = str(info.value)
    assert message.startswith("Exercise ch06-detach failed")
    for word in words:
        assert word in message, (word, message)


INPLACE_MISTAKES = [
    # the version bump of the issue: forgotten in the shared method
    ([("        update(self.data, other.data)\n        bump_version(self)\n",
       "        update(self.data, other.data)\n")],
     ["did not count one change", "a stale saved tensor goes unnoticed"]),
    ([("        update(self.data, other.data)\n        bump_version(self)\n",
       "        update(self.data, other.data)\n        bump_version(self)\n"
       "        bump_version(self)\n")],
     ["did not count one change", "not once per element or twice"]),
    ([("        return self\n        ### END SOLUTION\n    return method",
       "        ### END SOLUTION\n    return method")],
     ["did not return x", "would turn x into None"]),
    ([("def _add(data, other):\n    ### BEGIN SOLUTION\n    data += other",
       "def _add(data, other):\n    ### BEGIN SOLUTION\n    data = data + other")],
     ["the data did not change", "does not write into the array"]),
    ([("        update(self.data, other.data)\n",
       "        self.data = self.data.copy()\n        update(self.data, other.data)\n")],
     ["gave x a new array", "detached alias"]),
    ([("        _check_inplace(self, other)\n        update(self.data, other.data)\n",
       "        update(self.data, other.data)\n        _check_inplace(self, other)\n")],
     ["only after it had changed the data", "Check first, then change"]),
    ([("        _check_inplace(self, other)\n        update", "        update")],
     ["did not raise", "_check_inplace"]),
    ([("    _check_inplace(self)\n    self.data[...] = 0\n    bump_version(self)\n",
       "    _check_inplace(self)\n    self.data = np.zeros_like(self.data)\n"
       "    bump_version(self)\n")],
     ["x.zero_() gave x a new array", "in place"]),
    ([("    self.data[key] = value.data\n    bump_version(self)\n",
       "    self.data[key] = value.data\n")],
     ["x[key] = value did not count one change", "Bump the version once"]),
]


@pytest.mark.parametrize("replacements,words", INPLACE_MISTAKES)
def test_ch06_inplace_ops_names_the_cause(replacements, words):
    pkg = reference_package()
    grad_mode_namespace(pkg, "in-place", mutated("ch06-inplace-ops-code", *replacements))
    with pytest.raises(AssertionError) as info:
        check.ch06_inplace_ops(pkg.Variable)
    message = str(info.value)
    assert message.startswith("Exercise ch06-inplace-ops failed")
    for word in words:
        assert word in message, (word, message)


# -- the closing page: "you wrote N lines of your library" ----------------------------------------
def test_chapter_06_closes_with_the_learners_own_table():
    cells = [c for c in solution_cells(NOTEBOOK) if c["cell_type"] == "code"]
    closing = [c for c in cells if "closing_summary(" in "".join(c["source"])]
    assert len(closing) == 1
    text = "".join("".join(o.get("text", "")) for o in closing[0].get("outputs", []))
    assert "You wrote" in text and "code lines of your library's core" in text


def test_the_closing_summary_counts_the_learners_notebooks_or_says_why_not(tmp_path):
    from autograd_lab.course.learner.ownership import closing_summary, key_table, summarise
    text = closing_summary(range(2, 7), ROOT / "solutions", ROOT / "course")
    key = summarise(key_table([ROOT / "solutions"]), range(2, 7))
    assert text.startswith(f"You wrote {key.learner} of the {key.total} code lines")
    assert "grad_mode" in text and "kernels" not in text  # only chapters 02-06's modules
    assert "not here" in closing_summary(range(2, 7), tmp_path, tmp_path / "missing")


def test_the_closing_count_is_zero_for_untouched_copies_and_the_solutions_for_the_key():
    from autograd_lab.course.learner.ownership import key_table, learner_table, summarise
    course = ROOT / "course"
    untouched = summarise(learner_table([course], course), range(2, 7))
    assert untouched.learner == 0 and untouched.total > 0
    key = summarise(learner_table([ROOT / "solutions"], course), range(2, 7))
    assert key.learner == summarise(key_table([ROOT / "solutions"]), range(2, 7)).learner


def _unpack_naming_dtype_and_shape(ctx):
    """The message section 4 suggests: it names the tensor's dtype and shape too."""
    _freed_check(ctx)
    for i, (t, v) in enumerate(zip(ctx._saved, ctx.__dict__.get("_saved_versions", ()))):
        if t is not None and t._version != v:
            raise RuntimeError(f"one of the variables needed for gradient computation has been "
                               f"modified by an inplace operation: saved tensor {i} "
                               f"[{t.dtype}, shape {tuple(t.shape)}] is at version {t._version}; "
                               f"expected version {v} instead.")
    return tuple(ctx._saved)


def test_ch06_version_check_accepts_a_message_naming_dtype_and_shape(capsys):
    """The chapter advises naming the tensor's dtype and shape; the check's stand-in tensors
    have both, so following the advice costs nothing."""
    check.ch06_version_check(install(_save_right, _unpack_naming_dtype_and_shape), hidden=True)
    assert "All" in capsys.readouterr().out
