"""SquareCB kernel: inverse gap weighting over per-class linear reward regressors.

Each round, with predicted rewards ``s_a = w_a . x + b_a`` and the tie-broken
greedy label ``g``:

* policy: the kernel's explorer (``set_explorer``); SquareCB's is inverse gap
  weighting (Foster & Rakhlin 2020; ``InverseGapExplorer`` of
  skbandit._core._explore) on the scores clipped to the reward range, with the
  per-class floor read from the update counts ``n`` (``learn`` tells the
  explorer ``class_updated(a)`` after it increments ``n[a]``);
* update: only the played class's regressor, one online step on the squared
  loss ``h (s_a - r)^2 / 2`` (``h = 1 / p`` with importance weighting, else 1),
  by one of three oracles (``REG_NORMALIZED``: Ross, Mineiro & Langford's NAG;
  ``REG_ADAGRAD``: per-coordinate AdaGrad; ``REG_SGD``: a constant step), with
  the rate capped (``step_cap`` ``c``, in ``(0, 1]`` from the estimator; 0
  would mean no cap) so that the prediction on the row moves towards the reward
  by at most ``c |pred - r|``: it never overshoots the reward. A row whose cap is not
  finite (``||x||^2`` overflows) stops the pass with ``STATUS_NONFINITE``.

The NAG state is per regressor: scales ``S[a, i]``, accumulators ``G[a, i]``
(``Gb[a]`` for the intercept), ``N[a]`` and the update count ``n[a]``. With
``shared_scale`` the scale of feature ``i`` is one for all regressors (every
``S[r, i]`` equal, the largest ``|x_i|`` of every row learned) and its growth
rescales ``W[r, i] *= S[r, i] / |x_i|`` for every ``r``, not only the played
regressor (``O(k)`` per growth). The
intercept is a constant feature of value 1 whose scale is fixed to 1. Stored
zeros (dense zeros included) are skipped: they neither set a scale nor count
in ``N`` (their gradient is 0), so dense and CSR rows give the same state.
"""

from libc.math cimport fabs, sqrt

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    LinearKernel,
    Row,
    jsave,
    jsave_ll,
)

import numpy as np


cpdef enum SquareCBRegressor:
    REG_NORMALIZED = 0
    REG_ADAGRAD = 1
    REG_SGD = 2


