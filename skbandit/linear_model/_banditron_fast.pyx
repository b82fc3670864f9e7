"""Banditron kernel (Kakade, Shalev-Shwartz and Tewari, 2008)."""

from skbandit._core._kernel cimport (
    LinearKernel,
    Row,
    argmax_ties,
    row_add_div,
    row_axpy,
    sample_epsilon_greedy,
)


cdef class BanditronKernel(LinearKernel):
    """Epsilon-greedy play over ``W x``; update ``w_greedy -= x`` every round
    and ``w_played += x / p(played)`` when the played action was right."""

    cdef double gamma

    def __init__(self, double[:, ::1] W, double gamma):
        LinearKernel.__init__(self, W, False)
        self.gamma = gamma

    cdef int act(self, Row x, double u1, double u2,
                 int* greedy, double* prob) noexcept nogil:
        self.linear_scores(x)
        greedy[0] = argmax_ties(&self.scores[0], self.n_classes, u2)
        return sample_epsilon_greedy(greedy[0], self.n_classes, self.gamma, u1, prob)

    cdef void learn(self, Row x, int played, int greedy, double prob,
                    bint reward) noexcept nogil:
        row_axpy(-1.0, x, &self.W[greedy, 0])
        if reward:
            row_add_div(x, prob, &self.W[played, 0])
