"""Checkers for chapter 07, Fast kernels with numba.

The learner's kernels are ``@njit`` functions over numpy arrays. The checkers test values only
(never speed), so they work the same with ``NUMBA_DISABLE_JIT=1``. To keep compilation cheap,
every case calls a kernel with one and the same signature: C-contiguous float64 arrays of a fixed
number of dimensions and Python floats. Output buffers are filled with NaN before the call, so
an element the kernel forgets to write shows up.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import warnings
from collections.abc import Callable
from typing import Any, TypeGuard

import numpy as np

from ._common import Checker, grad_data

__all__ = ["ch07_affine_relu_forward", "ch07_affine_relu_backward", "ch07_softmax_rows", "ch07_cross_entropy_rows",
           "ch07_column_sums", "ch07_column_sums_wrapper", "ch07_softmax_ce_function",
           "ch07_relu_function"]

NUMBA_HINT = ("If numba could not compile your function, the first lines of the message name "
              "the line and the types it could not handle. Inside @njit use loops, scalars, "
              "math functions and the numpy arrays you were given.")


def _call(ck: Checker, fn: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's kernel with numba's warnings silenced.

    A graded cell that writes to stderr counts as failed in nbgrader, and numba warns, for
    example, when ``parallel=True`` finds no loop to parallelise (as in the untouched stub).
    The values are what is checked here; the warning would only cost points.
    """
    from numba.core.errors import NumbaWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaWarning)
        return ck.call(fn, *args, hint=NUMBA_HINT)


def _jit_enabled() -> bool:
    from numba import config
    return not config.DISABLE_JIT


def _check_kernel(ck: Checker, fn: Any, name: str, parallel: bool = False) -> None:
    """Fail unless ``fn`` is a numba-compiled function (skipped when the JIT is switched off)."""
    decorator = "@njit(parallel=True)" if parallel else "@njit"
    with ck.case(f"{name} is compiled by numba ({decorator})"):
        ck.check(callable(fn), f"{name} is not a function.", received=fn,
                 hint=f"Pass the function itself: check.…({name}).")
        if not _jit_enabled():
            return  # NUMBA_DISABLE_JIT=1: njit returns the plain Python function
        options = getattr(fn, "targetoptions", None)
        if not hasattr(fn, "py_func") or not isinstance(options, dict):
            ck.fail(f"{name} is a plain Python function, not a numba kernel.",
                    hint=f"Put {decorator} on the line above `def {name}(...)` and run the cell "
                         "again.")
        if parallel:
            ck.check(bool(options.get("parallel")), f"{name} is compiled without parallel=True.",
                     hint="Use @njit(parallel=True): without it, prange is just range and the "
                          "blocks run one after the other on one thread.")


# -- what the kernel is made of: one loop of scalars, prange where parallel=True ------------
# These checks read the kernel's Python source (ast), because the lesson of the chapter IS its
# structure: a "kernel" that computes with whole numpy arrays inside @njit gives the right
# values but allocates a temporary array per operation and passes over memory once per
# operation, and a serial `range` inside @njit(parallel=True) runs on one thread.
_ALLOCATING_CALLS = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
                     "full_like", "array", "copy", "arange", "concatenate", "stack", "vstack",
                     "hstack", "outer", "dot", "matmul", "cumsum"}
_REDUCING_METHODS = {"sum", "max", "min", "mean", "prod", "argmax", "argmin"}


