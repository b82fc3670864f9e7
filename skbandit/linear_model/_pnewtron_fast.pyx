"""PNewtron kernel: the diagonal Newtron (Hazan and Kale, 2011), as the SOBA paper
runs it (Beygelzimer, Orabona and Zhang, 2017, §5).

Softmax play ``p' = (1 − γ) softmax(α s) + γ/k`` over ``s = W x``. Every round,
with the played action ``a`` (probability ``p'_a``) and ``p = softmax(α s)``:

* right (``a = y``): ``∇̃ = ((1 − p_y)/p'_y)(1/k·1 − e_y) ⊗ x``, ``κ = p'_y``;
* wrong: ``∇̃ = (p_a/p'_a)(e_a − 1/k·1) ⊗ x``, ``κ = 1``;

then ``A += κβ ∇̃²`` (elementwise; ``A`` starts at ``1/D``),
``b += (1 − κβ⟨∇̃, W⟩) ∇̃``, ``W = −b/A``, and ``W`` is rescaled to
``‖W‖_F = D`` when its norm is larger (every round, as the authors' code does).

``∇̃`` touches every class on the support of ``x``: ``O(k nnz(x))``; the
projection reads all of ``W``: ``O(kd)`` per round. Zero entries of a row are
skipped (dense and CSR rows give bit-identical states); a CSR row must not store
a column twice (``∇̃`` is squared; the shared validation sums duplicates).
"""

from libc.math cimport exp, sqrt

import numpy as np

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    Journal,
    LinearKernel,
    Row,
    jsave,
)


cdef class PNewtronKernel(LinearKernel):
    cdef double[:, ::1] b
    cdef double[:, ::1] A_diag
    cdef double[::1] soft
    cdef double[::1] coefs
    cdef readonly double gamma
    cdef readonly double alpha
    cdef readonly double beta
    cdef readonly double D
    # W was rewritten since the last commit (see ``set_journal``)
    cdef bint projected

    def __init__(self, double[:, ::1] W, double[:, ::1] b, double[:, ::1] A_diag,
                 double gamma, double alpha, double beta, double D):
        LinearKernel.__init__(self, W, False)
        if (b.shape[0] != W.shape[0] or b.shape[1] != W.shape[1]
                or A_diag.shape[0] != W.shape[0] or A_diag.shape[1] != W.shape[1]):
            raise ValueError("b and A_diag must have the shape of W")
        self.b = b
        self.A_diag = A_diag
        self.soft = np.zeros(W.shape[0], dtype=np.float64)
        self.coefs = np.zeros(W.shape[0], dtype=np.float64)
        self.gamma = gamma
        self.alpha = alpha
        self.beta = beta
        self.D = D
        self.projected = False

    cdef void softmax(self, const double* s, double* p) noexcept nogil:
        # p_r = exp(α s_r − max_i α s_i) / Σ_i exp(α s_i − max), summed in order
        cdef int r, k = self.n_classes
        cdef double mx = self.alpha * s[0], z = 0.0
        for r in range(1, k):
            if self.alpha * s[r] > mx:
                mx = self.alpha * s[r]
        for r in range(k):
            p[r] = exp(self.alpha * s[r] - mx)
            z = z + p[r]
        for r in range(k):
            p[r] = p[r] / z

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        # p' = (1 − γ) softmax(α s) + γ/k; the greedy label plays no part.
        cdef int r, k = self.n_classes
        cdef double base = self.gamma / k
        self.softmax(s, p)
        for r in range(k):
            p[r] = (1.0 - self.gamma) * p[r] + base

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int k = self.n_classes, d = self.n_features
        cdef int r, j, c
        cdef Py_ssize_t i
        cdef const double* s = &self.scores[0]
        cdef double* P = &self.soft[0]
        cdef double* co = &self.coefs[0]
        cdef double invk = 1.0 / k, ratio, kappa, gw = 0.0, kb, w, gr
        cdef double check = 0.0
        cdef double* A = &self.A_diag[0, 0]
        cdef double* B = &self.b[0, 0]
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
        for j in range(x.nnz):
            if x.val[j] == 0.0:
                continue
            c = j if x.ind == NULL else x.ind[j]
            for r in range(k):
                gr = co[r] * x.val[j]
                i = <Py_ssize_t>r * d + c
                jsave(self.jd, &A[i])
                jsave(self.jd, &B[i])
                A[i] = A[i] + kb * (gr * gr)
                B[i] = B[i] + w * gr
                check = check + (A[i] - A[i]) + (B[i] - B[i])
        if check != 0.0:
            self.status = STATUS_NONFINITE  # A or b overflowed
            return
        self.projected = True
        if not self.project():
            self.status = STATUS_NONFINITE  # W = −b/A overflowed

    cdef bint project(self) noexcept nogil:
        """``W = −b/A``, then rescaled to ``‖W‖_F ≤ D``: a function of ``A``
        and ``b`` alone. False when ``‖W‖²`` is not finite."""
        cdef Py_ssize_t i, kd = <Py_ssize_t>self.n_classes * self.n_features
        cdef double nrm = 0.0, scale
        cdef double* W = &self.W[0, 0]
        cdef const double* A = &self.A_diag[0, 0]
        cdef const double* B = &self.b[0, 0]
        for i in range(kd):
            W[i] = -B[i] / A[i]
            nrm = nrm + W[i] * W[i]
        if nrm > self.D * self.D:
            scale = self.D / sqrt(nrm)
            for i in range(kd):
                W[i] = W[i] * scale
        return nrm - nrm == 0.0

    cpdef set_journal(self, Journal journal):
        # ``W`` is rewritten whole every round from ``A`` and ``b``, which are
        # journaled: it is not journaled (that would record k d entries per
        # round) but recomputed from them when a block is undone
        if journal is not None:
            journal.defer(self)
        LinearKernel.set_journal(self, journal)

    def apply_deferred(self):
        """Nothing is deferred (see ``set_journal``): the block is committed."""
        self.projected = False

    def discard_deferred(self):
        """After an undo of ``A`` and ``b``: ``W`` as the last committed round
        left it (the same function of them; untouched if no round of the
        block rewrote it)."""
        if self.projected:
            with nogil:
                self.project()
        self.projected = False
