# The regression oracle: k online linear regressors of rewards, one per action,
# for any kernel that regresses rewards (SquareCB's; see _oracle.pyx).

from skbandit._core._kernel cimport JournalData, Row
from skbandit._core._step cimport StepRule


cdef class RegressionOracle:
    # Regressor a predicts w_a . x + b_a. The arrays are the estimator's fitted
    # state, updated in place: W (d, k) and b (k,) the weights and intercepts,
    # S (d, k) NAG's scales (or (d, 1): the shared scales stored once), G (k, d)
    # and Gb (k,) the squared-gradient sums, N (k,) NAG's normalised squared
    # norms, n_upd (k,) the update counts. W and S are feature-major (entry
    # [i, a]: feature i of regressor a), as every linear kernel's weights; G is
    # class-major (entry [a, i]): a step reads one regressor's, contiguous.
    cdef double[:, ::1] W
    cdef double[::1] b
    cdef double[:, ::1] S
    cdef double[:, ::1] G
    cdef double[::1] Gb
    cdef double[::1] N
    cdef long long[::1] n_upd
    # the step-size rule (_step.pxd): normalized (NAG), per-coordinate AdaGrad
    # or constant
    cdef StepRule rule
    cdef readonly bint fit_intercept
    cdef readonly double step_cap  # 0: no cap
    cdef readonly bint shared_scale  # NAG's scales shared by the k regressors
    # S holds one row (the shared scales, stored once) instead of k; with
    # shared_scale=False the estimator expands it to k rows before learning
    cdef readonly bint one_scale
    # scratch of the current step, four buffers of one length by position in
    # the row: the gathered G_i and NAG scales s_i, the denominators q_i and
    # the terms x_i^2 / q_i, then the moves (grown to the longest row seen:
    # O(nnz), not O(d), per call)
    cdef double[::1] qbuf

    cdef bint update(self, JournalData* jd, Row x, int a, double score,
                     double target, double weight) noexcept nogil
    cdef double nag_rescale(self, JournalData* jd, Row x, int a) noexcept nogil
    cdef bint step(self, JournalData* jd, Row x, int a, double h, double e,
                   double rate) noexcept nogil
    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil
    cdef void prefetch_update(self, Row x, int a) noexcept nogil
