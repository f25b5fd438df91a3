"""ch07-column-sums-wrapper: ``column_sums(x)`` picks the blocks by size, gives the blocked kernel a
C-contiguous ``x`` and a ``partial`` of ``x``'s dtype, and returns the sum of the partial rows.

The checker swaps the kernels for recording stand-ins, so each typical mistake below is named by
its cause (which kernel, how many blocks, which dtype, which layout), not by a wrong number.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest

from autograd_lab.course.exercises import check

from ._ch07_key import KEY as kernels
from ._checker_helpers import SEEDS, failure

PARALLEL_MIN_SIZE = kernels.PARALLEL_MIN_SIZE
column_sums_blocked = kernels.column_sums_blocked
_column_sums_serial = kernels._column_sums_serial


def _pick(x):
    large = x.size >= PARALLEL_MIN_SIZE
    return (column_sums_blocked, numba.get_num_threads()) if large else (_column_sums_serial, 1)


def column_sums(x):
    x = np.ascontiguousarray(x)
    kernel, nblocks = _pick(x)
    return kernel(x, np.empty((nblocks, x.shape[1]), dtype=x.dtype)).sum(axis=0)


def returns_partial(x):
    x = np.ascontiguousarray(x)
    kernel, nblocks = _pick(x)
    return kernel(x, np.empty((nblocks, x.shape[1]), dtype=x.dtype))


def float64_partial(x):
    x = np.ascontiguousarray(x)
    kernel, nblocks = _pick(x)
    return kernel(x, np.empty((nblocks, x.shape[1]))).sum(axis=0)


def always_parallel(x):
    x = np.ascontiguousarray(x)
    return column_sums_blocked(x, np.empty((numba.get_num_threads(), x.shape[1]), dtype=x.dtype)).sum(axis=0)


def never_parallel(x):
    x = np.ascontiguousarray(x)
    return _column_sums_serial(x, np.empty((1, x.shape[1]), dtype=x.dtype))[0]


def strided_x(x):
    kernel, nblocks = _pick(x)
    return kernel(x, np.empty((nblocks, x.shape[1]), dtype=x.dtype)).sum(axis=0)


def rows_for_columns(x):
    x = np.ascontiguousarray(x)
    kernel, nblocks = _pick(x)
    return kernel(x, np.empty((nblocks, x.shape[0]), dtype=x.dtype)).sum(axis=0)


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_the_keys_wrapper_passes(seed, hidden, capsys):
    check.ch07_column_sums_wrapper(column_sums, seed=seed, hidden=hidden)
    check.ch07_column_sums_wrapper(kernels.column_sums, seed=seed, hidden=hidden)
    assert capsys.readouterr().out.count("cases of ch07-column-sums-wrapper passed") == 2


@pytest.mark.parametrize("wrong,words", [
    (returns_partial, "partial.sum(axis=0)"),
    (float64_partial, "dtype=x.dtype"),
    (always_parallel, "call _column_sums_serial"),
    (never_parallel, "one block per thread"),
    (strided_x, "not C-contiguous"),
    (rows_for_columns, "one column per column of x"),
], ids=lambda v: getattr(v, "__name__", None))
def test_typical_mistakes_get_a_hint_naming_their_cause(wrong, words):
    message = failure(check.ch07_column_sums_wrapper, wrong)
    assert message.startswith("Exercise ch07-column-sums-wrapper failed") and words in message, message


def test_the_kernels_are_put_back_after_the_check():
    space = column_sums.__globals__
    before = (space["column_sums_blocked"], space["_column_sums_serial"])
    failure(check.ch07_column_sums_wrapper, returns_partial)
    check.ch07_column_sums_wrapper(column_sums)
    assert (space["column_sums_blocked"], space["_column_sums_serial"]) == before


def test_a_stub_is_reported_as_not_done():
    def stub(x):
        raise NotImplementedError("Exercise ch07-column-sums-wrapper: write your code here")
    with pytest.raises(NotImplementedError, match="ch07-column-sums-wrapper is not done yet"):
        check.ch07_column_sums_wrapper(stub)
