# Passive-Aggressive steps (Crammer et al. 2006) shared by the one-vs-all and
# offset-tree kernels: one implementation of the step size and of the step.

# ``row_sq_norm`` is the core's (one implementation of ||x||^2 for every kernel).
from skbandit._core._kernel cimport (
    JournalData,
    Row,
    is_finite,
    jsave_row,
    row_axpy,
    row_sq_norm,
)


# PA updates, the values of ``PAUpdate`` (_conservative_ova_fast.pyx).
cdef enum:
    PA_HARD = 0
    PA_ONE = 1
    PA_TWO = 2

# What ``pa_step`` did: stepped (or had no loss), or why the round must stop.
cdef enum:
    PA_DONE = 0
    PA_ZERO_ROW = 1  # ||x|| = 0: no step can change the loss
    PA_NONFINITE = 2  # ||x||^2 overflowed: tau would silently be 0


cdef inline double pa_tau(int update, double C, double loss,
                          double sq) noexcept nogil:
    """Step size of a PA step with hinge loss ``loss > 0`` and ``sq = ||x||^2 > 0``:
    PA ``loss / sq``; PA-I ``min(C, loss / sq)``; PA-II
    ``loss / (sq + 1 / (2 C))`` (exactly these operations)."""
    cdef double tau
    if update == PA_HARD:
        return loss / sq
    if update == PA_ONE:
        tau = loss / sq
        if tau > C:
            tau = C
        return tau
    return loss / (sq + 1.0 / (2.0 * C))


cdef inline int pa_step(JournalData* jd, double* w, Py_ssize_t s, Row x, double z,
                        double loss, int update, double C,
                        double* sq) noexcept nogil:
    """The PA step of the linear learner ``w`` (stride ``s``: entry ``c`` at
    ``w[c * s]``) on ``(x, z)`` (``z = +-1``) with
    hinge loss ``loss = 1 - z w.x``: ``w += (tau z) x`` with ``tau`` of
    ``pa_tau``, journaled first; nothing when ``loss <= 0``. ``sq[0]`` is
    ``||x||^2``, computed on first need (``-1`` before) and shared by the steps
    of one round. Returns ``PA_DONE``, or ``PA_ZERO_ROW`` / ``PA_NONFINITE``
    (no step made) when the round must stop."""
    cdef double tau
    if not loss > 0.0:
        return PA_DONE
    if sq[0] < 0.0:
        sq[0] = row_sq_norm(x)
        if not is_finite(sq[0]):
            return PA_NONFINITE
    if sq[0] == 0.0:
        return PA_ZERO_ROW
    tau = pa_tau(update, C, loss, sq[0])
    jsave_row(jd, w, s, x)
    row_axpy(tau * z, x, w, s)
    return PA_DONE
