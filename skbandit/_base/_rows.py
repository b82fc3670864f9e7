"""The one row form every kernel reads, and the checks that produce it.

Every path hands the kernels rows in one form (``InputValidationMixin`` in
``skbandit._base._validation`` produces it): float64, finite, every
``|x_ij| <= _MAX_ABS_X``, dense C-ordered or CSR with canonical rows (duplicate
columns summed, indices sorted) in C-contiguous arrays (the caller's matrix is
copied only when it is not canonical or an array is a strided view, never
modified). This module holds the bound, the checks
(sparse structure, canonical order, magnitude, finiteness), the test of rows
already in that form (``_common_form``) and ``_kernel_arrays``, the
``(data, indices, indptr, dense)`` view the compiled drivers take.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from skbandit._base._checks import csr_common_form, dense_common_form
from skbandit._core._scans import (
    check_csr_canonical,
    csr_is_canonical,
    rows_nnz,
    within_bound,
)

# The largest feature magnitude any learner accepts: 2**480 (about 3.1e144),
# sqrt(float64 max) / 2**32. With fewer than 2**31 columns (the kernels' 32-bit
# indices) the squared norm of a row and the dot product of two rows stay below
# 2**991, a factor 2**32 below overflow for step sizes, importance weights and
# sums. Larger values are refused by the validation (ValueError) on every path.
_MAX_ABS_X = 2.0**480

# The rows argument of a one-row pass (``_rows_in_order``).
_ONE_ROW = np.zeros(1, dtype=np.int32)
_ONE_ROW.flags.writeable = False


def _rows_in_order(n: int) -> np.ndarray:
    """The row numbers ``0 .. n-1`` (int32) of a pass over X in order; one
    read-only array for the one-row calls of a streaming loop."""
    return _ONE_ROW if n == 1 else np.arange(n, dtype=np.int32)


def _common_form(X, n_features: int) -> bool:
    """True when ``X`` is already in the common row form (module docstring)
    with ``n_features`` columns and at least one row: a float64 C-ordered 2-D
    ``ndarray`` (exactly that type), or a ``csr_matrix``/``csr_array`` with
    float64 values and C-contiguous index arrays of one type (int32 or int64)
    that pass ``check_csr`` with canonical rows; every value finite and within
    the magnitude bound. O(1) checks and compiled O(nnz) scans, no copy."""
    if type(X) is np.ndarray:
        return dense_common_form(X, n_features, _MAX_ABS_X)
    if type(X) is not sp.csr_matrix and type(X) is not sp.csr_array:
        return False
    n_rows, n_cols = X.shape
    return csr_common_form(
        X.data, X.indices, X.indptr, n_rows, n_cols, n_features, _MAX_ABS_X
    )


def _check_sparse_structure(X) -> bool | None:
    """Refuse a malformed sparse matrix (O(nnz), no copy): compressed index
    arrays out of range or out of order, or COO coordinates outside the shape.
    Nothing a user passes may make a kernel (or SciPy) index out of bounds.
    Returns, for CSR, whether its rows are canonical (``csr_is_canonical``,
    from the same scan of the indices); None for the other formats."""
    canonical = None
    fmt = X.format
    n_rows, n_cols = X.shape
    if fmt in ("csr", "csc"):
        major, minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
        indptr, indices = X.indptr, X.indices
        if indptr.dtype != indices.dtype or indptr.dtype not in (np.int32, np.int64):
            indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        if not (indptr.flags.c_contiguous and indices.flags.c_contiguous):
            indptr, indices = (
                np.ascontiguousarray(indptr),
                np.ascontiguousarray(indices),
            )
        if indptr.ndim != 1 or indices.ndim != 1:
            problem = "indptr and indices must be 1-D"
        else:
            problem, canonical = check_csr_canonical(
                indptr, indices, X.data.shape[0], major, minor
            )
            if fmt != "csr":
                canonical = None
        if problem:
            name = "column" if fmt == "csr" else "row"
            raise ValueError(
                f"Malformed sparse {fmt.upper()} matrix of shape {X.shape}: "
                f"{problem.replace('column index', name + ' index')}."
            )
    elif fmt == "coo":
        for coords, size, name in (
            (X.coords[0], n_rows, "row"),
            (X.coords[1], n_cols, "column"),
        ):
            if coords.size and (coords.min() < 0 or coords.max() >= size):
                raise ValueError(
                    f"Malformed sparse COO matrix of shape {X.shape}: a {name} "
                    f"index is outside [0, {size})."
                )
    elif fmt == "bsr":
        try:
            X.check_format(full_check=True)
        except ValueError as exc:
            raise ValueError(f"Malformed sparse BSR matrix: {exc}") from None
    return canonical


def _canonical_csr(est, X, original, canonical: bool | None = None):
    """The validated CSR matrix ``X`` with canonical rows: each column stored at
    most once (duplicates summed, as SciPy reads them) and indices sorted.

    Canonicity is computed from the arrays (``csr_is_canonical``, O(nnz), or
    ``canonical`` when ``_check_sparse_structure`` computed it on these
    arrays), not read from SciPy's cached flag. A canonical ``X`` is returned
    as it is; else its values are checked finite (a sum of duplicates could
    turn an infinity into a NaN and change the message), a copy is made when
    ``X`` shares an array with the caller's ``original`` (the caller's matrix
    is never modified) and summed in place.
    """
    if canonical is None:
        indptr, indices = X.indptr, X.indices
        if indptr.dtype != indices.dtype:
            indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        indptr, indices = (
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(indices),
        )
        canonical = csr_is_canonical(indptr, indices)
    if canonical:
        return X
    _check_finite(est, X)
    if sp.issparse(original) and any(
        np.may_share_memory(mine, getattr(original, name, None))
        for name, mine in (
            ("data", X.data),
            ("indices", X.indices),
            ("indptr", X.indptr),
        )
        if isinstance(getattr(original, name, None), np.ndarray)
    ):
        X = X.copy()
    # SciPy trusts its cached flags: clear them so that it sorts and sums.
    X.has_sorted_indices = False
    X.has_canonical_format = False
    X.sum_duplicates()
    return X


def _check_magnitude(est, X) -> None:
    """Refuse a value with ``|x_ij| > _MAX_ABS_X`` (ValueError naming the first
    one), in one compiled pass without a copy."""
    data = X.data if sp.issparse(X) else X.reshape(-1)
    if within_bound(np.ascontiguousarray(data), _MAX_ABS_X):
        return
    _check_finite(est, X)
    first = int(np.flatnonzero(np.abs(data) > _MAX_ABS_X)[0])
    if sp.issparse(X):
        row = int(np.searchsorted(X.indptr, first, side="right")) - 1
        col = int(X.indices[first])
    else:
        row, col = divmod(first, X.shape[1])
    raise ValueError(
        f"{type(est).__name__}: X[{row}, {col}] = {data[first]:.6g} is larger in "
        f"magnitude than the bound on feature values, 2**480 (about "
        f"{_MAX_ABS_X:.3g}): beyond it the learners' arithmetic (squared norms, "
        "scores, updates) can overflow. Scale the features, e.g. with "
        "sklearn.preprocessing.MaxAbsScaler or StandardScaler."
    )


def _check_finite(est, X) -> None:
    """Refuse NaN and infinite values with scikit-learn's own error (the
    message ``validate_data(..., ensure_all_finite=True)`` gives).

    Not the finiteness test of the hot paths: rows are tested by the compiled
    ``within_bound`` scan at ``_MAX_ABS_X`` (``_check_magnitude``,
    ``_common_form``), the state by the same scan at the largest float64
    (``StateMixin._state_finite``); this runs when such a scan failed, to raise
    scikit-learn's message, and before a non-canonical CSR matrix's duplicates
    are summed (a sum could turn an infinity into a NaN).
    """
    check_array(
        X,
        accept_sparse=True,
        accept_large_sparse=True,
        dtype=None,
        ensure_all_finite=True,
        ensure_2d=False,
        ensure_min_samples=0,
        ensure_min_features=0,
        estimator=est,
        input_name="X",
    )


# The (unused) index arrays handed to the kernels with dense rows.
_NO_INDICES = np.empty(0, dtype=np.int32)
_NO_INDPTR = np.zeros(1, dtype=np.int32)
_NO_INDICES.flags.writeable = False
_NO_INDPTR.flags.writeable = False


def _kernel_arrays(X):
    """``(data, indices, indptr, dense)`` as the kernels read them: dense rows
    flattened, or CSR with int32 indices (only the index arrays are copied when
    they are int64; the values are never copied)."""
    if type(X) is np.ndarray or not sp.issparse(X):  # (the exact type: cheaper)
        return X.reshape(-1), _NO_INDICES, _NO_INDPTR, True
    if X.nnz >= 2**31 or X.shape[1] >= 2**31:
        raise ValueError(
            f"Sparse input with {X.nnz} stored values and {X.shape[1]} columns is "
            "too large: skbandit kernels use 32-bit indices."
        )
    indices = X.indices.astype(np.int32, copy=False)
    indptr = X.indptr.astype(np.int32, copy=False)
    return X.data, indices, indptr, False


def _input_bytes(X, rows) -> int:
    """Bytes of the rows ``rows`` (int32 row numbers) of X as the kernels read
    them (all rows when None): 8 per dense entry, 12 per stored CSR entry (the
    CSR count in one compiled loop, ``rows_nnz``)."""
    if type(X) is np.ndarray or not sp.issparse(X):
        return 8 * X.shape[1] * (X.shape[0] if rows is None else rows.shape[0])
    if rows is None:
        return 12 * X.nnz
    return 12 * rows_nnz(X.indptr, rows)
