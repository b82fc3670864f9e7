"""Undo journal and base kernels shared by every learner: ``Journal``, the
journal's growth (``journal_grow*``), ``BaseKernel`` and ``LinearKernel``,
the cdef classes declared in _kernel.pxd that every learner's kernel
cimports. The compiled input scans and checks are in _scans.pyx, the row
forms and the pass drivers in _drivers.pyx, the round bodies in
_rounds.pxd."""


cimport cython
from cpython.mem cimport PyMem_RawFree, PyMem_RawRealloc

import numpy as np

from skbandit._core._explore import GreedyExplorer


cdef inline Py_ssize_t _grown(Py_ssize_t cap, Py_ssize_t need, Py_ssize_t limit,
                              Py_ssize_t max_capacity) noexcept nogil:
    """The capacity after a growth that must hold ``need`` entries: twice the
    old one (amortised O(1) per entry), but no more than ``limit`` (a block
    ends at the first row boundary past it, after reserving that row's bound)
    unless ``need`` is more; -1 past the test cap ``max_capacity``."""
    cdef Py_ssize_t c = 2 * cap
    if c > limit:
        c = limit
    if c < need:
        c = need
    if max_capacity > 0:
        if need > max_capacity:
            return -1
        if c > max_capacity:
            c = max_capacity
    return c


cdef bint _grow_records(JournalData* j, void** addr, void** old,
                        Py_ssize_t* cap, Py_ssize_t need,
                        size_t value_size) noexcept nogil:
    """Grow one kind of records (their addresses ``addr`` and old values
    ``old`` of ``value_size`` bytes) to hold ``need`` entries (see
    ``_grown``); False, with ``failed`` set, when they cannot grow."""
    cdef Py_ssize_t c = _grown(cap[0], need, j.limit, j.max_capacity)
    cdef void* p
    if c < 0:
        j.failed = True
        return False
    if c == 0:
        return True
    p = PyMem_RawRealloc(addr[0], c * sizeof(void*))
    if p == NULL:
        j.failed = True
        return False
    addr[0] = p
    p = PyMem_RawRealloc(old[0], c * value_size)
    if p == NULL:
        j.failed = True
        return False
    old[0] = p
    cap[0] = c
    return True


cdef bint journal_grow(JournalData* j, Py_ssize_t m) noexcept nogil:
    """Grow the journal to hold ``m`` more entries: the first growth
    allocates what the first row may write, so a call's journal is
    proportional to what it writes, not a fixed minimum."""
    return _grow_records(j, <void**>&j.addr, <void**>&j.old, &j.cap, j.n + m,
                         sizeof(double))


cdef bint journal_grow_ll(JournalData* j, Py_ssize_t m) noexcept nogil:
    """Grow the integer records to hold ``m`` more entries."""
    return _grow_records(j, <void**>&j.laddr, <void**>&j.lold, &j.lcap,
                         j.ln + m, sizeof(long long))


# The floating-point record buffers of the last journal released, kept for the
# next one (``Journal.__init__`` takes them, ``__dealloc__`` gives them back,
# both with the GIL held): a one-row call then allocates no journal. One set
# per process, at most _SPARE_MAX entries (a larger journal's buffers are
# shrunk to that first): at most _SPARE_MAX records held between calls.
cdef double** _spare_addr = NULL
cdef double* _spare_old = NULL
cdef Py_ssize_t _spare_cap = 0
cdef Py_ssize_t _SPARE_MAX = 2048


cdef void _release_records(JournalData* j) noexcept:
    """Give ``j``'s floating-point record buffers to the spare slot (shrunk to
    ``_SPARE_MAX`` entries), or free them when the slot is taken or the
    shrinking fails; ``j`` then holds none."""
    global _spare_addr, _spare_old, _spare_cap
    cdef Py_ssize_t c = j.cap if j.cap < _SPARE_MAX else _SPARE_MAX
    cdef void* p
    if j.addr != NULL and j.old != NULL and c > 0 and _spare_cap == 0:
        if c < j.cap:
            p = PyMem_RawRealloc(j.addr, c * sizeof(double*))
            if p != NULL:
                j.addr = <double**>p
                p = PyMem_RawRealloc(j.old, c * sizeof(double))
                if p != NULL:
                    j.old = <double*>p
                    j.cap = c
        if j.cap == c:
            _spare_addr, _spare_old, _spare_cap = j.addr, j.old, c
            j.addr, j.old, j.cap = NULL, NULL, 0
            return
    PyMem_RawFree(j.addr)
    PyMem_RawFree(j.old)
    j.addr, j.old, j.cap = NULL, NULL, 0


