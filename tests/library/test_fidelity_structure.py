"""Structure: Variable's operators are visible to static tools, and each op is one Function."""
from __future__ import annotations

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

VARIABLE_PY = pathlib.Path(al.__file__).with_name("variable.py")


def _defined_in_class_body(member: object) -> bool:
    func = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
    code = getattr(func, "__code__", None)
    return (code is not None and pathlib.Path(code.co_filename) == VARIABLE_PY
            and func.__qualname__.startswith("Variable."))


def test_every_public_method_and_operator_is_defined_in_the_class_body():
    """What ``x.`` offers is written in variable.py's class, where a reader, help() and an IDE
    find it: nothing is attached from another module."""
    members = {name: member for name, member in vars(al.Variable).items()
               if callable(member) or isinstance(member, (property, staticmethod, classmethod))}
    assert len(members) > 150  # the operators, the math, the shapes, backward, …
    elsewhere = sorted(name for name, member in members.items()
                       if name != "__hash__" and not _defined_in_class_body(member))
    assert not elsewhere, f"Variable members not defined in variable.py's class body: {elsewhere}"
    assert al.Variable.__hash__ is object.__hash__
    ops_init = (VARIABLE_PY.parent / "ops" / "__init__.py").read_text(encoding="utf-8")
    assert "setattr(" not in ops_init


def test_the_class_body_rule_can_fail():
    """A method attached from outside the class is told apart from one defined in it."""
    assert _defined_in_class_body(vars(al.Variable)["__add__"])
    assert not _defined_in_class_body(lambda self: self)
    assert not _defined_in_class_body(al.ops.exp)


def test_variable_stays_hashable_by_identity():
    """Defining __eq__ (elementwise) in a class removes __hash__ unless it is kept: a Variable is
    a dictionary key (the engine's buffers, a user's parameter groups) by identity."""
    a, b = al.tensor([1.0]), al.tensor([1.0])
    assert len({a: 1, b: 2}) == 2 and hash(a) == object.__hash__(a)
    assert (a == b).tolist() == [True]


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
        if info.name.startswith(("autograd_lab.course", "autograd_lab.course.exercises", "autograd_lab.cli",
                                 "autograd_lab.__main__")):
            continue
        importlib.import_module(info.name)
    found, todo = [], list(al.Function.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("autograd_lab.") and not cls.__module__.startswith(
                ("autograd_lab.course.exercises", "autograd_lab.course")):
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