def _source_tree(fn: Any) -> ast.FunctionDef | None:
    """The ``def`` of the learner's kernel, parsed; ``None`` if its source cannot be read."""
    py_func = getattr(fn, "py_func", fn)
    try:
        source = textwrap.dedent(inspect.getsource(py_func))
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    return defs[0] if defs else None


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
            base = self.ndim(node.value)
            if not base:
                return 0
            index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            slices = sum(isinstance(i, ast.Slice) for i in index)
            return base - len(index) + slices
        if isinstance(node, ast.BinOp):
            return max(self.ndim(node.left), self.ndim(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.ndim(node.operand)
        if isinstance(node, ast.Call):
            if self._is_np(node.func) and node.func.attr in _ALLOCATING_CALLS:
                return 1
            if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCING_METHODS:
                has_axis = bool(node.args) or any(k.arg == "axis" for k in node.keywords)
                return max(self.ndim(node.func.value) - 1, 0) if has_axis else 0
            if isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
                return self.ndim(node.func.value)
            args = [a for a in node.args] + [k.value for k in node.keywords]
            if self._is_np(node.func) and node.func.attr not in _REDUCING_METHODS:
                return max((self.ndim(a) for a in args), default=0)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return self.ndim(node.value)
        return 0

    def _is_np(self, func: ast.AST) -> TypeGuard[ast.Attribute]:
        return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in self.np_names)


def _temporaries(func: ast.FunctionDef, ndims: dict[str, int]) -> list[str]:
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


def _prange_loops(func: ast.FunctionDef) -> int:
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


def _racy_writes(func: ast.FunctionDef) -> list[tuple[str, str]]:
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


def _race_hint(writes: list[tuple[str, str]]) -> str:
    text, var = writes[0]
    return (f"This is a race: `{text}` is written inside `for {var} in prange(...)`, and its "
            f"index is not `{var}` itself, so two iterations that run at the same time on "
            f"different threads can write the same element; one thread's `+=` then overwrites "
            f"the other's and the totals are wrong in some runs. Give every iteration a slot "
            f"of its own: run prange over the blocks (`for c in prange(nblocks)`) and write "
            f"only partial[c, ...] in iteration c.")


def _check_no_race(ck: Checker, fn: Any, name: str) -> None:
    """Fail if a write inside a prange loop is indexed by anything but the loop variable."""
    func = _source_tree(fn)
    if func is None:
        return
    with ck.case(f"{name}: every prange iteration writes only its own elements (no race)"):
        writes = _racy_writes(func)
        ck.check(not writes,
                 f"{name} writes {', '.join(f'`{w}`' for w, _ in writes[:3])} from a prange "
                 "loop, at an index other than the loop variable's own slot.",
                 hint=_race_hint(writes) if writes else None)


def _thread_counts() -> list[int]:
    """1, 2 and the number numba uses now, within what numba started with."""
    import numba
    top = numba.config.NUMBA_NUM_THREADS
    return sorted({n for n in (1, 2, numba.get_num_threads()) if 1 <= n <= top})


def _check_runs_agree(ck: Checker, fn: Any, name: str, rng: np.random.Generator,
                      repeats: int) -> None:
    """Run the kernel on several shapes, block counts and thread counts, ``repeats`` times
    each, and compare every result with the serial sums: a race shows up as a difference in
    some runs. Only for a compiled parallel kernel (a plain Python loop never races)."""
    if not (_jit_enabled() and hasattr(fn, "py_func")):
        return
    import numba
    cases = [((400_000, 2), 3), ((100_000, 4), 3), ((30_001, 3), 2), ((4_096, 10), 5),
             ((999, 7), 4)]
    with ck.case(f"{name} gives the serial sums on every run, with "
                 f"{' and '.join(map(str, _thread_counts()))} thread(s)"):
        before = numba.get_num_threads()
        try:
            for shape, nblocks in cases:
                x = np.ascontiguousarray(rng.normal(size=shape))
                expected = np.stack([x[lo:hi].sum(axis=0)
                                     for lo, hi in _blocks(shape[0], nblocks)])
                for threads in _thread_counts():
                    numba.set_num_threads(threads)
                    wrong = 0
                    for _ in range(repeats):
                        partial = _filled((nblocks, shape[1]))
                        _call(ck, fn, x, partial)
                        wrong += not np.allclose(partial, expected, rtol=1e-9, atol=1e-7)
                    ck.check(wrong == 0,
                             f"on x of shape {shape} in {nblocks} blocks with {threads} "
                             f"thread(s), partial differed from the serial sums in {wrong} of "
                             f"{repeats} runs.",
                             hint="Results that change from run to run are the mark of a race: "
                                  "two iterations of your prange loop wrote the same element "
                                  "at the same time. Iteration c of `for c in prange(nblocks)` "
                                  "must write only partial[c, ...].")
        finally:
            numba.set_num_threads(before)


def _check_structure(ck: Checker, fn: Any, name: str, ndims: dict[str, int],
                     parallel: bool = False) -> None:
    """Fail if the kernel computes with whole arrays, or is parallel without a prange loop."""
    func = _source_tree(fn)
    if func is None:                     # no source to read (e.g. built with exec): values only
        return
    with ck.case(f"{name} is one pass of scalar arithmetic (no temporary arrays)"):
        temps = _temporaries(func, ndims)
        ck.check(not temps,
                 f"{name} computes with whole arrays: {', '.join(f'`{t}`' for t in temps[:3])}. "
                 "Each such operation allocates a new temporary array and makes a pass over "
                 "memory of its own, even inside @njit: the cost this chapter's kernels remove.",
                 hint="Loop over the elements and compute with single numbers, e.g. "
                      "v = a * x[i] + b, writing each result straight into the output you were "
                      "given (index every array down to one element).")
    if parallel:
        with ck.case(f"{name} splits its loop over threads with prange"):
            ck.check(_prange_loops(func) > 0,
                     f"{name} has no `for ... in prange(...)` loop: with only `range`, "
                     "@njit(parallel=True) runs every block one after the other on one thread.",
                     hint="Write the loop over the blocks as `for c in prange(nblocks):` "
                          "(prange comes from numba, next to njit).")


def _filled(shape: tuple[int, ...]) -> np.ndarray:
    """An output buffer full of NaN: whatever the kernel does not write stays NaN."""
    return np.full(shape, np.nan)


def _unwritten_hint(got: np.ndarray, expected: np.ndarray) -> str | None:
    if np.isnan(got).any() and not np.isnan(expected).any():
        return ("Some elements still hold the NaN the buffer was filled with: write every "
                "element (a buffer from np.empty holds garbage, not zeros).")
    return None


# -- ch07-affine-relu-forward ---------------------------------------------------------------
def _forward_cases(rng: np.random.Generator, hidden: bool) -> list[tuple[str, np.ndarray,
                                                                         float, float]]:
    cases = [
        ("7 elements, a=1.5, b=-0.25", np.round(rng.normal(size=7), 3), 1.5, -0.25),
        ("one element", np.array([0.75]), -2.0, 1.0),
        ("an empty array", np.zeros(0), 1.0, 1.0),
        ("a negative a flips which elements pass", np.round(rng.normal(size=9), 3), -3.0, 0.5),
        ("a * x + b exactly 0 gives 0", np.array([0.5, 0.25, 1.0, -1.0]), 2.0, -1.0),
        ("1000 elements", rng.normal(size=1000), 0.8, 0.1),
    ]
    if hidden:
        cases += [("a = 0: every output is relu(b)", rng.normal(size=5), 0.0, 0.3),
                  ("a = 0 and b < 0: all zeros", rng.normal(size=5), 0.0, -0.3),
                  ("513 elements, random a and b", 10 * rng.normal(size=513),
                   float(np.round(rng.normal(), 3)), float(np.round(rng.normal(), 3)))]
    return cases


def ch07_affine_relu_forward(affine_relu_forward: Callable[..., Any], *, seed: int = 0,
                             hidden: bool = False) -> None:
    """Check ``affine_relu_forward(x, a, b, out)``: writes max(a * x + b, 0) into the 1-d
    float64 array ``out``, leaves ``x`` unchanged and returns ``out``."""
    ck = Checker("ch07-affine-relu-forward", seed=seed, hidden=hidden)
    _check_kernel(ck, affine_relu_forward, "affine_relu_forward")
    for name, x, a, b in _forward_cases(ck.rng, hidden):
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            x_before = x.copy()
            out = _filled(x.shape)
            result = _call(ck, affine_relu_forward, x, float(a), float(b), out)
            expected = np.maximum(a * x_before + b, 0.0)
            ck.check(np.array_equal(x, x_before), "your kernel changed its input x.",
                     hint="Compute a * x[i] + b into a local variable and write only into out.")
            ck.close(out, expected, atol=1e-12, rtol=1e-9, what="content of out",
                     hint=_unwritten_hint(out, expected)
                     or "out[i] = max(a * x[i] + b, 0): multiply, add, then clip at 0.",
                     mistakes=[(a * x_before + b, "The relu is missing: negative values must "
                                "become 0."),
                               (a * np.maximum(x_before, 0) + b, "The relu is applied to x; "
                                "apply it last, to a * x[i] + b."),
                               (np.maximum(a * x_before, 0) + b, "b is added after the relu; "
                                "clip a * x[i] + b as a whole.")])
            ck.check(result is out, "your kernel did not return out.",
                     expected="the array out itself", received=result,
                     hint="End with `return out` (the array you were given, not a new one).")
    _check_structure(ck, affine_relu_forward, "affine_relu_forward", {"x": 1, "out": 1})
    ck.done()


# -- ch07-affine-relu-backward --------------------------------------------------------------
def _backward_reference(x: np.ndarray, a: float, b: float, g: np.ndarray
                        ) -> tuple[np.ndarray, float, float]:
    mask = (a * x + b) > 0
    gm = g * mask
    return a * gm + 0.0, float((gm * x).sum()), float(gm.sum())  # + 0.0: no -0 in messages


def _backward_autograd(x: np.ndarray, a: float, b: float, g: np.ndarray
                       ) -> tuple[np.ndarray, float, float]:
    import autograd_lab as al
    xv = al.Variable(x.copy(), requires_grad=True)
    av = al.Variable(np.array(a), requires_grad=True)
    bv = al.Variable(np.array(b), requires_grad=True)
    ((av * xv + bv).relu() * al.Variable(g)).sum().backward()
    return grad_data(xv), float(grad_data(av)), float(grad_data(bv))


def ch07_affine_relu_backward(affine_relu_backward: Callable[..., Any], *, seed: int = 0,
                              hidden: bool = False) -> None:
    """Check ``affine_relu_backward(x, a, b, grad_out, grad_x) -> (grad_a, grad_b)`` for
    y = relu(a * x + b): writes dL/dx into ``grad_x`` and returns dL/da and dL/db, where
    ``grad_out`` is dL/dy; the derivative of relu at 0 is taken as 0 (as in PyTorch)."""
    ck = Checker("ch07-affine-relu-backward", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, affine_relu_backward, "affine_relu_backward")
    renamed = {"a * x + b exactly 0 gives 0": "a * x + b exactly 0: relu'(0) is taken as 0"}
    cases = [(renamed.get(name, name), x, a, b) for name, x, a, b in _forward_cases(rng, hidden)]
    cases.insert(1, ("agrees with autograd_lab's backward", np.round(rng.normal(size=6), 3),
                     1.25, 0.5))
    formula = ("With z = a * x[i] + b and g = grad_out[i]: where z > 0, grad_x[i] = a * g, and "
               "add g * x[i] to grad_a and g to grad_b; where z <= 0, grad_x[i] = 0 and nothing "
               "is added.")
    for name, x, a, b in cases:
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            g = np.ascontiguousarray(np.round(rng.normal(size=x.shape), 3))
            x_before, g_before = x.copy(), g.copy()
            grad_x = _filled(x.shape)
            result = _call(ck, affine_relu_backward, x, float(a), float(b), g, grad_x)
            if name.startswith("agrees"):
                gx, ga, gb = _backward_autograd(x_before, a, b, g_before)
            else:
                gx, ga, gb = _backward_reference(x_before, a, b, g_before)
            ck.check(np.array_equal(x, x_before) and np.array_equal(g, g_before),
                     "your kernel changed x or grad_out.", hint="Write only into grad_x.")
            ck.check(isinstance(result, (tuple, list)) and len(result) == 2,
                     "your kernel must return two numbers, (grad_a, grad_b).",
                     expected="a tuple (grad_a, grad_b)", received=result,
                     hint="Accumulate both sums in local variables in the loop and end with "
                          "`return grad_a, grad_b`.")
            at_zero = (a * x_before + b) == 0
            mistakes = [(a * g_before, "The mask is missing: where a * x[i] + b <= 0 the "
                         "gradient is 0."),
                        (g_before * ((a * x_before + b) > 0), "The factor a is missing: "
                         "d(a * x + b)/dx = a, so grad_x[i] = a * grad_out[i] where z > 0.")]
            if at_zero.any():
                mistakes.insert(0, (a * g_before * ((a * x_before + b) >= 0), "At z == 0 "
                                    "exactly, take relu's derivative as 0 (test z > 0, not "
                                    "z >= 0), as PyTorch does."))
            ck.close(grad_x, gx, atol=1e-12, rtol=1e-9, what="grad_x",
                     hint=_unwritten_hint(grad_x, gx) or formula, mistakes=mistakes)
            got_a, got_b = result
            swapped = np.allclose([float(got_b), float(got_a)], [ga, gb], atol=1e-9, rtol=1e-9)
            if swapped and not np.isclose(ga, gb):
                ck.fail("grad_a and grad_b look swapped.", expected=(ga, gb),
                        received=(float(got_a), float(got_b)),
                        hint="Return them in this order: grad_a, grad_b.")
            ck.close(float(got_a), ga, atol=1e-9, rtol=1e-9, what="grad_a (first returned value)",
                     hint=formula, mistakes=[(float(g_before[(a * x_before + b) > 0].sum()),
                                              "grad_a adds g * x[i], not g: "
                                              "d(a * x + b)/da = x.")])
            ck.close(float(got_b), gb, atol=1e-9, rtol=1e-9, what="grad_b (second returned value)",
                     hint=formula, mistakes=[(float(g_before.sum()), "grad_b sums grad_out only "
                                              "where z > 0.")])
    _check_structure(ck, affine_relu_backward, "affine_relu_backward",
                     {"x": 1, "grad_out": 1, "grad_x": 1})
    ck.done()


# -- ch07-softmax-rows ----------------------------------------------------------------------
def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


_GLOBAL_MAX_HINT = ("You subtracted the maximum of the whole array, not of each row: in a row "
                    "whose values all lie far below that maximum, every exp underflows to 0 and "
                    "0 / 0 gives nan. Take m as the maximum of row i alone (a loop over j in "
                    "that row).")


def _global_shift_pattern(out: np.ndarray, x: np.ndarray) -> bool:
    """True if ``out`` fails (inf or nan) exactly where a softmax shifted by the maximum of the
    whole array, instead of each row's, fails: rows far below the global maximum underflow."""
    if not x.size:
        return False
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max())
        shifted = e / e.sum(axis=1, keepdims=True)
    bad = ~np.isfinite(shifted)
    return bool(bad.any() and np.array_equal(bad, ~np.isfinite(out)))


