"""Structure: Variable's operators are visible to static tools, and each op is one Function."""
from __future__ import annotations

import ast
import importlib
import pathlib
import pkgutil
import shutil
import subprocess
import sys

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab.ops import _METHODS

VARIABLE_PY = pathlib.Path(al.__file__).with_name("variable.py")


def _declared_for_type_checkers() -> set[str]:
    tree = ast.parse(VARIABLE_PY.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Variable")
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            names |= {d.name for d in node.body if isinstance(d, ast.FunctionDef)}
    return names


def test_every_attached_operator_and_method_is_declared_for_type_checkers():
    declared = _declared_for_type_checkers()
    missing = sorted(set(_METHODS) - declared)
    stale = sorted(declared - set(_METHODS))
    assert not missing, f"attached to Variable by autograd_lab.ops but not declared in variable.py: {missing}"
    assert not stale, f"declared in variable.py but not attached by autograd_lab.ops: {stale}"


def test_declared_methods_exist_at_run_time():
    x = al.ones(2, 2)
    assert all(hasattr(x, name) for name in _declared_for_type_checkers())


@pytest.mark.skipif(shutil.which("mypy") is None and importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed")
def test_mypy_sees_the_operators(tmp_path):
    """A user's type checker finds the operators and methods that autograd_lab.ops attaches to
    Variable at run time. Only the user's file is checked (the library's own typing is not what
    this asks), and a method that is not there must still be an error."""
    probe = tmp_path / "probe.py"
    probe.write_text("import autograd_lab as al\nx = al.tensor([1.0])\n"
                     "y: al.Variable = (x + 1).sin().sum()\nreveal_type(x.mm)\nz = x.no_such_method()\n")
    res = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
                          "--cache-dir", str(tmp_path / "mypy_cache"), str(probe)],
                         capture_output=True, text=True, cwd=VARIABLE_PY.parent.parent)
    errors = [line.split(": error: ")[0] for line in res.stdout.splitlines() if ": error: " in line]
    assert errors == [f"{probe}:5"], res.stdout  # the method that does not exist, and nothing else
    revealed = [line for line in res.stdout.splitlines() if line.startswith(f"{probe}:4: note: Revealed type")]
    assert revealed and revealed[0].endswith('-> autograd_lab.variable.Variable"'), res.stdout  # x.mm: a method


def _function_classes() -> list[type]:
    for info in pkgutil.walk_packages(al.__path__, "autograd_lab."):
        if info.name.startswith(("autograd_lab.course", "autograd_lab.exercises", "autograd_lab.cli",
                                 "autograd_lab.__main__")):
            continue
        importlib.import_module(info.name)
    found, todo = [], list(al.Function.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("autograd_lab.") and not cls.__module__.startswith(
                ("autograd_lab.exercises", "autograd_lab.course")):
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_one_function_per_operation():
    names = [c.__name__ for c in _function_classes()]
    assert len(names) > 30
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"more than one Function class with the name(s) {duplicates}"


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
def test_method_al_and_functional_use_the_same_activation(name):
    x = al.tensor(np.array([-1.0, 0.5]), requires_grad=True)
    nodes = {type(getattr(x, name)().grad_fn), type(getattr(al, name)(x).grad_fn),
             type(getattr(F, name)(x).grad_fn)}
    assert len(nodes) == 1, nodes


def test_import_and_core_ops_load_no_numba():
    # the one ReLU/Sigmoid/Tanh runs on the kernels, which are imported on first use only
    code = ("import sys, autograd_lab as al\n"
            "x = al.tensor([1.0, -2.0], requires_grad=True)\n"
            "(x * x).exp().sum().backward()\n"
            "print('numba' in sys.modules)\n"
            "x.relu()\n"
            "print('numba' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=VARIABLE_PY.parent.parent, timeout=600,
                         env={**__import__("os").environ, "PYTHONPATH": str(VARIABLE_PY.parent.parent)})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]
