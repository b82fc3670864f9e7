# Shared compiled core of every skbandit learner.
#
# A learner's kernel is a ``BaseKernel`` subclass (``LinearKernel`` when its
# scores are ``W x``) that implements one round in two halves: ``act`` (choose
# the played action from the row and the round's two uniforms) and ``learn``
# (update from the revealed bit). The pass driver ``run_pass`` in _kernel.pyx
# owns the loop over rows and is the only code that reads the true label: it
# turns it into the reward ``played == y``. A bandit learner therefore cannot
# see more than that bit. Full-information baselines set ``full_information``
# and receive the label in ``learn_full`` instead.

cdef struct Row:
    # One row of X: ``nnz`` stored values and their column indices. Dense rows
    # point at the row of X and at a shared ``0..d-1`` index vector.
    const double* val
    const int* ind
    int nnz


cdef class BaseKernel:
    # One round of a learner. ``act`` returns the played action and writes the
    # greedy action and the played action's probability; ``learn`` updates from
    # the reward (bandit learners), ``learn_full`` from the label (baselines
    # with ``full_information``). State lives in arrays owned by the estimator.
    cdef readonly int n_classes
    cdef readonly bint full_information
    # Scratch buffer of k scores.
    cdef double[::1] scores

    cdef int act(self, Row x, double u1, double u2,
                 int* greedy, double* prob) noexcept nogil
    cdef void learn(self, Row x, int played, int greedy, double prob,
                    bint reward) noexcept nogil
    cdef void learn_full(self, Row x, int played, int greedy,
                         int label) noexcept nogil


cdef class LinearKernel(BaseKernel):
    # A learner whose scores are ``W x``. Its default ``act`` plays the greedy
    # label with probability one.
    cdef readonly int n_features
    # Weight matrix (k, d), the estimator's ``coef_``, updated in place.
    cdef double[:, ::1] W

    cdef void linear_scores(self, Row x) noexcept nogil


cdef inline double row_dot(const double* w, Row x) noexcept nogil:
    """Return ``w . x``, summed sequentially over the row's stored entries."""
    cdef double s = 0.0
    cdef int j
    for j in range(x.nnz):
        s = s + w[x.ind[j]] * x.val[j]
    return s


cdef inline void row_axpy(double a, Row x, double* w) noexcept nogil:
    """``w += a * x`` (exact for a = +1 or -1)."""
    cdef int j
    for j in range(x.nnz):
        w[x.ind[j]] += a * x.val[j]


cdef inline void row_add_div(Row x, double denom, double* w) noexcept nogil:
    """``w += x / denom`` (elementwise division, as written in the papers)."""
    cdef int j
    for j in range(x.nnz):
        w[x.ind[j]] += x.val[j] / denom


cdef inline int argmax_ties(const double* s, int k, double u2) noexcept nogil:
    """Index of the maximum of ``s``; exact ties broken uniformly with ``u2``.

    With ``m`` exact maximisers in increasing index order, returns the
    ``min(int(u2 * m), m - 1)``-th of them.
    """
    cdef int r, m = 1, first = 0, pick
    cdef double best = s[0]
    for r in range(1, k):
        if s[r] > best:
            best = s[r]
            first = r
            m = 1
        elif s[r] == best:
            m += 1
    if m == 1:
        return first
    pick = <int>(u2 * m)
    if pick > m - 1:
        pick = m - 1
    for r in range(k):
        if s[r] == best:
            if pick == 0:
                return r
            pick -= 1
    return k - 1  # unreachable


cdef inline int sample_epsilon_greedy(int greedy, int k, double gamma, double u1,
                                      double* prob) noexcept nogil:
    """Draw from ``p = (1 - gamma) e_greedy + gamma / k`` by inverse CDF on ``u1``.

    Writes ``p[action]`` to ``prob``. The cumulative sum runs over classes
    ``0..k-1`` in order, exactly as ``np.cumsum`` would.
    """
    cdef int r
    cdef double base = gamma / k
    cdef double p, c = 0.0
    for r in range(k):
        p = base
        if r == greedy:
            p = p + (1.0 - gamma)
        c = c + p
        if u1 < c:
            prob[0] = p
            return r
    # Rounding left the last cumulative value below u1: take the last class.
    p = base
    if k - 1 == greedy:
        p = p + (1.0 - gamma)
    prob[0] = p
    return k - 1
