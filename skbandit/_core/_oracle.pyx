"""The regression oracle: online linear regressors of rewards, one per action.

A kernel that regresses rewards (SquareCB's) holds a ``RegressionOracle`` over
its state arrays and calls ``update(jd, x, a, score, target, weight)`` on the
played action: one online step of regressor ``a`` on the weighted squared loss
``h (pred_a - r)^2 / 2`` (``h`` = ``weight``, e.g. ``1 / p`` with importance
weighting), by one of three step-size rules (``skbandit.optim``, compiled in
``_step.pxd``):

* ``STEP_NORMALIZED`` -- Ross, Mineiro & Langford (2013), Algorithm NAG: the
  scale ``S[a, i]`` of feature ``i`` is the largest ``|x_i|`` seen; when it
  grows, ``w_i *= S_i / |x_i|`` (NAG's past steps on ``w_i`` are proportional
  to ``1 / S_i``: this is ``w_i`` as if the new scale had been used), then
  ``pred = w . x + b`` and ``N_a += sum_i (x_i / S_i)^2 (+ 1)``; the rate is
  ``learning_rate * sqrt(n_a / N_a)`` and the step's denominator
  ``q_i = S_i sqrt(G_i)``. With ``shared_scale`` the scale of feature ``i`` is
  one for all regressors, stored once (``S`` of one row; after per-class
  scales, ``k`` rows, each growing by its own test towards the shared maximum):
  a growth rescales ``w_i`` of every regressor (``O(k)`` per growth);
* ``STEP_ADAGRAD`` (per coordinate) -- AdaGrad (Duchi, Hazan & Singer 2011):
  ``pred`` is the round's score, ``q_i = sqrt(G_i)``, rate ``learning_rate``;
* ``STEP_CONSTANT`` -- ``pred`` the round's score, ``q_i = 1``, rate
  ``learning_rate``.

The step, with error ``e = h (pred - r)``: ``G_i += (e x_i)^2`` (adaptive rules;
a coordinate is not moved while ``G_i = 0``), ``w_i -= rate e x_i / q_i``; the
intercept is a constant feature of value 1 whose scale is fixed to 1
(``Gb += e^2``, ``q_b = sqrt(Gb)``). With a step cap ``c`` in ``(0, 1]`` the
rate is capped at ``c / (h Q)``, ``Q = sum_i x_i^2 / q_i (+ 1 / q_b)``, so the
prediction on the row moves towards the target by at most ``c |pred - r|``: it
never overshoots. Stored zeros (dense zeros included) are skipped: they neither
set a scale nor count in ``N`` (their gradient is 0), so dense and CSR rows give
the same state. Every write is journaled first (``jsave``), for the rollback.

The weights and scales are stored feature-major, as every linear kernel's
weights (``LinearKernel`` in _kernel.pxd): ``W`` and ``S`` are (d, k) (``S``
(d, 1) for the shared scales stored once), regressor ``a``'s entry of feature
``i`` at ``[i, a]``. ``G``, which only the step of one regressor reads, is
class-major, (k, d): regressor ``a``'s sums are the contiguous ``G[a]``.

``tests/_reference_oracle.py`` is the NumPy twin, operation for operation.
"""

from libc.math cimport fabs, sqrt

from skbandit._core._kernel cimport (
    JournalData,
    Row,
    is_finite,
    jsave,
    jsave_ll,
    jsave_row,
    row_col,
    row_dense,
    skb_prefetch_row_w,
)
from skbandit._core._oracle_step cimport oracle_denominators, oracle_moves
from skbandit._core._step cimport (
    STEP_ADAGRAD,
    STEP_CONSTANT,
    STEP_NORMALIZED,
    step_rule,
)

import numpy as np

#: The codes of the compiled step-size rules (``_step.pxd``), by rule name
#: (``skbandit.optim``'s ``name``).
STEP_KINDS = {
    "constant": int(STEP_CONSTANT),
    "adagrad": int(STEP_ADAGRAD),
    "normalized": int(STEP_NORMALIZED),
}


