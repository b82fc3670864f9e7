"""Compiled exploration rules (see _explore.pxd and ``skbandit.exploration``).

Each class computes one rule's distribution; ``skbandit.exploration`` holds the
parameter objects a user passes (``exploration=``) and their NumPy twins, and
builds these explorers for a learner's kernel (``_compile``).
"""

from libc.math cimport pow, sqrt

import numpy as np


cdef class Explorer:
    """Base of the compiled rules; ``py_distribution`` calls ``distribution``
    once, for the estimators' non-hot paths and for the tests."""

    def __init__(self):
        if type(self) is Explorer:
            raise TypeError("Explorer is abstract: use a rule's explorer")
        self.reads_scores = True

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        pass

    cdef void class_updated(self, int a) noexcept nogil:
        # the learner updated class a's model (its update count grew); rules
        # with per-class context override it
        pass

    def py_distribution(self, const double[::1] scores, long long t, int greedy):
        """The distribution of round ``t`` for ``scores`` and greedy label ``greedy``."""
        cdef int k = <int>scores.shape[0]
        if k < 1:
            raise ValueError("scores must not be empty")
        if not 0 <= greedy < k:
            raise ValueError(f"greedy={greedy} out of range")
        if t < 1:
            raise ValueError(f"t={t} must be >= 1")
        out = np.empty(k, dtype=np.float64)
        cdef double[::1] o = out
        self.distribution(&scores[0], k, t, greedy, &o[0])
        return out

    def py_class_updated(self, int a):
        """``class_updated(a)`` (the learner's count of class ``a`` was incremented)."""
        self.class_updated(a)


cdef class GreedyExplorer(Explorer):
    """``p = e_greedy``."""

    def __init__(self):
        self.reads_scores = False

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        cdef int r
        for r in range(k):
            p[r] = 0.0
        p[greedy] = 1.0


cdef class EpsilonGreedyExplorer(Explorer):
    """``p = (1 - e_t) e_greedy + e_t / k`` with ``e_t = epsilon`` when
    ``decay == 0``, else ``max(min_epsilon, epsilon t^-decay)`` (``t > 1``;
    ``max(min_epsilon, epsilon)`` at ``t = 1``)."""

    def __init__(self, double epsilon, double decay=0.0, double min_epsilon=0.0):
        self.reads_scores = False
        self.epsilon = epsilon
        self.decay = decay
        self.min_epsilon = min_epsilon

    cdef double rate(self, long long t) noexcept nogil:
        cdef double e = self.epsilon
        if self.decay == 0.0:
            return e
        if t > 1:
            e = e * pow(<double>t, -self.decay)
        return e if e > self.min_epsilon else self.min_epsilon

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        epsilon_greedy(greedy, k, self.rate(t), p)

    def py_rate(self, long long t):
        """The exploration rate of round ``t``."""
        return self.rate(t)


cdef class AdaptiveEpsilonGreedyExplorer(Explorer):
    """SOBA's adaptive rate (Beygelzimer, Orabona and Zhang 2017, App. A,
    Thm 5): ``e_t = min(1, sqrt(k (1 + stat[index]) / t))`` with ``stat[index]``
    the learner's ``sum_{s<t} n_s z_s^T A_s^-1 z_s`` (read each round: the
    learner updates it in place), then epsilon-greedy."""

    def __init__(self, double[::1] stat, Py_ssize_t index):
        if not 0 <= index < stat.shape[0]:
            raise ValueError("index out of the statistic's range")
        self.reads_scores = False
        self.stat = stat
        self.index = index

    cdef double rate(self, int k, long long t) noexcept nogil:
        cdef double g = sqrt(k * (1.0 + self.stat[self.index]) / <double>t)
        return 1.0 if g > 1.0 else g

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        epsilon_greedy(greedy, k, self.rate(k, t), p)

    def py_rate(self, int k, long long t):
        """The exploration rate of round ``t`` with ``k`` classes."""
        return self.rate(k, t)


cdef class SoftmaxExplorer(Explorer):
    """``p = (1 - epsilon) softmax(scale s) + epsilon / k``; the greedy label
    plays no part."""

    def __init__(self, double epsilon, double scale):
        self.reads_scores = True
        self.ignores_greedy = True
        self.epsilon = epsilon
        self.scale = scale

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        cdef int r
        cdef double base = self.epsilon / k
        softmax(s, k, self.scale, p)
        for r in range(k):
            p[r] = (1.0 - self.epsilon) * p[r] + base


