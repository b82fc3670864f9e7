"""SOBA kernel: the Second Order Banditron (Beygelzimer, Orabona and Zhang, 2017).

One kernel serves both variants; ``full`` selects how ``A`` is kept:

* ``full=False`` (SOBAdiag): ``A`` is the diagonal ``A_diag``, ``W = θ / A``
  elementwise; an update touches classes ``y`` and ``ȳ`` on the support of ``x``.
* ``full=True``: ``A⁻¹`` (kd, kd) is maintained by Sherman-Morrison; with
  ``v = A⁻¹ z``, ``W ← W − (⟨W, z⟩ + 1/sqrt(p_y)) / (1 + zᵀv) · v`` and
  ``A⁻¹ ← A⁻¹ − w wᵀ`` with ``w = v / sqrt(1 + zᵀv)`` (so ``A⁻¹`` stays exactly
  symmetric: ``w_i w_j == w_j w_i``).

``W``, ``θ`` and ``A_diag`` are stored feature-major, (d, k), as every linear
kernel's weights (``LinearKernel``): class ``r``'s entry on feature ``c`` is
``[c, r]``. ``A⁻¹`` is indexed by the class-major position ``r d + c`` of that
entry in ``vec(W)`` (the estimator's ``A_inv_`` in the paper's order); the full
update of ``W`` maps each position to its feature-major place.

The round (``learn``) is one skeleton for both: the played action ``y`` was right
(reward 1), ``ȳ = argmax_{i≠y} s_i``, ``g = (1/p_y)(e_ȳ − e_y) ⊗ x``,
``z = sqrt(p_y) g``, the margin ``m = (⟨W,z⟩² + 2⟨W,g⟩) / (1 + zᵀA⁻¹z)`` and the
update when ``S + m ≥ 0``. Only ``zᵀA⁻¹z`` and the update of ``A`` and ``W``
depend on the variant.

Zero entries of a row (dense rows, or stored zeros) are skipped: they change
nothing, and skipping them makes dense and CSR rows give bit-identical states.
A CSR row must not store a column twice (the shared validation sums duplicates):
``z`` is squared, so the entries of a column must be summed before.
"""

from libc.math cimport sqrt

import numpy as np

from skbandit._core._kernel cimport (
    Journal,
    LinearKernel,
    Row,
    STATUS_JOURNAL_ERROR,
    STATUS_NONFINITE,
    is_finite,
    jsave,
    jsave_ll,
    jsave_range,
    row_col,
)


# Pending rank-one updates of A⁻¹ (full variant, with a journal): at most
# _MAX_PENDING. Their buffer starts with one row and doubles when full, so a
# call that plays few rows holds few (a one-row call: kd doubles).
cdef int _MAX_PENDING = 64


