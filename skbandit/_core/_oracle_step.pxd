# The loops of the regression oracle's step in C (_oracle_step.h), for
# _oracle.pyx and the tests' baseline build _simd_baseline.pyx.

cdef extern from "_oracle_step.h":
    double oracle_denominators "skb_oracle_denominators"(
        const double* val, int n, double e, double* G, const double* scale,
        double* qbuf, double* tbuf) noexcept nogil
    void oracle_moves "skb_oracle_moves"(
        const double* val, int n, double rate, double e, const double* qbuf,
        double* tbuf) noexcept nogil