cdef class InverseGapExplorer(Explorer):
    """Inverse gap weighting (``inverse_gap``) with ``gamma_t = scale t^exponent``
    and, when the learner gives its per-class update counts ``n_a``, the
    per-class floor ``gamma_{t,a} = min(gamma_t, scale (k (n_a + 1))^exponent)``
    (a class whose model has seen few updates keeps an early round's
    exploration). The learner calls ``class_updated(a)`` after it increments
    ``n_a``."""

    def __init__(self, int n_classes, double scale, double exponent, bint clip,
                 long long[::1] counts=None):
        cdef int a
        if n_classes < 1:
            raise ValueError("n_classes must be >= 1")
        if counts is not None and counts.shape[0] != n_classes:
            raise ValueError("counts must have n_classes entries")
        self.reads_scores = True
        self.scale = scale
        self.exponent = exponent
        self.clip = clip
        self.gbuf = np.empty(n_classes, dtype=np.float64)
        if counts is None:
            self.counts = np.empty(0, dtype=np.int64)
            self.gamma_cls = np.empty(0, dtype=np.float64)
        else:
            self.counts = counts
            self.gamma_cls = np.empty(n_classes, dtype=np.float64)
            for a in range(n_classes):
                self.class_updated(a)

    cdef void class_updated(self, int a) noexcept nogil:
        # the schedule at class a's own clock k (n_a + 1): the round a class
        # played on its share 1/k of the rounds would have reached
        cdef int k = <int>self.gbuf.shape[0]
        if self.gamma_cls.shape[0] != 0:
            self.gamma_cls[a] = self.schedule(
                <double>k * (<double>self.counts[a] + 1.0))

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        cdef double gt = self.schedule(<double>t)
        cdef int a
        if self.gamma_cls.shape[0] != 0:
            for a in range(k):
                self.gbuf[a] = gt if gt < self.gamma_cls[a] else self.gamma_cls[a]
        else:
            for a in range(k):
                self.gbuf[a] = gt
        inverse_gap(s, k, greedy, &self.gbuf[0], self.clip, p)

    def py_distribution(self, const double[::1] scores, long long t, int greedy):
        if scores.shape[0] != self.gbuf.shape[0]:
            raise ValueError(
                f"scores has {scores.shape[0]} entries, the explorer was built "
                f"for {self.gbuf.shape[0]} classes")
        return Explorer.py_distribution(self, scores, t, greedy)


cdef class GapMapExplorer(Explorer):
    """Gaptron's policy (van der Hoeven 2020): ``p = (1 - u) e_g + u / k`` with
    ``u = epsilon + (1 - epsilon) a(s)`` and ``a`` the loss's gap map
    (``gap_map``; ``k >= 2``)."""

    def __init__(self, int loss, double epsilon):
        if loss not in (GAP_LOGISTIC, GAP_HINGE, GAP_SMOOTH_HINGE):
            raise ValueError(f"unknown loss code {loss}")
        self.reads_scores = True
        # u = epsilon + (1 - epsilon) a(s, g) is the same at every tied g: the
        # logistic map does not read g, the hinge and smooth hinge maps read it
        # through m* = s_g - max_{r != g} s_r, which is s_g - s_g' = 0 (another
        # tied label g'; non-finite tied scores give the same NaN at every g)
        self.ties_share_rate = True
        self.loss = loss
        self.epsilon = epsilon

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        cdef double a = gap_map(self.loss, s, k, greedy)
        epsilon_greedy(greedy, k, self.epsilon + (1.0 - self.epsilon) * a, p)

    def py_distribution(self, const double[::1] scores, long long t, int greedy):
        if scores.shape[0] < 2:
            raise ValueError("the gap maps need at least 2 classes")
        return Explorer.py_distribution(self, scores, t, greedy)


cdef class ConservativeExplorer(Explorer):
    """Beygelzimer et al. (2019): play the greedy label when its score is
    ``>= threshold`` (some class answers YES), else uniform over the k classes."""

    def __init__(self, double threshold=0.0):
        self.reads_scores = True
        self.threshold = threshold

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil:
        cdef int r
        if s[greedy] >= self.threshold:
            for r in range(k):
                p[r] = 0.0
            p[greedy] = 1.0
        else:
            for r in range(k):
                p[r] = 1.0 / k


def py_inverse_gap(const double[::1] scores, int greedy, const double[::1] gamma,
                   bint clip):
    """The compiled inverse-gap-weighting distribution (``inverse_gap``) for
    these scores, one ``gamma`` per class."""
    cdef int k = <int>scores.shape[0]
    if k < 1 or not 0 <= greedy < k or gamma.shape[0] != k:
        raise ValueError("greedy out of range, scores empty or gamma's length "
                         "is not the number of scores")
    out = np.empty(k, dtype=np.float64)
    cdef double[::1] o = out
    inverse_gap(&scores[0], k, greedy, &gamma[0], clip, &o[0])
    return out