@cython.final
cdef class Journal:
    """Undo journal of the state writes of one call's current block.

    The kernels record the address and old value of each state entry before
    they write it (``jsave*`` in _kernel.pxd); an entry written twice is
    recorded twice, so the journal holds O(entries written) values, never a
    copy of the model. ``undo`` restores the recorded values in reverse order
    (bit for bit the state at the last ``commit``); ``commit`` applies the
    writes some kernels defer (``defer``) and forgets the records. The pass
    drivers end a block early, at a row boundary, once ``limit`` entries are
    recorded, which bounds the journal's memory (a single row may exceed it).
    Before each row the drivers reserve the entries the row may record (its
    kernel's ``journal_bound``), so a failed growth stops the pass before the
    row: no write is ever made without its record. The buffers start at the
    first reservation and double, up to ``limit`` plus one row's bound. They
    are allocated with ``PyMem_RawRealloc`` (seen by ``tracemalloc``). A
    journal starts with the floating-point record buffers the last one
    released, if any (one set per process, kept at most ``_SPARE_MAX``
    entries: a one-row call then allocates no journal)."""

    def __init__(self, Py_ssize_t limit=1 << 20):
        global _spare_addr, _spare_old, _spare_cap
        if limit < 1:
            raise ValueError("limit must be positive")
        self.data.limit = limit
        self.deferred = []
        if self.data.cap == 0 and _spare_cap > 0:
            # the buffers the last journal released (``_release_records``)
            self.data.addr, self.data.old, self.data.cap = (
                _spare_addr, _spare_old, _spare_cap)
            _spare_addr, _spare_old, _spare_cap = NULL, NULL, 0

    def defer(self, kernel):
        """Register a kernel that keeps some writes pending until the block is
        committed, instead of journaling them (SOBA's full inverse: too large
        to journal, its pending rank-one updates are what it needs to undo).
        ``commit`` calls its ``apply_deferred()``, ``undo`` its
        ``discard_deferred()``; the kernel sets ``stop`` in the journal when
        its pending writes should be committed (the block then ends)."""
        for k in self.deferred:
            if k is kernel:
                return
        self.deferred.append(kernel)

    def __dealloc__(self):
        _release_records(&self.data)
        PyMem_RawFree(self.data.laddr)
        PyMem_RawFree(self.data.lold)

    @property
    def limit(self):
        return self.data.limit

    @property
    def n_entries(self):
        """Entries recorded since the last ``clear`` (floating-point and integer)."""
        return self.data.n + self.data.ln

    @property
    def capacity(self):
        """Entries the buffers hold before they grow."""
        return self.data.cap

    @property
    def failed(self):
        """True when an allocation failed (the row it was for was not played)."""
        return bool(self.data.failed)

    @property
    def overrun(self):
        """True when some row recorded more entries than its kernel's
        ``journal_bound`` since this journal was made (a bug of the bound:
        that row's reservation did not cover it)."""
        return bool(self.data.overrun)

    @property
    def max_capacity(self):
        """Test hook: the most entries the buffers may hold (0: no cap); a
        growth past it fails as an allocation would."""
        return self.data.max_capacity

    @max_capacity.setter
    def max_capacity(self, Py_ssize_t value):
        if value < 0:
            raise ValueError("max_capacity must be >= 0")
        if value > 0 and self.data.cap > value and self.data.n == 0:
            # buffers taken over from an earlier journal hold more than the
            # cap: give them back, so that growth is tested from empty
            _release_records(&self.data)
        self.data.max_capacity = value

    def undo(self):
        """Restore every recorded entry (newest first) and drop the deferred
        writes: the state is as at the last ``commit``."""
        cdef JournalData* j = &self.data
        cdef Py_ssize_t e
        with nogil:
            for e in range(j.n - 1, -1, -1):
                j.addr[e][0] = j.old[e]
            for e in range(j.ln - 1, -1, -1):
                j.laddr[e][0] = j.lold[e]
        for kernel in self.deferred:
            kernel.discard_deferred()
        self._reset()

    def commit(self):
        """Apply the deferred writes and forget the records; keeps the buffers."""
        for kernel in self.deferred:
            kernel.apply_deferred()
        self._reset()

    def _reset(self):
        self.data.n = 0
        self.data.ln = 0
        self.data.failed = False
        self.data.stop = False


