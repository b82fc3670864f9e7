"""PNewtron kernel: the diagonal Newtron (Hazan and Kale, 2011), as the SOBA paper
runs it (Beygelzimer, Orabona and Zhang, 2017, §5).

Plays its explorer over ``s = W x`` (PNewtron's: softmax play
``p' = (1 − γ) softmax(α s) + γ/k``; ``set_explorer``). Every round, with the
played action ``a`` (probability ``p'_a``, the explorer's) and ``p = softmax(α s)``:

* right (``a = y``): ``∇̃ = ((1 − p_y)/p'_y)(1/k·1 − e_y) ⊗ x``, ``κ = p'_y``;
* wrong: ``∇̃ = (p_a/p'_a)(e_a − 1/k·1) ⊗ x``, ``κ = 1``;

then ``A += κβ ∇̃²`` (elementwise; ``A`` starts at ``1/D``),
``b += (1 − κβ⟨∇̃, W⟩) ∇̃``, and ``W = −b/A`` rescaled to ``‖W‖_F = D`` when
its norm is larger (every round, as the authors' code does).

**Lazy scale.** ``W = σ U`` is kept as ``U = −b/A`` (``W_unscaled``, updated on
the touched entries only) and the scale ``σ = min(1, D/‖U‖_F)``; the scores are
``σ (U x)``. ``‖U‖²`` is kept incrementally (``ν ← (ν − u_old²) + u_new²`` for
each touched entry, in row then class order) and recomputed exactly (a
sequential sum over all entries) once ``kd`` entries were touched since the last
exact sum: O(1) amortised per touched entry. The norm state
``(ν, σ, touched)`` is a 3-array updated in place. A round is ``O(k nnz(x))``.
Zero entries of a row are skipped (dense and CSR rows give bit-identical
states); a CSR row must not store a column twice (``∇̃`` is squared; the shared
validation sums duplicates).

**Layout (feature-major).** A round reads ``U`` and updates ``U``, ``A`` and
``b`` of every class on each stored feature of ``x``; the state is laid out so
that those entries of one feature are contiguous: ``Ut[j, r] = U[r, j]`` (a
(d, k) array) and ``Ab[j, r] = (A[r, j], b[r, j])`` (a (d, k, 2) array). A
round then reads ``k`` consecutive values of ``Ut`` and ``2k`` of ``Ab`` per
stored feature (``24 k`` bytes: 8 cache lines at k = 20, in sequence) instead
of ``3k`` scattered entries of three (k, d) arrays (``3k`` cache lines, each a
miss once the model outgrows the caches), and journals them as two ranges. The
scores ``U x`` are summed per class over the row's entries in stored order, as
``LinearKernel``'s are (bit for bit the same sums); only the exact re-sum of
``‖U‖²`` (in class then feature order) reads ``Ut`` with a stride.
"""

from libc.math cimport sqrt

import numpy as np

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    BaseKernel,
    Row,
    is_finite,
    jsave_range,
    prefetch_w,
    row_col,
    row_dense,
)
from skbandit._core._explore cimport softmax

# The state (U, A, b: 24 k d bytes) above which a round on a sparse row
# prefetches its lines (``prefetch_row``): the core's threshold (below it the
# state stays in the caches and the prefetches are instructions for nothing).
from skbandit._core._kernel import PREFETCH_MIN_BYTES