cdef class SOBAKernel(LinearKernel):
    """Plays its explorer over ``W x`` (SOBA's: ε-greedy, ``gamma`` fixed or
    the adaptive ``γ_t`` read from ``sums[1]``; ``set_explorer``); the SOBA update on rounds whose played action was right."""

    cdef double[:, ::1] theta
    cdef double[:, ::1] A_diag
    cdef double[:, ::1] A_inv
    cdef double[::1] v
    # full variant with a journal: the rank-one updates w wᵀ of A⁻¹ made in
    # the block, pending until the block is committed (rows of ``pending``),
    # and scratch for rows of A⁻¹ with them applied
    cdef double[:, ::1] pending
    cdef int n_pending
    # work spent reading rows of A⁻¹ through the pending updates since the
    # first of them, and the bound (in passes over A⁻¹) that ends the block
    cdef double pending_work
    cdef public double pending_passes
    cdef double[::1] row_a
    cdef double[::1] row_b
    cdef readonly bint full
    # [Σ n_s m_s, Σ n_s z_sᵀA_s⁻¹z_s] and [Σ n_s]: the estimator's state
    # arrays, written in place (so the estimator's attributes stay the same
    # objects and its cached kernel stays valid across calls)
    cdef double[::1] sums
    cdef long long[::1] counts

    def __init__(self, double[:, ::1] W, double[:, ::1] theta,
                 double[:, ::1] A_diag, double[:, ::1] A_inv, bint full,
                 double[::1] sums,
                 long long[::1] counts):
        LinearKernel.__init__(self, W, False)
        cdef Py_ssize_t kd = <Py_ssize_t>W.shape[0] * W.shape[1]  # W is (d, k)
        if theta.shape[0] != W.shape[0] or theta.shape[1] != W.shape[1]:
            raise ValueError("theta must have the shape of W")
        if full:
            if A_inv.shape[0] != kd or A_inv.shape[1] != kd:
                raise ValueError("A_inv must be (kd, kd)")
        elif A_diag.shape[0] != W.shape[0] or A_diag.shape[1] != W.shape[1]:
            raise ValueError("A_diag must have the shape of W")
        if sums.shape[0] != 2 or counts.shape[0] != 1:
            raise ValueError("sums must have 2 entries and counts 1")
        self.theta = theta
        self.A_diag = A_diag
        self.A_inv = A_inv
        self.full = full
        self.v = np.zeros(kd if full else 0, dtype=np.float64)
        self.n_pending = 0
        self.pending_work = 0.0
        self.pending_passes = 1.0
        self.row_a = np.empty(kd if full else 1, dtype=np.float64)
        self.row_b = np.empty(kd if full else 1, dtype=np.float64)
        self.pending = np.empty((0, 0), dtype=np.float64)
        self.sums = sums
        self.counts = counts

    @property
    def cumulative_margin(self):
        """``S = Σ n_s m_s``."""
        return self.sums[0]

    @property
    def exploration_sum(self):
        """``Σ n_s z_sᵀA_s⁻¹z_s``."""
        return self.sums[1]

    @property
    def n_updates(self):
        """``Σ n_s``."""
        return self.counts[0]

    cdef inline double diag_quadratic(self, Row x, int r, double zscale,
                                      double q) noexcept nogil:
        # q plus class r's block of zᵀA⁻¹z for the diagonal A: the sum over the
        # non-zero entries of x of (zscale x_c)² / A_diag[c, r], in column order
        cdef int j
        cdef double zj
        for j in range(x.nnz):
            if x.val[j] == 0.0:
                continue
            zj = zscale * x.val[j]
            q = q + zj * zj / self.A_diag[row_col(x, j), r]
        return q

    cdef double quadratic(self, Row x, int ybar, int y, double zscale) noexcept nogil:
        # zᵀA⁻¹z with z = zscale (e_ȳ − e_y) ⊗ x; the full variant also
        # leaves v = A⁻¹z in self.v.
        cdef int j, c, d = self.n_features
        cdef Py_ssize_t i, kd = <Py_ssize_t>self.n_classes * d
        cdef double zj, q = 0.0
        cdef double* v = NULL
        cdef const double* a_ybar
        cdef const double* a_y
        if not self.full:
            return self.diag_quadratic(x, y, zscale,
                                       self.diag_quadratic(x, ybar, zscale, q))
        # v = A⁻¹z = Σ_c z_c A⁻¹[:, c], read as rows (A⁻¹ is symmetric)
        v = &self.v[0]
        for i in range(kd):
            v[i] = 0.0
        for j in range(x.nnz):
            if x.val[j] == 0.0:
                continue
            c = row_col(x, j)
            zj = zscale * x.val[j]
            self.pending_work += 2.0 * kd * self.n_pending
            a_ybar = self.inverse_row(<Py_ssize_t>ybar * d + c, &self.row_a[0])
            a_y = self.inverse_row(<Py_ssize_t>y * d + c, &self.row_b[0])
            for i in range(kd):
                v[i] = v[i] + zj * (a_ybar[i] - a_y[i])
        for j in range(x.nnz):
            if x.val[j] == 0.0:
                continue
            c = row_col(x, j)
            zj = zscale * x.val[j]
            q = q + zj * (v[<Py_ssize_t>ybar * d + c] - v[<Py_ssize_t>y * d + c])
        return q

    cdef const double* inverse_row(self, Py_ssize_t r, double* buf) noexcept nogil:
        """Row ``r`` of the current A⁻¹: in place, or with the pending updates
        applied into ``buf``, each entry ``A⁻¹[r, l] − w_1[r] w_1[l] − …``
        subtracted in the order they were made: bit for bit the entries an
        immediate update would have left."""
        cdef Py_ssize_t l, kd = self.A_inv.shape[1]
        cdef int u
        cdef double wr
        cdef const double* a = &self.A_inv[r, 0]
        cdef const double* w
        if self.n_pending == 0:
            return a
        for l in range(kd):
            buf[l] = a[l]
        for u in range(self.n_pending):
            w = &self.pending[u, 0]
            wr = w[r]
            for l in range(kd):
                buf[l] = buf[l] - wr * w[l]
        return buf

    cpdef set_journal(self, Journal journal):
        # the full variant defers its updates of A⁻¹ to the commit
        if self.full and journal is not None and self.pending.shape[0] == 0:
            self.pending = np.empty((1, self.A_inv.shape[0]), dtype=np.float64)
        if self.full and journal is not None:
            journal.defer(self)
        self.apply_deferred()
        LinearKernel.set_journal(self, journal)

    def apply_deferred(self):
        """Apply the pending updates to A⁻¹ (the block is committed): each
        entry gets ``A⁻¹[i, l] − w_1[i] w_1[l] − …`` in order, one pass."""
        cdef Py_ssize_t i, l, kd
        cdef int u
        cdef double wi
        cdef double* Ai
        cdef const double* w
        if self.n_pending == 0:
            return
        kd = self.A_inv.shape[0]
        with nogil:
            for i in range(kd):
                Ai = &self.A_inv[i, 0]
                for u in range(self.n_pending):
                    w = &self.pending[u, 0]
                    wi = w[i]
                    for l in range(kd):
                        Ai[l] = Ai[l] - wi * w[l]
        self.n_pending = 0
        self.pending_work = 0.0

    def discard_deferred(self):
        """Forget the pending updates (the block is rolled back)."""
        self.n_pending = 0
        self.pending_work = 0.0

    cdef void update(self, Row x, int ybar, int y, double p, double zscale,
                     double wz, double q) noexcept nogil:
        # A += z zᵀ, θ −= g, W = mat(A⁻¹θ).
        cdef int j, c, r, k = self.n_classes, d = self.n_features
        cdef Py_ssize_t i, l, kd = <Py_ssize_t>self.n_classes * d
        cdef double zj, gj, step, root, vi
        cdef double* v
        cdef double* Ai
        cdef double* W = &self.W[0, 0]
        for j in range(x.nnz):
            if x.val[j] == 0.0:
                continue
            c = row_col(x, j)
            gj = x.val[j] / p
            jsave(self.jd, &self.theta[c, ybar])
            jsave(self.jd, &self.theta[c, y])
            self.theta[c, ybar] = self.theta[c, ybar] - gj
            self.theta[c, y] = self.theta[c, y] + gj
            if not self.full:
                zj = zscale * x.val[j]
                jsave(self.jd, &self.A_diag[c, ybar])
                jsave(self.jd, &self.A_diag[c, y])
                jsave(self.jd, &self.W[c, ybar])
                jsave(self.jd, &self.W[c, y])
                self.A_diag[c, ybar] = self.A_diag[c, ybar] + zj * zj
                self.A_diag[c, y] = self.A_diag[c, y] + zj * zj
                self.W[c, ybar] = self.theta[c, ybar] / self.A_diag[c, ybar]
                self.W[c, y] = self.theta[c, y] / self.A_diag[c, y]
        if not self.full:
            return
        # W ← W − (⟨W,z⟩ + α) / (1 + q) · v, α = 1/sqrt(p); v is indexed
        # class-major (i = r d + c), W feature-major (W[c, r] at c k + r)
        v = &self.v[0]
        step = (wz + 1.0 / sqrt(p)) / (1.0 + q)
        jsave_range(self.jd, W, kd)
        for r in range(k):
            for c in range(d):
                W[<Py_ssize_t>c * k + r] = (W[<Py_ssize_t>c * k + r]
                                            - step * v[<Py_ssize_t>r * d + c])
        # A⁻¹ ← A⁻¹ − w wᵀ, w = v / sqrt(1 + q)
        root = sqrt(1.0 + q)
        for i in range(kd):
            v[i] = v[i] / root
        if self.jd != NULL:
            self.defer_update(v, kd, x.nnz)
            return
        for i in range(kd):
            Ai = &self.A_inv[i, 0]
            vi = v[i]
            for l in range(kd):
                Ai[l] = Ai[l] - vi * v[l]

    cdef void defer_update(self, const double* w, Py_ssize_t kd,
                           int nnz) noexcept nogil:
        """Keep ``w`` as a pending update of A⁻¹ (applied at the commit, so
        that a rolled-back block never touched A⁻¹). Checked before it is kept:
        ``w`` finite and ``|w_i w_l|`` far from overflow (mathematically
        ``w_i² ≤ A⁻¹[i, i]``: the update keeps A⁻¹ positive definite), so the
        commit cannot make A⁻¹ non-finite. ``learn`` ends the block (journal
        ``stop``) when 64 updates are pending, or reading rows of A⁻¹ through
        them has cost ``pending_passes`` passes over A⁻¹ (``pending_work``)."""
        cdef Py_ssize_t i
        cdef double acc = 0.0, big = 0.0, a
        for i in range(kd):
            a = w[i] if w[i] >= 0.0 else -w[i]
            acc = acc + (w[i] - w[i])
            big = a if a > big else big
        if not (acc == 0.0 and big < 1e150):
            self.status = STATUS_NONFINITE
            return
        if self.n_pending == self.pending.shape[0] and not self.grow_pending():
            self.status = STATUS_JOURNAL_ERROR
            return
        for i in range(kd):
            self.pending[self.n_pending, i] = w[i]
        self.n_pending += 1

    cdef bint grow_pending(self) noexcept nogil:
        """Double the rows of ``pending`` (at most ``_MAX_PENDING``), keeping
        the pending updates; False when the allocation fails (the block is
        then rolled back, as for a journal that cannot grow)."""
        cdef Py_ssize_t rows = self.pending.shape[0]
        with gil:
            try:
                grown = np.empty((min(2 * rows, _MAX_PENDING), self.pending.shape[1]),
                                 dtype=np.float64)
                grown[:rows] = self.pending
                self.pending = grown
            except MemoryError:
                return False
        return True

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # cumulative_margin, exploration_sum; per stored entry theta (2), and
        # A_diag, W (2 each) when diagonal; all of W (kd) when full
        if self.full:
            return 2 + 2 * <Py_ssize_t>x.nnz + <Py_ssize_t>self.n_classes * self.n_features
        return 2 + 6 * <Py_ssize_t>x.nnz

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        return 1  # n_updates

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        # the SOBA round, then whether the pending updates of A⁻¹ (full
        # variant with a journal) should be committed: the block ends here
        cdef double kd = <double>self.n_classes * self.n_features
        self.round(x, played, greedy, prob, reward)
        if self.n_pending > 0 and (
                self.n_pending >= _MAX_PENDING
                or self.pending_work >= self.pending_passes * kd * kd):
            self.jd.stop = True

    cdef void round(self, Row x, int played, int greedy, double prob,
                    double reward) noexcept nogil:
        cdef int k = self.n_classes
        cdef int y = played, ybar, r
        cdef const double* s = &self.scores[0]
        cdef double p = prob, delta, wg, wz, zscale, q, m
        if reward == 0.0:
            return  # ỹ ≠ y: y is unknown, no update (n_t = 0)
        # ȳ = argmax_{i≠y} s_i: the greedy label when it is not y (ties were
        # broken by u2), else the first maximiser among the other classes.
        if greedy != y:
            ybar = greedy
        else:
            ybar = 1 if y == 0 else 0
            for r in range(k):
                if r != y and s[r] > s[ybar]:
                    ybar = r
        # ⟨W,g⟩ = (s_ȳ − s_y)/p, ⟨W,z⟩ = sqrt(p) ⟨W,g⟩, z = sqrt(p) g
        delta = s[ybar] - s[y]
        wg = delta / p
        wz = sqrt(p) * wg
        zscale = sqrt(p) / p
        q = self.quadratic(x, ybar, y, zscale)
        m = (wz * wz + 2.0 * wg) / (1.0 + q)
        if not (is_finite(q) and is_finite(m)):
            self.status = STATUS_NONFINITE
            return
        if self.sums[0] + m >= 0.0:
            jsave(self.jd, &self.sums[0])
            jsave(self.jd, &self.sums[1])
            jsave_ll(self.jd, &self.counts[0])
            self.sums[0] = self.sums[0] + m
            self.sums[1] = self.sums[1] + q / (1.0 + q)
            self.counts[0] += 1
            self.update(x, ybar, y, p, zscale, wz, q)

