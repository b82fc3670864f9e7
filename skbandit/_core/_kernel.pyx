"""Pass driver shared by every learner's kernel (see _kernel.pxd)."""


import numpy as np


cdef class BaseKernel:
    """One-round interface of a learner; subclasses implement ``act``/``learn``."""

    def __init__(self, int n_classes, bint full_information=False):
        if type(self) is BaseKernel:
            raise TypeError("BaseKernel is abstract: use a learner's kernel")
        self.n_classes = n_classes
        self.full_information = full_information
        self.scores = np.zeros(n_classes, dtype=np.float64)

    cdef int act(self, Row x, double u1, double u2,
                 int* greedy, double* prob) noexcept nogil:
        # Overridden by every concrete kernel (instantiation is refused above).
        greedy[0] = 0
        prob[0] = 1.0
        return 0

    cdef void learn(self, Row x, int played, int greedy, double prob,
                    bint reward) noexcept nogil:
        pass

    cdef void learn_full(self, Row x, int played, int greedy,
                         int label) noexcept nogil:
        pass


cdef class LinearKernel(BaseKernel):
    """Scores ``W x``; by default plays the greedy label with probability one
    (the full-information baselines and the one-vs-all learners)."""

    def __init__(self, double[:, ::1] W, bint full_information=False):
        BaseKernel.__init__(self, <int>W.shape[0], full_information)
        self.W = W
        self.n_features = <int>W.shape[1]

    cdef void linear_scores(self, Row x) noexcept nogil:
        # scores[r] = row_dot(W[r], x) for every class r. Classes are taken
        # four at a time with the accumulators in registers, so the row's
        # values and indices are loaded once per block instead of once per
        # class, and four independent sums are in flight. Each score is still
        # summed over the row's entries in stored order: bit-identical to
        # row_dot.
        cdef int j, r = 0, col
        cdef int k = self.n_classes
        cdef Py_ssize_t d = self.n_features
        cdef double v, a0, a1, a2, a3
        cdef const double* w0
        cdef const double* w1
        cdef const double* w2
        cdef const double* w3
        while r + 4 <= k:
            w0 = &self.W[r, 0]
            w1 = w0 + d
            w2 = w1 + d
            w3 = w2 + d
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(x.nnz):
                col = x.ind[j]
                v = x.val[j]
                a0 = a0 + w0[col] * v
                a1 = a1 + w1[col] * v
                a2 = a2 + w2[col] * v
                a3 = a3 + w3[col] * v
            self.scores[r] = a0
            self.scores[r + 1] = a1
            self.scores[r + 2] = a2
            self.scores[r + 3] = a3
            r += 4
        while r < k:
            self.scores[r] = row_dot(&self.W[r, 0], x)
            r += 1

    cdef int act(self, Row x, double u1, double u2,
                 int* greedy, double* prob) noexcept nogil:
        self.linear_scores(x)
        greedy[0] = argmax_ties(&self.scores[0], self.n_classes, u2)
        prob[0] = 1.0
        return greedy[0]


def run_pass(
    BaseKernel kernel,
    const double[::1] data,
    const int[::1] indices,
    const int[::1] indptr,
    bint dense,
    const int[::1] rows,
    const int[::1] y,
    const double[:, ::1] uniforms,
    int[::1] played,
    int[::1] greedy,
    signed char[::1] rewards,
    double[::1] propensities,
):
    """Play rounds ``rows[t]`` of X (dense or CSR arrays) with ``uniforms[t]``.

    Writes the played action, greedy action, reward and propensity of round
    ``t`` to the output arrays. ``y`` holds the true label codes: it is read
    here only, to form the reward (and handed to ``learn_full`` for
    full-information learners). ``dense`` means ``data`` is a C-ordered
    ``(n, d)`` array flattened and ``indices`` is ``0..d-1``.
    """
    cdef Py_ssize_t t, n = rows.shape[0]
    cdef Py_ssize_t i, start
    # Dense rows: ``indices`` is ``0..d-1``, so its length is the row width.
    cdef Py_ssize_t d = indices.shape[0]
    cdef int a, g
    cdef double p
    cdef bint reward
    cdef bint full = kernel.full_information
    cdef Row x
    cdef Py_ssize_t n_rows = (data.shape[0] // d if d > 0 else 0) if dense \
        else indptr.shape[0] - 1
    if uniforms.shape[0] < n or played.shape[0] < n or greedy.shape[0] < n \
            or rewards.shape[0] < n or propensities.shape[0] < n:
        raise ValueError("output or uniform arrays are shorter than rows")
    if y.shape[0] < n_rows:
        raise ValueError("fewer labels than rows")
    for t in range(n):
        if rows[t] < 0 or rows[t] >= n_rows:
            raise IndexError(f"row {rows[t]} out of range for {n_rows} rows")
    with nogil:
        for t in range(n):
            i = rows[t]
            if dense:
                start = i * d
                x.nnz = <int>d
                x.val = &data[0] + start
                x.ind = &indices[0]
            else:
                start = indptr[i]
                x.nnz = indptr[i + 1] - indptr[i]
                # Pointer arithmetic, not indexing: an all-zero CSR matrix has
                # empty data and indices arrays.
                x.val = &data[0] + start if data.shape[0] > 0 else NULL
                x.ind = &indices[0] + start if indices.shape[0] > 0 else NULL
            a = kernel.act(x, uniforms[t, 0], uniforms[t, 1], &g, &p)
            # The bandit boundary: the only read of the true label.
            reward = a == y[i]
            if full:
                kernel.learn_full(x, a, g, y[i])
            else:
                kernel.learn(x, a, g, p, reward)
            played[t] = a
            greedy[t] = g
            rewards[t] = reward
            propensities[t] = p
