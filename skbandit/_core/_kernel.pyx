"""Undo journal, base kernels, row forms, pass drivers and the compiled row
checks shared by every learner (see _kernel.pxd; the round bodies are in
_rounds.pxd)."""


cimport cython
from cpython.mem cimport PyMem_RawFree, PyMem_RawRealloc
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.math cimport INFINITY, fabs

import numpy as np

from skbandit._core._explore import GreedyExplorer
from skbandit._core._rounds cimport (
    act_round,
    journal_finite_since,
    label_round,
    logged_round,
)


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
    above. Used by ``_RowReader.row``."""
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


# Entries of the CSR index array per step of ``_scan_rows`` (a step's indices
# fit in the L1 cache: the step's row starts are read again from there).
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
    and lengths: ``check_csr`` and ``check_csr_canonical`` share it)."""
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
