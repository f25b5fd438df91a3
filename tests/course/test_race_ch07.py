"""Chapter 07's column-sum check catches races.

The kernel from the report: a prange over the *rows*, each row adding into the partial row of
its block, ``partial[i // step, j]``. Rows of one block run on different threads at the same
time, so their ``+=`` overwrite each other and the totals are wrong in some runs (not all: a
run where the threads happen not to meet gives the right sums). The check must fail on it
every time, with a hint that names the race; the static part (which writes a prange body
makes) decides that, and the repeated runs on several shapes, block counts and thread counts
back it up for races the source does not show.
"""
from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest
from numba import config, njit, prange

from autograd_lab.course.exercises import ch07, check

from ._ch07_key import KEY
from ._checker_helpers import failure


def racy_rows(x, partial):
    """The report's race: block c's rows, spread over threads, all add into partial[c]."""
    rows, cols = x.shape
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in range(nblocks):
        for j in range(cols):
            partial[c, j] = 0.0
    for i in prange(rows):
        for j in range(cols):
            partial[i // step, j] += x[i, j]
    return partial


def racy_shared_row(x, partial):
    """Every row adds into one shared accumulator row: a race on acc[j]."""
    rows, cols = x.shape
    partial[...] = 0.0
    acc = partial[0]
    for i in prange(rows):
        for j in range(cols):
            acc[j] += x[i, j]
    return partial


def private_buffer(x, partial):
    """A row made inside the iteration belongs to it: writing it is no race."""
    rows, cols = x.shape
    nblocks = partial.shape[0]
    step = (rows + nblocks - 1) // nblocks
    for c in prange(nblocks):
        acc = np.zeros(cols)
        for i in range(c * step, min(rows, (c + 1) * step)):
            for j in range(cols):
                acc[j] += x[i, j]
        for j in range(cols):
            partial[c, j] = acc[j]
    return partial


def _compiled(fn):
    return fn if config.DISABLE_JIT else njit(parallel=True)(fn)


def _writes(fn):
    return ch07._racy_writes(ch07._source_tree(fn))


def test_the_reported_race_fails_with_a_hint_naming_the_race():
    message = failure(check.ch07_column_sums, _compiled(racy_rows))
    assert "ch07-column-sums" in message
    assert "race" in message and "partial[i // step, j]" in message
    assert "for c in prange(nblocks)" in message      # the hint says how to fix it


@pytest.mark.parametrize("hidden", [False, True])
def test_the_race_fails_on_every_run(hidden):
    kernel = _compiled(racy_rows)
    for seed in range(3):
        assert "race" in failure(check.ch07_column_sums, kernel, seed=seed, hidden=hidden)


def test_a_shared_accumulator_row_is_a_race():
    assert _writes(racy_shared_row) == [("acc[j]", "i")]
    assert "race" in failure(check.ch07_column_sums, _compiled(racy_shared_row))


def test_the_static_check_passes_own_slots_and_private_arrays():
    assert _writes(KEY.column_sums_blocked) == []
    assert _writes(private_buffer) == []      # (the temporaries check rejects np.zeros here)
    check.ch07_column_sums(KEY.column_sums_blocked, hidden=True)


@pytest.mark.parametrize("source, writes", [
    ("for i in prange(n):\n    out[i] = 1.0", []),
    ("for i in prange(n):\n    out[i, j], other[i] = 1.0, 2.0", []),
    ("for i in prange(n):\n    out[i + 1] = 1.0", [("out[i + 1]", "i")]),
    ("for i in prange(n):\n    out[0] += x[i]", [("out[0]", "i")]),
    ("for c in prange(n):\n    for i in range(m):\n        out[i] = c", [("out[i]", "c")]),
    ("for i in range(n):\n    out[i // 2] += 1.0", []),                # serial: no race
])
def test_the_static_check_reads_prange_bodies(source, writes):
    tree = ast.parse("def k(out, x, n, m, j):\n" + textwrap.indent(source, "    "))
    assert ch07._racy_writes(tree.body[0]) == writes


def test_repeated_runs_catch_results_that_change_from_run_to_run(monkeypatch):
    """The dynamic part on its own: a kernel whose source shows no race but whose results differ
    between runs (as a race's do) fails on the repeated runs, with the race named."""
    if config.DISABLE_JIT:
        pytest.skip("the repeated runs need compiled kernels: a plain loop cannot race")
    kernel = _compiled(KEY.column_sums_blocked.py_func)
    calls = {"n": 0}

    def flaky(x, partial):
        calls["n"] += 1
        kernel(x, partial)
        if calls["n"] % 4 == 0 and x.shape[0] > 1000:     # one run in four loses a row
            partial[-1] -= x[-1]
        return partial

    flaky.py_func = kernel.py_func                         # passes as the compiled kernel
    flaky.targetoptions = kernel.targetoptions
    message = failure(check.ch07_column_sums, flaky)
    assert "differed from the serial sums" in message and "race" in message


def test_the_thread_count_is_restored():
    if config.DISABLE_JIT:
        pytest.skip("no threads without the JIT")
    import numba
    before = numba.get_num_threads()
    check.ch07_column_sums(KEY.column_sums_blocked, hidden=True)
    assert numba.get_num_threads() == before
