"""Conservative one-vs-all with Passive-Aggressive learners (Chen et al. 2009)."""

from skbandit._core._kernel cimport STATUS_NONFINITE, LinearKernel, Row
from skbandit.multiclass._pa cimport (
    PA_DONE,
    PA_HARD,
    PA_NONFINITE,
    PA_ONE,
    PA_TWO,
    pa_step,
)


# PA updates (``ConservativeOneVsAll.update``, ``OffsetTree.update``).
cpdef enum PAUpdate:
    PA = PA_HARD
    PA1 = PA_ONE
    PA2 = PA_TWO

# The estimators' ``update`` values, in one place.
PA_UPDATES = {"pa": PAUpdate.PA, "pa1": PAUpdate.PA1, "pa2": PAUpdate.PA2}


cdef class ConservativeOVAKernel(LinearKernel):
    """Plays the greedy label ``argmax W x`` (the inherited distribution: loss-based
    decoding equals the argmax). Learns only from the reward:

    * right (reward 1): every learner ``s`` makes a PA step on ``(x, +1)`` if
      ``s`` is the played class, else on ``(x, -1)``;
    * wrong: only the played class's learner makes a PA step on ``(x, -1)``.

    PA step of learner ``s`` on ``(x, z)`` (``pa_step``): ``l = max(0, 1 - z f_s)``
    with ``f_s`` the score of this round, ``w_s += (tau z) x`` with ``tau`` of
    the update; skipped when ``l = 0``; ``||x|| = 0`` ends the round.
    """

    cdef int update
    cdef double C

    def __init__(self, double[:, ::1] W, int update, double C):
        LinearKernel.__init__(self, W, False)
        self.update = update
        self.C = C

    cdef inline bint step(self, int r, double z, double* sq, Row x) noexcept nogil:
        """PA step of learner ``r`` on ``(x, z)``; False to stop the round
        (``x = 0``, or a non-finite ``||x||^2``: then the pass stops too)."""
        cdef int done = pa_step(self.jd, &self.W[0, r], self.n_classes, x, z,
                                1.0 - z * self.scores[r], self.update, self.C, sq)
        if done == PA_NONFINITE:
            self.status = STATUS_NONFINITE
        return done == PA_DONE

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # at most one PA step per class (a column of W)
        return <Py_ssize_t>self.n_classes * x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int r
        cdef double sq = -1.0
        if reward != 0.0:
            for r in range(self.n_classes):
                if not self.step(r, 1.0 if r == played else -1.0, &sq, x):
                    return
        else:
            self.step(played, -1.0, &sq, x)
