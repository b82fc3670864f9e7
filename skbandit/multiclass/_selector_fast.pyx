"""Compiled round of ``OnlineSelector``: several candidate kernels on one stream.

``SelectorKernel`` is itself a ``BaseKernel``, so the shared pass drivers
(``run_pass``, ``run_act``, ``run_logged``, ``run_distribution``) play it
unchanged: one row per round, the candidates' halves called in C.

One round at index ``t`` with candidates ``c = 0 .. C - 1`` and leader ``l``:

* every candidate computes its scores and its distribution ``P_c`` (its
  policy's marginal distribution: exact ties of its greedy label averaged as in
  ``BaseKernel.marginal_distribution``, O(k)); a candidate with a *score
  twin* (``set_twins``: an earlier candidate with the same model, which
  learns from the same rounds in the same way) copies that candidate's scores
  instead of computing them, the same numbers; for the played action ``a``,
  ``P_c(a)`` and ``Q(a)`` are then taken from the sequential tie mean
  (``BaseKernel.tie_marginal``, ``exact_at``), so the round's propensity and
  estimates do not depend on the closed form's rounding;
* the played distribution is the mixture
  ``Q = (1 - mix_t) P_l + mix_t * (beta_0 P_0 + ... + beta_{C-1} P_{C-1})``
  with ``mix_t`` the rate of round ``t`` of the selector's epsilon-greedy rule
  (``mixer``, an ``EpsilonGreedyExplorer``: ``max(mix_min, mix * t^-decay)``,
  ``mix`` when ``decay = 0``; its "uniform" part is the candidates' average)
  (summed in order) with the shares ``beta`` (positive, summing to one); while
  a challenger ``j`` is on trial (``ahead``: the largest positive lower bound
  at ``L = 1/2`` against the leader, none while ``lam < 1`` and ``w1 (1 -
  lam) < 1/2``) and ``mix_t < mix``, ``Q = (1 - mix) P_l + mix * (mix_t avg +
  (mix - mix_t) P_j) / mix`` instead (``mixture``); the action ``a`` is drawn
  from ``Q`` by inverse CDF on ``u1``; its propensity is ``Q(a)``;
* every candidate learns from the round through its own ``learn`` with the
  played action, its own tie-broken greedy label (ties broken by ``u2``), a
  propensity and the reward; with ``prob`` the propensity of the round
  (``Q(a)``, or the logged propensity of an off-policy logged round), the
  candidate's mode (``modes``) sets it: ``LEARN_ALL``, ``prob``;
  ``LEARN_CAPPED``, ``max(prob, P_c(a))``; ``LEARN_OWN``, ``P_c(a)``, and only
  when ``v prob < P_c(a)`` (the round kept with probability ``min(1, P_c(a) /
  prob)``), where ``v = (u1 - Q(0) - ... - Q(b - 1)) / Q(b)`` (summed in
  order) for the action ``b`` that ``act`` drew: uniform on ``[0, 1)`` given
  ``b``, and independent of a logged action;
* the off-policy estimates are updated: with ``z_c = r P_c(a) / prob``
  (inverse propensity scoring), discount ``lam``:
  ``S_c <- lam S_c + z_c``, ``G_cd <- lam G_cd + z_c z_d``,
  ``R_c <- max(lam R_c, z_c)`` (a discounted running maximum: the observed
  range of ``z_c``), ``w1 <- lam w1 + 1``, ``w2 <- lam^2 w2 + 1``;
* on a round with a non-zero reward, the leader is challenged: for each
  ``c != l``, ``delta = (S_c - S_l) / w1``,
  ``var = max(0, (G_cc - 2 G_cl + G_ll) / w1 - delta^2)``,
  ``n = w1^2 / w2`` (the effective number of rounds), the Bernstein width
  ``h = sqrt(2 var L / n) + (R_c + R_l) L / (3 n)`` (``L = log(1 / (1 -
  confidence))``, ``R_c + R_l`` the observed range of ``z_c - z_l``) and
  ``lcb = delta - h``;
  the candidate with the largest positive ``lcb`` (the first in order on ties)
  becomes the leader. Then the shares: ``beta_c = 1`` for the leader and for
  every candidate whose upper bound ``delta + h`` against the leader is
  positive (a contender), ``beta_c = floor`` for the others, all divided by
  their sum (in order).
"""