cdef class BaseKernel:
    """One-round interface of a learner; subclasses implement the halves.

    Python-callable twins (``py_*``) expose the compiled functions one call at
    a time, for the estimators' non-hot paths and for tests: there is one
    implementation of each learner's distribution.
    """

    def __init__(self, int n_classes, int n_features, bint full_information=False):
        if type(self) is BaseKernel:
            raise TypeError("BaseKernel is abstract: use a learner's kernel")
        self.n_classes = n_classes
        self.n_features = n_features
        self.full_information = full_information
        self.status = STATUS_OK
        self.scores = np.zeros(n_classes, dtype=np.float64)
        self.proba = np.zeros(n_classes, dtype=np.float64)
        self.proba_tmp = np.zeros(n_classes, dtype=np.float64)
        self.tie_labels = np.zeros(n_classes, dtype=np.int32)
        self.jd = NULL
        self.journal = None
        self.rows_played = 0
        self.explorer = GreedyExplorer()

    def set_explorer(self, Explorer explorer not None):
        """Play the rule ``explorer`` (a compiled explorer of
        ``skbandit._core._explore``; ``skbandit.exploration`` builds them)."""
        self.explorer = explorer

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        """An upper bound on the floating-point entries one round on ``x``
        (``act`` then ``learn``) records in the journal. The drivers reserve
        it before the row, so a journal that cannot grow stops the pass
        before the row writes anything; a round that records more sets the
        journal's ``overrun`` (tests check it never happens). Every kernel
        that writes its state overrides it; the base kernel writes none."""
        return 0

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        """The same bound for the integer entries (``jsave_ll``)."""
        return 0

    def py_journal_bound(self, int nnz):
        """``journal_bound`` and ``journal_bound_ll`` for a row of ``nnz``
        stored entries (the bounds depend on the row only through it)."""
        cdef Row x
        cdef int zero = 0
        if nnz < 0:
            raise ValueError("nnz must be >= 0")
        x.val = NULL
        x.ind = &zero
        x.nnz = nnz
        return self.journal_bound(x), self.journal_bound_ll()

    cpdef set_journal(self, Journal journal):
        """Record this kernel's state writes in ``journal`` (None: do not
        record). A kernel that plays other kernels passes it on."""
        self.journal = journal
        self.jd = NULL if journal is None else &journal.data

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        # Overridden by every concrete kernel (instantiation is refused above).
        pass

    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil:
        # The kernel's exploration rule (greedy unless ``set_explorer``).
        self.explorer.distribution(s, self.n_classes, t, greedy, p)

    cdef void marginal_distribution(self, long long t, double* out) noexcept nogil:
        # The policy's probability of each action for the scores in
        # ``self.scores``, tie-breaking included: with exact maximisers
        # g_1 < ... < g_m, out[a] = (p_{g_1}(a) + ... + p_{g_m}(a)) / m. By the
        # rules' tie symmetry (``Explorer``), p_g(a) for a tied g != a is one
        # value whichever tied g is greedy, and p_g(g) one value for every tied
        # g (mathematically); so out[a] = p_{g_1}(a) for an untied a, and
        # out[a] = (hi + (m - 1) lo) / m for every tied a, with hi = p_{g_1}(g_1)
        # and lo = p_{g_2}(g_1): at most two distributions, O(k) however many
        # classes tie (the sequential mean, as ``tie_marginal`` computes it for
        # one action, would take m distributions; this closed form equals it
        # mathematically and may differ from it in the last bits).
        cdef int k = self.n_classes
        cdef int a, m, g2
        cdef const double* s = &self.scores[0]
        cdef double best, v
        cdef int g = argmax_ties(s, k, 0.0, &m)
        self.distribution(s, t, g, out)
        if m == 1 or self.explorer.ignores_greedy:
            # (the mean of m equal distributions is the distribution)
            return
        best = s[g]
        g2 = g + 1
        while not s[g2] == best:
            g2 += 1
        self.distribution(s, t, g2, &self.proba_tmp[0])
        v = (out[g] + (m - 1) * self.proba_tmp[g]) / m
        for a in range(g, k):
            if s[a] == best:
                out[a] = v

    cdef double tie_marginal(self, long long t, int action) noexcept nogil:
        # ``marginal_over`` the exact maximisers of ``self.scores``: the
        # sequential mean of p_g(action) over the tied labels g.
        cdef int k = self.n_classes
        cdef int r, m = 0
        cdef const double* s = &self.scores[0]
        cdef double best = s[0]
        for r in range(1, k):
            if s[r] > best:
                best = s[r]
        for r in range(k):
            if s[r] == best:
                self.tie_labels[m] = r
                m += 1
        return self.marginal_over(t, action, &self.tie_labels[0], m)

    cdef double marginal_over(self, long long t, int action, const int* labels,
                              int m) noexcept nogil:
        # The probability of ``action`` when the greedy label is drawn
        # uniformly among the tied ``labels[0..m-1]`` (in increasing order,
        # m >= 1): the sum of p_g(action) over g in ``labels``, in that order,
        # divided by m. The one implementation of the tie marginal of a played
        # action (``tie_marginal``, and kernels that find their tied labels
        # otherwise, e.g. OffsetTree's walk).
        # By the rules' tie symmetry (``Explorer``) each term is one of two
        # values: hi = p_action(action) when g = action, and lo = p_g(action)
        # for every other tied g (the same bits whichever it is). Both are read
        # off at most two distributions and the m terms summed in the same
        # order as a distribution per tied label would: the same bits in O(k)
        # instead of O(m k). A rule that ignores the greedy label (the
        # softmax, ``ignores_greedy``) or plays every tied label at one rate
        # (the gap map, ``ties_share_rate``) needs one distribution.
        cdef int i, pos = -1
        cdef double total = 0.0, hi, lo
        cdef double* p = &self.proba_tmp[0]
        for i in range(m):
            if labels[i] == action:
                pos = i
        if self.explorer.ignores_greedy:
            self.distribution(&self.scores[0], t, labels[0], p)
            hi = p[action]
            lo = hi
        elif self.explorer.ties_share_rate and m >= 2:
            self.distribution(&self.scores[0], t, labels[0], p)
            hi = p[labels[0]]
            lo = p[labels[1]] if pos >= 0 else p[action]
        elif pos < 0:
            self.distribution(&self.scores[0], t, labels[0], p)
            hi = p[action]  # (unused: no term has g = action)
            lo = hi
        else:
            self.distribution(&self.scores[0], t, action, p)
            hi = p[action]
            if m >= 2:
                self.distribution(&self.scores[0], t, labels[1 if pos == 0 else 0], p)
            lo = p[action]
        for i in range(m):
            total = total + (hi if i == pos else lo)
        return total / m

    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil:
        cdef int k = self.n_classes
        cdef int a, m, g
        cdef bint finite, valid
        cdef double* p = &self.proba[0]
        self.compute_scores(x, t)
        g = argmax_ties_finite(&self.scores[0], k, u2, &m, &finite)
        if not finite:
            self.status = STATUS_NONFINITE
            greedy[0] = 0
            prob[0] = 0.0
            marginal[0] = 0.0
            return 0
        greedy[0] = g
        self.distribution(&self.scores[0], t, greedy[0], p)
        a = sample_checked(p, k, u1, &valid)
        if not valid:
            self.status = STATUS_INVALID_DISTRIBUTION
            prob[0] = 0.0
            marginal[0] = 0.0
            return a
        self.proba_checked = True
        prob[0] = p[a]
        marginal[0] = p[a] if m == 1 else self.tie_marginal(t, a)
        return a

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        pass

    cdef void learn_full(self, Row x, long long t, int played, int greedy,
                         int label) noexcept nogil:
        pass

    # ------------------------------------------------ Python-callable twins
    def py_distribution(self, const double[::1] scores, long long t, int greedy):
        """The learner's distribution ``p`` when the greedy label is ``greedy``."""
        _check_len(scores.shape[0], self.n_classes, "scores")
        if not 0 <= greedy < self.n_classes:
            raise ValueError(f"greedy={greedy} out of range")
        out = np.empty(self.n_classes, dtype=np.float64)
        cdef double[::1] o = out
        self.distribution(&scores[0], t, greedy, &o[0])
        return out

    def py_marginal_distribution(self, const double[::1] scores, long long t):
        """The policy's distribution for these scores, exact ties included."""
        _check_len(scores.shape[0], self.n_classes, "scores")
        out = np.empty(self.n_classes, dtype=np.float64)
        cdef double[::1] o = out
        self.scores[:] = scores
        self.marginal_distribution(t, &o[0])
        return out

    def py_act(self, const double[::1] x, long long t, double u1, double u2):
        """``act`` on one dense row: ``(action, greedy, prob, marginal)``."""
        _check_len(x.shape[0], self.n_features, "x")
        cdef Row row = _dense_row(x)
        cdef int g
        cdef double p, marginal
        cdef int a = self.act(row, t, u1, u2, &g, &p, &marginal)
        if self.status == STATUS_INVALID_DISTRIBUTION:
            raise FloatingPointError("the distribution of this row is not a "
                                     "probability vector")
        if self.status != STATUS_OK:
            raise FloatingPointError("the scores of this row are not finite")
        return a, g, p, marginal

    def py_learn(self, const double[::1] x, long long t, int played, int greedy,
                 double prob, double reward):
        """``learn`` on one dense row (after ``py_act`` on the same row)."""
        _check_len(x.shape[0], self.n_features, "x")
        if not (0 <= played < self.n_classes and 0 <= greedy < self.n_classes):
            raise ValueError("played or greedy out of range")
        self.learn(_dense_row(x), t, played, greedy, prob, reward)

    def py_scores(self):
        """A copy of the scores computed by the last ``act``."""
        return np.array(self.scores, copy=True)

    def py_proba(self):
        """A copy of the distribution played by the last ``act``."""
        return np.array(self.proba, copy=True)


