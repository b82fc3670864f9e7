"""Multiclass Perceptron kernel (the full-information baseline)."""

from skbandit._core._kernel cimport LinearKernel, Row, row_axpy


cdef class PerceptronKernel(LinearKernel):
    """Play the greedy label (inherited ``act``); on a mistake
    ``w_y += x`` and ``w_greedy -= x``. Sees the true label."""

    def __init__(self, double[:, ::1] W):
        LinearKernel.__init__(self, W, True)

    cdef void learn_full(self, Row x, int played, int greedy,
                         int label) noexcept nogil:
        if greedy != label:
            row_axpy(1.0, x, &self.W[label, 0])
            row_axpy(-1.0, x, &self.W[greedy, 0])
