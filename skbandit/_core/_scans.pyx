"""The compiled input scans and checks shared by every learner's validation
(``check_csr``, ``check_csr_canonical``, ``csr_is_canonical``, ``rows_nnz``,
``within_bound``, ``max_abs``), and the Python-callable twins of the shared
tie-breaking argmax and inverse-CDF draws of _kernel.pxd (``py_argmax_ties``,
``py_sample_inverse_cdf``, ``py_sample_checked``) and of the shared class
scores (``py_linear_scores``, from _linear_scores.pxi). The row forms and the
pass drivers are in _drivers.pyx, the journal and base kernels in
_kernel.pyx."""


from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.math cimport INFINITY, fabs

import numpy as np

from skbandit._core._kernel cimport (
    argmax_ties,
    sample_checked,
    sample_inverse_cdf,
    skb_linear_scores,
    skb_scan_indices_i32,
    skb_scan_indices_i64,
    skb_within_bound,
)


# (index_t, the fused CSR index type, and _csr_problem are declared in
# _scans.pxd)


cdef Py_ssize_t _scan_indices(const index_t* indices, Py_ssize_t nnz,
                              Py_ssize_t n_cols, bint* out_of_range) noexcept nogil:
    """One compiled scan of ``indices[:nnz]`` (``skb_scan_indices_*``): flags a
    column index that may be outside ``[0, n_cols)`` (a bound above the index
    type's range is clamped; the caller confirms a flag exactly) and returns
    the number of positions ``j >= 1`` with ``indices[j] <= indices[j - 1]``."""
    cdef int bad = 0
    cdef Py_ssize_t desc = 0
    if nnz == 0:
        out_of_range[0] = False
        return 0
    if index_t is int:
        desc = skb_scan_indices_i32(indices, nnz,
                                    <int>(n_cols if n_cols < 0x7fffffff
                                          else 0x7fffffff), &bad)
    else:
        desc = skb_scan_indices_i64(indices, nnz, <long long>n_cols, &bad)
    out_of_range[0] = bad != 0
    return desc


# Entries of the CSR index array per step of ``_scan_rows`` (a step's indices
# fit in the L1 cache: the step's row starts are read again from there).
cdef Py_ssize_t _SCAN_STEP = 4096
SCAN_STEP = _SCAN_STEP  # (for the tests)


cdef bint _scan_rows(const index_t* indptr, const index_t* indices,
                     Py_ssize_t n_rows, Py_ssize_t n_cols,
                     bint* out_of_range) noexcept nogil:
    """Whether the rows are canonical (each row's column indices strictly
    increasing), flagging in ``out_of_range`` an index that may be outside
    ``[0, n_cols)`` (``_scan_indices``; the caller confirms a flag exactly).
    ``indptr`` must be valid (``n_rows + 1`` non-decreasing entries from 0).

    The indices are scanned in steps of whole rows of about ``_SCAN_STEP``
    entries: the branch-free ``_scan_indices`` counts the positions ``j`` of
    the step, but its first, with ``indices[j] <= indices[j - 1]``, and the
    rows are canonical when every such position starts a non-empty row
    (counted from the step's row starts, O(rows), while the step's indices are
    still in L1: one read of the index array from memory, not one plus one
    line a row)."""
    cdef Py_ssize_t r0 = 0, r1, r, j, j0, j1, desc = 0, at_starts = 0
    cdef bint bad = False, step_bad
    out_of_range[0] = False
    while r0 < n_rows:
        j0 = indptr[r0]
        r1 = r0 + 1
        while r1 < n_rows and indptr[r1] - j0 < _SCAN_STEP:
            r1 += 1
        j1 = indptr[r1]
        if j1 > j0:
            desc += _scan_indices(indices + j0, j1 - j0, n_cols, &step_bad)
            bad = bad | step_bad
            for r in range(r0 + 1, r1):
                j = indptr[r]
                if j > j0 and j < indptr[r + 1]:
                    at_starts += indices[j] <= indices[j - 1]
        r0 = r1
    out_of_range[0] = bad
    return desc == at_starts


cdef str _csr_problem(const index_t* indptr, Py_ssize_t len_indptr,
                      const index_t* indices, Py_ssize_t len_indices,
                      Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols,
                      bint* canonical):
    """``check_csr``'s message, and (when it is ``""``) ``csr_is_canonical``
    to ``canonical``, from one scan of the indices (the arrays as pointers
    and lengths: ``check_csr`` and ``check_csr_canonical`` share it)."""
    cdef Py_ssize_t i, j, nnz
    cdef bint out_of_range = False, rows_canonical = False
    canonical[0] = False
    if len_indptr != n_rows + 1:
        return (f"indptr has length {len_indptr}, expected n_rows + 1 = "
                f"{n_rows + 1}")
    if indptr[0] != 0:
        return f"indptr[0] is {indptr[0]}, expected 0"
    nnz = indptr[n_rows]
    if nnz != n_data or nnz != len_indices:
        return (f"indptr[-1] is {nnz} but there are {n_data} stored values and "
                f"{len_indices} column indices")
    # Branch-free scans (they vectorise); the position is looked up only when
    # a problem was found.
    cdef bint decreasing = False
    with nogil:
        for i in range(n_rows):
            decreasing = decreasing | (indptr[i + 1] < indptr[i])
    if decreasing:
        for i in range(n_rows):
            if indptr[i + 1] < indptr[i]:
                return (f"indptr is not non-decreasing: indptr[{i + 1}] = "
                        f"{indptr[i + 1]} < indptr[{i}] = {indptr[i]}")
    with nogil:
        rows_canonical = _scan_rows(indptr, indices, n_rows, n_cols, &out_of_range)
    if out_of_range:
        for j in range(nnz):
            if indices[j] < 0 or indices[j] >= n_cols:
                return (f"column index {indices[j]} at position {j} is out of "
                        f"range for {n_cols} columns")
    canonical[0] = rows_canonical
    return ""


