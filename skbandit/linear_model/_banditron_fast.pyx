"""Banditron kernel (Kakade, Shalev-Shwartz and Tewari, 2008)."""

from skbandit._core._kernel cimport (
    LinearKernel,
    Row,
    add_row_pair,
    add_row_pair_twice,
)


cdef class BanditronKernel(LinearKernel):
    """Plays its explorer over ``W x`` (the Banditron's: epsilon-greedy,
    ``p = (1 - gamma) e_greedy + gamma / k``; ``set_explorer``). Update every round ``w_greedy -= x`` and, when the played action ``a`` was
    right (reward 1), ``w_a += x / p(a)``.

    For the averaged iterate, the update ``Delta_t`` of round ``t`` is also
    added to ``A`` with the weight ``t - 1`` (``A = sum_t (t - 1) Delta_t``), so
    that the mean of ``W_2, ..., W_{T+1}`` is ``W - A / T`` (O(nnz) per round)."""

    cdef double[:, ::1] A

    def __init__(self, double[:, ::1] W, double[:, ::1] A):
        LinearKernel.__init__(self, W, False)
        if A.shape[0] != W.shape[0] or A.shape[1] != W.shape[1]:
            raise ValueError("A must have the shape of W")
        self.A = A

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # the weight vectors of greedy and played, in W and in A
        return 4 * <Py_ssize_t>x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        # Rewards are 0 or 1 (the bit 1[played == y]).
        cdef double before = <double>(t - 1)
        # W and A in one sweep of the row each (add_row_pair); when the greedy
        # label was played and right (most rounds once the model is good),
        # both updates of that row in one sweep (add_row_pair_twice: the same
        # operations per entry, in the same order).
        if reward != 0.0 and played == greedy:
            add_row_pair_twice(self.jd, &self.W[0, greedy], -1.0,
                               &self.A[0, greedy], -before, prob,
                               before / prob, x, self.n_classes)
            return
        add_row_pair(self.jd, &self.W[0, greedy], -1.0, &self.A[0, greedy],
                     -before, x, False, self.n_classes)
        if reward != 0.0:
            add_row_pair(self.jd, &self.W[0, played], prob, &self.A[0, played],
                         before / prob, x, True, self.n_classes)
