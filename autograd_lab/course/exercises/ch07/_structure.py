"""What a chapter 07 kernel is made of, read from its Python source: one loop of scalars, and
``prange`` loops whose iterations write only their own elements.

These checks read the kernel's source (ast), because the lesson of the chapter IS its
structure: a "kernel" that computes with whole numpy arrays inside @njit gives the right
values but allocates a temporary array per operation and passes over memory once per
operation, and a serial `range` inside @njit(parallel=True) runs on one thread. The learner's
kernel only gives its source lines (:func:`source_lines`, in the kernel); the judge parses them
(:func:`tree_of`).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, TypeGuard

__all__ = ["source_lines", "tree_of", "source_tree", "temporaries", "prange_loops",
           "racy_writes"]

_ALLOCATING_CALLS = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
                     "full_like", "array", "copy", "arange", "concatenate", "stack", "vstack",
                     "hstack", "outer", "dot", "matmul", "cumsum"}
_REDUCING_METHODS = {"sum", "max", "min", "mean", "prod", "argmax", "argmin"}


def source_lines(fn: Any) -> list[str] | None:
    """The lines of the ``def`` of the learner's kernel (dedented); ``None`` if its source
    cannot be read (a function built with ``exec``, a builtin)."""
    py_func = getattr(fn, "py_func", fn)
    try:
        return textwrap.dedent(inspect.getsource(py_func)).splitlines()
    except (OSError, TypeError):
        return None


def tree_of(lines: Any) -> ast.FunctionDef | None:
    """The ``def`` the source ``lines`` hold, parsed; ``None`` if they are not readable."""
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        return None
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return None
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    return defs[0] if defs else None


def source_tree(fn: Any) -> ast.FunctionDef | None:
    """The ``def`` of the learner's kernel, parsed; ``None`` if its source cannot be read."""
    return tree_of(source_lines(fn))


class _Arrays:
    """Which expressions of a kernel are whole arrays (or rows), as opposed to single numbers."""

    def __init__(self, func: ast.FunctionDef, ndims: dict[str, int]) -> None:
        self.ndims = dict(ndims)          # array parameter -> number of dimensions
        self.np_names = {"np", "numpy"}
        for node in ast.walk(func):       # names assigned from array expressions are arrays
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name) and self.ndim(node.value):
                self.ndims.setdefault(node.targets[0].id, self.ndim(node.value))

    def ndim(self, node: ast.AST) -> int:
        """How many dimensions the value of ``node`` has (0: a number, or unknown)."""
        if isinstance(node, ast.Name):
            return self.ndims.get(node.id, 0)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.BinOp):
            return max(self.ndim(node.left), self.ndim(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.ndim(node.operand)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return self.ndim(node.value)
        return 0

    def _subscript(self, node: ast.Subscript) -> int:
        """``a[i, :]``: the array's dimensions less one per index, plus one per slice."""
        base = self.ndim(node.value)
        if not base:
            return 0
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return base - len(index) + sum(isinstance(i, ast.Slice) for i in index)

    def _call(self, node: ast.Call) -> int:
        """An allocating numpy call makes an array; a reduction with an axis drops one
        dimension, without one gives a number; ``copy`` and elementwise numpy keep them."""
        if self._is_np(node.func) and node.func.attr in _ALLOCATING_CALLS:
            return 1
        if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCING_METHODS:
            has_axis = bool(node.args) or any(k.arg == "axis" for k in node.keywords)
            return max(self.ndim(node.func.value) - 1, 0) if has_axis else 0
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
            return self.ndim(node.func.value)
        if self._is_np(node.func):
            args = [*node.args, *(k.value for k in node.keywords)]
            return max((self.ndim(a) for a in args), default=0)
        return 0

    def _is_np(self, func: ast.AST) -> TypeGuard[ast.Attribute]:
        return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in self.np_names)


def temporaries(func: ast.FunctionDef, ndims: dict[str, int]) -> list[str]:
    """The expressions in the kernel that make a new array (each is one temporary)."""
    arrays = _Arrays(func, ndims)
    found: list[str] = []

    def note(node: ast.AST) -> None:
        text = ast.unparse(node)
        if text not in found:
            found.append(text)

    for node in ast.walk(func):
        if isinstance(node, ast.BinOp) and arrays.ndim(node):
            note(node)                                   # a * x + b on whole arrays
        elif isinstance(node, ast.UnaryOp) and arrays.ndim(node):
            note(node)
        elif isinstance(node, ast.Call):
            if arrays._is_np(node.func) and node.func.attr in _ALLOCATING_CALLS:
                note(node)                               # np.empty(...), np.zeros_like(...)
            elif arrays.ndim(node) and not isinstance(node.func, ast.Name):
                note(node)                               # np.maximum(z, 0), x.sum(axis=0)
    # keep the outermost expressions only: `np.maximum(a * x + b, 0)` rather than its parts
    return [t for t in found if not any(t != other and t in other for other in found)]


def prange_loops(func: ast.FunctionDef) -> int:
    """How many ``for`` loops of the kernel iterate over ``prange(...)``."""
    count = 0
    for node in ast.walk(func):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            f = node.iter.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            count += name == "prange"
    return count


def _is_prange(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) == "prange"


def _written(targets: list[ast.expr]) -> list[ast.Subscript]:
    """The subscripted targets among ``targets`` (tuples unpacked): the array elements written."""
    found: list[ast.Subscript] = []
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            found += _written(list(t.elts))
        elif isinstance(t, ast.Subscript):
            found.append(t)
    return found


def _base_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def racy_writes(func: ast.FunctionDef) -> list[tuple[str, str]]:
    """Writes inside a ``prange`` loop that are not indexed by the loop's own variable.

    Iteration ``i`` of ``for i in prange(n)`` owns the elements whose index holds ``i`` itself
    (``out[i]``, ``partial[i, j]``); any other index (``partial[i // step, j]``, ``acc[j]``) can
    be the same element for two iterations that run at the same time: a race. Arrays made inside
    the loop's body belong to one iteration and are not counted. Returns (write, loop variable).
    """
    found: list[tuple[str, str]] = []
    for loop in ast.walk(func):
        if not (isinstance(loop, ast.For) and _is_prange(loop.iter)
                and isinstance(loop.target, ast.Name)):
            continue
        var = loop.target.id
        private = {t.id for node in ast.walk(loop) if isinstance(node, ast.Assign)
                   for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(loop):
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            else:
                continue
            for t in _written(targets):
                if _base_name(t) in private:
                    continue
                index = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
                if not any(isinstance(i, ast.Name) and i.id == var for i in index):
                    write = (ast.unparse(t), var)
                    if write not in found:
                        found.append(write)
    return found
