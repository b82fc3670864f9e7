"""Multiclass Perceptron kernel (the full-information baseline)."""

from skbandit._core._kernel cimport LinearKernel, Row


cdef class PerceptronKernel(LinearKernel):
    """Play the greedy label (the inherited distribution); on a mistake
    ``w_y += x`` and ``w_greedy -= x``. Sees the true label."""

    def __init__(self, double[:, ::1] W):
        LinearKernel.__init__(self, W, True)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # rows label and greedy of W
        return 2 * <Py_ssize_t>x.nnz

    cdef void learn_full(self, Row x, long long t, int played, int greedy,
                         int label) noexcept nogil:
        if greedy != label:
            self.add_row(label, 1.0, x)
            self.add_row(greedy, -1.0, x)
