# ``py_linear_scores``, the Python-callable shared class scores, included by
# _scans.pyx and by the baseline build _simd_baseline.pyx (each module cimports
# ``skb_linear_scores`` from _kernel.pxd and imports NumPy as ``np``).


def py_linear_scores(const double[:, ::1] W, const double[::1] val,
                     const int[::1] ind=None):
    """The shared class scores of one row (``skb_linear_scores``, _scores.h):
    ``out[r] = sum_j W[col_j, r] val_j`` summed in stored order, ``W`` (d, k)
    feature-major, ``ind`` None for a dense row of ``d`` values."""
    cdef int k = <int>W.shape[1]
    cdef Py_ssize_t nnz = val.shape[0], j
    if ind is None and nnz != W.shape[0]:
        raise ValueError("a dense row needs one value per row of W")
    if ind is not None:
        if ind.shape[0] != nnz:
            raise ValueError("val and ind differ in length")
        for j in range(nnz):
            if not 0 <= ind[j] < W.shape[0]:
                raise ValueError("a column index is outside W")
    out = np.zeros(k, dtype=np.float64)
    cdef double[::1] o = out
    if k == 0 or W.shape[0] == 0:
        return out
    skb_linear_scores(&W[0, 0], k, &val[0] if nnz else NULL,
                      NULL if ind is None else (&ind[0] if nnz else NULL),
                      nnz, &o[0])
    return out