cdef class PNewtronKernel(BaseKernel):
    # U[r, j] at Ut[j, r]; (A[r, j], b[r, j]) at Ab[j, r, 0], Ab[j, r, 1]
    cdef double[:, ::1] Ut
    cdef double[:, :, ::1] Ab
    # (ν = ‖U‖², σ, entries touched since the last exact ν)
    cdef double[::1] norm_state
    cdef double[::1] soft
    cdef double[::1] coefs
    cdef readonly double alpha
    cdef readonly double beta
    cdef readonly double D
    # whether a round prefetches its lines of the state (PREFETCH_MIN_BYTES)
    cdef readonly bint prefetch

    def __init__(self, double[:, ::1] Ut, double[:, :, ::1] Ab,
                 double[::1] norm_state, double alpha, double beta, double D):
        BaseKernel.__init__(self, <int>Ut.shape[1], <int>Ut.shape[0], False)
        if Ab.shape[0] != Ut.shape[0] or Ab.shape[1] != Ut.shape[1] or Ab.shape[2] != 2:
            raise ValueError("Ab must have shape (n_features, n_classes, 2)")
        if norm_state.shape[0] != 3:
            raise ValueError("norm_state must have 3 entries")
        self.Ut = Ut
        self.Ab = Ab
        self.norm_state = norm_state
        self.soft = np.zeros(Ut.shape[1], dtype=np.float64)
        self.coefs = np.zeros(Ut.shape[1], dtype=np.float64)
        self.alpha = alpha
        self.beta = beta
        self.D = D
        self.prefetch = 24 * <double>Ut.shape[0] * Ut.shape[1] > PREFETCH_MIN_BYTES

    cdef void prefetch_row(self, Row x) noexcept nogil:
        # Ask for the lines of U, A and b on the row's features before the
        # round reads them, so that their misses are in flight together
        # rather than one feature after the other
        cdef Py_ssize_t k = self.n_classes, c, m
        cdef int e
        cdef const double* u
        cdef const double* ab
        for e in range(x.nnz):
            c = row_col(x, e)
            u = &self.Ut[0, 0] + c * k
            ab = &self.Ab[c, 0, 0]
            for m in range(0, k, 8):
                prefetch_w(u + m)
            prefetch_w(u + k - 1)
            for m in range(0, 2 * k, 8):
                prefetch_w(ab + m)
            prefetch_w(ab + 2 * k - 1)

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        # s = σ (U x): s_r = Σ_e U[r, col_e] x_e, summed in stored order (the
        # sums of LinearKernel's scores), then scaled
        cdef int k = self.n_classes
        cdef int r, e
        cdef double v, sigma = self.norm_state[1]
        cdef double* sc = &self.scores[0]
        cdef const double* U = &self.Ut[0, 0]
        cdef const double* u
        if self.prefetch and not row_dense(x):
            self.prefetch_row(x)
        for r in range(k):
            sc[r] = 0.0
        for e in range(x.nnz):
            v = x.val[e]
            u = U + <Py_ssize_t>row_col(x, e) * k
            for r in range(k):
                sc[r] = sc[r] + u[r] * v
        for r in range(k):
            sc[r] = sigma * sc[r]

    cdef void softmax(self, const double* s, double* p) noexcept nogil:
        # p_r = exp(α s_r − max_i α s_i) / Σ_i exp(α s_i − max), summed in order
        softmax(s, self.n_classes, self.alpha, p)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # norm_state (3), and A, b, U of every class per stored entry
        return 3 + 3 * <Py_ssize_t>self.n_classes * x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int k = self.n_classes, d = self.n_features
        cdef int r, j, c
        cdef Py_ssize_t i, kd = <Py_ssize_t>k * d
        cdef const double* s = &self.scores[0]
        cdef double* P = &self.soft[0]
        cdef double* co = &self.coefs[0]
        cdef double invk = 1.0 / k, ratio, kappa, gw = 0.0, kb, w, gr, u, a, b
        cdef double check = 0.0, nrm, touched
        cdef double* U = &self.Ut[0, 0]
        cdef double* ut
        cdef double* ab
        cdef double* ns = &self.norm_state[0]
        self.softmax(s, P)
        # ∇̃ = co ⊗ x, with the coefficients of each class in co
        if reward != 0.0:
            ratio = (1.0 - P[played]) / prob
            kappa = prob
            for r in range(k):
                co[r] = ratio * (invk - (1.0 if r == played else 0.0))
        else:
            ratio = P[played] / prob
            kappa = 1.0
            for r in range(k):
                co[r] = ratio * ((1.0 if r == played else 0.0) - invk)
        # ⟨∇̃, W⟩ = Σ_r co_r (W x)_r
        for r in range(k):
            gw = gw + co[r] * s[r]
        kb = kappa * self.beta
        w = 1.0 - kb * gw
        jsave_range(self.jd, ns, 3)
        nrm, touched = ns[0], ns[2]
        for j in range(x.nnz):
            if x.val[j] == 0.0:
                continue
            c = row_col(x, j)
            # U, and the (A, b) pairs, of every class on feature c: two ranges
            ut = U + <Py_ssize_t>c * k
            ab = &self.Ab[c, 0, 0]
            jsave_range(self.jd, ab, 2 * k)
            jsave_range(self.jd, ut, k)
            for r in range(k):
                gr = co[r] * x.val[j]
                a = ab[2 * r] + kb * (gr * gr)
                b = ab[2 * r + 1] + w * gr
                ab[2 * r] = a
                ab[2 * r + 1] = b
                u = ut[r]
                ut[r] = -b / a
                nrm = (nrm - u * u) + ut[r] * ut[r]
                check = check + (a - a) + (b - b)
            touched = touched + k
        if touched >= <double>kd:
            # the exact ‖U‖², sequentially over every entry of U in class
            # then feature order (Ut's columns in turn)
            nrm = 0.0
            for r in range(k):
                for i in range(d):
                    u = U[i * k + r]
                    nrm = nrm + u * u
            touched = 0.0
        ns[0] = nrm
        ns[1] = self.D / sqrt(nrm) if nrm > self.D * self.D else 1.0
        ns[2] = touched
        if check != 0.0 or not is_finite(nrm):
            self.status = STATUS_NONFINITE  # A, b or ‖W‖ overflowed
