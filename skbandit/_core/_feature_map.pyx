"""Compiled feature maps in front of a learner's kernel (``BanditPipeline``).

``FeatureMapKernel`` is a ``BaseKernel`` that turns each row ``x`` (dense or
CSR, ``d`` features) into features ``z`` in a scratch dense row and plays the
wrapped learner's kernel (``inner``) on ``z``; the shared pass drivers
(``run_pass``, ``run_act``, ``run_logged``, ``run_distribution``,
``run_scores``) and ``OnlineSelector``'s kernel play it unchanged. Its
``scores`` and ``proba`` are the inner kernel's own arrays.

The map of one round, in this order (each stage optional):

* **running standardisation** (``OnlineStandardScaler``): with ``n`` the rows
  learnt before this one, ``m_c`` and ``M_c`` the running mean and sum of
  squared deviations of feature ``c`` over them (Welford 1962),
  ``u_c = (x_c - m_c) / s_c`` with ``s_c = sqrt(M_c / n)``, and ``s_c = 1``
  when ``n = 0`` or ``s_c < 10 eps`` (a constant feature, as scikit-learn's
  ``StandardScaler``); ``with_mean=False`` leaves out ``- m_c``,
  ``with_std=False`` the division. Row ``t`` is thus scaled with the
  statistics of rows ``1 .. t-1`` only: ``act`` writes nothing, and the
  statistics are updated with ``x`` in ``learn``, after the inner learner
  learnt from ``z``: ``n <- n + 1``, ``delta = x_c - m_c``,
  ``m_c <- m_c + delta / n``, ``M_c <- M_c + delta (x_c - m_c)`` for every
  feature (a CSR row's absent entries are zeros), each write recorded in the
  undo journal first;
* **random Fourier features** (``sklearn.kernel_approximation.RBFSampler``,
  Rahimi and Recht 2007): with the fitted sampler's ``Omega``
  (``random_weights_``, (d, D)) and ``b`` (``random_offset_``),
  ``a_j = sum_c u_c Omega[c, j]`` summed sequentially over the stored entries
  in increasing ``c`` (from ``+0.0``), then ``z_j = sqrt(2 / D) cos(a_j + b_j)``
  with the cosine ``rff_cos`` below. NumPy's ``u @ Omega`` (BLAS) and
  ``np.cos`` may differ from this in the last bits; ``standardise_rows`` and
  ``rff_rows`` below are the same arithmetic, one row at a time, for the
  Python side and the tests;
* **the row beside its random features** (scikit-learn's ``FeatureUnion`` of
  ``"passthrough"`` and the ``RBFSampler``, with ``transformer_weights``
  ``w_lin`` and ``w_rff``): ``z = (w_lin u_1, ..., w_lin u_d, w_rff z'_1, ...,
  w_rff z'_D)`` with ``z'`` the random features above, each product one
  multiplication (``FeatureUnion`` multiplies each block by its weight; a
  weight of 1 is exact and skipped).

**The product and the cosine.** The sum ``a_j`` is taken for 16 features at
a time held in registers (each line of ``Omega`` is read once a row); each
``a_j`` is still the same additions in the same order. A random feature needs
``cos`` to about the rounding of its argument, and the C library's ``cos`` is
a call per feature with a branch per argument range, which no compiler
vectorises. ``rff_cos`` is the classical reduction and polynomials of fdlibm
(Sun Microsystems 1993, the ``__kernel_cos``/``__kernel_sin`` minimax
coefficients), without branches so that the compiler vectorises the loop over
the ``D`` features:

* ``n = round(x 2/pi)`` (ties to even, by adding and subtracting
  ``1.5 2^52``) and the quadrant ``q = n - 4 round(n / 4)`` in ``-2 .. 2``;
  ``r = ((x - n P1) - n P2) - n P2t`` with ``P1`` and ``P2`` the first two
  33-bit pieces of ``pi/2`` and ``P2t`` the rest (Cody and Waite 1980; ``n P1``
  and ``n P2`` are exact for ``|n| <= 2^20``), so ``|r| <= pi/4``;
* ``C(r) = 1 - (r^2/2 - r^4 (C1 + r^2 (C2 + ... + r^2 C6)))`` and
  ``S(r) = r + r^3 (S1 + r^2 (S2 + ... + r^2 S6))``;
* ``cos x = C, -S, -C, S`` for ``q = 0, 1, +-2, -1``, written
  ``w (-q S) + (1 - w) (1 - q^2/2) C`` with ``w = q^2 (4 - q^2) / 3``, exactly
  0 or 1 (a selection without a branch).

Its absolute error is below ``3e-16`` (``tests/test_pipeline.py`` measures it
against the C library's ``cos``); arguments with ``|x| > 2^19 pi`` (or not
finite) go to the C library's ``cos``. Every operation is one IEEE operation
in a fixed order, so NumPy's elementwise operations compute it bit for bit
(``tests/_reference_pipeline.py``).

The C of a row (``skb_rff_row``, ``_rff.h``) is compiled for SSE2 and for AVX2
where the compiler can choose at load time (``SKB_CLONES``, ``_scores.h``):
the same IEEE operations lane by lane, so the same bits whichever the
processor picks (``tests/test_simd_clones.py`` compares both builds).
"""

