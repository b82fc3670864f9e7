"""SquareCB kernel: inverse gap weighting over per-class linear reward regressors.

Each round, with predicted rewards ``s_a = w_a . x + b_a`` and the tie-broken
greedy label ``g``:

* policy: the kernel's explorer (``set_explorer``); SquareCB's is inverse gap
  weighting (Foster & Rakhlin 2020; ``InverseGapExplorer`` of
  skbandit._core._explore) on the scores clipped to the reward range, with the
  per-class floor read from the update counts ``n`` (``learn`` tells the
  explorer ``class_updated(a)`` after the oracle increments ``n[a]``);
* update: only the played class's regressor, one online step on the squared
  loss ``h (s_a - r)^2 / 2`` (``h = 1 / p`` with importance weighting, else 1),
  by the shared regression oracle (``skbandit._core._oracle``: NAG, AdaGrad
  or SGD, the rate capped by ``step_cap`` so that the prediction never
  overshoots the reward). A row whose step is not finite (``||x||^2``
  overflows) stops the pass with ``STATUS_NONFINITE``.

The oracle's state is the estimator's: ``W``, ``b``, NAG's scales ``S``, the
squared-gradient sums ``G`` and ``Gb``, ``N`` and the update counts ``n``
(which the exploration rule reads too).

Prefetch: once ``W`` is beyond ``PREFETCH_MIN_BYTES`` (_kernel.pyx), ``act`` on a
sparse row ends by asking for the lines the played regressor's update touches
beyond ``W[:, a]`` (which the scores have just read): ``G[a]`` and the scales on
the row's columns (``RegressionOracle.prefetch_update``). In the live loop
(``sample_actions``, then ``partial_fit(row, LoggedFeedback(...))``) they then
arrive while the caller computes the reward instead of one after the other in
``learn``. A hint: no value changes.
"""

from skbandit._core._kernel cimport STATUS_NONFINITE, STATUS_OK, LinearKernel, Row
from skbandit._core._oracle cimport RegressionOracle

import numpy as np


cdef class SquareCBKernel(LinearKernel):
    """SquareCB: IGW play over ``W x + b``, squared-loss update of the played row."""

    cdef double[::1] b
    # the regressors of the rewards (the state arrays and the update rule)
    cdef RegressionOracle oracle
    cdef long long[::1] n_upd
    cdef bint fit_intercept
    cdef bint importance_weighted

    def __init__(self, double[:, ::1] W, double[::1] b, double[:, ::1] S,
                 double[:, ::1] G, double[::1] Gb, double[::1] N,
                 long long[::1] n_upd, tuple step_size,
                 bint fit_intercept,
                 bint importance_weighted, double step_cap,
                 bint shared_scale):
        LinearKernel.__init__(self, W, False)
        # checks the shapes of the state arrays and the step-size rule
        self.oracle = RegressionOracle(W, b, S, G, Gb, N, n_upd, step_size,
                                       fit_intercept, step_cap, shared_scale)
        self.b = b
        self.n_upd = n_upd
        self.fit_intercept = fit_intercept
        self.importance_weighted = importance_weighted

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        cdef int r
        LinearKernel.compute_scores(self, x, t)
        if self.fit_intercept:
            for r in range(self.n_classes):
                self.scores[r] = self.scores[r] + self.b[r]

    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil:
        # the generic act; then, for a model beyond PREFETCH_MIN_BYTES, ask
        # for the lines the played action's update will touch, so that in
        # the live loop they arrive while the caller computes the reward
        cdef int a = LinearKernel.act(self, x, t, u1, u2, greedy, prob, marginal)
        if self.prefetch and self.status == STATUS_OK:
            self.oracle.prefetch_update(x, a)
        return a

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
        self.explorer.class_updated(played)