# The size of a weight matrix W (k d doubles) above which a kernel prefetches
# the lines its update will write (``LinearKernel.prefetch``): below it the
# state stays in the caches and the prefetches are instructions for nothing.
PREFETCH_MIN_BYTES = 4 << 20


cdef class LinearKernel(BaseKernel):
    """Scores ``W x``; by default plays the greedy label with probability one
    (the full-information baselines and the one-vs-all learners)."""

    def __init__(self, double[:, ::1] W, bint full_information=False):
        # W is (d, k): feature-major (see _kernel.pxd)
        BaseKernel.__init__(self, <int>W.shape[1], <int>W.shape[0], full_information)
        self.W = W
        self.prefetch = 8 * <double>W.shape[0] * W.shape[1] > PREFETCH_MIN_BYTES

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        skb_linear_scores(&self.W[0, 0], self.n_classes, x.val, x.ind, x.nnz,
                          &self.scores[0])

    cdef void add_row(self, int r, double a, Row x) noexcept nogil:
        jsave_row(self.jd, &self.W[0, r], self.n_classes, x)
        row_axpy(a, x, &self.W[0, r], self.n_classes)

    cdef void add_row_div(self, int r, Row x, double denom) noexcept nogil:
        jsave_row(self.jd, &self.W[0, r], self.n_classes, x)
        row_add_div(x, denom, &self.W[0, r], self.n_classes)


# The row form and the length check of the Python-callable twins (``py_act``,
# ``py_learn``, ...); the pass drivers' row forms are in _drivers.pyx.
cdef inline Row _dense_row(const double[::1] x) noexcept:
    cdef Row row
    row.val = &x[0]
    row.ind = NULL
    row.nnz = <int>x.shape[0]
    return row


def _check_len(Py_ssize_t got, Py_ssize_t expected, str name):
    if got != expected:
        raise ValueError(f"{name} has length {got}, expected {expected}")


# The tolerance of ``valid_distribution``, for Python (messages, tests).
DISTRIBUTION_TOL = SKB_DISTRIBUTION_TOL