from libc.float cimport DBL_EPSILON
from libc.math cimport cos, fabs, sqrt

from skbandit._core._kernel cimport (
    BaseKernel,
    Journal,
    Row,
    STATUS_OK,
    jsave_ll,
    jsave_range,
)
from skbandit._core._rff cimport COS_BOUND, rff_cos_reduced, rff_row

import numpy as np


cdef inline double rff_cos(double x) noexcept nogil:
    """``cos x``: ``rff_cos_reduced`` within the bound, else the C library's."""
    if fabs(x) <= COS_BOUND:
        return rff_cos_reduced(x)
    return cos(x)


cdef inline double scale_of(double m2, long long n) noexcept nogil:
    """The standard deviation ``sqrt(M / n)`` of a feature, 1 when ``n = 0`` or
    it is below ``10 eps`` (a constant feature is then only centred)."""
    cdef double s
    if n == 0:
        return 1.0
    s = sqrt(m2 / <double>n)
    if not s >= 10.0 * DBL_EPSILON:
        return 1.0
    return s


cdef inline void scale_dense(const double* x, int d, const double* mean,
                             const double* m2, long long n, bint with_mean,
                             bint with_std, double* u) noexcept nogil:
    """``u = (x - m) / s`` for a dense row ``x`` (module docstring)."""
    cdef int c
    cdef double v
    for c in range(d):
        v = x[c]
        if with_mean:
            v = v - mean[c]
        if with_std:
            v = v / scale_of(m2[c], n)
        u[c] = v


cdef inline void welford(const double* x, int d, double* mean, double* m2,
                         long long* n) noexcept nogil:
    """One row into the running statistics: ``n <- n + 1``, then per feature
    ``delta = x_c - m_c``, ``m_c <- m_c + delta / n``,
    ``M_c <- M_c + delta (x_c - m_c)``."""
    cdef int c
    cdef double delta
    cdef long long n1 = n[0] + 1
    for c in range(d):
        delta = x[c] - mean[c]
        mean[c] = mean[c] + delta / <double>n1
        m2[c] = m2[c] + delta * (x[c] - mean[c])
    n[0] = n1


def cos_array(const double[::1] x, double[::1] out):
    """``out = rff_cos(x)`` elementwise (the cosine of the random features;
    for the tests)."""
    cdef Py_ssize_t i
    if out.shape[0] != x.shape[0]:
        raise ValueError("inconsistent shapes")
    with nogil:
        for i in range(x.shape[0]):
            out[i] = rff_cos(x[i])