cdef inline void _gather(const double* w, Py_ssize_t s, Row x,
                         double* out) noexcept nogil:
    """``out[e] = w[c_e * s]`` for the row's entries ``e`` at columns ``c_e``."""
    cdef int e
    if row_dense(x):
        for e in range(x.nnz):
            out[e] = w[e * s]
    else:
        for e in range(x.nnz):
            out[e] = w[x.ind[e] * s]


cdef inline void _scatter(const double* v, double* w, Py_ssize_t s,
                          Row x) noexcept nogil:
    """``w[c_e * s] = v[e]`` (``_gather`` backwards)."""
    cdef int e
    if row_dense(x):
        for e in range(x.nnz):
            w[e * s] = v[e]
    else:
        for e in range(x.nnz):
            w[x.ind[e] * s] = v[e]


cdef inline void _subtract(const double* v, const double* q, double* w,
                           Py_ssize_t s, Row x) noexcept nogil:
    """``w[c_e * s] = w[c_e * s] - v[e]`` where ``q[e] > 0`` (a moved entry)."""
    cdef int e
    if row_dense(x):
        for e in range(x.nnz):
            if q[e] > 0.0:
                w[e * s] = w[e * s] - v[e]
    else:
        for e in range(x.nnz):
            if q[e] > 0.0:
                w[x.ind[e] * s] = w[x.ind[e] * s] - v[e]


