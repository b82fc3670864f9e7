"""Banditron kernel (Kakade, Shalev-Shwartz and Tewari, 2008)."""

from skbandit._core._kernel cimport LinearKernel, Row, epsilon_greedy


cdef class BanditronKernel(LinearKernel):
    """Epsilon-greedy play over ``W x``: ``p = (1 - gamma) e_greedy + gamma / k``.
    Update every round ``w_greedy -= x`` and, when the played action ``a`` was
    right (reward 1), ``w_a += x / p(a)``."""

    cdef double gamma

    def __init__(self, double[:, ::1] W, double gamma):
        LinearKernel.__init__(self, W, False)
        self.gamma = gamma

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        epsilon_greedy(greedy, self.n_classes, self.gamma, p)

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        # Rewards are 0 or 1 (the bit 1[played == y]).
        self.add_row(greedy, -1.0, x)
        if reward != 0.0:
            self.add_row_div(played, x, prob)
