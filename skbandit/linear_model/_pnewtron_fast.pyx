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
"""

from libc.math cimport sqrt

import numpy as np

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    LinearKernel,
    Row,
    is_finite,
    jsave,
    jsave_range,
    row_col,
)
from skbandit._core._explore cimport softmax


cdef class PNewtronKernel(LinearKernel):
    cdef double[:, ::1] b
    cdef double[:, ::1] A_diag
    # (ν = ‖U‖², σ, entries touched since the last exact ν)
    cdef double[::1] norm_state
    cdef double[::1] soft
    cdef double[::1] coefs
    cdef readonly double alpha
    cdef readonly double beta
    cdef readonly double D

    def __init__(self, double[:, ::1] W_unscaled, double[:, ::1] b,
                 double[:, ::1] A_diag, double[::1] norm_state,
                 double alpha, double beta, double D):
        LinearKernel.__init__(self, W_unscaled, False)
        if (b.shape[0] != W_unscaled.shape[0] or b.shape[1] != W_unscaled.shape[1]
                or A_diag.shape[0] != W_unscaled.shape[0]
                or A_diag.shape[1] != W_unscaled.shape[1]):
            raise ValueError("b and A_diag must have the shape of W")
        if norm_state.shape[0] != 3:
            raise ValueError("norm_state must have 3 entries")
        self.b = b
        self.A_diag = A_diag
        self.norm_state = norm_state
        self.soft = np.zeros(W_unscaled.shape[0], dtype=np.float64)
        self.coefs = np.zeros(W_unscaled.shape[0], dtype=np.float64)
        self.alpha = alpha
        self.beta = beta
        self.D = D

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        # s = σ (U x)
        cdef int r
        cdef double sigma = self.norm_state[1]
        LinearKernel.compute_scores(self, x, t)
        for r in range(self.n_classes):
            self.scores[r] = sigma * self.scores[r]

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
        cdef double invk = 1.0 / k, ratio, kappa, gw = 0.0, kb, w, gr, u
        cdef double check = 0.0, nrm, touched
        cdef double* U = &self.W[0, 0]
        cdef double* A = &self.A_diag[0, 0]
        cdef double* B = &self.b[0, 0]
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
            for r in range(k):
                gr = co[r] * x.val[j]
                i = <Py_ssize_t>r * d + c
                jsave(self.jd, &A[i])
                jsave(self.jd, &B[i])
                jsave(self.jd, &U[i])
                A[i] = A[i] + kb * (gr * gr)
                B[i] = B[i] + w * gr
                u = U[i]
                U[i] = -B[i] / A[i]
                nrm = (nrm - u * u) + U[i] * U[i]
                check = check + (A[i] - A[i]) + (B[i] - B[i])
            touched = touched + k
        if touched >= <double>kd:
            # the exact ‖U‖², sequentially over every entry
            nrm = 0.0
            for i in range(kd):
                nrm = nrm + U[i] * U[i]
            touched = 0.0
        ns[0] = nrm
        ns[1] = self.D / sqrt(nrm) if nrm > self.D * self.D else 1.0
        ns[2] = touched
        if check != 0.0 or not is_finite(nrm):
            self.status = STATUS_NONFINITE  # A, b or ‖W‖ overflowed
