# Exploration rules: how a round turns its scores into the distribution it
# plays. Each rule is an ``Explorer`` (a compiled object a kernel holds; the
# kernel's ``distribution`` is one call of the explorer's) with a NumPy twin in
# ``skbandit.exploration`` that the tests compare it with bit for bit.
#
# ``distribution(s, k, t, greedy, p)`` writes the k probabilities of round
# ``t`` (1-based global index) for the scores ``s`` and the tie-broken greedy
# label ``greedy`` (an exact maximiser of ``s``) to ``p``. A rule may keep
# per-class context that the learner updates (``class_updated``).
#
# Tie symmetry (every rule keeps it; the tie marginal relies on it): when
# labels g and g' tie at the top score, p_g(a) and p_g'(a) are the same bits
# for every other label a != g, g', p_g(g) = p_g'(g') mathematically, and
# p_g(g') the same value for every tied g' != g. The rules read the greedy
# label only through ``s[greedy]`` (the same at every tied label) and the
# position of the greedy term; so the policy's marginal over the tied labels
# needs at most two distributions (``BaseKernel.marginal_over``,
# ``marginal_distribution``), O(k) instead of one per tied label.

cimport cython
from libc.math cimport exp, log2, pow

cdef class Explorer:
    # Whether ``distribution`` reads the scores (False: only ``greedy`` and
    # ``t``); a kernel that does not compute every class's score in ``act``
    # (the offset tree's walk) accepts only rules that do not.
    cdef readonly bint reads_scores
    # True when ``distribution`` does not depend on ``greedy`` (softmax): the
    # policy's marginal over exact ties of the greedy label is then the
    # distribution itself, computed once (``BaseKernel.marginal_over``). False
    # by default (a rule that forgets to declare it is treated as reading it).
    cdef readonly bint ignores_greedy
    # True when, at exact ties of the greedy label, every tied label g plays
    # at one rate: p_g(g) is the same value for each tied g, and p_g(a), a != g,
    # one other value (the gap map: u depends on the scores only through the
    # gap, 0 at every tied g). The tie marginal then reads both values off one
    # distribution (``BaseKernel.marginal_over``). False by default.
    cdef readonly bint ties_share_rate

    cdef void distribution(self, const double* s, int k, long long t, int greedy,
                           double* p) noexcept nogil
    cdef void class_updated(self, int a) noexcept nogil


@cython.final
cdef class GreedyExplorer(Explorer):
    pass


@cython.final
cdef class EpsilonGreedyExplorer(Explorer):
    cdef readonly double epsilon
    cdef readonly double decay
    cdef readonly double min_epsilon

    cdef double rate(self, long long t) noexcept nogil


@cython.final
cdef class AdaptiveEpsilonGreedyExplorer(Explorer):
    # SOBA's statistic array; the rule reads ``stat[index]``
    cdef double[::1] stat
    cdef readonly Py_ssize_t index

    cdef double rate(self, int k, long long t) noexcept nogil


@cython.final
cdef class SoftmaxExplorer(Explorer):
    cdef readonly double epsilon
    cdef readonly double scale


@cython.final
cdef class InverseGapExplorer(Explorer):
    cdef readonly double scale
    cdef readonly double exponent
    cdef readonly bint clip
    # per-class update counts n_a (the learner's state; empty: no per-class
    # clock), the schedule at each class's clock, and this round's gammas
    cdef long long[::1] counts
    cdef double[::1] gamma_cls
    cdef double[::1] gbuf

    cdef inline double schedule(self, double tau) noexcept nogil:
        """``scale * tau ** exponent``."""
        return self.scale * pow(tau, self.exponent)


@cython.final
cdef class GapMapExplorer(Explorer):
    cdef readonly int loss
    cdef readonly double epsilon


@cython.final
cdef class ConservativeExplorer(Explorer):
    cdef readonly double threshold


cpdef enum GapLoss:
    GAP_LOGISTIC = 0
    GAP_HINGE = 1
    GAP_SMOOTH_HINGE = 2


cdef inline void epsilon_greedy(int greedy, int k, double gamma,
                                double* p) noexcept nogil:
    """``p = (1 - gamma) e_greedy + gamma / k``: ``p[r] = gamma / k`` and
    ``p[greedy] = gamma / k + (1 - gamma)`` (exactly these operations)."""
    cdef int r
    cdef double base = gamma / k
    for r in range(k):
        p[r] = base
    p[greedy] = base + (1.0 - gamma)


