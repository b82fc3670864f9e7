"""Conservative one-vs-all with Passive-Aggressive learners (Chen et al. 2009)."""

from skbandit._core._kernel cimport STATUS_NONFINITE, LinearKernel, Row
from skbandit.multiclass._pa cimport PA_HARD, PA_ONE, PA_TWO, pa_tau, row_sq_norm


# PA variants (``ConservativeOneVsAll.variant``).
cpdef enum PAVariant:
    PA = PA_HARD
    PA1 = PA_ONE
    PA2 = PA_TWO


cdef class ConservativeOVAKernel(LinearKernel):
    """Plays the greedy label ``argmax W x`` (the inherited distribution: loss-based
    decoding equals the argmax). Learns only from the reward:

    * right (reward 1): every learner ``s`` makes a PA step on ``(x, +1)`` if
      ``s`` is the played class, else on ``(x, -1)``;
    * wrong: only the played class's learner makes a PA step on ``(x, -1)``.

    PA step of learner ``s`` on ``(x, z)``: ``l = max(0, 1 - z f_s)`` with
    ``f_s`` the score of this round, ``w_s += (tau z) x`` with ``tau`` of the
    variant; skipped when ``l = 0`` or ``||x|| = 0``.
    """

    cdef int variant
    cdef double C

    def __init__(self, double[:, ::1] W, int variant, double C):
        LinearKernel.__init__(self, W, False)
        self.variant = variant
        self.C = C

    cdef inline bint pa_step(self, int r, double z, double* sq,
                             Row x) noexcept nogil:
        """PA step of learner ``r`` on ``(x, z)``. ``sq[0]`` is ``||x||^2``,
        computed on first need (-1 before). Returns False to stop the round
        (``x = 0``, or a non-finite ``||x||^2``)."""
        cdef double loss = 1.0 - z * self.scores[r]
        cdef double tau
        if not loss > 0.0:
            return True
        if sq[0] < 0.0:
            sq[0] = row_sq_norm(x)
            if not sq[0] - sq[0] == 0.0:
                # ||x||^2 overflowed: tau would silently be 0; stop the pass
                self.status = STATUS_NONFINITE
                return False
        if sq[0] == 0.0:
            return False
        tau = pa_tau(self.variant, self.C, loss, sq[0])
        self.add_row(r, tau * z, x)
        return True

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # at most one PA step per class row of W
        return <Py_ssize_t>self.n_classes * x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int r
        cdef double sq = -1.0
        if reward != 0.0:
            for r in range(self.n_classes):
                if not self.pa_step(r, 1.0 if r == played else -1.0, &sq, x):
                    return
        else:
            self.pa_step(played, -1.0, &sq, x)
