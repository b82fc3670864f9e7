"""A kernel that records what the pass driver hands to ``learn`` (tests only).

``RecordingKernel`` plays epsilon-greedy over ``W x`` like the Banditron but
never updates ``W``; each ``learn`` call appends its round index, played and
greedy actions, probability and reward to arrays owned by the caller. With
``stop_at > 0`` it sets a non-zero status in round ``stop_at`` (global index),
to exercise the driver's status handling. It is compiled with the package so
the shared tests can check the kernel protocol itself.
"""

from skbandit._core._kernel cimport LinearKernel, Row, epsilon_greedy


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
