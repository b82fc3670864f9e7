"""SquareCB kernel: inverse gap weighting over per-class linear reward regressors.

Each round, with predicted rewards ``s_a = w_a . x + b_a`` and the tie-broken
greedy label ``g``:

* policy (Foster & Rakhlin 2020, inverse gap weighting) at global round ``t`` on
  the scores clipped to the reward range, ``c_a = min(max(s_a, 0), 1)``: with
  ``f(tau) = gamma_scale * tau ** gamma_exponent`` and ``n_a`` the updates of
  class ``a``, ``gamma_a = min(f(t), f(k (n_a + 1)))``;
  ``p_a = 1 / (k + gamma_a (c_g - c_a))`` for ``a != g`` with ``c_a < c_g``,
  ``1 / k`` for a tie (whatever ``gamma_a``: no ``inf * 0``), summed in class
  order, and ``p_g = 1 - sum_{a != g} p_a``;
* update: only the played class's regressor, one online step on the squared
  loss ``h (s_a - r)^2 / 2`` (``h = 1 / p`` with importance weighting, else 1),
  by the shared regression oracle (``skbandit._core._oracle``: NAG, AdaGrad
  or SGD, the rate capped by ``step_cap`` so that the prediction never
  overshoots the reward). A row whose step is not finite (``||x||^2``
  overflows) stops the pass with ``STATUS_NONFINITE``.

The oracle's state is the estimator's: ``W``, ``b``, NAG's scales ``S``, the
squared-gradient sums ``G`` and ``Gb``, ``N`` and the update counts ``n``
(which the exploration schedule reads too).
"""

from libc.math cimport pow

from skbandit._core._kernel cimport STATUS_NONFINITE, LinearKernel, Row
from skbandit._core._oracle cimport RegressionOracle

import numpy as np


cdef inline double clip01(double v) noexcept nogil:
    """``v`` clipped to [0, 1] (NaN stays NaN: the scores are checked finite)."""
    if v < 0.0:
        return 0.0
    if v > 1.0:
        return 1.0
    return v


cdef inline void igw(const double* s, int k, int greedy, const double* gamma,
                     double* p) noexcept nogil:
    """Inverse gap weighting on the predictions clipped to the reward range [0, 1]:
    with ``c_a = min(max(s_a, 0), 1)`` and the gap ``d_a = c_g - c_a >= 0``,
    ``p_a = 1 / (k + gamma_a d_a)`` for ``a != g`` with ``d_a > 0``, ``p_a = 1 / k``
    for a tie (``d_a = 0``, whatever ``gamma_a``, even infinite: no ``inf * 0``);
    ``p_g = 1 - sum_{a != g} p_a`` (summed in class order)."""
    cdef int a
    cdef double total = 0.0
    cdef double best = clip01(s[greedy])
    cdef double gap
    for a in range(k):
        if a != greedy:
            gap = best - clip01(s[a])
            if gap > 0.0:
                p[a] = 1.0 / (k + gamma[a] * gap)
            else:
                p[a] = 1.0 / k
            total = total + p[a]
    p[greedy] = 1.0 - total


cdef class SquareCBKernel(LinearKernel):
    """SquareCB: IGW play over ``W x + b``, squared-loss update of the played row."""

    cdef double[::1] b
    # the regressors of the rewards (the state arrays and the update rule)
    cdef RegressionOracle oracle
    cdef long long[::1] n_upd
    cdef double gamma_scale
    cdef double gamma_exponent
    cdef bint fit_intercept
    cdef bint importance_weighted
    # gamma of each class from its own update count (see class_gamma)
    cdef double[::1] gamma_cls
    # scratch: this round's gamma of each class
    cdef double[::1] gbuf

    def __init__(self, double[:, ::1] W, double[::1] b, double[:, ::1] S,
                 double[:, ::1] G, double[::1] Gb, double[::1] N,
                 long long[::1] n_upd, int regressor, double eta,
                 double gamma_scale, double gamma_exponent, bint fit_intercept,
                 bint importance_weighted, double step_cap,
                 bint shared_scale):
        LinearKernel.__init__(self, W, False)
        k = W.shape[0]
        # checks the shapes of the state arrays and the regressor code
        self.oracle = RegressionOracle(W, b, S, G, Gb, N, n_upd, regressor, eta,
                                       fit_intercept, step_cap, shared_scale)
        self.b = b
        self.n_upd = n_upd
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.fit_intercept = fit_intercept
        self.importance_weighted = importance_weighted
        self.gamma_cls = np.empty(k, dtype=np.float64)
        self.gbuf = np.empty(k, dtype=np.float64)
        for r in range(k):
            self.gamma_cls[r] = self.class_gamma(r)

    cdef inline double schedule(self, double tau) noexcept nogil:
        """``gamma_scale * tau ** gamma_exponent``."""
        return self.gamma_scale * pow(tau, self.gamma_exponent)

    cdef inline double class_gamma(self, int a) noexcept nogil:
        """The schedule at class a's own clock ``k (n_a + 1)``: the round a class
        played on its share ``1/k`` of the rounds would have reached."""
        return self.schedule(<double>self.n_classes * (<double>self.n_upd[a] + 1.0))

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        cdef int r
        LinearKernel.compute_scores(self, x, t)
        if self.fit_intercept:
            for r in range(self.n_classes):
                self.scores[r] = self.scores[r] + self.b[r]

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        # gamma_{t,a} = min(schedule(t), schedule(k (n_a + 1))): a class whose
        # regressor has seen few updates keeps the exploration of an early round
        cdef double gt = self.schedule(<double>t)
        cdef int a
        for a in range(self.n_classes):
            self.gbuf[a] = gt if gt < self.gamma_cls[a] else self.gamma_cls[a]
        igw(s, self.n_classes, greedy, &self.gbuf[0], p)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        return self.oracle.journal_bound(x)

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        return 1  # n_upd of the played class

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef double h = 1.0 / prob if self.importance_weighted else 1.0
        if not self.oracle.update(self.jd, x, played, self.scores[played],
                                  reward, h):
            # the step is not finite: stop the pass, as for non-finite scores
            # (the block is rolled back)
            self.status = STATUS_NONFINITE
        self.gamma_cls[played] = self.class_gamma(played)


def py_igw(const double[::1] scores, int greedy, const double[::1] gamma):
    """The compiled inverse-gap-weighting distribution for these scores (one
    ``gamma`` per class)."""
    cdef int k = <int>scores.shape[0]
    if k < 1 or not 0 <= greedy < k or gamma.shape[0] != k:
        raise ValueError("greedy out of range, scores empty or gamma's length "
                         "is not the number of scores")
    out = np.empty(k, dtype=np.float64)
    cdef double[::1] o = out
    igw(&scores[0], k, greedy, &gamma[0], &o[0])
    return out