cdef class FeatureMapKernel(BaseKernel):
    """The wrapped kernel ``inner`` played on the mapped row (module docstring)."""

    cdef readonly BaseKernel inner
    # the estimator owning ``inner`` (set by the pipeline; Python only)
    cdef public object owner
    # which stages run
    cdef bint standardise
    cdef bint with_mean
    cdef bint with_std
    cdef bint rff
    # the union's block of the row itself (d features first) and the weights
    cdef int n_lin
    cdef double lin_weight
    cdef double rff_weight
    # the running statistics (the estimator's arrays, updated in ``learn``)
    cdef double[::1] mean
    cdef double[::1] m2
    cdef long long[::1] count
    # the fitted sampler's Omega (d, D) and b (D), and sqrt(2 / D)
    cdef const double[:, ::1] omega
    cdef const double[::1] offset
    cdef int n_out
    cdef double factor
    # scratch: the dense row x (CSR rows scattered), the standardised row u,
    # the features z of the current row
    cdef double[::1] xd
    cdef double[::1] u
    cdef double[::1] z
    cdef Row zrow

    def __init__(self, BaseKernel inner not None, int n_features, *,
                 bint standardise=False, bint with_mean=True, bint with_std=True,
                 double[::1] mean=None, double[::1] m2=None,
                 long long[::1] count=None, const double[:, ::1] omega=None,
                 const double[::1] offset=None, bint passthrough=False,
                 double passthrough_weight=1.0, double rff_weight=1.0):
        cdef int d = n_features
        BaseKernel.__init__(self, inner.n_classes, d, inner.full_information)
        if d < 1:
            raise ValueError("FeatureMapKernel needs at least one input feature")
        self.inner = inner
        self.owner = None
        self.standardise = standardise
        self.with_mean = with_mean
        self.with_std = with_std
        if standardise:
            if (mean is None or m2 is None or count is None or mean.shape[0] != d
                    or m2.shape[0] != d or count.shape[0] != 1 or count[0] < 0):
                raise ValueError("the running statistics must be arrays of "
                                 f"{d} means, {d} sums of squares and one count >= 0")
            self.mean, self.m2, self.count = mean, m2, count
        self.rff = omega is not None
        if self.rff:
            if offset is None or omega.shape[0] != d or offset.shape[0] != omega.shape[1]:
                raise ValueError(f"Omega must be ({d}, D) and b of length D")
            self.omega, self.offset = omega, offset
            self.factor = sqrt(2.0 / <int>omega.shape[1])
            self.n_lin = d if passthrough else 0
            self.n_out = self.n_lin + <int>omega.shape[1]
            self.lin_weight = passthrough_weight
            self.rff_weight = rff_weight
        elif passthrough:
            raise ValueError("the row beside its random features needs Omega and b")
        else:
            self.n_out = d
        if self.n_out != inner.n_features:
            raise ValueError(f"the map gives {self.n_out} features, the learner's "
                             f"kernel reads {inner.n_features}")
        self.xd = np.zeros(d, dtype=np.float64)
        self.u = np.zeros(d, dtype=np.float64)
        self.z = np.zeros(self.n_out, dtype=np.float64)
        self.zrow.val = &self.z[0]
        self.zrow.ind = NULL
        self.zrow.nnz = self.n_out
        # one round's outputs are the inner kernel's
        self.scores = inner.scores
        self.proba = inner.proba
        self.proba_tmp = inner.proba_tmp
        self.explorer = inner.explorer

    cdef void dense_x(self, Row x) noexcept nogil:
        # x as a dense row in ``xd`` (a dense row is read in place)
        cdef int e
        if x.ind == NULL:
            return
        for e in range(self.n_features):
            self.xd[e] = 0.0
        for e in range(x.nnz):
            self.xd[x.ind[e]] = x.val[e]

    cdef inline const double* x_values(self, Row x) noexcept nogil:
        return x.val if x.ind == NULL else &self.xd[0]

    cdef void map_row(self, Row x) noexcept nogil:
        """``z`` for the row ``x`` under the current statistics (no write)."""
        cdef int e, d = self.n_features, D = self.n_out - self.n_lin
        cdef double* out = &self.u[0] if self.rff else &self.z[0]
        cdef double* zr = &self.z[self.n_lin]
        cdef const double* row
        if self.standardise:
            self.dense_x(x)
            scale_dense(self.x_values(x), d, &self.mean[0], &self.m2[0],
                        self.count[0], self.with_mean, self.with_std, out)
            if not self.rff:
                return
            rff_row(out, NULL, d, &self.omega[0, 0], &self.offset[0], D,
                    self.factor, zr)
            row = out
        elif self.rff:
            rff_row(x.val, x.ind, x.nnz, &self.omega[0, 0], &self.offset[0],
                    D, self.factor, zr)
            if self.n_lin:
                self.dense_x(x)
            row = self.x_values(x)
        else:
            self.dense_x(x)
            for e in range(d):
                self.z[e] = self.x_values(x)[e]
            return
        # the union's blocks, each times its weight (1: exact, skipped)
        if self.n_lin:
            for e in range(d):
                self.z[e] = row[e] * self.lin_weight
        if self.rff_weight != 1.0:
            for e in range(D):
                zr[e] = zr[e] * self.rff_weight

    cdef void update_statistics(self, Row x) noexcept nogil:
        # after the row was learnt: its values into the running statistics
        cdef int d = self.n_features
        if not self.standardise:
            return
        self.dense_x(x)
        jsave_range(self.jd, &self.mean[0], d)
        jsave_range(self.jd, &self.m2[0], d)
        jsave_ll(self.jd, &self.count[0])
        welford(self.x_values(x), d, &self.mean[0], &self.m2[0], &self.count[0])

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        self.map_row(x)
        self.inner.compute_scores(self.zrow, t)

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        self.inner.distribution(s, t, greedy, p)

    cdef void marginal_distribution(self, long long t, double* out) noexcept nogil:
        self.inner.marginal_distribution(t, out)

    cdef double tie_marginal(self, long long t, int action) noexcept nogil:
        return self.inner.tie_marginal(t, action)

    cdef double marginal_over(self, long long t, int action, const int* labels,
                              int m) noexcept nogil:
        return self.inner.marginal_over(t, action, labels, m)

    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil:
        cdef int a
        self.map_row(x)
        a = self.inner.act(self.zrow, t, u1, u2, greedy, prob, marginal)
        self.status = self.inner.status
        self.proba_checked = self.inner.proba_checked
        return a

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        # ``z`` is the row's, from ``act`` (learn follows act on the same row)
        self.inner.learn(self.zrow, t, played, greedy, prob, reward)
        self.status = self.inner.status
        if self.status == STATUS_OK:
            self.update_statistics(x)

    cdef void learn_full(self, Row x, long long t, int played, int greedy,
                         int label) noexcept nogil:
        self.inner.learn_full(self.zrow, t, played, greedy, label)
        self.status = self.inner.status
        if self.status == STATUS_OK:
            self.update_statistics(x)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        cdef Py_ssize_t m = self.inner.journal_bound(self.zrow)
        if self.standardise:
            m += 2 * self.n_features
        return m

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        return self.inner.journal_bound_ll() + (1 if self.standardise else 0)

    cpdef set_journal(self, Journal journal):
        # the inner kernel's writes go to the same journal
        BaseKernel.set_journal(self, journal)
        self.inner.set_journal(journal)

    def py_map(self, const double[::1] x):
        """The features ``z`` of one dense row under the current statistics."""
        cdef Row row
        if x.shape[0] != self.n_features:
            raise ValueError(f"x has {x.shape[0]} features, expected {self.n_features}")
        row.val = &x[0]
        row.ind = NULL
        row.nnz = self.n_features
        self.map_row(row)
        return np.array(self.z, copy=True)


def standardise_rows(const double[:, ::1] X, double[::1] mean, double[::1] m2,
                     long long[::1] count, bint with_mean, bint with_std,
                     double[:, ::1] out, bint update):
    """The running standardisation of ``FeatureMapKernel`` over the rows of
    ``X`` in order: ``out[i]`` is row ``i`` scaled with the statistics of the
    rows before it, then (``update``) the statistics take row ``i``; without
    ``update`` every row is scaled with the current statistics."""
    cdef Py_ssize_t i, n = X.shape[0]
    cdef int d = <int>X.shape[1]
    if (mean.shape[0] != d or m2.shape[0] != d or count.shape[0] != 1
            or out.shape[0] != n or out.shape[1] != d):
        raise ValueError("inconsistent shapes")
    if n == 0:
        return
    with nogil:
        for i in range(n):
            scale_dense(&X[i, 0], d, &mean[0], &m2[0], count[0], with_mean,
                        with_std, &out[i, 0])
            if update:
                welford(&X[i, 0], d, &mean[0], &m2[0], &count[0])


include "_rff_rows.pxi"
