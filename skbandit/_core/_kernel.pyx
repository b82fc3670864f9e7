"""Pass driver and one-round interface shared by every learner (see _kernel.pxd);
the compiled row checks, and the live loop's one-row calls (``OneRow``)."""


cimport cython
cimport numpy as cnp
from cpython.mem cimport PyMem_RawFree, PyMem_RawRealloc
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.math cimport INFINITY, fabs
from libc.stdint cimport uintptr_t
from libc.string cimport memcpy
from numpy.random cimport bitgen_t

import numpy as np
from numpy.random import PCG64
from scipy.sparse import csr_array, csr_matrix

from skbandit._core._explore import GreedyExplorer

cnp.import_array()


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
# shrunk to that first): 32 KiB of records held between calls.
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


cdef inline bint journal_finite_since(JournalData* j, Py_ssize_t mark) noexcept nogil:
    """True when every entry recorded from ``mark`` on is finite now (the
    values the row wrote; ``v - v`` is NaN for inf and NaN)."""
    cdef Py_ssize_t e
    cdef double v
    cdef bint ok = True
    # independent tests (no chain of floating-point additions to wait on)
    for e in range(mark, j.n):
        v = j.addr[e][0]
        ok = ok & is_finite(v)
    return ok


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
    released, if any (one set per process, kept at most 2048 entries, 32 KiB:
    a one-row call then allocates no journal)."""

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


# Target of ``Row.ind`` for an empty row of an all-zero CSR matrix (``NULL``
# would mean a dense row).
cdef int _EMPTY_INDEX = 0


cdef inline Row _dense_row(const double[::1] x) noexcept:
    cdef Row row
    row.val = &x[0]
    row.ind = NULL
    row.nnz = <int>x.shape[0]
    return row


cdef inline Row _csr_row(const double[::1] data, const int[::1] indices,
                         const int[::1] indptr, Py_ssize_t i) noexcept nogil:
    # Pointer arithmetic, not indexing: an all-zero CSR matrix has empty data
    # and indices arrays.
    cdef Row row
    cdef Py_ssize_t start = indptr[i]
    row.nnz = indptr[i + 1] - indptr[i]
    row.val = &data[0] + start if data.shape[0] > 0 else NULL
    row.ind = &indices[0] + start if indices.shape[0] > 0 else NULL
    if row.ind == NULL:
        # ``ind == NULL`` means dense: an empty sparse row has no entries.
        row.nnz = 0
        row.ind = <const int*>&_EMPTY_INDEX
    return row


def _check_len(Py_ssize_t got, Py_ssize_t expected, str name):
    if got != expected:
        raise ValueError(f"{name} has length {got}, expected {expected}")


# The tolerance of ``valid_distribution``, for Python (messages, tests).
DISTRIBUTION_TOL = SKB_DISTRIBUTION_TOL


cdef inline bint played_ok(BaseKernel kernel, double marginal) noexcept nogil:
    """Check the round ``act`` just played: its distribution (``kernel.proba``,
    where every ``act`` writes it) is a probability vector and the logged
    propensity of the played action is in (0, 1]. Otherwise set
    ``STATUS_INVALID_DISTRIBUTION`` and return False. O(k) per round: the
    drivers call it on every round, so no learner can log or sample from a
    NaN, negative or unnormalised distribution. The generic ``act`` checks
    its distribution in the sweep that draws from it (``sample_checked``) and
    says so (``proba_checked``): only the marginal is left to check then."""
    if ((kernel.proba_checked
            or valid_distribution(&kernel.proba[0], kernel.n_classes))
            and marginal > 0.0 and marginal <= 1.0):
        return True
    kernel.status = STATUS_INVALID_DISTRIBUTION
    return False


cdef inline bint row_reserved(BaseKernel kernel, JournalData* j, Row x,
                              Py_ssize_t m_ll, Py_ssize_t* mark,
                              Py_ssize_t* lmark) noexcept nogil:
    """Before a row: reserve the journal entries its round may record
    (``journal_bound``; ``m_ll`` is ``journal_bound_ll``, read once per pass)
    and note where its records start. False, with ``STATUS_JOURNAL_ERROR``,
    when the journal cannot grow: the row is then not played, so every write
    of the block is recorded and can be undone."""
    cdef Py_ssize_t m = kernel.journal_bound(x)
    mark[0] = j.n
    lmark[0] = j.ln
    if not jreserve_row(j, m, m_ll):
        kernel.status = STATUS_JOURNAL_ERROR
        return False
    # what the row may still record without growing (checked after it)
    mark[1] = m
    lmark[1] = m_ll
    return True


cdef inline void row_committable(BaseKernel kernel, JournalData* j,
                                 const Py_ssize_t* mark,
                                 const Py_ssize_t* lmark) noexcept nogil:
    """After a row's ``learn``: the state entries it wrote (journal records
    from ``mark[0]`` on) must be finite, and the journal must hold them all;
    otherwise set the status that stops the pass (the estimator then undoes
    the block). A row that recorded more than its reserved bound sets
    ``overrun``. O(entries the row wrote)."""
    if j.n - mark[0] > mark[1] or j.ln - lmark[0] > lmark[1]:
        j.overrun = True
    if j.failed:
        kernel.status = STATUS_JOURNAL_ERROR
    elif not journal_finite_since(j, mark[0]):
        kernel.status = STATUS_NONFINITE


cdef Py_ssize_t _n_rows(const double[::1] data, const int[::1] indices,
                        const int[::1] indptr, bint dense, int d) except -1:
    """Number of rows of the dense or CSR arrays, after O(1) shape checks."""
    cdef Py_ssize_t n
    if dense:
        if d <= 0 or data.shape[0] % d != 0:
            raise ValueError(f"dense data of length {data.shape[0]} is not a "
                             f"whole number of rows of {d} features")
        return data.shape[0] // d
    n = indptr.shape[0] - 1
    if n < 0 or indptr[0] != 0 or indptr[n] > data.shape[0] \
            or indptr[n] > indices.shape[0]:
        raise ValueError("malformed CSR arrays (use check_csr first)")
    return n


cdef inline Row _row(const double[::1] data, const int[::1] indices,
                     const int[::1] indptr, bint dense, int d,
                     Py_ssize_t i) noexcept nogil:
    cdef Row row
    if dense:
        row.val = &data[0] + i * d
        row.ind = NULL
        row.nnz = d
        return row
    return _csr_row(data, indices, indptr, i)


# Dense rows with many zeros are played as sparse rows: the pass compacts a
# dense row's non-zero entries (in column order) into scratch buffers, and the
# kernels then touch only those. This is exact, not an approximation: a score
# or a norm is a sequential sum that starts at +0.0, so it is never -0.0 and
# adding a term w * 0.0 = +-0.0 (w finite) leaves it unchanged; an update
# w += c * 0.0 leaves w unchanged too, except that a -0.0 weight would become
# +0.0, the same number. Dense and CSR rows (scipy drops zeros) already give
# the same results through the same argument, which the tests check bit for bit.
# The compaction costs one branch-free sweep of the row; when a row has more
# than half its entries non-zero the dense row is played instead, and the
# compaction is skipped for the next _DENSE_SKIP rows (then tried again), so
# fully dense data pays for one sweep in _DENSE_SKIP + 1 rows.
cdef int _DENSE_SKIP = 63


cdef inline Row compact_dense(Row x, int* cind, double* cval) noexcept nogil:
    """The dense row ``x`` as its non-zero entries (in column order) written
    to ``cind``/``cval`` (``d`` entries each), when at most half of its entries
    are non-zero; else ``x`` itself (``row_dense`` tells which). Exact: see
    above. Used by ``_RowReader.row`` and ``OneRow``."""
    cdef int n = skb_nonzeros(x.val, x.nnz, cind, cval)
    if 2 * n > x.nnz:
        return x
    x.val = cval
    x.ind = cind
    x.nnz = n
    return x


@cython.final
cdef class _RowReader:
    """The rows of X (dense flattened or CSR arrays) as ``Row``s, for every
    pass driver: O(1) shape checks on construction (``n_rows``), then
    ``row(i)`` without the GIL, dense rows compacted as described above."""
    cdef const double[::1] data
    cdef const int[::1] indices
    cdef const int[::1] indptr
    cdef bint dense
    cdef int d
    cdef readonly Py_ssize_t n_rows
    cdef double[::1] cval
    cdef int[::1] cind
    cdef int skip

    def __cinit__(self, const double[::1] data, const int[::1] indices,
                  const int[::1] indptr, bint dense, int d):
        self.n_rows = _n_rows(data, indices, indptr, dense, d)
        self.data, self.indices, self.indptr = data, indices, indptr
        self.dense, self.d, self.skip = dense, d, 0
        self.cval = np.empty(max(d, 1) if dense else 1, dtype=np.float64)
        self.cind = np.empty(max(d, 1) if dense else 1, dtype=np.int32)

    cdef inline Row row(self, Py_ssize_t i) noexcept nogil:
        """Row ``i``: a CSR row, or a dense row or its non-zero entries."""
        cdef Row x = _row(self.data, self.indices, self.indptr, self.dense,
                          self.d, i)
        if not self.dense:
            return x
        if self.skip > 0:
            self.skip -= 1
            return x
        x = compact_dense(x, &self.cind[0], &self.cval[0])
        if row_dense(x):
            self.skip = _DENSE_SKIP
        return x


cdef inline bint round_act(BaseKernel kernel, JournalData* j, Row x,
                           long long t, double u1, double u2,
                           Py_ssize_t bound_ll, Py_ssize_t* mark,
                           Py_ssize_t* lmark, int* action, int* greedy,
                           double* prob, double* marginal) noexcept nogil:
    """The first half of a learning round (``label_round``, ``logged_round``):
    the journal's reservation for the row (``j`` NULL: none; ``row_reserved``
    notes where its records start in ``mark``, ``lmark``), then ``act`` at
    round ``t`` and the check of what it played (``played_ok``). False, with
    ``kernel.status`` set, when the round cannot be played."""
    if j != NULL and not row_reserved(kernel, j, x, bound_ll, mark, lmark):
        return False
    action[0] = kernel.act(x, t, u1, u2, greedy, prob, marginal)
    return kernel.status == STATUS_OK and played_ok(kernel, marginal[0])


cdef inline void round_check(BaseKernel kernel, JournalData* j,
                             const Py_ssize_t* mark,
                             const Py_ssize_t* lmark) noexcept nogil:
    """The last step of a learning round, after ``learn``: the entries it
    wrote are checked (``row_committable``) unless the status is already set
    or there is no journal."""
    if kernel.status == STATUS_OK and j != NULL:
        row_committable(kernel, j, mark, lmark)


cdef inline bint label_round(BaseKernel kernel, JournalData* j, Row x,
                             long long t, double u1, double u2, int y,
                             Py_ssize_t bound_ll, int* action, int* greedy,
                             double* reward, double* propensity) noexcept nogil:
    """One round of ``run_pass`` (and of ``OneRow.learn_label``) on a row
    with true label ``y``: the journal's reservation (``j`` NULL: none),
    ``act``, the reward ``1[action == y]``, ``learn`` (``learn_full`` with the
    label for a full-information kernel) and the written entries' check; the
    played action, greedy label, reward and logged propensity (the marginal)
    to the outputs. False, with ``kernel.status`` set, when the round was not
    played (the journal could not grow, or ``act`` was refused); True when it
    was (``learn`` or the check may then have set the status: the caller
    stops after it). The bandit boundary: the one read of the true label."""
    cdef int a, g
    cdef double p, marginal, r
    cdef Py_ssize_t mark[2]
    cdef Py_ssize_t lmark[2]
    if not round_act(kernel, j, x, t, u1, u2, bound_ll, mark, lmark, &a, &g,
                     &p, &marginal):
        return False
    r = 1.0 if a == y else 0.0
    if kernel.full_information:
        kernel.learn_full(x, t, a, g, y)
    else:
        kernel.learn(x, t, a, g, p, r)
    action[0] = a
    greedy[0] = g
    reward[0] = r
    propensity[0] = marginal
    round_check(kernel, j, mark, lmark)
    return True


def run_pass(
    BaseKernel kernel,
    const double[::1] data,
    const int[::1] indices,
    const int[::1] indptr,
    bint dense,
    const int[::1] rows,
    const int[::1] y,
    const double[:, ::1] uniforms,
    long long t0,
    int[::1] played,
    int[::1] greedy,
    double[::1] rewards,
    double[::1] propensities,
):
    """Play rounds ``rows[t]`` of X (dense or CSR arrays) with ``uniforms[t]``.

    Round ``t`` of the block has global index ``t0 + t + 1``. Writes the played
    action, greedy action, reward and logged propensity of each round to the
    output arrays; the logged propensity is the policy's marginal probability
    of the played action, exact ties of the greedy label included. ``y`` holds
    the true label codes: it is read only by each round's ``label_round``, to
    form the reward (and handed to ``learn_full`` for full-information
    learners). ``dense`` means ``data`` is a C-ordered ``(n, d)`` array
    flattened (``indices``/``indptr`` unused); CSR arrays must have passed
    ``check_csr``.

    With a journal (``kernel.set_journal``), the state entries each round
    wrote are checked to be finite (else ``STATUS_NONFINITE``), and the pass
    ends early, with ``status`` 0, after the round at which the journal holds
    ``limit`` entries (the caller commits those rounds as a block).

    Returns the number of rounds played: ``len(rows)``, or fewer when the
    kernel set a non-zero ``status`` (the round that set it is not played),
    or when the journal reached its limit.
    """
    cdef Py_ssize_t t, n = rows.shape[0]
    cdef Py_ssize_t i
    cdef int d = kernel.n_features
    cdef int a, g
    cdef double marginal, reward
    cdef _RowReader X = _RowReader(data, indices, indptr, dense, d)
    cdef Py_ssize_t n_rows = X.n_rows
    if uniforms.shape[0] < n or uniforms.shape[1] != 2 or played.shape[0] < n \
            or greedy.shape[0] < n or rewards.shape[0] < n \
            or propensities.shape[0] < n:
        raise ValueError("output or uniform arrays are shorter than rows")
    if y.shape[0] < n_rows:
        raise ValueError("fewer labels than rows")
    for t in range(n):
        if rows[t] < 0 or rows[t] >= n_rows:
            raise IndexError(f"row {rows[t]} out of range for {n_rows} rows")
    if kernel.status != STATUS_OK:
        raise RuntimeError(f"kernel status {kernel.status} was not reset")
    cdef Py_ssize_t done = n
    cdef JournalData* j = kernel.jd
    cdef Py_ssize_t bound_ll = kernel.journal_bound_ll()
    with nogil:
        for t in range(n):
            i = rows[t]
            if not label_round(kernel, j, X.row(i), t0 + t + 1, uniforms[t, 0],
                               uniforms[t, 1], y[i], bound_ll, &a, &g, &reward,
                               &marginal):
                done = t
                break
            played[t] = a
            greedy[t] = g
            rewards[t] = reward
            propensities[t] = marginal
            if kernel.status != STATUS_OK or (j != NULL and (j.n >= j.limit or j.stop)):
                done = t + 1
                break
    kernel.rows_played = done
    return done


def run_distribution(
    BaseKernel kernel,
    const double[::1] data,
    const int[::1] indices,
    const int[::1] indptr,
    bint dense,
    long long t,
    double[:, ::1] out,
):
    """The policy's distribution (exact ties included) for each row, at round
    ``t``, written to ``out`` (n_rows, k). Changes no learner state.

    Returns the number of rows done: all of them, or fewer when a row's scores
    were not finite or its distribution was not a probability vector
    (``kernel.status`` is then set to ``STATUS_NONFINITE`` or
    ``STATUS_INVALID_DISTRIBUTION``; the rows from that one on are not
    written)."""
    cdef _RowReader X = _RowReader(data, indices, indptr, dense, kernel.n_features)
    cdef Py_ssize_t i, n = X.n_rows
    cdef int k = kernel.n_classes
    cdef Row x
    if out.shape[0] != n or out.shape[1] != k:
        raise ValueError("out has the wrong shape")
    if kernel.status != STATUS_OK:
        raise RuntimeError(f"kernel status {kernel.status} was not reset")
    cdef Py_ssize_t done = n
    with nogil:
        for i in range(n):
            x = X.row(i)
            kernel.compute_scores(x, t)
            if not all_finite(&kernel.scores[0], k):
                kernel.status = STATUS_NONFINITE
                done = i
                break
            kernel.marginal_distribution(t, &out[i, 0])
            if not valid_distribution(&out[i, 0], k):
                kernel.status = STATUS_INVALID_DISTRIBUTION
                done = i
                break
    return done


def run_scores(
    BaseKernel kernel,
    const double[::1] data,
    const int[::1] indices,
    const int[::1] indptr,
    bint dense,
    long long t,
    double[:, ::1] out,
):
    """The kernel's scores of each row at round ``t`` (``compute_scores``, the
    same compiled sums as in training), written to ``out`` (n_rows, k).
    Changes no learner state."""
    cdef _RowReader X = _RowReader(data, indices, indptr, dense, kernel.n_features)
    cdef Py_ssize_t i, n = X.n_rows
    cdef int r
    if out.shape[0] != n or out.shape[1] != kernel.n_classes:
        raise ValueError("out has the wrong shape")
    with nogil:
        for i in range(n):
            kernel.compute_scores(X.row(i), t)
            for r in range(kernel.n_classes):
                out[i, r] = kernel.scores[r]


ctypedef fused index_t:
    int
    long long


cdef Py_ssize_t _scan_indices(const index_t* indices, Py_ssize_t nnz,
                              Py_ssize_t n_cols, bint* out_of_range) noexcept nogil:
    """One compiled scan of ``indices[:nnz]`` (``skb_scan_indices_*``): flags a
    column index that may be outside ``[0, n_cols)`` (a bound above the index
    type's range is clamped; the caller confirms a flag exactly) and returns
    the number of positions ``j >= 1`` with ``indices[j] <= indices[j - 1]``."""
    cdef int bad = 0
    cdef Py_ssize_t desc = 0
    if nnz == 0:
        out_of_range[0] = False
        return 0
    if index_t is int:
        desc = skb_scan_indices_i32(indices, nnz,
                                    <int>(n_cols if n_cols < 0x7fffffff
                                          else 0x7fffffff), &bad)
    else:
        desc = skb_scan_indices_i64(indices, nnz, <long long>n_cols, &bad)
    out_of_range[0] = bad != 0
    return desc


# Entries of the CSR index array per step of ``_scan_rows`` (16 KiB of int32
# indices, 32 KiB of int64: the step's row starts are read again from L1).
cdef Py_ssize_t _SCAN_STEP = 4096
SCAN_STEP = _SCAN_STEP  # (for the tests)


cdef bint _scan_rows(const index_t* indptr, const index_t* indices,
                     Py_ssize_t n_rows, Py_ssize_t n_cols,
                     bint* out_of_range) noexcept nogil:
    """Whether the rows are canonical (each row's column indices strictly
    increasing), flagging in ``out_of_range`` an index that may be outside
    ``[0, n_cols)`` (``_scan_indices``; the caller confirms a flag exactly).
    ``indptr`` must be valid (``n_rows + 1`` non-decreasing entries from 0).

    The indices are scanned in steps of whole rows of about ``_SCAN_STEP``
    entries: the branch-free ``_scan_indices`` counts the positions ``j`` of
    the step, but its first, with ``indices[j] <= indices[j - 1]``, and the
    rows are canonical when every such position starts a non-empty row
    (counted from the step's row starts, O(rows), while the step's indices are
    still in L1: one read of the index array from memory, not one plus one
    line a row)."""
    cdef Py_ssize_t r0 = 0, r1, r, j, j0, j1, desc = 0, at_starts = 0
    cdef bint bad = False, step_bad
    out_of_range[0] = False
    while r0 < n_rows:
        j0 = indptr[r0]
        r1 = r0 + 1
        while r1 < n_rows and indptr[r1] - j0 < _SCAN_STEP:
            r1 += 1
        j1 = indptr[r1]
        if j1 > j0:
            desc += _scan_indices(indices + j0, j1 - j0, n_cols, &step_bad)
            bad = bad | step_bad
            for r in range(r0 + 1, r1):
                j = indptr[r]
                if j > j0 and j < indptr[r + 1]:
                    at_starts += indices[j] <= indices[j - 1]
        r0 = r1
    out_of_range[0] = bad
    return desc == at_starts


cdef str _csr_problem(const index_t* indptr, Py_ssize_t len_indptr,
                      const index_t* indices, Py_ssize_t len_indices,
                      Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols,
                      bint* canonical):
    """``check_csr``'s message, and (when it is ``""``) ``csr_is_canonical``
    to ``canonical``, from one scan of the indices (the arrays as pointers
    and lengths: ``check_csr`` and the compiled lean-row check share it)."""
    cdef Py_ssize_t i, j, nnz
    cdef bint out_of_range = False, rows_canonical = False
    canonical[0] = False
    if len_indptr != n_rows + 1:
        return (f"indptr has length {len_indptr}, expected n_rows + 1 = "
                f"{n_rows + 1}")
    if indptr[0] != 0:
        return f"indptr[0] is {indptr[0]}, expected 0"
    nnz = indptr[n_rows]
    if nnz != n_data or nnz != len_indices:
        return (f"indptr[-1] is {nnz} but there are {n_data} stored values and "
                f"{len_indices} column indices")
    # Branch-free scans (they vectorise); the position is looked up only when
    # a problem was found.
    cdef bint decreasing = False
    with nogil:
        for i in range(n_rows):
            decreasing = decreasing | (indptr[i + 1] < indptr[i])
    if decreasing:
        for i in range(n_rows):
            if indptr[i + 1] < indptr[i]:
                return (f"indptr is not non-decreasing: indptr[{i + 1}] = "
                        f"{indptr[i + 1]} < indptr[{i}] = {indptr[i]}")
    with nogil:
        rows_canonical = _scan_rows(indptr, indices, n_rows, n_cols, &out_of_range)
    if out_of_range:
        for j in range(nnz):
            if indices[j] < 0 or indices[j] >= n_cols:
                return (f"column index {indices[j]} at position {j} is out of "
                        f"range for {n_cols} columns")
    canonical[0] = rows_canonical
    return ""


def check_csr(const index_t[::1] indptr, const index_t[::1] indices,
              Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols):
    """Validate the structure of CSR arrays in O(nnz), without copying.

    Returns ``""`` when ``indptr`` has ``n_rows + 1`` non-decreasing entries
    from 0 to ``n_data == len(indices)`` and every column index is in
    ``[0, n_cols)``; otherwise a message naming the first problem found.
    """
    cdef bint canonical
    return _csr_problem(&indptr[0], indptr.shape[0], &indices[0], indices.shape[0],
                        n_data, n_rows, n_cols, &canonical)


def check_csr_canonical(const index_t[::1] indptr, const index_t[::1] indices,
                        Py_ssize_t n_data, Py_ssize_t n_rows, Py_ssize_t n_cols):
    """``(check_csr(...), csr_is_canonical(...))`` from one scan of the
    indices (the second is False when the first is not ``""``)."""
    cdef bint canonical
    problem = _csr_problem(&indptr[0], indptr.shape[0], &indices[0],
                           indices.shape[0], n_data, n_rows, n_cols, &canonical)
    return problem, canonical


def csr_is_canonical(const index_t[::1] indptr, const index_t[::1] indices):
    """True when the column indices of every row are strictly increasing:
    sorted, no column stored twice (SciPy's canonical format). Computed from
    the arrays, in O(nnz) without copying: SciPy caches its own
    ``has_canonical_format`` flag, which an in-place edit can leave stale. The
    arrays must have passed ``check_csr``.

    A branch-free scan counts the positions ``j`` with
    ``indices[j] <= indices[j - 1]`` (it vectorises); the rows are canonical
    when every such position starts a row (``_scan_rows``)."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef bint out_of_range
    cdef bint ok
    cdef Py_ssize_t no_bound = PY_SSIZE_T_MAX
    if n_rows < 0:
        return True
    with nogil:
        ok = _scan_rows(&indptr[0], &indices[0], n_rows, no_bound, &out_of_range)
    return ok


def rows_nnz(const index_t[::1] indptr, const int[::1] rows):
    """``sum(indptr[r + 1] - indptr[r] for r in rows)``: the stored entries of
    the rows ``rows`` of a CSR matrix (``indptr`` valid: ``check_csr``), in one
    loop without the two index copies and the temporary of NumPy's
    ``indptr[rows + 1] - indptr[rows]``. IndexError for a row outside
    ``[0, len(indptr) - 1)``."""
    cdef Py_ssize_t t, r, n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t total = 0
    cdef bint bad = False
    with nogil:
        for t in range(rows.shape[0]):
            r = rows[t]
            if r < 0 or r >= n_rows:
                bad = True
                break
            total += indptr[r + 1] - indptr[r]
    if bad:
        raise IndexError(f"row {rows[t]} out of range for {n_rows} rows")
    return total


def within_bound(const double[::1] values, double bound):
    """True when every ``|v| <= bound`` (False for NaN and infinite values),
    i.e. ``max_abs(values) <= bound`` for a finite ``bound >= 0``, in one
    branch-free integer scan (``skb_within_bound``)."""
    cdef int ok = 1
    if values.shape[0] > 0:
        with nogil:
            ok = skb_within_bound(&values[0], values.shape[0], bound)
    return ok != 0


def max_abs(const double[::1] values):
    """``max |v|`` over ``values`` (0.0 when empty), or ``inf`` when a value is
    NaN or infinite. One pass, no copy."""
    cdef Py_ssize_t j, n = values.shape[0]
    cdef double m = 0.0, acc = 0.0, v
    with nogil:
        for j in range(n):
            v = fabs(values[j])
            m = v if v > m else m
            acc = acc + (values[j] - values[j])
    if acc != 0.0:  # NaN: a value was NaN or infinite
        return INFINITY
    return m


def py_argmax_ties(const double[::1] scores, double u2):
    """``(index, number of exact maximisers)`` of the shared tie-breaking argmax."""
    if scores.shape[0] == 0:
        raise ValueError("scores is empty")
    cdef int m
    cdef int g = argmax_ties(&scores[0], <int>scores.shape[0], u2, &m)
    return g, m


def py_sample_inverse_cdf(const double[::1] p, double u1):
    """The shared inverse-CDF sampler: first ``r`` with ``u1 < cumsum(p)[r]``."""
    if p.shape[0] == 0:
        raise ValueError("p is empty")
    return sample_inverse_cdf(&p[0], <int>p.shape[0], u1)


cdef inline bint act_round(BaseKernel kernel, Row x, long long t, double u1,
                           double u2, int* action,
                           double* propensity) noexcept nogil:
    """One round of ``run_act`` (and of ``OneRow.act``): ``act`` on ``x`` at
    round ``t``, the drawn action to ``action`` and its logged propensity (the
    marginal) to ``propensity``. False, with ``kernel.status`` set, when the
    scores were not finite or the distribution was not valid (``played_ok``)."""
    cdef int g
    cdef double p, marginal
    action[0] = kernel.act(x, t, u1, u2, &g, &p, &marginal)
    if kernel.status != STATUS_OK or not played_ok(kernel, marginal):
        return False
    propensity[0] = marginal
    return True


def py_sample_checked(const double[::1] p, double u1):
    """``(action, valid)``: the generic ``act``'s draw and check of ``p`` in one
    sweep (``sample_checked``); the action is ``py_sample_inverse_cdf``'s and
    ``valid`` is True when ``p`` is a probability vector."""
    cdef bint valid
    if p.shape[0] == 0:
        raise ValueError("p is empty")
    cdef int a = sample_checked(&p[0], <int>p.shape[0], u1, &valid)
    return a, bool(valid)


def run_act(
    BaseKernel kernel,
    const double[::1] data,
    const int[::1] indices,
    const int[::1] indptr,
    bint dense,
    const double[:, ::1] uniforms,
    long long t0,
    int[::1] played,
    double[::1] propensities,
):
    """Draw an action for each row (``act`` only): nothing is learned.

    Row ``i`` is round ``t0 + i + 1`` and uses ``uniforms[i]`` exactly as
    ``run_pass`` would (``u1`` samples, ``u2`` breaks ties of the greedy
    label). Writes the action and its logged propensity (the policy's marginal
    probability of the action, exact ties included). ``act`` writes only the
    kernel's scratch (scores, distribution), never the learner's state.

    Returns the number of rows done: all of them, or fewer when a row's scores
    were not finite (``kernel.status`` is then set).
    """
    cdef _RowReader X = _RowReader(data, indices, indptr, dense, kernel.n_features)
    cdef Py_ssize_t i, n = X.n_rows
    if uniforms.shape[0] < n or uniforms.shape[1] != 2 or played.shape[0] < n \
            or propensities.shape[0] < n:
        raise ValueError("output or uniform arrays are shorter than the rows")
    if kernel.status != STATUS_OK:
        raise RuntimeError(f"kernel status {kernel.status} was not reset")
    cdef Py_ssize_t done = n
    with nogil:
        for i in range(n):
            if not act_round(kernel, X.row(i), t0 + i + 1, uniforms[i, 0],
                             uniforms[i, 1], &played[i], &propensities[i]):
                done = i
                break
    return done


cdef inline bint logged_round(BaseKernel kernel, JournalData* j, Row x,
                              long long t, double u1, double u2, int action,
                              double reward, double logged_propensity,
                              Py_ssize_t bound_ll, int* greedy,
                              signed char* own) noexcept nogil:
    """One round of ``run_logged`` (and of ``OneRow.learn_logged``), described
    there: the journal's reservation (``j`` NULL: none), ``act``, the own or
    off-policy probability, ``learn`` and the written entries' check. False,
    with ``kernel.status`` set, when the round was not played (the journal
    could not grow, or ``act`` was refused); True when it was (``learn`` or
    the check may then have set the status: the caller stops after it)."""
    cdef int b, g
    cdef double p, marginal, prob
    cdef Py_ssize_t mark[2]
    cdef Py_ssize_t lmark[2]
    if not round_act(kernel, j, x, t, u1, u2, bound_ll, mark, lmark, &b, &g,
                     &p, &marginal):
        return False
    if action == b and logged_propensity == marginal:
        prob = p
        own[0] = 1
    else:
        prob = logged_propensity
        own[0] = 0
    kernel.learn(x, t, action, g, prob, reward)
    greedy[0] = g
    round_check(kernel, j, mark, lmark)
    return True


def run_logged(
    BaseKernel kernel,
    const double[::1] data,
    const int[::1] indices,
    const int[::1] indptr,
    bint dense,
    const int[::1] rows,
    const int[::1] actions,
    const double[::1] rewards,
    const double[::1] logged_propensities,
    const double[:, ::1] uniforms,
    long long t0,
    int[::1] greedy,
    signed char[::1] own,
):
    """Learn from logged rounds: ``act`` for the scores, ``learn`` from the log.

    Round ``t`` of the block (global index ``t0 + t + 1``) is row ``i =
    rows[t]`` with the logged action ``actions[i]`` (a class code), reward
    ``rewards[i]`` and propensity ``logged_propensities[i]``. The kernel first
    ``act``s on the row with ``uniforms[t]``, exactly as ``run_pass`` would:
    that computes its scores, its greedy label ``g`` (exact ties broken by
    ``u2``) and the action ``b`` it would play, with the probability
    ``p_g(b)`` and the marginal ``P(b)``. Then:

    * the round is the learner's **own** (``own[t] = 1``) when the logged
      action is ``b`` and the logged propensity equals ``P(b)`` exactly: the
      update uses the paper's ``p_g(b)``, as in ``run_pass``, so a log
      produced by the learner's own ``sample_actions`` with the same uniforms
      is learned bit for bit as the simulator would;
    * otherwise the round is **off-policy** (``own[t] = 0``) and the update
      uses the logged propensity.

    ``learn`` then runs with the logged action, ``g``, that probability and the
    logged reward. Writes ``g`` to ``greedy[t]``. Returns the number of rounds
    played (fewer when the kernel set a non-zero ``status``, the round that
    set it in ``act`` not played; or when its journal reached its limit, as
    in ``run_pass``). Full-information kernels are refused:
    they need the true label.
    """
    cdef Py_ssize_t t, n = rows.shape[0]
    cdef Py_ssize_t i
    cdef int d = kernel.n_features, k = kernel.n_classes
    cdef _RowReader X = _RowReader(data, indices, indptr, dense, d)
    cdef Py_ssize_t n_rows = X.n_rows
    if kernel.full_information:
        raise TypeError("a full-information kernel cannot learn from logged "
                        "bandit feedback (it needs the true label)")
    if uniforms.shape[0] < n or uniforms.shape[1] != 2 or greedy.shape[0] < n \
            or own.shape[0] < n:
        raise ValueError("output or uniform arrays are shorter than rows")
    if actions.shape[0] < n_rows or rewards.shape[0] < n_rows \
            or logged_propensities.shape[0] < n_rows:
        raise ValueError("fewer logged actions, rewards or propensities than rows")
    for t in range(n):
        if rows[t] < 0 or rows[t] >= n_rows:
            raise IndexError(f"row {rows[t]} out of range for {n_rows} rows")
    for i in range(n_rows):
        if actions[i] < 0 or actions[i] >= k:
            raise ValueError(f"logged action code {actions[i]} out of range "
                             f"for {k} classes")
    if kernel.status != STATUS_OK:
        raise RuntimeError(f"kernel status {kernel.status} was not reset")
    cdef Py_ssize_t done = n
    cdef JournalData* j = kernel.jd
    cdef Py_ssize_t bound_ll = kernel.journal_bound_ll()
    with nogil:
        for t in range(n):
            i = rows[t]
            if not logged_round(kernel, j, X.row(i), t0 + t + 1, uniforms[t, 0],
                                uniforms[t, 1], actions[i], rewards[i],
                                logged_propensities[i], bound_ll, &greedy[t],
                                &own[t]):
                done = t
                break
            if kernel.status != STATUS_OK or (j != NULL and (j.n >= j.limit or j.stop)):
                done = t + 1
                break
    kernel.rows_played = done
    return done


# --------------------------------------------------------- the lean row form
cdef inline bint _float64_vector(object a, int ndim) noexcept:
    """``a`` is exactly an ``ndarray`` of ``ndim`` dimensions, native float64,
    C-contiguous (read in place by the kernels)."""
    cdef cnp.ndarray arr
    if type(a) is not np.ndarray:
        return False
    arr = <cnp.ndarray>a
    return (cnp.PyArray_NDIM(arr) == ndim
            and cnp.PyArray_TYPE(arr) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISNOTSWAPPED(arr)
            and cnp.PyArray_IS_C_CONTIGUOUS(arr))


cdef inline int _index_size(object a) noexcept:
    """The item size (4 or 8) of ``a`` when it is exactly a 1-D C-contiguous
    ``ndarray`` of native signed 32- or 64-bit integers, else 0."""
    cdef cnp.ndarray arr
    cdef Py_ssize_t size
    if type(a) is not np.ndarray:
        return 0
    arr = <cnp.ndarray>a
    size = cnp.PyArray_ITEMSIZE(arr)
    if (cnp.PyArray_NDIM(arr) == 1 and cnp.PyArray_ISINTEGER(arr)
            and cnp.PyArray_ISSIGNED(arr) and cnp.PyArray_ISNOTSWAPPED(arr)
            and cnp.PyArray_IS_C_CONTIGUOUS(arr) and (size == 4 or size == 8)):
        return <int>size
    return 0


cdef int _lean_form(object X, Py_ssize_t n_features, double bound,
                    Py_ssize_t max_rows) except -1:
    """Which lean form ``X`` is in (see ``lean_rows``): 0 none (or more than
    ``max_rows`` rows: then before any scan), 1 a dense float64 C-ordered 2-D
    ``ndarray``, 4 or 8 a CSR matrix with 4- or 8-byte index arrays. O(1)
    checks through NumPy's C API, then compiled O(nnz) scans; no copy, no
    Python call but SciPy's ``shape``."""
    cdef cnp.ndarray arr, ip, ii
    cdef Py_ssize_t rows, cols, n_data
    cdef int size
    cdef bint canonical = False
    cdef str problem
    if type(X) is np.ndarray:
        if not _float64_vector(X, 2):
            return 0
        arr = <cnp.ndarray>X
        rows = cnp.PyArray_DIMS(arr)[0]
        cols = cnp.PyArray_DIMS(arr)[1]
        if rows <= 0 or rows > max_rows or cols != n_features:
            return 0
        if not skb_within_bound(<const double*>cnp.PyArray_DATA(arr), rows * cols,
                                bound):
            return 0
        return 1
    if type(X) is not csr_matrix and type(X) is not csr_array:
        return 0
    rows, cols = X.shape
    data, indices, indptr = X.data, X.indices, X.indptr
    if rows <= 0 or rows > max_rows or cols != n_features \
            or not _float64_vector(data, 1):
        return 0
    size = _index_size(indices)
    if size == 0 or _index_size(indptr) != size:
        return 0
    ip, ii = <cnp.ndarray>indptr, <cnp.ndarray>indices
    n_data = cnp.PyArray_DIMS(<cnp.ndarray>data)[0]
    if size == 4:
        problem = _csr_problem(<const int*>cnp.PyArray_DATA(ip),
                               cnp.PyArray_DIMS(ip)[0],
                               <const int*>cnp.PyArray_DATA(ii),
                               cnp.PyArray_DIMS(ii)[0], n_data, rows, cols,
                               &canonical)
    else:
        problem = _csr_problem(<const long long*>cnp.PyArray_DATA(ip),
                               cnp.PyArray_DIMS(ip)[0],
                               <const long long*>cnp.PyArray_DATA(ii),
                               cnp.PyArray_DIMS(ii)[0], n_data, rows, cols,
                               &canonical)
    if problem or not canonical:
        return 0
    if n_data > 0 and not skb_within_bound(
            <const double*>cnp.PyArray_DATA(<cnp.ndarray>data), n_data, bound):
        return 0
    return size


def lean_rows(X, Py_ssize_t n_features, double bound):
    """True when ``X`` is already in the common row form with ``n_features``
    columns and at least one row: a float64 C-ordered 2-D ``ndarray``, or a
    ``csr_matrix``/``csr_array`` with float64 values, index arrays that pass
    ``check_csr`` (int32 or int64, of one type) and canonical rows; every
    value within ``bound`` (False for NaN and infinities). The estimators'
    lean test (``skbandit._base._rows._lean_rows_ok``) and ``OneRow.bind_row``
    share it."""
    return _lean_form(X, n_features, bound, PY_SSIZE_T_MAX) != 0


# ------------------------------------------------------ the live one-row calls
@cython.final
cdef class OneRow:
    """The compiled one-row calls on one kernel: the live loop's
    ``sample_actions(row)`` (``act``) and ``partial_fit(row,
    LoggedFeedback(...))`` (``draw``, then ``learn_logged``), and the
    simulator's ``partial_fit(row, [label])`` (``draw``, then
    ``learn_label``).

    They play exactly the rounds of ``run_act``, ``run_logged`` and
    ``run_pass`` on a one-row X (the same ``act_round``, ``logged_round`` and
    ``label_round``), with what those
    drivers take as arguments held here instead, so a call passes a few
    scalars: the kernel, an undo journal reused from call to call (the
    caller's: ``OneRow(kernel, journal)``), the buffers of a dense row's
    non-zero entries, and the learner's generator.

    * ``bind_row(X, d, bound)`` checks X as ``lean_rows`` does (one code) and,
      when it is one row (dense, or CSR with 32-bit indices), points the next
      ``act`` or ``learn_logged`` at it; each of those uses the row once
      (``row_bound`` is then False), so no call plays a row it did not check.
    * The uniforms come from the generator's ``bitgen_t`` (NumPy's C
      interface, ``bit_generator.capsule``): ``next_double`` is what
      ``Generator.random`` calls for each entry, so a pair drawn here is the
      pair ``Generator.random((1, 2))`` gives. ``bind_generator`` takes a
      ``PCG64`` whose state layout ``skbandit._base._state`` verified
      (``raw_size`` bytes at ``ctypes.state_address``, the whole state): its
      state is then saved and restored by copying those bytes (the read-ahead
      of ``act``, ``save_generator``/``restore_generator`` for a rollback).
      Another bit generator is refused (the caller takes the general path).
    """

    cdef readonly BaseKernel kernel
    cdef readonly Journal journal
    # bytes of input the bound row has as the kernels read it (8 per dense
    # entry, 12 per stored CSR entry: ``_input_bytes``)
    cdef readonly Py_ssize_t row_bytes
    # ``learn_logged``'s and ``learn_label``'s greedy label, whether the
    # logged round was the learner's own, ``learn_label``'s reward
    cdef readonly int greedy
    cdef readonly bint own
    cdef readonly double reward
    cdef object row
    cdef Row x
    cdef double[::1] cval
    cdef int[::1] cind
    cdef object bit_generator
    cdef bitgen_t* bitgen
    cdef char* state
    cdef Py_ssize_t state_size
    cdef char saved[64]
    cdef double u1, u2

    def __cinit__(self, BaseKernel kernel not None, Journal journal not None):
        self.kernel = kernel
        self.journal = journal
        # a dense row's non-zero entries: allocated with the first dense row
        # (``d`` entries each: 12 d bytes a CSR-only learner does not hold)
        self.cval = None
        self.cind = None
        self.row = None
        self.bit_generator = None

    @property
    def row_bound(self):
        """True while a row checked by ``bind_row`` waits for its call."""
        return self.row is not None

    def bind_generator(self, rng, raw_size):
        """Draw from ``rng`` (a ``Generator``): True when its bit generator is
        a ``PCG64`` and ``raw_size`` (``_state._PCG64_RAW_SIZE``) bytes at its
        state address hold its whole state, else False. O(1) while the bit
        generator is the same object (a replaced or unpickled one is bound
        anew; a reseeded one is the same object, whose state is read live)."""
        bit_generator = rng.bit_generator
        if bit_generator is self.bit_generator:
            return True
        self.bit_generator = None
        if raw_size is None or type(bit_generator) is not PCG64:
            return False
        if not 0 < raw_size <= sizeof(self.saved):
            return False
        bitgen = <bitgen_t*>PyCapsule_GetPointer(bit_generator.capsule,
                                                 "BitGenerator")
        address = bit_generator.ctypes.state_address
        if <uintptr_t>bitgen.state != <uintptr_t>address:
            return False
        self.bitgen = bitgen
        self.state = <char*><uintptr_t>address
        self.state_size = raw_size
        self.bit_generator = bit_generator
        return True

    def bind_row(self, X, Py_ssize_t n_features, double bound):
        """Check X (``lean_rows``); True, with X bound for the next call, when
        it is one row that call can play: dense, or CSR with 32-bit indices
        (others, and more rows, are refused before any O(nnz) scan: False,
        the general path checks and plays them)."""
        cdef int form = _lean_form(X, n_features, bound, 1)
        cdef Row x
        self.row = None
        if form != 1 and form != 4:
            return False
        if form == 1:
            if self.cval is None:
                self.cval = np.empty(max(n_features, 1), dtype=np.float64)
                self.cind = np.empty(max(n_features, 1), dtype=np.int32)
            x.val = <const double*>cnp.PyArray_DATA(<cnp.ndarray>X)
            x.ind = NULL
            x.nnz = <int>n_features
            self.row_bytes = 8 * n_features
            self.x = compact_dense(x, &self.cind[0], &self.cval[0])
            self.row = X
            return True
        data, indices = X.data, X.indices
        x.nnz = <int>cnp.PyArray_DIMS(<cnp.ndarray>data)[0]
        if x.nnz == 0:  # as ``_csr_row``: an empty sparse row
            x.val = NULL
            x.ind = <const int*>&_EMPTY_INDEX
        else:
            x.val = <const double*>cnp.PyArray_DATA(<cnp.ndarray>data)
            x.ind = <const int*>cnp.PyArray_DATA(<cnp.ndarray>indices)
        self.row_bytes = 12 * x.nnz
        self.x = x
        self.row = (X, data, indices)  # the arrays the row points into
        return True

    cdef object _take_row(self):
        # the bound row's owner, unbound: each bound row is played once
        row = self.row
        if row is None:
            raise RuntimeError("OneRow: no row is bound (bind_row first)")
        self.row = None
        if self.bit_generator is None:
            raise RuntimeError("OneRow: no generator is bound (bind_generator)")
        return row

    def act(self, long long t0, Py_ssize_t skip):
        """``run_act`` on the bound row at round ``t0 + 1``, with the uniform
        pair ``skip + 1`` ahead in the generator, read without advancing it
        (its state bytes are copied out and back; ``skip`` pairs are jumped
        with ``PCG64.advance``). Returns ``(done, played, propensities)``: 1
        and new one-element arrays, or 0 when ``kernel.status`` was set."""
        cdef BaseKernel kernel = self.kernel
        cdef char saved[64]
        cdef double u1, u2
        cdef cnp.npy_intp one = 1
        row = self._take_row()
        if kernel.status != STATUS_OK:
            raise RuntimeError(f"kernel status {kernel.status} was not reset")
        memcpy(saved, self.state, self.state_size)
        try:
            if skip:
                self.bit_generator.advance(2 * skip)
            u1 = self.bitgen.next_double(self.bitgen.state)
            u2 = self.bitgen.next_double(self.bitgen.state)
        finally:
            memcpy(self.state, saved, self.state_size)
        played = cnp.PyArray_EMPTY(1, &one, cnp.NPY_INT32, 0)
        propensities = cnp.PyArray_EMPTY(1, &one, cnp.NPY_DOUBLE, 0)
        done = act_round(kernel, self.x, t0 + 1, u1, u2,
                         <int*>cnp.PyArray_DATA(<cnp.ndarray>played),
                         <double*>cnp.PyArray_DATA(<cnp.ndarray>propensities))
        return int(done), played, propensities

    def save_generator(self):
        """Keep the generator's state (a rollback point's)."""
        if self.bit_generator is None:
            raise RuntimeError("OneRow: no generator is bound (bind_generator)")
        memcpy(self.saved, self.state, self.state_size)

    def restore_generator(self):
        """Set the generator back to the state ``save_generator`` kept."""
        if self.bit_generator is None:
            raise RuntimeError("OneRow: no generator is bound (bind_generator)")
        memcpy(self.state, self.saved, self.state_size)

    def draw(self):
        """Draw the next round's uniform pair, advancing the generator as
        ``Generator.random((1, 2))`` does; ``learn_logged`` plays with it."""
        if self.bit_generator is None:
            raise RuntimeError("OneRow: no generator is bound (bind_generator)")
        self.u1 = self.bitgen.next_double(self.bitgen.state)
        self.u2 = self.bitgen.next_double(self.bitgen.state)

    def learn_logged(self, BaseKernel kernel not None, long long t0, int action,
                     double reward, double propensity):
        """``run_logged(kernel, ...)`` on the bound row at round ``t0 + 1``
        with the pair of the last ``draw``, the logged action code, reward and
        propensity, and the kernel's journal (``set_journal``). ``kernel`` is
        the block's (a learner's ``_before_block`` may replace the cached
        one). Returns the rounds played (1, or 0 with ``kernel.status`` set);
        the round's greedy label and whether it was the learner's own to
        ``greedy`` and ``own``."""
        cdef int g = 0
        cdef signed char own = 0
        row = self._take_row()
        if kernel.full_information:
            raise TypeError("a full-information kernel cannot learn from logged "
                            "bandit feedback (it needs the true label)")
        if action < 0 or action >= kernel.n_classes:
            raise ValueError(f"logged action code {action} out of range "
                             f"for {kernel.n_classes} classes")
        if kernel.status != STATUS_OK:
            raise RuntimeError(f"kernel status {kernel.status} was not reset")
        done = logged_round(kernel, kernel.jd, self.x, t0 + 1, self.u1, self.u2,
                            action, reward, propensity,
                            kernel.journal_bound_ll(), &g, &own)
        kernel.rows_played = done
        self.greedy = g
        self.own = own
        return int(done)

    def learn_label(self, BaseKernel kernel not None, long long t0, int label):
        """``run_pass(kernel, ...)`` on the bound row with true label code
        ``label`` at round ``t0 + 1``, with the pair of the last ``draw`` and
        the kernel's journal (``set_journal``): the simulator's round (the
        reward ``1[action == label]`` formed in ``label_round``, the label
        handed to ``learn_full`` by a full-information kernel). ``kernel`` is
        the block's (a learner's ``_before_block`` may replace the cached
        one). Returns the rounds played (1, or 0 with ``kernel.status`` set);
        the round's greedy label and reward to ``greedy`` and ``reward``."""
        cdef int a = 0, g = 0
        cdef double r = 0.0, m = 0.0
        row = self._take_row()
        if label < 0 or label >= kernel.n_classes:
            raise ValueError(f"label code {label} out of range "
                             f"for {kernel.n_classes} classes")
        if kernel.status != STATUS_OK:
            raise RuntimeError(f"kernel status {kernel.status} was not reset")
        done = label_round(kernel, kernel.jd, self.x, t0 + 1, self.u1, self.u2,
                           label, kernel.journal_bound_ll(), &a, &g, &r, &m)
        kernel.rows_played = done
        self.greedy = g
        self.reward = r
        return int(done)


# ------------------------------------------------------ watched attribute slots
from cpython.object cimport PyObject, PyTypeObject
from cpython.tuple cimport PyTuple_New


cdef extern from "Python.h":
    # (PyObject* results are borrowed references; NULL: nothing there)
    PyObject* _PyType_Lookup(PyTypeObject* type, PyObject* name)
    object PyObject_GenericGetDict(object o, void* context)
    PyObject* _slot_dict "PyObject_GenericGetDict" (PyObject* o, void* context)
    PyObject* _slot_dict_item "PyDict_GetItemWithError" (PyObject* d, PyObject* k)
    void _slot_decref "Py_DECREF" (PyObject* o)
    PyTypeObject* _slot_type "Py_TYPE" (PyObject* o)
    bint _slot_is_list "PyList_CheckExact" (PyObject* o)
    Py_ssize_t _slot_list_size "PyList_GET_SIZE" (PyObject* o)
    PyObject* _slot_list_item "PyList_GET_ITEM" (PyObject* o, Py_ssize_t i)
    Py_ssize_t _slot_tuple_size "PyTuple_GET_SIZE" (PyObject* o)
    PyObject* _slot_tuple_item "PyTuple_GET_ITEM" (PyObject* o, Py_ssize_t i)
    void _slot_tuple_set "PyTuple_SET_ITEM" (object t, Py_ssize_t i, PyObject* v)
    void _slot_incref "Py_INCREF" (PyObject* o)

# The kinds of slot (``Slots``)
SLOT_ATTR = 0
SLOT_CLASS_ATTR = 1
SLOT_ITEM = 2
cdef enum:
    _ATTR = 0
    _CLASS_ATTR = 1
    _ITEM = 2


@cython.final
cdef class _Missing:
    """The value ``Slots.read`` gives a slot that holds nothing."""

    def __repr__(self):
        return "MISSING"

    def __reduce__(self):
        return "MISSING"


MISSING = _Missing()
cdef object _MISSING = MISSING


@cython.final
@cython.auto_pickle(False)
cdef class Slots:
    """A fixed list of places that hold objects, read and compared by identity
    in compiled loops: the key of a learner's cached kernel and the rollback
    point of a one-row call (``skbandit._base._transaction``).

    ``Slots(slots, obj)``: ``slots`` is a sequence of ``(kind, owner, name)``:

    * ``SLOT_ATTR``: the entry ``name`` of ``owner``'s instance dictionary
      (``owner.__dict__.get(name)``, as the object is read there, without
      descriptors);
    * ``SLOT_CLASS_ATTR``: the attribute ``name`` of ``type(owner)`` as the
      class holds it (found along the method resolution order: what
      ``type(owner).name`` is for a plain function);
    * ``SLOT_ITEM``: the item at index ``name`` of the list or tuple ``owner``.

    A slot that holds nothing (no such entry, attribute or index) reads as
    ``MISSING``, so an entry deleted, or a list grown past its last watched
    index, is a change. ``owner`` None stands for the object ``obj`` passed to
    each call (the learner itself, which the slots then do not reference: a
    key kept in the learner's ``__dict__`` makes no reference cycle).

    The values of the slots when made are kept (``recorded``). ``unchanged(obj)``
    is True when every slot still holds the very object recorded (O(number of
    slots), no Python call); ``read(obj)`` gives the current values as a tuple,
    ``holds(obj, values)`` compares with it and ``write(obj, values)`` puts it
    back (``SLOT_ATTR`` slots only: entries set, or deleted for ``MISSING``).
    """

    cdef readonly tuple slots
    cdef readonly tuple recorded
    cdef Py_ssize_t n
    cdef int* kinds
    cdef PyObject** owners  # borrowed from ``slots`` (NULL: the call's ``obj``)
    cdef PyObject** names  # borrowed from ``slots``
    cdef Py_ssize_t* index

    def __cinit__(self, slots, obj):
        cdef Py_ssize_t i
        cdef int kind
        triples = tuple([tuple(s) for s in slots])
        self.n = len(triples)
        self.kinds = <int*>PyMem_RawRealloc(NULL, max(self.n, 1) * sizeof(int))
        self.owners = <PyObject**>PyMem_RawRealloc(
            NULL, max(self.n, 1) * sizeof(PyObject*))
        self.names = <PyObject**>PyMem_RawRealloc(
            NULL, max(self.n, 1) * sizeof(PyObject*))
        self.index = <Py_ssize_t*>PyMem_RawRealloc(
            NULL, max(self.n, 1) * sizeof(Py_ssize_t))
        if (self.kinds == NULL or self.owners == NULL or self.names == NULL
                or self.index == NULL):
            raise MemoryError()
        for i in range(self.n):
            kind, owner, name = triples[i]
            if kind == _ATTR or kind == _CLASS_ATTR:
                if type(name) is not str:
                    raise TypeError(f"slot {i}: the name must be a str, got "
                                    f"{type(name).__name__}")
                self.index[i] = 0
            elif kind == _ITEM:
                if type(owner) is not list and type(owner) is not tuple:
                    raise TypeError(f"slot {i}: an item slot's owner must be a "
                                    f"list or a tuple, got {type(owner).__name__}")
                if type(name) is not int or name < 0:
                    raise TypeError(f"slot {i}: an item slot's index must be an "
                                    f"int >= 0, got {name!r}")
                self.index[i] = name
            else:
                raise ValueError(f"slot {i}: unknown kind {kind!r}")
            self.kinds[i] = kind
            self.owners[i] = NULL if owner is None else <PyObject*>owner
            self.names[i] = <PyObject*>name
        self.slots = triples  # owns the owners and names pointed at
        self.recorded = self.read(obj)

    def __dealloc__(self):
        PyMem_RawFree(self.kinds)
        PyMem_RawFree(self.owners)
        PyMem_RawFree(self.names)
        PyMem_RawFree(self.index)

    def __len__(self):
        return self.n

    cdef PyObject* _value(self, Py_ssize_t i, PyObject* obj, PyObject** dict_of,
                          PyObject** dict_owner) except? NULL:
        """The object slot ``i`` holds (borrowed), NULL when none. The last
        owner's instance dictionary is kept in ``dict_of`` (borrowed: its
        owner keeps it, and no Python code runs between two calls of one
        loop; the slots of one owner follow each other)."""
        cdef int kind = self.kinds[i]
        cdef PyObject* owner = self.owners[i]
        cdef PyObject* d
        cdef PyObject* v
        if owner == NULL:
            owner = obj
        if kind == _ATTR:
            if owner != dict_owner[0]:
                d = _slot_dict(owner, NULL)
                if d == NULL:
                    return NULL  # (with its error set: the caller raises it)
                _slot_decref(d)  # (the owner holds it)
                dict_of[0] = d
                dict_owner[0] = owner
            # NULL: no such entry, or an error set (the caller checks)
            return _slot_dict_item(dict_of[0], self.names[i])
        if kind == _CLASS_ATTR:
            return _PyType_Lookup(_slot_type(owner), self.names[i])
        if _slot_is_list(owner):
            if self.index[i] < _slot_list_size(owner):
                return _slot_list_item(owner, self.index[i])
            return NULL
        if self.index[i] < _slot_tuple_size(owner):
            return _slot_tuple_item(owner, self.index[i])
        return NULL

    def unchanged(self, obj=None):
        """True when every slot holds the object recorded when made."""
        return self.holds(obj, self.recorded)

    def holds(self, obj, tuple values):
        """True when every slot holds the object of ``values`` (a ``read``) at
        its index (``MISSING``: nothing)."""
        cdef Py_ssize_t i
        cdef PyObject* v
        cdef PyObject* expected
        cdef PyObject* dict_of = NULL
        cdef PyObject* dict_owner = NULL
        if values is None or _slot_tuple_size(<PyObject*>values) != self.n:
            return False
        for i in range(self.n):
            v = self._value(i, <PyObject*>obj, &dict_of, &dict_owner)
            expected = _slot_tuple_item(<PyObject*>values, i)
            if v == NULL:
                if expected != <PyObject*>_MISSING:
                    return False
            elif v != expected:
                return False
        return True

    def read(self, obj=None):
        """The objects the slots hold now, a tuple (``MISSING`` for none)."""
        cdef Py_ssize_t i
        cdef PyObject* v
        cdef PyObject* dict_of = NULL
        cdef PyObject* dict_owner = NULL
        out = PyTuple_New(self.n)
        for i in range(self.n):
            v = self._value(i, <PyObject*>obj, &dict_of, &dict_owner)
            if v == NULL:
                v = <PyObject*>_MISSING
            _slot_incref(v)
            _slot_tuple_set(out, i, v)  # (steals the reference)
        return out

    def write(self, obj, tuple values):
        """Put ``values`` (a ``read`` of these slots) back: each entry set in
        its owner's ``__dict__``, or deleted where it was ``MISSING``. Only
        for slots that are all ``SLOT_ATTR`` (TypeError before any write
        otherwise)."""
        cdef Py_ssize_t i
        cdef object owner, d, value
        if values is None or _slot_tuple_size(<PyObject*>values) != self.n:
            raise ValueError("Slots.write: values are not a read of these slots")
        for i in range(self.n):
            if self.kinds[i] != _ATTR:
                raise TypeError(f"Slots.write: slot {i} is not an attribute slot")
        for i in range(self.n):
            owner = obj if self.owners[i] == NULL else <object>self.owners[i]
            d = PyObject_GenericGetDict(owner, NULL)
            value = <object>_slot_tuple_item(<PyObject*>values, i)
            if value is _MISSING:
                d.pop(<object>self.names[i], None)
            else:
                d[<object>self.names[i]] = value
