# ``rff_rows``, the random features of dense rows for the Python side and the
# tests, included by _feature_map.pyx and by the baseline build
# _simd_baseline.pyx (each module cimports ``rff_row`` from _rff.pxd and
# ``sqrt``).


def rff_rows(const double[:, ::1] U, const double[:, ::1] omega,
             const double[::1] offset, double[:, ::1] out):
    """The random Fourier features of ``FeatureMapKernel`` of the dense rows
    of ``U``: ``out[i, j] = sqrt(2 / D) cos(sum_c U[i, c] Omega[c, j] + b_j)``,
    summed sequentially in ``c``."""
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
            rff_row(&U[i, 0], NULL, d, &omega[0, 0], &offset[0], D, factor,
                    &out[i, 0])
