# Passive-Aggressive steps (Crammer et al. 2006) shared by the one-vs-all and
# offset-tree kernels: one implementation of ||x||^2 and of the step size.

from skbandit._core._kernel cimport Row


# PA variants, the values of ``PAVariant`` (_conservative_ova_fast.pyx).
cdef enum:
    PA_HARD = 0
    PA_ONE = 1
    PA_TWO = 2


cdef inline double row_sq_norm(Row x) noexcept nogil:
    """``||x||^2`` summed sequentially over the stored entries (a column stored
    twice counts twice, as in ``sum(vals ** 2)`` of the references)."""
    cdef double s = 0.0
    cdef int j
    for j in range(x.nnz):
        s = s + x.val[j] * x.val[j]
    return s


cdef inline double pa_tau(int variant, double C, double loss,
                          double sq) noexcept nogil:
    """Step size of a PA step with hinge loss ``loss > 0`` and ``sq = ||x||^2 > 0``:
    PA ``loss / sq``; PA-I ``min(C, loss / sq)``; PA-II
    ``loss / (sq + 1 / (2 C))`` (exactly these operations)."""
    cdef double tau
    if variant == PA_HARD:
        return loss / sq
    if variant == PA_ONE:
        tau = loss / sq
        if tau > C:
            tau = C
        return tau
    return loss / (sq + 1.0 / (2.0 * C))