cdef class SquareCBKernel(LinearKernel):
    """SquareCB: IGW play over ``W x + b``, squared-loss update of the played row."""

    cdef double[::1] b
    cdef double[:, ::1] S
    cdef double[:, ::1] G
    cdef double[::1] Gb
    cdef double[::1] N
    cdef long long[::1] n_upd
    cdef int regressor
    cdef double eta
    cdef bint fit_intercept
    cdef bint importance_weighted
    cdef double step_cap  # 0: no cap
    cdef bint shared_scale  # NAG's scales shared by the k regressors
    # scratch: the denominators q_i of the current step, by position in the row
    # (grown to the longest row seen: O(nnz), not O(d), per call)
    cdef double[::1] qbuf

    def __init__(self, double[:, ::1] W, double[::1] b, double[:, ::1] S,
                 double[:, ::1] G, double[::1] Gb, double[::1] N,
                 long long[::1] n_upd, int regressor, double eta,
                 bint fit_intercept,
                 bint importance_weighted, double step_cap,
                 bint shared_scale):
        LinearKernel.__init__(self, W, False)
        k, d = W.shape[0], W.shape[1]
        if (b.shape[0] != k or S.shape[0] != k or S.shape[1] != d
                or G.shape[0] != k or G.shape[1] != d or Gb.shape[0] != k
                or N.shape[0] != k or n_upd.shape[0] != k):
            raise ValueError("SquareCB state arrays have inconsistent shapes")
        if regressor not in (REG_NORMALIZED, REG_ADAGRAD, REG_SGD):
            raise ValueError(f"unknown regressor code {regressor}")
        self.b = b
        self.S = S
        self.G = G
        self.Gb = Gb
        self.N = N
        self.n_upd = n_upd
        self.regressor = regressor
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.importance_weighted = importance_weighted
        self.step_cap = step_cap
        self.shared_scale = shared_scale
        self.qbuf = np.zeros(64, dtype=np.float64)

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        cdef int r
        LinearKernel.compute_scores(self, x, t)
        if self.fit_intercept:
            for r in range(self.n_classes):
                self.scores[r] = self.scores[r] + self.b[r]

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # NAG's rescale: W and S of the played regressor (of every regressor
        # with shared scales) per entry, and N; the step: G and W per entry,
        # Gb and b
        cdef Py_ssize_t rescaled = self.n_classes if self.shared_scale else 1
        return (2 * rescaled + 2) * <Py_ssize_t>x.nnz + 3

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        return 1  # n_upd of the played class

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef double h = 1.0 / prob if self.importance_weighted else 1.0
        cdef double pred, rate
        cdef int a = played
        jsave_ll(self.jd, &self.n_upd[a])
        self.n_upd[a] += 1
        self.explorer.class_updated(a)
        if self.regressor == REG_NORMALIZED:
            pred = self._nag_rescale(x, a)
            if self.N[a] <= 0.0:
                return  # an empty row without intercept: nothing to learn
            rate = self.eta * sqrt(<double>self.n_upd[a] / self.N[a])
        else:
            pred = self.scores[a]
            rate = self.eta
        self._step(x, a, h, h * (pred - reward), rate)

    cdef double _nag_rescale(self, Row x, int a) noexcept nogil:
        # Ross, Mineiro & Langford (2013), Algorithm NAG, first half, on
        # regressor a: rescale the weights of the features whose scale grows
        # (w_i *= s_i / |x_i|: NAG's past steps on w_i are proportional to
        # 1 / s_i, so this is w_i as if the new scale had been used; the
        # squared factor belongs to the non-adaptive NG, whose steps go as
        # 1 / s_i^2), predict, and add the row's normalized squared norm to N.
        # With shared scales the scale of feature i is one for all regressors
        # (every row S[r] equal): a growth rescales w_i of every regressor.
        cdef double* w = &self.W[a, 0]
        cdef double* s = &self.S[a, 0]
        cdef double pred = 0.0, nrm = 0.0, v, av, q
        cdef int j, i, r
        cdef bint dense = x.ind == NULL
        for j in range(x.nnz):
            v = x.val[j]
            if v == 0.0:
                continue
            i = j if dense else x.ind[j]
            av = fabs(v)
            if av > s[i]:
                if self.shared_scale:
                    # each regressor by its own scale (all equal unless
                    # shared_scale was switched on mid-stream)
                    for r in range(self.n_classes):
                        if av > self.S[r, i]:
                            jsave(self.jd, &self.W[r, i])
                            jsave(self.jd, &self.S[r, i])
                            if self.S[r, i] > 0.0:
                                self.W[r, i] = self.W[r, i] * (self.S[r, i] / av)
                            self.S[r, i] = av
                else:
                    jsave(self.jd, &w[i])
                    jsave(self.jd, &s[i])
                    if s[i] > 0.0:
                        w[i] = w[i] * (s[i] / av)
                    s[i] = av
            pred = pred + w[i] * v
            q = v / s[i]
            nrm = nrm + q * q
        if self.fit_intercept:
            pred = pred + self.b[a]
            nrm = nrm + 1.0
        jsave(self.jd, &self.N[a])
        self.N[a] = self.N[a] + nrm
        return pred

    cdef void _step(self, Row x, int a, double h, double e,
                    double rate) noexcept nogil:
        # One step on h (pred - r)^2 / 2 with error e = h (pred - r):
        # w_i -= rate g_i / q_i with g_i = e x_i and the per-coordinate
        # denominator q_i = s_i sqrt(G_i) (NAG), sqrt(G_i) (AdaGrad) or 1 (SGD),
        # G_i += g_i^2 first. With a step cap c > 0 the rate is capped at
        # c / (h Q), Q = sum_i x_i^2 / q_i (+ 1 / q_b): the step then moves the
        # prediction towards the reward by at most c |pred - r| (the move is
        # rate h Q |pred - r|).
        cdef double* w = &self.W[a, 0]
        cdef double* s = &self.S[a, 0]
        cdef double* G = &self.G[a, 0]
        cdef double* qbuf
        cdef double Q = 0.0, v, g, q, qb = 1.0, lim
        cdef int j, i
        cdef bint dense = x.ind == NULL
        cdef bint adaptive = self.regressor != REG_SGD
        if e == 0.0:
            return  # no error: nothing to learn (every g_i is 0)
        if x.nnz > self.qbuf.shape[0]:
            with gil:
                self.qbuf = np.zeros(max(x.nnz, 2 * self.qbuf.shape[0]))
        qbuf = &self.qbuf[0]
        for j in range(x.nnz):
            v = x.val[j]
            if v == 0.0:
                continue
            i = j if dense else x.ind[j]
            q = 1.0
            if adaptive:
                g = e * v
                jsave(self.jd, &G[i])
                G[i] = G[i] + g * g
                if not G[i] > 0.0:
                    qbuf[j] = 0.0  # a zero gradient so far: not moved
                    continue
                q = sqrt(G[i])
                if self.regressor == REG_NORMALIZED:
                    q = s[i] * q
            qbuf[j] = q
            Q = Q + (v * v) / q
        if self.fit_intercept:
            if adaptive:
                jsave(self.jd, &self.Gb[a])
                self.Gb[a] = self.Gb[a] + e * e
                qb = sqrt(self.Gb[a]) if self.Gb[a] > 0.0 else 0.0
            if qb > 0.0:
                Q = Q + 1.0 / qb
        if self.step_cap > 0.0 and not Q - Q == 0.0:
            # ||x||^2 overflowed (or the state is not finite): stop the pass,
            # as for non-finite scores (the block is rolled back)
            self.status = STATUS_NONFINITE
            return
        if self.step_cap > 0.0 and Q > 0.0:
            lim = self.step_cap / (h * Q)
            if lim < rate:
                rate = lim
        for j in range(x.nnz):
            v = x.val[j]
            if v == 0.0:
                continue
            i = j if dense else x.ind[j]
            if qbuf[j] > 0.0:
                jsave(self.jd, &w[i])
                w[i] = w[i] - rate * (e * v) / qbuf[j]
        if self.fit_intercept and qb > 0.0:
            jsave(self.jd, &self.b[a])
            self.b[a] = self.b[a] - rate * e / qb
