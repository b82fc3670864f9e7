"""The compiled input scans (``skbandit/_core/_scores.h``) at every position of
arrays long enough for their vectorised loops (eight values, four indices per
iteration, then a scalar tail): one offending entry anywhere must be found.

``within_bound(v, b)`` is ``max_abs(v) <= b``; ``check_csr_canonical`` names an
out-of-range column index and counts a non-increasing index inside a row (a
descent or a duplicate) as not canonical, one at a row start as canonical, in
arrays of one step of its scan and of many.
``rows_nnz(indptr, rows)`` is NumPy's ``sum(indptr[rows + 1] - indptr[rows])``
(the bytes of a block of rows, ``skbandit._base._rows._input_bytes``)."""

from __future__ import annotations

import numpy as np
import pytest

from skbandit._core._scans import (
    SCAN_STEP,
    check_csr_canonical,
    csr_is_canonical,
    max_abs,
    rows_nnz,
    within_bound,
)


@pytest.mark.parametrize("n", range(0, 41))
def test_within_bound_finds_an_entry_at_every_position(n):
    rng = np.random.default_rng(n)
    bound = 1e6
    v = rng.uniform(-bound, bound, size=n)
    v[rng.random(n) < 0.2] = bound  # at the bound: within
    assert within_bound(v, bound)
    for pos in range(n):
        for bad in (np.nextafter(bound, np.inf), -2 * bound, np.inf, -np.inf, np.nan):
            w = v.copy()
            w[pos] = bad
            assert not within_bound(w, bound), (n, pos, bad)
            assert within_bound(w, bound) == (max_abs(w) <= bound)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", range(1, 41))
def test_index_scan_finds_a_problem_at_every_position(dtype, n):
    n_cols = 100
    ind = np.sort(np.random.default_rng(n).choice(n_cols, size=n, replace=False))
    ind = ind.astype(dtype)
    one_row = np.array([0, n], dtype)
    assert check_csr_canonical(one_row, ind, n, 1, n_cols) == ("", True)
    assert csr_is_canonical(one_row, ind)
    for pos in range(n):
        for bad in (n_cols, -1, 2**31 - 1):
            w = ind.copy()
            w[pos] = bad
            problem, canonical = check_csr_canonical(one_row, w, n, 1, n_cols)
            assert f"column index {bad} at position {pos}" in problem
            assert not canonical
        if pos == 0:
            continue
        for step in (0, 1):  # a duplicate, a descent
            w = ind.copy()
            w[pos] = w[pos - 1] - step
            if w[pos] < 0:
                continue
            assert check_csr_canonical(one_row, w, n, 1, n_cols) == ("", False), pos
            assert not csr_is_canonical(one_row, w)
            # the same position starting a row: canonical
            two_rows = np.array([0, pos, n], dtype)
            got = check_csr_canonical(two_rows, w, n, 2, n_cols)
            expected = bool(
                np.all(np.diff(w[:pos]) > 0) and np.all(np.diff(w[pos:]) > 0)
            )
            assert got == ("", expected), pos
            assert csr_is_canonical(two_rows, w) == expected


def _rows_canonical(indptr, indices):
    """The reference: every row's column indices strictly increasing (each
    position's index above the previous one, unless the position starts a
    row)."""
    starts = np.zeros(indices.shape[0] + 1, dtype=bool)
    starts[indptr] = True
    return bool(np.all((np.diff(indices) > 0) | starts[1:-1]))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize(
    "layout", ["many rows", "one long row in the middle", "empty rows start the steps"]
)
def test_canonical_rows_over_many_scan_steps(dtype, layout):
    """Matrices of several of the scan's steps of whole rows (about 4,096
    entries each), empty rows included: a duplicate or a descent at any
    position is found inside a row (not canonical) and ignored at a row start
    (canonical, when the row itself stays increasing), an out-of-range index
    at any position is named, as the reference per row says."""
    rng = np.random.default_rng(1)
    n_cols = 60
    lengths = rng.integers(0, 13, size=1500)
    lengths[rng.random(1500) < 0.1] = 0
    if layout == "one long row in the middle":
        lengths[700] = n_cols  # one row of every column, among short ones
    if layout == "empty rows start the steps":
        # an empty row where each step starts (the first entry of a step is
        # then also the start of the non-empty row after it)
        out, total, step_start = [0], 0, 0
        for m in lengths:
            if total - step_start >= SCAN_STEP:
                out.append(0)
                step_start = total
            out.append(m)
            total += m
        lengths = np.array(out)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(dtype)
    indices = np.concatenate(
        [np.sort(rng.choice(n_cols, size=m, replace=False)) for m in lengths]
    ).astype(dtype)
    nnz, n_rows = indices.shape[0], lengths.shape[0]
    assert nnz > 2 * 4096
    assert check_csr_canonical(indptr, indices, nnz, n_rows, n_cols) == ("", True)
    assert csr_is_canonical(indptr, indices)
    starts = set(indptr.tolist())
    for pos in range(1, nnz):
        w = indices.copy()
        w[pos] = w[pos - 1]  # a duplicate inside a row, a descent at a start
        expected = _rows_canonical(indptr, w)
        assert pos in starts or not expected
        got = check_csr_canonical(indptr, w, nnz, n_rows, n_cols)
        assert got == ("", expected), pos
        assert csr_is_canonical(indptr, w) == expected, pos
    for pos in range(0, nnz, 7):
        w = indices.copy()
        w[pos] = n_cols
        problem, canonical = check_csr_canonical(indptr, w, nnz, n_rows, n_cols)
        assert f"column index {n_cols} at position {pos}" in problem
        assert not canonical


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_rows_nnz_counts_the_stored_entries_of_the_rows(dtype):
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 7, size=50)
    lengths[[0, 17, 49]] = 0  # empty rows, the first and the last among them
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(dtype)
    for rows in (
        np.arange(50),
        rng.permutation(50),
        rng.integers(0, 50, size=80),  # repeated rows count each time
        np.array([49]),
        np.array([0]),
        np.array([], dtype=np.int32),
    ):
        rows = rows.astype(np.int32)
        expected = int(np.sum(indptr[rows + 1] - indptr[rows]))
        assert rows_nnz(indptr, rows) == expected
    for bad in (-1, 50):
        with pytest.raises(IndexError, match=f"row {bad} out of range for 50 rows"):
            rows_nnz(indptr, np.array([3, bad], dtype=np.int32))