def ch07_softmax_rows(softmax_rows: Callable[..., Any], *, seed: int = 0,
                      hidden: bool = False) -> None:
    """Check ``softmax_rows(x, out)``: the numerically stable softmax of each row of the 2-d
    float64 array ``x``, written into ``out`` (same shape), ``x`` unchanged, ``out`` returned."""
    ck = Checker("ch07-softmax-rows", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, softmax_rows, "softmax_rows")
    cases = [
        ("a (3, 5) input", np.round(rng.normal(size=(3, 5)), 3)),
        ("a (4, 4) input (square: rows, not columns)", np.round(2 * rng.normal(size=(4, 4)), 3)),
        ("one row, one column", np.array([[3.0]])),
        ("a row of equal values gives 1/n each", np.full((2, 4), 7.5)),
        ("logits of +-1000 (exp would overflow without the shift)",
         np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.0]])),
        ("no rows: a (0, 4) input", np.zeros((0, 4))),
    ]
    if hidden:
        cases += [("a (6, 3) input", rng.normal(size=(6, 3))),
                  ("a (2, 50) input with large logits", 300 * rng.normal(size=(2, 50))),
                  ("a (17, 1) input: every row is [1]", rng.normal(size=(17, 1)))]
    for name, x in cases:
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            x_before = x.copy()
            out = _filled(x.shape)
            with np.errstate(all="ignore"):
                result = _call(ck, softmax_rows, x, out)
            expected = _softmax(x_before)
            ck.check(np.array_equal(x, x_before), "your kernel changed its input x.",
                     hint="Keep the row maximum in a local variable and compute exp(x[i, j] - m) "
                          "without assigning into x.")
            hint = ("Per row i: m = max of the row, e_j = exp(x[i, j] - m), then "
                    "out[i, j] = e_j / sum_j e_j.")
            if not np.isfinite(out).all() and np.isfinite(expected).all():
                hint = ("exp overflowed: subtract the row maximum before exp (softmax does not "
                        "change, and exp(x - max) <= 1).") if np.abs(x_before).max() > 700 else (
                        _unwritten_hint(out, expected) or hint)
                if _global_shift_pattern(out, x_before):
                    hint = _GLOBAL_MAX_HINT
            mistakes = []
            if x.size:
                shifted = np.exp(x_before - x_before.max(axis=1, keepdims=True))
                with np.errstate(all="ignore"):
                    mistakes = [(shifted, "The rows are not normalised: divide every e_j by the "
                                 "sum of its row."),
                                (_softmax(x_before, axis=0), "That is the softmax of each column; "
                                 "take the maximum and the sum along each row (over j)."),
                                (shifted / shifted.sum(), "You divided by the sum of the whole "
                                 "array; divide by the sum of each row.")]
            ck.close(out, expected, atol=1e-12, rtol=1e-9, what="content of out", hint=hint,
                     mistakes=mistakes)
            ck.check(result is out, "your kernel did not return out.",
                     expected="the array out itself", received=result,
                     hint="End with `return out` (the array you were given, not a new one).")
    _check_structure(ck, softmax_rows, "softmax_rows", {"x": 2, "out": 2})
    ck.done()


