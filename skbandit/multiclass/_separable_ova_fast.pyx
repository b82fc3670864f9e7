"""One-vs-all for the separable case (Beygelzimer, Pal, Szorenyi, Thiruvenkatachari,
Wei and Zhang, 2019): linear and rational-kernel Perceptrons."""

import numpy as np

from libc.math cimport sqrt

from skbandit._core._kernel cimport BaseKernel, LinearKernel, Row, row_dot


cdef inline void separable_distribution(const double* s, int k, int greedy,
                                        double* p) noexcept nogil:
    """Play the greedy label if its score is >= 0 (the set S of classes
    answering YES is non-empty and the greedy label is its highest score);
    otherwise uniform over the k classes."""
    cdef int r
    if s[greedy] >= 0.0:
        for r in range(k):
            p[r] = 0.0
        p[greedy] = 1.0
    else:
        for r in range(k):
            p[r] = 1.0 / k


cdef class SeparableLinearKernel(LinearKernel):
    """One linear Perceptron per class; ``f_r = w_r . x``, YES when ``f_r >= 0``.

    The played learner receives ``(x, YES)`` if the action was right, ``(x, NO)``
    otherwise, and makes a Perceptron step on its own mistake (``w += x`` on a
    missed YES, ``w -= x`` on a wrong YES). With ``full`` the other learners too
    receive their label on right rounds (the label is then known)."""

    cdef bint full

    def __init__(self, double[:, ::1] W, bint full):
        LinearKernel.__init__(self, W, False)
        self.full = full

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        separable_distribution(s, self.n_classes, greedy, p)

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int r
        cdef const double* s = &self.scores[0]
        if reward != 0.0:
            if s[played] < 0.0:
                self.add_row(played, 1.0, x)
            if self.full:
                for r in range(self.n_classes):
                    if r != played and s[r] >= 0.0:
                        self.add_row(r, -1.0, x)
        elif s[played] >= 0.0:
            self.add_row(played, -1.0, x)


cdef class SeparableRationalKernel(BaseKernel):
    """One kernel Perceptron per class sharing one support set.

    Support vector ``j`` is a row ``V[j]`` with coefficients ``A[j, r]`` in
    ``{-1, 0, +1}``; ``f_r(x) = sum_j A[j, r] k(V[j], x)`` with the rational
    kernel ``k(v, x) = 1 / (1 - v.x / 2)``, summed in support order. A round
    adds at most one support vector (the row, with the sign of each learner
    that made a mistake on it). With a ``budget``, adding to a full set first
    removes the oldest support vector. With ``project``, a row with
    ``||x|| > 1`` enters the kernel as ``x / ||x||`` (an overflowing norm makes
    the scores NaN, which stops the pass).

    ``V`` and ``A`` are buffers of ``capacity`` rows; ``n_sv`` rows are used.
    """

    cdef double[:, ::1] V
    cdef double[:, ::1] A
    cdef public Py_ssize_t n_sv
    cdef Py_ssize_t capacity
    cdef bint full
    cdef bint project
    # the factor of the current row (1, or 1 / ||x|| when projected)
    cdef double xscale
    cdef double[::1] coef

    def __init__(self, double[:, ::1] V, double[:, ::1] A, Py_ssize_t n_sv,
                 bint full, bint project=False):
        BaseKernel.__init__(self, <int>A.shape[1], <int>V.shape[1], False)
        if V.shape[0] != A.shape[0] or not 0 <= n_sv <= V.shape[0]:
            raise ValueError("inconsistent support buffers")
        self.V = V
        self.A = A
        self.n_sv = n_sv
        self.capacity = V.shape[0]
        self.full = full
        self.project = project
        self.xscale = 1.0
        self.coef = np.zeros(A.shape[1], dtype=np.float64)

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        cdef int r, k = self.n_classes
        cdef Py_ssize_t j
        cdef double kv
        cdef double* s = &self.scores[0]
        cdef double sq = 0.0, dot
        for r in range(k):
            s[r] = 0.0
        self.xscale = 1.0
        if self.project:
            for j in range(x.nnz):
                sq = sq + x.val[j] * x.val[j]
            if sq > 1.0:
                # sq = inf would give 1 / inf = 0: use NaN so that the round stops
                self.xscale = 1.0 / sqrt(sq) if sq - sq == 0.0 else sq - sq
        for j in range(self.n_sv):
            dot = row_dot(&self.V[j, 0], x)
            if self.xscale != 1.0:
                dot = dot * self.xscale
            kv = 1.0 / (1.0 - 0.5 * dot)
            for r in range(k):
                s[r] = s[r] + self.A[j, r] * kv
        if not self.xscale == self.xscale:
            for r in range(k):
                s[r] = self.xscale

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        separable_distribution(s, self.n_classes, greedy, p)

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int r, k = self.n_classes
        cdef bint add = False
        cdef const double* s = &self.scores[0]
        for r in range(k):
            self.coef[r] = 0.0
        if reward != 0.0:
            if s[played] < 0.0:
                self.coef[played] = 1.0
                add = True
            if self.full:
                for r in range(k):
                    if r != played and s[r] >= 0.0:
                        self.coef[r] = -1.0
                        add = True
        elif s[played] >= 0.0:
            self.coef[played] = -1.0
            add = True
        if add:
            self.add_support(x)

    cdef void add_support(self, Row x) noexcept nogil:
        cdef Py_ssize_t j, n
        cdef int c, r, d = self.n_features, k = self.n_classes
        if self.capacity == 0:
            return
        if self.n_sv == self.capacity:
            # budget reached: forget the oldest support vector
            for j in range(1, self.n_sv):
                for c in range(d):
                    self.V[j - 1, c] = self.V[j, c]
                for r in range(k):
                    self.A[j - 1, r] = self.A[j, r]
            self.n_sv -= 1
        n = self.n_sv
        for c in range(d):
            self.V[n, c] = 0.0
        if x.ind == NULL:
            for c in range(x.nnz):
                self.V[n, c] = x.val[c] * self.xscale
        else:
            for c in range(x.nnz):
                self.V[n, x.ind[c]] += x.val[c] * self.xscale
        for r in range(k):
            self.A[n, r] = self.coef[r]
        self.n_sv = n + 1

    def support_arrays(self):
        """Copies of the used part of the buffers: ``(V[:n_sv], A[:n_sv])``."""
        return (np.array(self.V[:self.n_sv], copy=True),
                np.array(self.A[:self.n_sv], copy=True))