cdef inline int argmax_other(const double* s, int k, int c) noexcept nogil:
    """The first ``r != c`` maximising ``s_r`` (k >= 2)."""
    cdef int r
    cdef int best_r = 1 if c == 0 else 0
    cdef double best = s[best_r]
    for r in range(best_r + 1, k):
        if r != c and s[r] > best:
            best = s[r]
            best_r = r
    return best_r


cdef inline double max_other(const double* s, int k, int c) noexcept nogil:
    """``max_{r != c} s_r`` (k >= 2)."""
    return s[argmax_other(s, k, c)]


cdef inline double log_partition(const double* s, int k, double* mx) noexcept nogil:
    """``Z = sum_r exp(s_r - max s)`` (summed in class order); writes ``max s``."""
    cdef int r
    cdef double m = s[0], z = 0.0
    for r in range(1, k):
        if s[r] > m:
            m = s[r]
    for r in range(k):
        z = z + exp(s[r] - m)
    mx[0] = m
    return z


cdef inline double gap_map(int loss, const double* s, int k, int g) noexcept nogil:
    """The gap map ``a(s)`` in [0, 1] at greedy label ``g`` (Gaptron's
    reconstruction, docs/algorithms.md). With the top margin
    ``m* = s_g - max_{r != g} s_r``: logistic ``min(1, -log2 max_r softmax(s)_r)
    = min(1, log2 Z)``; hinge ``max(0, 1 - 2 k m*)``; smooth hinge
    ``max(0, 1 - m*)^2``. ``k >= 2``."""
    cdef double mx, a, m
    if loss == GAP_LOGISTIC:
        a = log2(log_partition(s, k, &mx))
        return 1.0 if a > 1.0 else a
    m = s[g] - max_other(s, k, g)
    if loss == GAP_HINGE:
        a = 1.0 - (2.0 * k) * m
        return a if a > 0.0 else 0.0
    # GAP_SMOOTH_HINGE
    if m >= 1.0:
        return 0.0
    a = 1.0 - m
    return a * a


cdef inline void softmax(const double* s, int k, double scale, double* p) noexcept nogil:
    """``p_r = exp(scale s_r - max_i scale s_i) / sum_i exp(scale s_i - max)``,
    summed in class order."""
    cdef int r
    cdef double mx = scale * s[0], z = 0.0
    for r in range(1, k):
        if scale * s[r] > mx:
            mx = scale * s[r]
    for r in range(k):
        p[r] = exp(scale * s[r] - mx)
        z = z + p[r]
    for r in range(k):
        p[r] = p[r] / z


cdef inline double clip01(double v) noexcept nogil:
    """``v`` clipped to [0, 1] (NaN stays NaN: the scores are checked finite)."""
    if v < 0.0:
        return 0.0
    if v > 1.0:
        return 1.0
    return v


cdef inline void inverse_gap(const double* s, int k, int greedy, const double* gamma,
                             bint clip, double* p) noexcept nogil:
    """Inverse gap weighting (Foster & Rakhlin 2020): with ``c_a = s_a``, or
    ``min(max(s_a, 0), 1)`` when ``clip``, and the gap ``d_a = c_g - c_a >= 0``,
    ``p_a = 1 / (k + gamma_a d_a)`` for ``a != g`` with ``d_a > 0``,
    ``p_a = 1 / k`` for a tie (``d_a = 0``, whatever ``gamma_a``, even
    infinite: no ``inf * 0``); ``p_g = 1 - sum_{a != g} p_a`` (summed in class
    order)."""
    cdef int a
    cdef double total = 0.0
    cdef double gap, best
    if clip:  # (two loops: the test is not made per class)
        best = clip01(s[greedy])
        for a in range(k):
            if a != greedy:
                gap = best - clip01(s[a])
                p[a] = 1.0 / (k + gamma[a] * gap) if gap > 0.0 else 1.0 / k
                total = total + p[a]
    else:
        best = s[greedy]
        for a in range(k):
            if a != greedy:
                gap = best - s[a]
                p[a] = 1.0 / (k + gamma[a] * gap) if gap > 0.0 else 1.0 / k
                total = total + p[a]
    p[greedy] = 1.0 - total