# -- ch07-column-sums -----------------------------------------------------------------------
def _blocks(rows: int, nblocks: int) -> list[tuple[int, int]]:
    step = (rows + nblocks - 1) // nblocks
    return [(min(rows, c * step), min(rows, (c + 1) * step)) for c in range(nblocks)]


def ch07_column_sums(column_sums_blocked: Callable[..., Any], *, seed: int = 0,
                     hidden: bool = False) -> None:
    """Check ``column_sums_blocked(x, partial)``: with nblocks = partial.shape[0] and
    step = ceil(rows / nblocks), row c of ``partial`` becomes the column sums of rows
    c*step .. (c+1)*step - 1 of the 2-d float64 ``x`` (zeros for a block with no rows);
    ``partial`` is returned, so that ``partial.sum(axis=0)`` is ``x.sum(axis=0)``."""
    ck = Checker("ch07-column-sums", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, column_sums_blocked, "column_sums_blocked", parallel=True)
    _check_no_race(ck, column_sums_blocked, "column_sums_blocked")
    cases = [((10, 3), 2), ((7, 4), 3), ((5, 2), 1), ((2, 5), 4), ((1000, 10), 2)]
    if hidden:
        cases += [((0, 3), 2), ((33, 6), 5), ((9, 1), 9)]
    formula = ("Block c covers rows c*step .. min(rows, (c+1)*step) - 1 with step = "
               "(rows + nblocks - 1) // nblocks. In `for c in prange(nblocks)`: set partial[c, :] "
               "to 0, then add each of the block's rows into partial[c, :].")
    for shape, nblocks in cases:
        with ck.case(f"x of shape {shape} in {nblocks} block(s)"):
            x = np.ascontiguousarray(np.round(rng.normal(size=shape), 3))
            x_before = x.copy()
            partial = _filled((nblocks, shape[1]))
            result = _call(ck, column_sums_blocked, x, partial)
            ck.check(np.array_equal(x, x_before), "your kernel changed its input x.",
                     hint="Write only into partial.")
            expected = np.stack([x_before[lo:hi].sum(axis=0)
                                 for lo, hi in _blocks(shape[0], nblocks)])
            floor_step = max(shape[0] // nblocks, 1)
            floor = np.stack([x_before[c * floor_step:(c + 1) * floor_step].sum(axis=0)
                              for c in range(nblocks)])
            last_only = np.stack([x_before[hi - 1] if hi > lo else np.zeros(shape[1])
                                  for lo, hi in _blocks(shape[0], nblocks)])
            hint = _unwritten_hint(partial, expected)
            if hint and nblocks > shape[0]:
                hint = ("A block with no rows must still be set to 0: zero partial[c, :] before "
                        "the loop over the block's rows.")
            ck.close(partial, expected, atol=1e-9, rtol=1e-9, what="content of partial",
                     hint=hint or formula,
                     mistakes=[(np.broadcast_to(x_before.sum(axis=0), expected.shape),
                                "Every block summed all the rows; block c adds only its own rows."),
                               (floor, "Rows are missing at the end: step = rows // nblocks "
                                "rounds down; use (rows + nblocks - 1) // nblocks."),
                               (last_only, "Each block holds only its last row: add with +=, "
                                "do not assign.")])
            ck.close(partial.sum(axis=0), x_before.sum(axis=0), atol=1e-9, rtol=1e-9,
                     what="partial.sum(axis=0)", hint=formula)
            ck.check(result is partial, "your kernel did not return partial.",
                     expected="the array partial itself", received=result,
                     hint="End with `return partial`.")
    _check_structure(ck, column_sums_blocked, "column_sums_blocked", {"x": 2, "partial": 2},
                     parallel=True)
    _check_runs_agree(ck, column_sums_blocked, "column_sums_blocked", rng,
                      repeats=8 if hidden else 5)
    ck.done()


# -- ch07-column-sums-wrapper ---------------------------------------------------------------
_WRAPPER_NAMES = ("column_sums_blocked", "_column_sums_serial", "PARALLEL_MIN_SIZE")
_WRAPPER_RULE = ("column_sums(x) makes x C-contiguous (np.ascontiguousarray), then: for "
                 "x.size >= PARALLEL_MIN_SIZE one block per thread (numba.get_num_threads()) with "
                 "column_sums_blocked; below it one block with _column_sums_serial. partial is "
                 "np.empty((nblocks, x.shape[1]), dtype=x.dtype); return its sum over axis 0.")


def _recording_kernel(kind: str, calls: list) -> Callable[..., Any]:
    """A stand-in for the blocked kernel: records how it was called, and fills ``partial``
    with the block sums (in numpy) only when ``partial`` has the shape the kernel needs."""
    def kernel(x: np.ndarray, partial: np.ndarray) -> np.ndarray:
        calls.append((kind, x, partial))
        if (isinstance(x, np.ndarray) and isinstance(partial, np.ndarray) and x.ndim == 2
                and partial.ndim == 2 and partial.shape[0] >= 1 and partial.shape[1] == x.shape[1]):
            for c, (lo, hi) in enumerate(_blocks(x.shape[0], partial.shape[0])):
                partial[c] = x[lo:hi].sum(axis=0)
        return partial
    return kernel


def ch07_column_sums_wrapper(column_sums: Callable[..., Any], *, seed: int = 0,
                             hidden: bool = False) -> None:
    """Check ``column_sums(x)``, the library's column sum on the blocked kernel: it picks the
    blocks by size (one per thread from ``PARALLEL_MIN_SIZE`` elements on, else one block on the
    serial copy), allocates ``partial`` of ``x``'s dtype, passes a C-contiguous ``x`` and returns
    the sum of the partial rows. The check swaps the two kernels for recording stand-ins to see
    how they are called, then runs ``column_sums`` on the learner's own kernels."""
    import numba
    ck = Checker("ch07-column-sums-wrapper", seed=seed, hidden=hidden)
    rng = ck.rng
    space = getattr(column_sums, "__globals__", None)
    if not callable(column_sums) or space is None:
        ck.fail("column_sums is not a Python function.",
                received=column_sums, hint="Pass the function column_sums itself.")
    missing = [name for name in _WRAPPER_NAMES if name not in space]
    ck.check(not missing, f"column_sums cannot see {', '.join(missing)}.",
             hint="Run the given lines of the cell (PARALLEL_MIN_SIZE, _column_sums_serial) and "
                  "the column_sums_blocked exercise above first.")
    threshold = int(space["PARALLEL_MIN_SIZE"])
    cols = 10
    big_rows = -(-threshold // cols)
    cases = [("a small x, shape (7, 4)", (7, 4), np.float64, False),
             (f"a large x, shape ({big_rows}, {cols}): at least PARALLEL_MIN_SIZE elements",
              (big_rows, cols), np.float64, False),
             ("a float32 x keeps its dtype", (50, 3), np.float32, False),
             ("a transposed (not C-contiguous) x", (6, 9), np.float64, True)]
    if hidden:
        cases += [("a large float32 x", (big_rows + 5, cols), np.float32, False),
                  ("a small x with one row", (1, 5), np.float64, False)]
    saved = {name: space[name] for name in _WRAPPER_NAMES[:2]}
    for name, shape, dtype, transposed in cases:
        with ck.case(name):
            x = np.round(rng.normal(size=shape[::-1] if transposed else shape), 3).astype(dtype)
            if transposed:
                x = x.T
            calls: list = []
            space["column_sums_blocked"] = _recording_kernel("column_sums_blocked", calls)
            space["_column_sums_serial"] = _recording_kernel("_column_sums_serial", calls)
            try:
                got = ck.call(column_sums, x, hint=_WRAPPER_RULE)
            finally:
                space.update(saved)
            ck.check(len(calls) == 1, f"column_sums called the kernels {len(calls)} times.",
                     expected="one call: column_sums_blocked or _column_sums_serial",
                     received=[kind for kind, *_ in calls], hint=_WRAPPER_RULE)
            kind, x_in, partial = calls[0]
            large = x.size >= threshold
            want_kind = "column_sums_blocked" if large else "_column_sums_serial"
            nblocks = numba.get_num_threads() if large else 1
            ck.check(kind == want_kind, f"x has {x.size} elements and column_sums called {kind}.",
                     expected=want_kind, received=kind,
                     hint=(f"From PARALLEL_MIN_SIZE = {threshold} elements on, threads pay: use "
                           "column_sums_blocked with one block per thread." if large else
                           f"Below PARALLEL_MIN_SIZE = {threshold} elements, waking threads costs "
                           "more than they save (section 7): call _column_sums_serial, with one "
                           "block."))
            ck.check(isinstance(partial, np.ndarray) and partial.ndim == 2
                     and partial.shape[1:] == (shape[1],),
                     f"partial has shape {getattr(partial, 'shape', None)}, but x has "
                     f"{shape[1]} columns.", expected=f"({nblocks}, {shape[1]})",
                     received=getattr(partial, "shape", partial),
                     hint="partial has one row per block and one column per column of x: "
                          "np.empty((nblocks, x.shape[1]), dtype=x.dtype).")
            ck.check(partial.shape[0] == nblocks, f"partial has {partial.shape[0]} block(s).",
                     expected=nblocks, received=partial.shape[0],
                     hint=("One block per thread: nblocks = numba.get_num_threads()." if large
                           else "Below PARALLEL_MIN_SIZE the serial kernel gets a single block."))
            ck.check(partial.dtype == x.dtype, f"partial is {partial.dtype} for a {x.dtype} x.",
                     expected=str(x.dtype), received=str(partial.dtype),
                     hint="Allocate partial with dtype=x.dtype, so a float32 x is summed in "
                          "float32 (as x.sum(axis=0)) and numba compiles one version per dtype.")
            ck.check(isinstance(x_in, np.ndarray) and x_in.flags.c_contiguous,
                     "the kernel got an x that is not C-contiguous.",
                     hint="The kernel reads x row by row, in the order it lies in memory; pass "
                          "np.ascontiguousarray(x), which copies only when it has to.")
            expected = x.sum(axis=0)
            ck.check(got is not partial and np.shape(got) != partial.shape,
                     f"column_sums returned an array of shape {np.shape(got)}, the shape of "
                     "partial.", expected=f"shape {expected.shape}", received=f"shape {np.shape(got)}",
                     hint="partial holds one row of sums per block: return the sum of its rows, "
                          "partial.sum(axis=0).")
            ck.close(got, expected, atol=1e-4 if dtype == np.float32 else 1e-9, rtol=1e-5,
                     what="column sums", hint=_WRAPPER_RULE)
            ck.check(np.asarray(got).dtype == x.dtype, f"the sums are {np.asarray(got).dtype} "
                     f"for a {x.dtype} x.", expected=str(x.dtype),
                     received=str(np.asarray(got).dtype), hint="Keep x's dtype, as x.sum(axis=0).")
    with ck.case("on your own kernels: small and large x give x.sum(axis=0)"):
        for shape in [(9, 3), (big_rows, cols)]:
            x = np.round(rng.normal(size=shape), 3)
            got = _call(ck, column_sums, x)
            ck.close(got, x.sum(axis=0), atol=1e-8, rtol=1e-9, what=f"column sums of a {shape} x",
                     hint=_WRAPPER_RULE)
    ck.done()


# -- ch07-softmax-ce-function ---------------------------------------------------------------
_SCE_RULE = ("forward runs cross_entropy_rows on a C-contiguous copy of logits.data with a new "
             "grad array, saves logits, keeps ctx.targets and ctx.grad = grad / N, and returns "
             "the mean loss (the kernel's sum / N) as a Variable; backward (not recorded) returns "
             "ctx.grad times grad_output, and None for the targets.")


def ch07_softmax_ce_function(SoftmaxCrossEntropy: type[Any], Variable: type[Any], *, seed: int = 0,
                             hidden: bool = False) -> None:
    """Check ``SoftmaxCrossEntropy``, the Function behind ``softmax_cross_entropy``: its
    forward gives the mean cross-entropy of (N, C) logits by the fused kernel, and the gradient
    of the logits is (softmax - onehot) / N times the incoming gradient, without and with
    ``create_graph=True`` (where the given recorded branch reads ``ctx.targets``)."""
    ck = Checker("ch07-softmax-ce-function", seed=seed, hidden=hidden)
    rng = ck.rng
    ck.check(isinstance(SoftmaxCrossEntropy, type) and hasattr(SoftmaxCrossEntropy, "apply"),
             "SoftmaxCrossEntropy is not a Function class.", received=SoftmaxCrossEntropy,
             hint="Pass the class itself (not an instance, not .apply).")
    cases = [((4, 3), 1.0, False), ((6, 5), 2.5, False), ((5, 4), 0.5, True)]
    if hidden:
        cases += [((1, 1), 3.0, False), ((9, 7), -1.5, True)]
    for shape, scale, transposed in cases:
        name = f"a {shape} batch{' (transposed, not C-contiguous)' if transposed else ''}, " \
               f"incoming gradient {scale:g}"
        with ck.case(name):
            x = np.round(2 * rng.normal(size=shape[::-1] if transposed else shape), 3)
            x = x.T if transposed else x
            t = rng.integers(0, shape[1], size=shape[0]).astype(np.int64)
            logits = Variable(x.copy(), requires_grad=True)
            loss = ck.call(SoftmaxCrossEntropy.apply, logits, t, hint=_SCE_RULE)
            ck.check(isinstance(loss, Variable), "apply did not return a Variable.", received=loss,
                     hint="forward returns Variable(the mean loss).")
            rows = np.arange(shape[0])
            m = x.max(axis=1, keepdims=True)
            lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
            mean = float((lse - x[rows, t]).mean())
            ck.close(np.asarray(loss.data, dtype=np.float64).reshape(()), mean, rtol=1e-10,
                     atol=1e-12, what="loss",
                     mistakes=[(mean * shape[0], "This is the SUM over the rows, which is what the "
                                "kernel returns: divide it by N, the number of rows.")]
                     if shape[0] > 1 else [],
                     hint=_SCE_RULE)
            ck.call(loss.backward, Variable(np.array(scale)), hint=_SCE_RULE)
            want = _softmax(x)
            want[rows, t] -= 1.0
            per_row = want.copy()
            want = want / shape[0] * scale
            got = None if logits.grad is None else np.asarray(logits.grad.data)
            ck.check(got is not None, "logits.grad is None after backward.",
                     hint="backward returns the gradient of the logits first, then None for "
                          "the targets.")
            mistakes = [(per_row * scale, "The gradient is not divided by N: the kernel writes "
                         "softmax - onehot per row, and the loss is the MEAN over N rows."),
                        (want / scale, "Multiply by grad_output (the chain rule): "
                         "ctx.grad * grad_output.item().")] if shape[0] > 1 else []
            if scale != 1.0 and shape[0] == 1:
                mistakes = [(want / scale, "Multiply by grad_output (the chain rule).")]
            ck.close(got, want, rtol=1e-9, atol=1e-12, what="gradient of the logits",
                     mistakes=mistakes, hint=_SCE_RULE)
    with ck.case("with create_graph=True: the recorded branch gives the same gradient"):
        x = np.round(rng.normal(size=(4, 3)), 3)
        t = np.array([0, 2, 1, 2], dtype=np.int64)
        logits = Variable(x.copy(), requires_grad=True)
        loss = ck.call(SoftmaxCrossEntropy.apply, logits, t, hint=_SCE_RULE)
        try:
            loss.backward(create_graph=True)
        except AttributeError as err:
            raise ck.error(f"backward with create_graph=True raised AttributeError: {err}",
                           hint="The given recorded branch of backward reads ctx.targets: keep "
                                "the targets on ctx in forward (ctx.targets = targets).") from err
        except NotImplementedError as err:
            raise ck._not_done(err) from None
        want = _softmax(x)
        want[np.arange(4), t] -= 1.0
        ck.close(np.asarray(logits.grad.data), want / 4, rtol=1e-9, atol=1e-12,
                 what="gradient of the logits (create_graph=True)", hint=_SCE_RULE)
    ck.done()


# -- ch07-relu-function ----------------------------------------------------------------------
_RELU_RULE = ("forward saves x and runs affine_relu_forward (a = 1, b = 0) on x.data flattened "
              "into a C-contiguous 1-d array, returning a Variable of x's shape; backward (not "
              "recorded) runs affine_relu_backward on the flattened x and grad_output and returns "
              "grad_x in x's shape.")


def ch07_relu_function(ReLU: type[Any], Variable: type[Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``ReLU``, the Function behind ``Variable.relu``: values max(x, 0) in x's shape and
    dtype, and the gradient grad_output * (x > 0) (0 at x = 0), on 1-d, 2-d and transposed
    inputs; with ``create_graph=True`` the given recorded branch gives the same gradient."""
    ck = Checker("ch07-relu-function", seed=seed, hidden=hidden)
    rng = ck.rng
    ck.check(isinstance(ReLU, type) and hasattr(ReLU, "apply"), "ReLU is not a Function class.",
             received=ReLU, hint="Pass the class itself (not an instance, not .apply).")
    cases = [("a (6,) input", (6,), False, np.float64), ("a (3, 4) input", (3, 4), False, np.float64),
             ("a transposed (4, 3) input (not C-contiguous)", (4, 3), True, np.float64)]
    if hidden:
        cases += [("a float32 (2, 3, 2) input", (2, 3, 2), False, np.float32)]
    for name, shape, transposed, dtype in cases:
        with ck.case(name + ": values and gradient"):
            data = np.round(rng.normal(size=shape[::-1] if transposed else shape), 2).astype(dtype)
            data = data.T if transposed else data
            data.flat[0] = 0.0                     # relu'(0) = 0
            x = Variable(data.copy(), requires_grad=True)
            y = ck.call(ReLU.apply, x, hint=_RELU_RULE)
            ck.check(isinstance(y, Variable), "apply did not return a Variable.", received=y,
                     hint="forward returns a Variable.")
            got = np.asarray(y.data)
            ck.check(got.shape == shape, f"relu(x) has shape {got.shape}, x has shape {shape}.",
                     expected=shape, received=got.shape,
                     hint="The kernel works on the flattened array: reshape its result to x's "
                          "shape (.reshape(x.shape)).")
            ck.close(got, np.maximum(data, 0), atol=0, rtol=0, what="relu(x)", hint=_RELU_RULE)
            ck.check(got.dtype == data.dtype, f"relu(x) is {got.dtype} for a {data.dtype} x.",
                     hint="Give the kernel an output of x's dtype (np.empty_like of the "
                          "flattened x).")
            g = np.round(rng.uniform(0.5, 2.0, size=shape), 2).astype(dtype)
            ck.call(y.backward, Variable(g), hint=_RELU_RULE)
            gx = None if x.grad is None else np.asarray(x.grad.data)
            if gx is None:
                ck.fail("x.grad is None after backward.",
                        hint="backward returns the gradient of x.")
            ck.check(gx.shape == shape, f"x.grad has shape {gx.shape}, x has shape {shape}.",
                     expected=shape, received=gx.shape,
                     hint="The backward kernel writes a flat grad_x: reshape it to x's shape.")
            want = g * (data > 0)
            ck.close(gx, want, atol=0, rtol=0, what="x.grad",
                     mistakes=[((data > 0) * 1.0, "Pass grad_output to the backward kernel (the "
                                "chain rule): x.grad is grad_output where x > 0.")],
                     hint=_RELU_RULE)
    with ck.case("with create_graph=True: the recorded branch gives the same gradient"):
        data = np.array([[-1.0, 0.0, 2.0], [0.5, -0.25, 3.0]])
        x = Variable(data.copy(), requires_grad=True)
        y = ck.call(ReLU.apply, x, hint=_RELU_RULE)
        try:
            y.sum().backward(create_graph=True)
        except (AttributeError, ValueError) as err:
            raise ck.error(f"backward with create_graph=True raised {type(err).__name__}: {err}",
                           hint="The given recorded branch reads x from ctx.saved_tensors: save "
                                "x in forward (ctx.save_for_backward(x)).") from err
        except NotImplementedError as err:
            raise ck._not_done(err) from None
        ck.close(np.asarray(x.grad.data), (data > 0) * 1.0, atol=0, rtol=0,
                 what="x.grad (create_graph=True)", hint=_RELU_RULE)
    ck.done()


# -- the learner's mygrad/kernels.py ----------------------------------------------------------
def mygrad_kernels(pkg: Any) -> None:
    """The loader's check of ``mygrad/kernels.py``: every kernel agrees with its numpy
    reference, and the operations wired on them (``Variable.relu``, ``softmax_cross_entropy``)
    give the references' values and gradients, also under ``create_graph=True``.

    The kernels are compiled on first use (a few seconds), so the check calls only those the
    operations of later chapters run on, with small float64 inputs (one signature each); the
    exercise checkers of chapter 07 test every kernel on its own."""
    from numba.core.errors import NumbaWarning
    ck = Checker("mygrad-kernels")
    rng = np.random.default_rng(7)
    x2 = np.round(rng.normal(size=(5, 4)), 3)
    targets = np.array([0, 3, 1, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaWarning)
        with ck.case("the kernels behind the operations agree with their numpy references"):
            grad = _filled(x2.shape)
            loss = ck.call(pkg.cross_entropy_rows, x2, targets, grad)
            ref_loss, ref_grad = pkg.cross_entropy_rows_ref(x2, targets)
            ck.close(np.array([loss, *grad.ravel()]), np.array([ref_loss, *ref_grad.ravel()]),
                     atol=1e-12, what="cross_entropy_rows vs cross_entropy_rows_ref")
            ck.close(ck.call(pkg.column_sums, x2), pkg.column_sums_ref(x2), atol=1e-12,
                     what="column_sums vs column_sums_ref")
        with ck.case("Variable.relu runs the kernel: values and gradient of max(x, 0)"):
            x = pkg.Variable(np.array([[-1.5, 0.0, 2.0], [0.5, -0.25, 3.0]]), requires_grad=True)
            y = ck.call(x.relu)
            ck.close(y.data, np.maximum(x.data, 0), what="x.relu()")
            ck.check(type(y.grad_fn).__name__ == "ReLUBackward",
                     "x.relu() is not recorded as a ReLU node.", received=repr(y.grad_fn),
                     hint="Variable.relu = lambda self: ReLU.apply(self), with the ReLU Function "
                          "of section 8 (exercise ch07-relu-function).")
            ck.call(y.sum().backward)
            ck.close(x.grad.data, (x.data > 0) * 1.0, what="x.grad (relu'(0) is 0)")
        with ck.case("SoftmaxRows runs softmax_rows: values and gradient of each row's softmax"):
            ck.check(hasattr(pkg, "SoftmaxRows"), "mygrad/kernels.py has no SoftmaxRows.",
                     hint="Run the cell of section 8 that defines ReLU and SoftmaxRows again: "
                          "it writes them into the module.")
            x = pkg.Variable(x2.copy(), requires_grad=True)
            y = ck.call(pkg.SoftmaxRows.apply, x)
            ck.close(y.data, pkg.softmax_rows_ref(x2), atol=1e-12, what="SoftmaxRows(x)")
            g = np.round(rng.normal(size=x2.shape), 3)
            ck.call(y.backward, pkg.Variable(g))
            p = pkg.softmax_rows_ref(x2)
            ck.close(x.grad.data, p * (g - (g * p).sum(axis=1, keepdims=True)), atol=1e-12,
                     what="gradient of SoftmaxRows",
                     hint="backward: y * (g - (g * y).sum(axis=1, keepdims=True)) with y the "
                          "softmax the forward computed.")
        with ck.case("softmax_cross_entropy: mean loss and gradient of the references"):
            logits = pkg.Variable(x2, requires_grad=True)
            loss = ck.call(pkg.softmax_cross_entropy, logits, targets)
            ck.close(loss.data, ref_loss / 5, atol=1e-12, what="mean cross-entropy")
            ck.call(loss.backward)
            ck.close(logits.grad.data, ref_grad / 5, atol=1e-12, what="gradient of the logits")
            ck.raises(IndexError, pkg.softmax_cross_entropy, pkg.Variable(x2),
                      np.array([0, 4, 1, 1, 2]),
                      hint="Check that every target lies in 0..classes-1 before calling the kernel.")
        with ck.case("under create_graph=True the gradients can be differentiated again"):
            z = pkg.Variable(x2, requires_grad=True)
            loss = pkg.softmax_cross_entropy(z.relu() * 2.0, targets)
            ck.call(loss.backward, create_graph=True,
                    hint="Under create_graph=True (GradMode.enabled in backward) use the "
                         "Variable formula instead of the kernel.")
            ck.check(z.grad is not None and z.grad.grad_fn is not None,
                     "with create_graph=True the gradient has no history: a kernel's numpy "
                     "backward cannot be recorded.",
                     hint="In backward, if GradMode.enabled: return the gradient computed with "
                          "Variable operations (e.g. softmax(logits) - onehot, times "
                          "grad_output / n).")
    ck.done()


# -- ch07-cross-entropy-rows ----------------------------------------------------------------
def ch07_cross_entropy_rows(cross_entropy_rows: Callable[..., Any], *, seed: int = 0,
                            hidden: bool = False) -> None:
    """Check the fused kernel ``cross_entropy_rows(x, targets, grad)``: for logits ``x`` (N, C)
    and one class index per row, return the SUMMED loss, sum_i (log sum_j exp x[i, j] -
    x[i, t_i]), computed stably (the row maximum subtracted before exp), and write
    ``grad[i] = softmax(x[i]) - onehot(t_i)``, leaving ``x`` unchanged."""
    ck = Checker("ch07-cross-entropy-rows", seed=seed, hidden=hidden)
    rng = ck.rng
    _check_kernel(ck, cross_entropy_rows, "cross_entropy_rows")
    cases = [("a (4, 3) batch", np.round(rng.normal(size=(4, 3)), 3)),
             ("a (5, 10) batch", np.round(2 * rng.normal(size=(5, 10)), 3)),
             ("logits of +-1000 (exp would overflow without the shift)",
              np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.0]]))]
    if hidden:
        cases += [("a (9, 7) batch, scale 300", 300 * rng.normal(size=(9, 7))),
                  ("one row, one class", np.array([[2.5]]))]
    for name, x in cases:
        with ck.case(name):
            x = np.ascontiguousarray(x, dtype=np.float64)
            t = rng.integers(0, x.shape[1], size=x.shape[0]).astype(np.int64)
            before = x.copy()
            grad = _filled(x.shape)
            shift = ("exp overflowed (or every exp underflowed to 0): subtract the row maximum "
                     "m before exp and add it back, loss_i = log(sum_j exp(x[i, j] - m)) + m - "
                     "x[i, t_i]; then no exp exceeds 1 and the largest is exactly 1.")
            try:
                with np.errstate(all="ignore"):
                    total = _call(ck, cross_entropy_rows, x, t, grad)
            except AssertionError as err:
                if "OverflowError" in str(err) or "ZeroDivisionError" in str(err):
                    ck.fail(f"your kernel failed on these logits: {str(err).splitlines()[0]}",
                            hint=shift)
                raise
            m = before.max(axis=1, keepdims=True)
            lse = np.log(np.exp(before - m).sum(axis=1)) + m[:, 0]
            rows = np.arange(len(t))
            per_row = lse - before[rows, t]
            expected = float(per_row.sum())
            want_grad = _softmax(before)
            want_grad[rows, t] -= 1.0
            ck.check(np.array_equal(x, before), "your kernel changed its input x.",
                     hint="Keep the row maximum in a local variable; write only into grad.")
            got = float(np.asarray(total, dtype=np.float64))
            ck.check(np.isfinite(got) or not np.isfinite(expected), "the loss is inf or nan.",
                     expected=expected, received=got, hint=shift)
            ck.close(got, expected, rtol=1e-9, atol=1e-9, what="the summed loss",
                     hint="Per row: loss_i = log(sum_j exp(x[i, j] - m)) + m - x[i, t_i]; "
                          "return the sum over the rows.",
                     mistakes=[(expected / len(t), "You returned the mean: the kernel returns "
                                "the SUM over the rows (the Function divides by N)."),
                               (-expected, "The sign is wrong: the loss is log-sum-exp MINUS "
                                "the target's logit.")])
            hint = _unwritten_hint(grad, want_grad) or (
                shift if not np.isfinite(grad).all() else
                "grad[i, j] = exp(x[i, j] - m) / s, then grad[i, t_i] -= 1.")
            ck.close(grad, want_grad, rtol=1e-9, atol=1e-12, what="grad", hint=hint,
                     mistakes=[(_softmax(before), "grad is the softmax: subtract 1 at each "
                                "row's target class, grad[i, t_i] -= 1 (softmax - onehot)."),
                               (want_grad / len(t), "Leave grad per row, without dividing by "
                                "N: the Function scales it by 1/N.")])
    _check_structure(ck, cross_entropy_rows, "cross_entropy_rows", {"x": 2, "grad": 2})
    ck.done()
