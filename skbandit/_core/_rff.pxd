# The random Fourier features of one row in C (_rff.h), for _feature_map.pyx
# and the tests' baseline build _simd_baseline.pyx.

cdef extern from "_rff.h":
    double COS_BOUND "SKB_COS_BOUND"
    double rff_cos_reduced "skb_cos_reduced"(double x) noexcept nogil
    void rff_row "skb_rff_row"(const double* val, const int* ind, int nnz,
                               const double* omega, const double* offset,
                               int D, double factor, double* z) noexcept nogil