from cpython.ref cimport PyObject
from libc.math cimport NAN, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    STATUS_OK,
    BaseKernel,
    Journal,
    Row,
    all_finite,
    argmax_ties,
    jsave_ll,
    jsave_range,
    sample_inverse_cdf,
)
from skbandit._core._explore cimport EpsilonGreedyExplorer

import numpy as np

# how a candidate learns from the selector's round
cdef enum:
    LEARN_ALL = 0
    LEARN_OWN = 1
    LEARN_CAPPED = 2


cdef class SelectorKernel(BaseKernel):
    """The selector's round over the candidates' kernels (module docstring)."""

    # the candidates' kernels: ``kernels`` owns the references, ``ptrs`` reads
    # them without the GIL
    cdef readonly list kernels
    # the estimators owning the kernels, and the rows of the current block (set
    # by the estimator; Python only)
    cdef public list owners
    cdef public Py_ssize_t block_rows
    cdef PyObject** ptrs
    cdef int n_cand
    # scratch of the current round: P_c (C, k), greedy labels, maximiser counts
    cdef double[:, ::1] P
    cdef int[::1] g
    cdef int[::1] m
    cdef double[::1] z_buf
    # the candidates' average distribution M = beta_0 P_0 + ... + beta_{C-1} P_{C-1}
    cdef double[::1] avg
    # scratch of ``distribution`` and ``marginal_distribution``
    cdef double[:, ::1] P_tmp
    cdef double[::1] avg_tmp
    cdef bint finite
    # state (the estimator's arrays, updated in place)
    cdef double[::1] S
    cdef double[:, ::1] G
    cdef double[::1] R
    cdef double[::1] w
    cdef long long[::1] lead
    # the candidates' shares of the exploration mass (sum to one)
    cdef double[::1] beta
    cdef double floor
    # the exploration share at round t: the rate of this epsilon-greedy rule,
    # max(mix_min, mix * t^-decay)
    cdef EpsilonGreedyExplorer mixer
    cdef double lam
    # L = log(1 / (1 - confidence)) in the Bernstein width
    cdef double log_term
    # how each candidate learns from a round (LEARN_ALL, LEARN_OWN, LEARN_CAPPED)
    cdef int[::1] modes
    # each candidate's score twin: an earlier candidate whose scores it copies
    # (``set_twins``), or -1
    cdef int[::1] twin
    cdef bint any_twin
    # whether any candidate learns in LEARN_OWN mode
    cdef bint any_own
    # the round's u1 and the action ``act`` drew with it: the acceptance
    # uniform of LEARN_OWN is u1's position inside that action's interval of
    # the inverse CDF, uniform on [0, 1) given the draw
    cdef double u1
    cdef int drawn

    def __cinit__(self, *args, **kwargs):
        self.ptrs = NULL

    def __init__(self, list kernels, double[::1] S, double[:, ::1] G,
                 double[::1] R, double[::1] w, long long[::1] lead,
                 double[::1] beta, EpsilonGreedyExplorer mixer not None,
                 double lam, double log_term, double floor, const int[::1] modes):
        cdef int c, n = len(kernels)
        cdef BaseKernel kc
        if n < 1:
            raise ValueError("SelectorKernel needs at least one candidate kernel")
        k = (<BaseKernel>kernels[0]).n_classes
        d = (<BaseKernel>kernels[0]).n_features
        for kc in kernels:
            if kc.n_classes != k or kc.n_features != d:
                raise ValueError("candidate kernels disagree on the number of "
                                 "classes or features")
            if kc.full_information:
                raise TypeError("a full-information kernel cannot be a candidate "
                                "(it needs the true label)")
        if (S.shape[0] != n or G.shape[0] != n or G.shape[1] != n
                or R.shape[0] != n or w.shape[0] != 2 or lead.shape[0] != 2
                or beta.shape[0] != n or modes.shape[0] != n):
            raise ValueError("selector state arrays have inconsistent shapes")
        if not 0 <= lead[0] < n:
            raise ValueError(f"leader {lead[0]} out of range for {n} candidates")
        if not (0.0 <= mixer.epsilon <= 1.0 and 0.0 <= lam <= 1.0
                and log_term >= 0.0 and 0.0 < floor <= 1.0 and mixer.decay >= 0.0
                and 0.0 <= mixer.min_epsilon <= mixer.epsilon):
            raise ValueError("the mixer's epsilon and lam must be in [0, 1], "
                             "log_term >= 0, floor in (0, 1], the decay >= 0 and "
                             "min_epsilon in [0, epsilon]")
        BaseKernel.__init__(self, k, d, False)
        self.kernels = list(kernels)
        self.owners = []
        self.block_rows = 0
        self.n_cand = n
        self.ptrs = <PyObject**>malloc(n * sizeof(PyObject*))
        if self.ptrs == NULL:
            raise MemoryError()
        for c in range(n):
            self.ptrs[c] = <PyObject*>self.kernels[c]
        self.P = np.zeros((n, k), dtype=np.float64)
        self.g = np.zeros(n, dtype=np.int32)
        self.m = np.ones(n, dtype=np.int32)
        self.z_buf = np.zeros(n, dtype=np.float64)
        self.avg = np.zeros(k, dtype=np.float64)
        self.P_tmp = np.zeros((n, k), dtype=np.float64)
        self.avg_tmp = np.zeros(k, dtype=np.float64)
        self.finite = True
        self.S, self.G, self.R, self.w = S, G, R, w
        self.lead, self.beta = lead, beta
        self.mixer, self.lam, self.log_term, self.floor = mixer, lam, log_term, floor
        for c in range(n):
            if not LEARN_ALL <= modes[c] <= LEARN_CAPPED:
                raise ValueError(f"learning mode {modes[c]} of candidate {c} "
                                 "is not 0, 1 or 2")
        self.modes = np.array(modes, dtype=np.int32)
        self.any_own = False
        for c in range(n):
            if self.modes[c] == LEARN_OWN:
                self.any_own = True
        self.twin = np.full(n, -1, dtype=np.int32)
        self.any_twin = False
        self.u1 = 0.0
        self.drawn = 0

    def set_twins(self, const int[::1] twins):
        """Candidate ``c`` copies the scores of candidate ``twins[c] < c``
        (``-1``: it computes its own). Only for candidates whose scores are
        equal on every round: the same kernel type over equal state, learning
        in ``LEARN_ALL`` mode (``OnlineSelector._score_twins`` checks it; the
        kernel checks the indices, the types and the modes). The selector sets
        them for one block, after comparing the states, and clears them after
        it (``clear_twins``)."""
        cdef int c, j, n = self.n_cand
        if twins.shape[0] != n:
            raise ValueError(f"twins has length {twins.shape[0]}, expected {n}")
        for c in range(n):
            j = twins[c]
            if j == -1:
                continue
            if not 0 <= j < c or twins[j] != -1:
                raise ValueError(f"twin {j} of candidate {c} is not an earlier "
                                 "candidate computing its own scores")
            if (type(self.kernels[c]) is not type(self.kernels[j])
                    or self.modes[c] != LEARN_ALL or self.modes[j] != LEARN_ALL):
                raise ValueError(f"candidates {j} and {c} are not twins: not the "
                                 "same kernel type, or not both learning in "
                                 "LEARN_ALL mode")
        self.twin = np.array(twins, dtype=np.int32)
        self.any_twin = False
        for c in range(n):
            if self.twin[c] >= 0:
                self.any_twin = True

    def clear_twins(self):
        """Every candidate computes its own scores again (O(1) when none
        copies)."""
        self._clear_twins()

    cdef void _clear_twins(self) noexcept:
        cdef int c
        if self.any_twin:
            for c in range(self.n_cand):
                self.twin[c] = -1
            self.any_twin = False

    def before_hooks(self, list candidates, Py_ssize_t n_rows, object base):
        """Call ``_before_block(kernel, n_rows)`` of each candidate whose
        class overrides ``base`` (the skeleton's, which returns its kernel),
        in order, with the candidate's kernel; the list of kernels with the
        replaced ones, or None when none was replaced. The caller checks that
        ``candidates`` and ``kernels`` have one length. (A live round or a
        one-row call makes this loop every round: compiled, and no call for
        the candidates that keep the no-op.)"""
        cdef Py_ssize_t i
        cdef list kernels = self.kernels
        cdef list new = None
        cdef object c, kc, replaced
        for i in range(len(candidates)):
            c = candidates[i]
            if getattr(type(c), "_before_block") is base:
                continue
            kc = kernels[i]
            replaced = c._before_block(kc, n_rows)
            if replaced is not kc:
                if new is None:
                    new = list(kernels)
                new[i] = replaced
        return new

    def after_hooks(self, Py_ssize_t n_rows, object base):
        """The end of a block (``OnlineSelector._after_block``): the score
        twins cleared (``clear_twins``), then for each candidate (``owners``)
        in order its ``_after_block`` with its kernel unless its class keeps
        ``base`` (the skeleton's no-op), and its round counter ``t_``
        advanced by ``n_rows``. Raises RuntimeError, after clearing the
        twins and before any hook, when ``owners`` and ``kernels`` differ in
        length (the candidates were changed while their kernels played)."""
        cdef Py_ssize_t i, n = len(self.owners)
        cdef list owners = self.owners, kernels = self.kernels
        cdef object c, step = n_rows
        self._clear_twins()
        if n != len(kernels):
            raise RuntimeError(
                f"OnlineSelector: {n} candidates for {len(kernels)} kernels "
                "(the candidates were changed while their kernels played)")
        for i in range(n):
            c = owners[i]
            if getattr(type(c), "_after_block") is not base:
                c._after_block(kernels[i])
            c.t_ = c.t_ + step

    def py_twins(self):
        """A copy of the score twins (``set_twins``)."""
        return np.array(self.twin, copy=True)

    def __dealloc__(self):
        if self.ptrs != NULL:
            free(self.ptrs)

    cdef int ahead(self) noexcept nogil:
        # the challenger on trial: the one with the largest positive lower
        # bound at L = 1/2 (about one standard error) against the leader (the
        # first on ties), -1 when none
        cdef int c, j = -1, l = <int>self.lead[0]
        cdef double lcb, best = 0.0
        cdef double n
        if self.w[1] <= 0.0 or (self.lam < 1.0
                                and self.w[0] * (1.0 - self.lam) < 0.5):
            return -1
        n = self.w[0] * self.w[0] / self.w[1]
        for c in range(self.n_cand):
            if c == l:
                continue
            lcb = self.bound(c, l, n, -1.0, 0.5)
            if lcb > best:
                best = lcb
                j = c
        return j

    cdef double mixture(self, long long t, double[:, ::1] P,
                        double* avg) noexcept nogil:
        # The candidates' distributions in P, the mixed part in avg, and its
        # weight: mix_t = max(mix_min, mix t^-decay) and avg the beta-average;
        # while a challenger j leads on the estimates (``ahead``), the weight
        # is the first round's share ``mix`` and avg = (mix_t * avg + (mix -
        # mix_t) * P[j]) / mix: the decayed part of the share goes to j.
        cdef int a, j
        cdef double m = self.mixer.rate(t), top = self.mixer.epsilon
        self.average(t, P, avg)
        if not top > m:
            return m
        j = self.ahead()
        if j < 0:
            return m
        for a in range(self.n_classes):
            avg[a] = (m * avg[a] + (top - m) * P[j, a]) / top
        return top

    cdef void average(self, long long t, double[:, ::1] P,
                      double* avg) noexcept nogil:
        # P[c]: candidate c's marginal distribution (exact ties averaged) for
        # its current scores at round t; avg = beta_0 P[0] + ... (in order).
        cdef int k = self.n_classes, C = self.n_cand
        cdef int c, a
        cdef double total
        for c in range(C):
            (<BaseKernel>self.ptrs[c]).marginal_distribution(t, &P[c, 0])
        for a in range(k):
            total = 0.0
            for c in range(C):
                total = total + self.beta[c] * P[c, a]
            avg[a] = total

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        # Every candidate's scores and distribution P_c, then the mixture in
        # ``proba``; ``scores`` are the leader's (NaN if any candidate's are not
        # finite).
        cdef int k = self.n_classes, C = self.n_cand
        cdef int c, a, mc
        cdef int lead = <int>self.lead[0]
        self.finite = True
        for c in range(C):
            if self.twin[c] >= 0:
                # the twin's scores, computed above from equal state
                memcpy(&(<BaseKernel>self.ptrs[c]).scores[0],
                       &(<BaseKernel>self.ptrs[self.twin[c]]).scores[0],
                       k * sizeof(double))
            else:
                (<BaseKernel>self.ptrs[c]).compute_scores(x, t)
            if not all_finite(&(<BaseKernel>self.ptrs[c]).scores[0], k):
                self.finite = False
                for a in range(k):
                    self.scores[a] = NAN
                return
            self.g[c] = argmax_ties(&(<BaseKernel>self.ptrs[c]).scores[0], k, 0.0,
                                    &mc)
            self.m[c] = mc
        cdef double mix = self.mixture(t, self.P, &self.avg[0])
        for a in range(k):
            self.proba[a] = (1.0 - mix) * self.P[lead, a] + mix * self.avg[a]
            self.scores[a] = (<BaseKernel>self.ptrs[lead]).scores[a]

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        # (1 - mix) times the leader's distribution for the scores ``s`` (the
        # leader's) and greedy label ``greedy``, plus mix times the candidates'
        # average at round t for their current scores (scratch arrays: the
        # round's P is not touched).
        cdef int a, lead = <int>self.lead[0]
        cdef double mix = self.mixture(t, self.P_tmp, &self.avg_tmp[0])
        (<BaseKernel>self.ptrs[lead]).distribution(s, t, greedy, p)
        for a in range(self.n_classes):
            p[a] = (1.0 - mix) * p[a] + mix * self.avg_tmp[a]

    cdef void marginal_distribution(self, long long t, double* out) noexcept nogil:
        # Q at round t for the candidates' current scores, the leader's taken
        # from ``scores``: after ``compute_scores`` at the same t, bit for bit
        # its ``proba``.
        cdef int a, lead = <int>self.lead[0]
        cdef double mix
        for a in range(self.n_classes):
            (<BaseKernel>self.ptrs[lead]).scores[a] = self.scores[a]
        mix = self.mixture(t, self.P_tmp, &self.avg_tmp[0])
        for a in range(self.n_classes):
            out[a] = (1.0 - mix) * self.P_tmp[lead, a] + mix * self.avg_tmp[a]

    cdef void exact_at(self, long long t, int a) noexcept nogil:
        # P_c(a), for every candidate whose scores tie, as the sequential mean
        # over its tied labels (``BaseKernel.tie_marginal``: the bits of one
        # distribution per tied label, in O(k)), and Q(a) from them: the
        # propensity and the estimates' P_c(a) of the round are then those of
        # the definition bit for bit, while ``average`` computed each P_c in
        # O(k) by its closed form (equal mathematically, used for the draw).
        cdef int c, j, lead = <int>self.lead[0]
        cdef bint tied = False
        cdef double total = 0.0
        cdef double mix = self.mixer.rate(t), top = self.mixer.epsilon
        for c in range(self.n_cand):
            if self.m[c] > 1:
                self.P[c, a] = (<BaseKernel>self.ptrs[c]).tie_marginal(t, a)
                tied = True
        if not tied:
            return
        for c in range(self.n_cand):
            total = total + self.beta[c] * self.P[c, a]
        if top > mix:
            # ``mixture``'s share for a challenger on trial: the same operations
            j = self.ahead()
            if j >= 0:
                total = (mix * total + (top - mix) * self.P[j, a]) / top
                mix = top
        self.avg[a] = total
        self.proba[a] = (1.0 - mix) * self.P[lead, a] + mix * self.avg[a]

    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil:
        cdef int k = self.n_classes
        cdef int c, a, mc
        self.compute_scores(x, t)
        if not self.finite:
            self.status = STATUS_NONFINITE
            greedy[0] = 0
            prob[0] = 0.0
            marginal[0] = 0.0
            return 0
        # each candidate's greedy label, exact ties broken by u2 as in its own act
        for c in range(self.n_cand):
            if self.m[c] > 1:
                self.g[c] = argmax_ties(&(<BaseKernel>self.ptrs[c]).scores[0],
                                        k, u2, &mc)
        greedy[0] = self.g[<int>self.lead[0]]
        a = sample_inverse_cdf(&self.proba[0], k, u1)
        self.exact_at(t, a)
        prob[0] = self.proba[a]
        marginal[0] = self.proba[a]
        self.u1 = u1
        self.drawn = a
        return a

    cpdef set_journal(self, Journal journal):
        # the candidates' writes go to the same journal
        BaseKernel.set_journal(self, journal)
        for kc in self.kernels:
            (<BaseKernel>kc).set_journal(journal)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # the candidates' rounds, then S, R, G, w and beta
        cdef Py_ssize_t C = self.n_cand, m = 2 * C + C * C + 2 + C
        cdef int c
        for c in range(self.n_cand):
            m += (<BaseKernel>self.ptrs[c]).journal_bound(x)
        return m

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        cdef Py_ssize_t m = 2  # lead
        cdef int c
        for c in range(self.n_cand):
            m += (<BaseKernel>self.ptrs[c]).journal_bound_ll()
        return m

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int C = self.n_cand
        cdef int c, mode, b
        cdef double pc, q, v = 0.0, lo = 0.0
        if played != self.drawn:
            # a logged action: its P_c as the draw's (``exact_at``)
            self.exact_at(t, played)
        if self.any_own:
            # the acceptance uniform: (u1 - Q(0) - ... - Q(b-1)) / Q(b) for the
            # action b drawn by u1
            b = self.drawn
            for c in range(b):
                lo = lo + self.proba[c]
            v = (self.u1 - lo) / self.proba[b]
        for c in range(C):
            mode = self.modes[c]
            pc = self.P[c, played]
            q = prob
            if mode == LEARN_OWN:
                # thinned to the candidate's own policy: kept with probability
                # min(1, P_c(a) / prob), learnt with its own propensity P_c(a)
                if not v * prob < pc:
                    continue
                q = pc
            elif mode == LEARN_CAPPED and pc > prob:
                q = pc
            (<BaseKernel>self.ptrs[c]).learn(x, t, played, self.g[c], q, reward)
            if (<BaseKernel>self.ptrs[c]).status != STATUS_OK:
                self.status = (<BaseKernel>self.ptrs[c]).status
                return
        self.update_estimates(played, prob, reward)

    cdef void update_estimates(self, int played, double prob,
                               double reward) noexcept nogil:
        cdef int C = self.n_cand
        cdef int c, e
        cdef double lam = self.lam
        cdef double* z = &self.z_buf[0]
        jsave_range(self.jd, &self.S[0], C)
        jsave_range(self.jd, &self.R[0], C)
        jsave_range(self.jd, &self.G[0, 0], <Py_ssize_t>C * C)
        jsave_range(self.jd, &self.w[0], 2)
        if lam < 1.0:
            for c in range(C):
                self.S[c] = lam * self.S[c]
                self.R[c] = lam * self.R[c]
                for e in range(C):
                    self.G[c, e] = lam * self.G[c, e]
        self.w[0] = lam * self.w[0] + 1.0
        self.w[1] = (lam * lam) * self.w[1] + 1.0
        if reward == 0.0:
            return
        for c in range(C):
            z[c] = reward * self.P[c, played] / prob
            self.S[c] = self.S[c] + z[c]
            if z[c] > self.R[c]:
                self.R[c] = z[c]
        for c in range(C):
            for e in range(C):
                self.G[c, e] = self.G[c, e] + z[c] * z[e]
        self.challenge()

    cdef inline double bound(self, int c, int l, double n, double sign,
                             double L) noexcept nogil:
        # delta + sign * h, h = sqrt(2 var L / n) + (R_c + R_l) L / (3 n), for
        # challenger c against l: the lower (sign -1) or upper (+1) empirical
        # Bernstein bound.
        cdef double w1 = self.w[0]
        cdef double delta = (self.S[c] - self.S[l]) / w1
        cdef double var = (self.G[c, c] - 2.0 * self.G[c, l] + self.G[l, l]) / w1 \
            - delta * delta
        if var < 0.0:
            var = 0.0
        return delta + sign * (sqrt(2.0 * var * L / n)
                               + (self.R[c] + self.R[l]) * L / (3.0 * n))

    cdef void challenge(self) noexcept nogil:
        cdef int C = self.n_cand
        cdef int c, best
        cdef int l = <int>self.lead[0]
        cdef double n = self.w[0] * self.w[0] / self.w[1]
        cdef double lcb, best_lcb = 0.0, total = 0.0
        jsave_ll(self.jd, &self.lead[0])
        jsave_ll(self.jd, &self.lead[1])
        jsave_range(self.jd, &self.beta[0], C)
        best = l
        for c in range(C):
            if c == l:
                continue
            lcb = self.bound(c, l, n, -1.0, self.log_term)
            if lcb > best_lcb:
                best_lcb = lcb
                best = c
        if best != l:
            self.lead[0] = best
            self.lead[1] += 1
            l = best
        # the mixture's shares: 1 for the leader and for every candidate whose
        # upper bound against it is positive (still a contender), ``floor``
        # for the others; normalised to sum to one
        for c in range(C):
            if c == l or self.bound(c, l, n, 1.0, self.log_term) > 0.0:
                self.beta[c] = 1.0
            else:
                self.beta[c] = self.floor
            total = total + self.beta[c]
        for c in range(C):
            self.beta[c] = self.beta[c] / total