def check_csr(const index_t[::1] indptr, const index_t[::1] indices,
              Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols):
    """Validate the structure of CSR arrays in O(nnz), without copying.

    Returns ``""`` when ``indptr`` has ``n_rows + 1`` non-decreasing entries
    from 0 to ``n_data == len(indices)`` and every column index is in
    ``[0, n_cols)``; otherwise a message naming the first problem found.
    """
    cdef bint canonical
    return _csr_problem(&indptr[0], indptr.shape[0], &indices[0], indices.shape[0],
                        n_data, n_rows, n_cols, &canonical)


def check_csr_canonical(const index_t[::1] indptr, const index_t[::1] indices,
                        Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols):
    """``(check_csr(...), csr_is_canonical(...))`` from one scan of the
    indices (the second is False when the first is not ``""``)."""
    cdef bint canonical
    problem = _csr_problem(&indptr[0], indptr.shape[0], &indices[0],
                           indices.shape[0], n_data, n_rows, n_cols, &canonical)
    return problem, canonical


def csr_is_canonical(const index_t[::1] indptr, const index_t[::1] indices):
    """True when the column indices of every row are strictly increasing:
    sorted, no column stored twice (SciPy's canonical format). Computed from
    the arrays, in O(nnz) without copying: SciPy caches its own
    ``has_canonical_format`` flag, which an in-place edit can leave stale. The
    arrays must have passed ``check_csr``.

    A branch-free scan counts the positions ``j`` with
    ``indices[j] <= indices[j - 1]`` (it vectorises); the rows are canonical
    when every such position starts a row (``_scan_rows``)."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef bint out_of_range
    cdef bint ok
    cdef Py_ssize_t no_bound = PY_SSIZE_T_MAX
    if n_rows < 0:
        return True
    with nogil:
        ok = _scan_rows(&indptr[0], &indices[0], n_rows, no_bound, &out_of_range)
    return ok


def rows_nnz(const index_t[::1] indptr, const int[::1] rows):
    """``sum(indptr[r + 1] - indptr[r] for r in rows)``: the stored entries of
    the rows ``rows`` of a CSR matrix (``indptr`` valid: ``check_csr``), in one
    loop without the two index copies and the temporary of NumPy's
    ``indptr[rows + 1] - indptr[rows]``. IndexError for a row outside
    ``[0, len(indptr) - 1)``."""
    cdef Py_ssize_t t, r, n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t total = 0
    cdef bint bad = False
    with nogil:
        for t in range(rows.shape[0]):
            r = rows[t]
            if r < 0 or r >= n_rows:
                bad = True
                break
            total += indptr[r + 1] - indptr[r]
    if bad:
        raise IndexError(f"row {rows[t]} out of range for {n_rows} rows")
    return total


def within_bound(const double[::1] values, double bound):
    """True when every ``|v| <= bound`` (False for NaN and infinite values),
    i.e. ``max_abs(values) <= bound`` for a finite ``bound >= 0``, in one
    branch-free integer scan (``skb_within_bound``)."""
    cdef int ok = 1
    if values.shape[0] > 0:
        with nogil:
            ok = skb_within_bound(&values[0], values.shape[0], bound)
    return ok != 0


def max_abs(const double[::1] values):
    """``max |v|`` over ``values`` (0.0 when empty), or ``inf`` when a value is
    NaN or infinite. One pass, no copy."""
    cdef Py_ssize_t j, n = values.shape[0]
    cdef double m = 0.0, acc = 0.0, v
    with nogil:
        for j in range(n):
            v = fabs(values[j])
            m = v if v > m else m
            acc = acc + (values[j] - values[j])
    if acc != 0.0:  # NaN: a value was NaN or infinite
        return INFINITY
    return m


def py_argmax_ties(const double[::1] scores, double u2):
    """``(index, number of exact maximisers)`` of the shared tie-breaking argmax."""
    if scores.shape[0] == 0:
        raise ValueError("scores is empty")
    cdef int m
    cdef int g = argmax_ties(&scores[0], <int>scores.shape[0], u2, &m)
    return g, m


def py_sample_inverse_cdf(const double[::1] p, double u1):
    """The shared inverse-CDF sampler: first ``r`` with ``u1 < cumsum(p)[r]``."""
    if p.shape[0] == 0:
        raise ValueError("p is empty")
    return sample_inverse_cdf(&p[0], <int>p.shape[0], u1)


def py_sample_checked(const double[::1] p, double u1):
    """``(action, valid)``: the generic ``act``'s draw and check of ``p`` in one
    sweep (``sample_checked``); the action is ``py_sample_inverse_cdf``'s and
    ``valid`` is True when ``p`` is a probability vector."""
    cdef bint valid
    if p.shape[0] == 0:
        raise ValueError("p is empty")
    cdef int a = sample_checked(&p[0], <int>p.shape[0], u1, &valid)
    return a, bool(valid)


include "_linear_scores.pxi"
