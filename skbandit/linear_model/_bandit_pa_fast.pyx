"""Bandit Passive-Aggressive kernel: PA steps along the Banditron's estimate."""

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    LinearKernel,
    Row,
    row_sq_norm,
)
from skbandit.multiclass._pa cimport PA_HARD, PA_ONE, PA_TWO, pa_tau


# The values of ``update`` (the PA steps of ``_pa.pxd``).
UPDATES = {"pa": PA_HARD, "pa1": PA_ONE, "pa2": PA_TWO}


cdef class BanditPAKernel(LinearKernel):
    """Plays its explorer over ``W x`` (``set_explorer``; the estimator's
    default: epsilon-greedy, ``p = (1 - gamma) e_greedy + gamma / k``).

    With the played action ``a``, the greedy label ``g``, the reward ``r`` and
    the probability ``q`` of ``a``, ``v = r / q`` and the Banditron's estimate
    ``U = x ((v) e_a - e_g)^T``, the update is the PA step for the constraint
    ``<W, U> >= 1``:

    * ``m = v * s_a - s_g`` (the scores of the round), ``l = max(0, 1 - m)``;
    * ``c = (v - 1) * (v - 1)`` if ``a == g``, else ``v * v + 1.0``, and
      ``||U||^2 = c * ||x||^2``;
    * ``tau = pa_tau(update, C, l, c * ||x||^2)`` (``_pa.pxd``);
    * ``a == g``: ``w_g += (tau * (v - 1)) x``; else ``w_g += (-tau) x`` and, if
      ``r != 0``, ``w_a += (tau * v) x``.

    Skipped when ``l == 0``, ``||x|| == 0`` or ``c == 0``; an ``||x||^2`` that
    overflows stops the pass (``STATUS_NONFINITE``)."""

    cdef int update
    cdef double C

    def __init__(self, double[:, ::1] W, int update, double C):
        LinearKernel.__init__(self, W, False)
        self.update = update
        self.C = C

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # the weight vectors of greedy and played (columns of W)
        return 2 * <Py_ssize_t>x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef double v = reward / prob
        cdef double loss = 1.0 - (v * self.scores[played] - self.scores[greedy])
        cdef double c, sq, tau
        if not loss > 0.0:
            return
        sq = row_sq_norm(x)
        if not sq - sq == 0.0:
            # ||x||^2 overflowed: tau would silently be 0; stop the pass
            self.status = STATUS_NONFINITE
            return
        if played == greedy:
            c = (v - 1.0) * (v - 1.0)
        else:
            c = v * v + 1.0
        if sq == 0.0 or c == 0.0:
            return
        tau = pa_tau(self.update, self.C, loss, c * sq)
        if played == greedy:
            self.add_row(greedy, tau * (v - 1.0), x)
            return
        self.add_row(greedy, -tau, x)
        if reward != 0.0:
            self.add_row(played, tau * v, x)
