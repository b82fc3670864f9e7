"""The hot loops that are compiled twice, here built once for the baseline
x86-64 only (tests only).

Where the compiler can choose at load time (GCC and Clang on x86-64 with
glibc), ``_scores.h``'s ``SKB_CLONES`` compiles the shared class scores
(``skb_linear_scores``) and the random Fourier features of a row
(``skb_rff_row``, ``_rff.h``) twice, for SSE2 and for AVX2, and the processor
picks one when a module loads. This module is built with ``SKB_NO_CLONES``
(meson.build), so its two functions are the baseline build whatever the
processor: ``tests/test_pipeline.py`` compares them bit for bit with the
package's own (``_scans.py_linear_scores``, ``_feature_map.rff_rows``), which
run the AVX2 clone on a processor that has AVX2.
"""

from libc.math cimport sqrt

import numpy as np


cdef extern from "_scores.h":
    void skb_linear_scores(const double* W, int k,
                           const double* val, const int* ind, Py_ssize_t nnz,
                           double* out) noexcept nogil


cdef extern from "_rff.h":
    void skb_rff_row(const double* val, const int* ind, int nnz,
                     const double* omega, const double* offset, int D,
                     double factor, double* z) noexcept nogil


def linear_scores(const double[:, ::1] W, const double[::1] val,
                  const int[::1] ind=None):
    """``_scans.py_linear_scores``, baseline build."""
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


def rff_rows(const double[:, ::1] U, const double[:, ::1] omega,
             const double[::1] offset, double[:, ::1] out):
    """``_feature_map.rff_rows``, baseline build."""
    cdef Py_ssize_t i, n = U.shape[0]
    cdef int d = <int>U.shape[1], D = <int>omega.shape[1]
    if omega.shape[0] != d or offset.shape[0] != D or out.shape[0] != n \
            or out.shape[1] != D:
        raise ValueError("inconsistent shapes")
    if n == 0 or D == 0:
        return
    cdef double factor = sqrt(2.0 / D)
    with nogil:
        for i in range(n):
            skb_rff_row(&U[i, 0], NULL, d, &omega[0, 0], &offset[0], D, factor,
                        &out[i, 0])
