"""Kernels for the test suite's checks of the kernel protocol (tests only).

``PoisonedKernel`` wraps any learner's kernel and corrupts the distributions it
reports from a given round on, to exercise the drivers' distribution check.


``RecordingKernel`` plays epsilon-greedy over ``W x`` like the Banditron but
never updates ``W``; each ``learn`` call appends its round index, played and
greedy actions, probability and reward to arrays owned by the caller. With
``stop_at > 0`` it sets a non-zero status in round ``stop_at`` (global index),
to exercise the driver's status handling. It is compiled with the package so
the shared tests can check the kernel protocol itself.
"""

from libc.math cimport NAN

from skbandit._core._kernel cimport (
    BaseKernel,
    Journal,
    LinearKernel,
    Row,
)
from skbandit._core._explore cimport epsilon_greedy


cdef class RecordingKernel(LinearKernel):
    cdef double gamma
    cdef long long[::1] rounds
    cdef int[::1] played
    cdef int[::1] greedy
    cdef double[::1] prob
    cdef double[::1] reward
    cdef public Py_ssize_t n_recorded
    cdef long long stop_at
    cdef int stop_status

    def __init__(self, double[:, ::1] W, double gamma, long long[::1] rounds,
                 int[::1] played, int[::1] greedy, double[::1] prob,
                 double[::1] reward, Py_ssize_t n_recorded=0,
                 long long stop_at=0, int stop_status=0):
        LinearKernel.__init__(self, W, False)
        self.gamma = gamma
        self.rounds = rounds
        self.played = played
        self.greedy = greedy
        self.prob = prob
        self.reward = reward
        self.n_recorded = n_recorded
        self.stop_at = stop_at
        self.stop_status = stop_status

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        epsilon_greedy(greedy, self.n_classes, self.gamma, p)

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef Py_ssize_t i = self.n_recorded
        if i < self.rounds.shape[0]:
            self.rounds[i] = t
            self.played[i] = played
            self.greedy[i] = greedy
            self.prob[i] = prob
            self.reward[i] = reward
            self.n_recorded = i + 1
        if t == self.stop_at:
            self.status = self.stop_status


cdef class PoisonedKernel(BaseKernel):
    """A learner's kernel, played unchanged except that every distribution it
    reports at rounds ``t >= poison_from`` (global index) is corrupted:
    ``mode`` 0 puts a NaN in ``p[0]``, 1 moves mass 0.25 + p[0] from class 0
    to class 1 (a negative entry, the sum still 1), 2 scales ``p`` by 1.5 (not
    normalised). The rounds are played by the wrapped kernel (the same
    actions, updates and scratch); Python attribute reads and writes go to it
    too, so the estimators' per-block hooks work unchanged."""
    cdef readonly BaseKernel inner
    cdef long long poison_from
    cdef int mode

    def __init__(self, BaseKernel inner, long long poison_from, int mode=0):
        if mode not in (0, 1, 2):
            raise ValueError(f"unknown mode {mode}")
        BaseKernel.__init__(self, inner.n_classes, inner.n_features,
                            inner.full_information)
        self.inner = inner
        self.poison_from = poison_from
        self.mode = mode

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __setattr__(self, name, value):
        if name == "status":
            self.status = value
            self.inner.status = value
        else:
            setattr(self.inner, name, value)

    cpdef set_journal(self, Journal journal):
        BaseKernel.set_journal(self, journal)
        self.inner.set_journal(journal)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        return self.inner.journal_bound(x)

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        return self.inner.journal_bound_ll()

    cdef void poison(self, long long t, double* p) noexcept nogil:
        cdef int r
        if t < self.poison_from:
            return
        if self.mode == 0:
            p[0] = NAN
        elif self.mode == 1:
            p[1] = p[1] + p[0] + 0.25
            p[0] = -0.25
        else:
            for r in range(self.n_classes):
                p[r] = 1.5 * p[r]

    cdef void copy_scratch(self) noexcept nogil:
        cdef int r
        for r in range(self.n_classes):
            self.scores[r] = self.inner.scores[r]
            self.proba[r] = self.inner.proba[r]
        self.status = self.inner.status

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        self.inner.compute_scores(x, t)
        self.copy_scratch()

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        self.inner.distribution(s, t, greedy, p)
        self.poison(t, p)

    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil:
        cdef int a = self.inner.act(x, t, u1, u2, greedy, prob, marginal)
        self.copy_scratch()
        self.poison(t, &self.proba[0])
        return a

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        self.inner.learn(x, t, played, greedy, prob, reward)
        self.status = self.inner.status

    cdef void learn_full(self, Row x, long long t, int played, int greedy,
                         int label) noexcept nogil:
        self.inner.learn_full(x, t, played, greedy, label)
        self.status = self.inner.status
