# Passive-Aggressive steps (Crammer et al. 2006) shared by the one-vs-all and
# offset-tree kernels: one implementation of the step size.

# ``row_sq_norm`` is the core's (one implementation of ||x||^2 for every kernel).
from skbandit._core._kernel cimport Row, row_sq_norm


# PA variants, the values of ``PAVariant`` (_conservative_ova_fast.pyx).
cdef enum:
    PA_HARD = 0
    PA_ONE = 1
    PA_TWO = 2


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