cdef class RegressionOracle:
    """``k`` online linear regressors of rewards over the given state arrays
    (updated in place; see the module docstring)."""

    def __init__(self, double[:, ::1] W, double[::1] b, double[:, ::1] S,
                 double[:, ::1] G, double[::1] Gb, double[::1] N,
                 long long[::1] n_upd, tuple step_size, bint fit_intercept,
                 double step_cap, bint shared_scale):
        d, k = W.shape[0], W.shape[1]
        if (b.shape[0] != k or S.shape[1] not in (1, k) or S.shape[0] != d
                or G.shape[0] != k or G.shape[1] != d or Gb.shape[0] != k
                or N.shape[0] != k or n_upd.shape[0] != k):
            raise ValueError("regression oracle state arrays have inconsistent "
                             "shapes")
        # (kind, learning rate, per coordinate): skbandit.optim's _compile()
        rule = step_rule(step_size)
        if rule.kind == STEP_ADAGRAD and not rule.per_coordinate:
            raise ValueError("the regression oracle's AdaGrad is per "
                             "coordinate")
        self.W = W
        self.b = b
        self.S = S
        self.G = G
        self.Gb = Gb
        self.N = N
        self.n_upd = n_upd
        self.rule = rule
        self.fit_intercept = fit_intercept
        self.step_cap = step_cap
        self.shared_scale = shared_scale
        self.one_scale = S.shape[1] == 1
        self.qbuf = np.zeros(4 * 64, dtype=np.float64)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # NAG's rescale: W and S of the updated regressor (of every regressor
        # with shared scales) per entry, and N; the step: G and W per entry,
        # Gb and b. Plus one integer entry (n_upd), see the kernel's
        # journal_bound_ll.
        cdef Py_ssize_t rescaled = self.W.shape[1] if self.shared_scale else 1
        return (2 * rescaled + 2) * <Py_ssize_t>x.nnz + 3

    cdef void prefetch_update(self, Row x, int a) noexcept nogil:
        """Ask for the lines ``update`` of regressor ``a`` on the sparse row
        ``x`` reads and writes beyond ``W[:, a]`` (which the scores have just
        read): ``G[:, a]`` (adaptive rules) and NAG's scales ``S`` on the
        row's columns. A hint only: no value changes."""
        if x.nnz == 0 or row_dense(x):
            return
        if self.rule.kind != STEP_CONSTANT:
            skb_prefetch_row_w(&self.G[a, 0], 1, x.ind, x.nnz)
        if self.rule.kind == STEP_NORMALIZED:
            skb_prefetch_row_w(&self.S[0, 0 if self.one_scale else a],
                               self.S.shape[1], x.ind, x.nnz)

    cdef bint update(self, JournalData* jd, Row x, int a, double score,
                     double target, double weight) noexcept nogil:
        """One step of regressor ``a`` towards ``target`` with weight ``h``
        (``score``: its prediction ``w_a . x + b_a`` of this round, used by
        AdaGrad and SGD; NAG predicts after its rescale). ``n_a += 1`` in
        every case. False when the step is not finite (``||x||^2``
        overflowed, or the state is not finite): the caller stops the pass."""
        cdef double pred, rate
        jsave_ll(jd, &self.n_upd[a])
        self.n_upd[a] += 1
        if self.rule.kind == STEP_NORMALIZED:
            pred = self.nag_rescale(jd, x, a)
            if self.N[a] <= 0.0:
                return True  # an empty row without intercept: nothing to learn
            rate = self.rule.learning_rate * sqrt(<double>self.n_upd[a] / self.N[a])
        else:
            pred = score
            rate = self.rule.learning_rate
        return self.step(jd, x, a, weight, weight * (pred - target), rate)

    cdef double nag_rescale(self, JournalData* jd, Row x, int a) noexcept nogil:
        # Ross, Mineiro & Langford (2013), Algorithm NAG, first half, on
        # regressor a: rescale the weights of the features whose scale grows
        # (w_i *= s_i / |x_i|; the squared factor belongs to the non-adaptive
        # NG, whose steps go as 1 / s_i^2), predict, and add the row's
        # normalized squared norm to N.
        cdef Py_ssize_t k = self.W.shape[1], ss = self.S.shape[1], i
        cdef double* w = &self.W[0, a]
        cdef double* s = &self.S[0, 0 if self.one_scale else a]
        cdef double pred = 0.0, nrm = 0.0, v, av, q
        cdef int j, r
        for j in range(x.nnz):
            v = x.val[j]
            if v == 0.0:
                continue
            i = row_col(x, j)
            av = fabs(v)
            if av > s[i * ss]:
                if self.one_scale:
                    # one stored column of shared scales: every regressor's w_i
                    # by it (the same operations as k equal rows; a weight is
                    # only read and written when the scale was positive, a
                    # zero scale meaning the feature was never seen, w_i = 0)
                    if s[i] > 0.0:
                        for r in range(k):
                            jsave(jd, &self.W[i, r])
                            self.W[i, r] = self.W[i, r] * (s[i] / av)
                    jsave(jd, &s[i])
                    s[i] = av
                elif self.shared_scale:
                    # each regressor by its own scale (all equal unless
                    # shared_scale was switched on mid-stream)
                    for r in range(k):
                        if av > self.S[i, r]:
                            jsave(jd, &self.W[i, r])
                            jsave(jd, &self.S[i, r])
                            if self.S[i, r] > 0.0:
                                self.W[i, r] = self.W[i, r] * (self.S[i, r] / av)
                            self.S[i, r] = av
                else:
                    jsave(jd, &w[i * k])
                    jsave(jd, &s[i * ss])
                    if s[i * ss] > 0.0:
                        w[i * k] = w[i * k] * (s[i * ss] / av)
                    s[i * ss] = av
            pred = pred + w[i * k] * v
            q = v / s[i * ss]
            nrm = nrm + q * q
        if self.fit_intercept:
            pred = pred + self.b[a]
            nrm = nrm + 1.0
        jsave(jd, &self.N[a])
        self.N[a] = self.N[a] + nrm
        return pred

    cdef bint step(self, JournalData* jd, Row x, int a, double h, double e,
                   double rate) noexcept nogil:
        # One step on h (pred - r)^2 / 2 with error e = h (pred - r):
        # w_i -= rate g_i / q_i with g_i = e x_i and the per-coordinate
        # denominator q_i = s_i sqrt(G_i) (NAG), sqrt(G_i) (AdaGrad) or 1 (SGD),
        # G_i += g_i^2 first. With a step cap c > 0 the rate is capped at
        # c / (h Q), Q = sum_i x_i^2 / q_i (+ 1 / q_b): the step then moves the
        # prediction towards the target by at most c |pred - r| (the move is
        # rate h Q |pred - r|). The entry-wise arithmetic runs in
        # _oracle_step.h's vectorised loops on the regressor's entries of the
        # row's columns, gathered into the scratch and scattered back.
        cdef Py_ssize_t k = self.W.shape[1], ss = self.S.shape[1]
        cdef double* w = &self.W[0, a]
        cdef double* s = &self.S[0, 0 if self.one_scale else a]
        cdef double* G = &self.G[a, 0]
        cdef double *gbuf, *sbuf, *qbuf, *tbuf
        cdef double Q, qb = 1.0, lim
        cdef Py_ssize_t cap
        cdef int n = x.nnz
        cdef bint adaptive = self.rule.kind != STEP_CONSTANT
        if e == 0.0:
            return True  # no error: nothing to learn (every g_i is 0)
        if 4 * n > self.qbuf.shape[0]:
            with gil:
                self.qbuf = np.zeros(4 * max(n, self.qbuf.shape[0] // 2))
        cap = self.qbuf.shape[0] // 4
        gbuf = &self.qbuf[0]
        sbuf = gbuf + cap
        qbuf = sbuf + cap
        tbuf = qbuf + cap
        if adaptive:
            # G is class-major: on a dense row the loops update G[a] in place
            jsave_row(jd, G, 1, x)
            if not row_dense(x):
                _gather(G, 1, x, gbuf)
            if self.rule.kind == STEP_NORMALIZED:
                _gather(s, ss, x, sbuf)
            Q = oracle_denominators(
                x.val, n, e, G if row_dense(x) else gbuf,
                sbuf if self.rule.kind == STEP_NORMALIZED else NULL, qbuf, tbuf)
            if not row_dense(x):
                _scatter(gbuf, G, 1, x)
        else:
            Q = oracle_denominators(x.val, n, e, NULL, NULL, qbuf, tbuf)
        if self.fit_intercept:
            if adaptive:
                jsave(jd, &self.Gb[a])
                self.Gb[a] = self.Gb[a] + e * e
                qb = sqrt(self.Gb[a]) if self.Gb[a] > 0.0 else 0.0
            if qb > 0.0:
                Q = Q + 1.0 / qb
        if self.step_cap > 0.0 and not is_finite(Q):
            # ||x||^2 overflowed (or the state is not finite): the caller
            # stops the pass, as for non-finite scores (the block is rolled back)
            return False
        if self.step_cap > 0.0 and Q > 0.0:
            lim = self.step_cap / (h * Q)
            if lim < rate:
                rate = lim
        jsave_row(jd, w, k, x)
        oracle_moves(x.val, n, rate, e, qbuf, tbuf)
        _subtract(tbuf, qbuf, w, k, x)
        if self.fit_intercept and qb > 0.0:
            jsave(jd, &self.b[a])
            self.b[a] = self.b[a] - rate * e / qb
        return True

    # ------------------------------------------------ Python-callable twin
    def py_update(self, const double[::1] val, const int[::1] ind, int a,
                  double score, double target, double weight):
        """``update`` on one row, without a journal; returns its flag. The row
        is ``val`` at the columns ``ind`` (increasing), or the dense row
        ``val`` of ``d`` values when ``ind`` is None."""
        cdef Row x
        cdef int e, d = <int>self.W.shape[0]
        cdef int zero = 0
        if not 0 <= a < self.W.shape[1]:
            raise ValueError(f"action {a} out of range")
        if ind is None:
            if val.shape[0] != d:
                raise ValueError(f"a dense row needs {d} values, got "
                                 f"{val.shape[0]}")
        else:
            if ind.shape[0] != val.shape[0]:
                raise ValueError("val and ind differ in length")
            for e in range(ind.shape[0]):
                if not 0 <= ind[e] < d or (e > 0 and ind[e] <= ind[e - 1]):
                    raise ValueError("column indices must be increasing and "
                                     f"in [0, {d})")
        x.nnz = <int>val.shape[0]
        x.val = &val[0] if val.shape[0] > 0 else NULL
        if ind is None:
            x.ind = NULL
        else:
            # an empty sparse row: a non-NULL index pointer (NULL means dense)
            x.ind = &ind[0] if ind.shape[0] > 0 else <const int*>&zero
        return self.update(NULL, x, a, score, target, weight)


include "_oracle_step.pxi"
