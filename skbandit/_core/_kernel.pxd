# Shared compiled core of every skbandit learner.
#
# A learner's kernel is a ``BaseKernel`` subclass (``LinearKernel`` when its
# scores are ``W x``). One round is two halves:
#
# * ``act`` -- scores, greedy label, distribution, draw. The default ``act``
#   is generic: ``compute_scores`` (the learner's scores of the row), the
#   greedy argmax with exact ties broken by ``u2``, the learner's
#   ``distribution`` for that greedy label, and the inverse-CDF draw on ``u1``.
#   ``distribution`` is one call of the kernel's exploration rule, a compiled
#   ``Explorer`` (_explore.pxd; ``set_explorer``, greedy by default), so a
#   kernel normally overrides only ``compute_scores``.
# * ``learn`` -- the update from the played action, the probability with which
#   the kernel drew it (the paper's ``p(action)`` for the tie-broken greedy
#   label) and a real-valued reward. ``learn`` may read what ``act`` computed
#   independently of the draw (``scores``), never the draw itself, so the same
#   kernel can learn from an action chosen elsewhere (a logged action).
#
# The round of a labelled row, ``label_round`` in _rounds.pxd (played by the
# pass driver ``run_pass``), is the only code that reads the true label: it turns
# it into the reward ``1.0 if played == y else 0.0``. A bandit learner
# therefore cannot see more than that bit. Full-information baselines set
# ``full_information`` and receive the label in ``learn_full`` instead.
#
# Every round also gets its 1-based global index ``t`` (rounds played before the
# call + position in the call), for schedules such as gamma_t or eta_t.

from skbandit._core._explore cimport Explorer


cdef extern from "_scores.h":
    void skb_linear_scores(const double* W, int k,
                           const double* val, const int* ind, Py_ssize_t nnz,
                           double* out) noexcept nogil
    void skb_prefetch_row_w(const double* w, Py_ssize_t s, const int* ind,
                            Py_ssize_t nnz) noexcept nogil
    # a hint: the line of ``p`` will be written soon (no value changes)
    void prefetch_w "SKB_PREFETCH_W"(const void* p) noexcept nogil
    int skb_nonzeros(const double* x, int d, int* ind, double* val) noexcept nogil
    int skb_within_bound(const double* v, Py_ssize_t n, double bound) noexcept nogil
    Py_ssize_t skb_scan_indices_i32(const int* ind, Py_ssize_t nnz, int n_cols,
                                    int* out_of_range) noexcept nogil
    Py_ssize_t skb_scan_indices_i64(const long long* ind, Py_ssize_t nnz,
                                    long long n_cols, int* out_of_range) noexcept nogil
    # |sum(p) - 1| allowed in a played distribution (see valid_distribution)
    const double SKB_DISTRIBUTION_TOL


# ``BaseKernel.status``: a kernel sets a non-zero status to stop the pass
# before the next round; the estimator reads it after ``run_pass`` returns.
cpdef enum KernelStatus:
    STATUS_OK = 0
    # a score of the row was not finite (the state or x . w overflowed)
    STATUS_NONFINITE = 1
    # the round's distribution was not a probability vector (a NaN, infinite
    # or negative entry, or a sum off 1 by more than SKB_DISTRIBUTION_TOL); set by
    # the pass drivers, which check every distribution a kernel plays
    STATUS_INVALID_DISTRIBUTION = 2
    # the undo journal could not grow (out of memory)
    STATUS_JOURNAL_ERROR = 3


# The undo journal of a call (see ``Journal`` in _kernel.pyx). Every write a
# kernel makes to the learner's state is preceded by a record of the written
# entry's address and old value (``jsave*`` below; the shared write helpers
# ``LinearKernel.add_row``/``add_row_div`` do it for every kernel that uses
# them). The pass drivers check after each row that the entries the row wrote
# are finite; the estimator clears the journal when it commits a block and
# replays it backwards (``Journal.undo``) to roll a failed block back. Cost:
# O(entries written), never O(model).
cdef struct JournalData:
    double** addr
    double* old
    Py_ssize_t n
    Py_ssize_t cap
    long long** laddr
    long long* lold
    Py_ssize_t ln
    Py_ssize_t lcap
    # the drivers end a block at the first row boundary with n >= limit
    Py_ssize_t limit
    # an allocation of the journal failed (the drivers reserve each row's
    # entries before the row, so no write is then made unrecorded)
    bint failed
    # a row recorded more entries than its kernel's ``journal_bound``: a bug
    # of that bound (the writes were recorded, the journal grew mid-row)
    bint overrun
    # test hook: the buffers never hold more than this many entries (0: no cap)
    Py_ssize_t max_capacity
    # set by a kernel that deferred a write to the commit (``Journal.defer``):
    # the drivers end the block after the current row
    bint stop


cdef bint journal_grow(JournalData* j, Py_ssize_t m) noexcept nogil
cdef bint journal_grow_ll(JournalData* j, Py_ssize_t m) noexcept nogil


cdef inline bint jreserve(JournalData* j, Py_ssize_t m) noexcept nogil:
    """Room for ``m`` more entries (False, with ``failed`` set, if none)."""
    if j.n + m <= j.cap:
        return True
    return journal_grow(j, m)


cdef inline void jsave(JournalData* j, double* p) noexcept nogil:
    """Record ``*p`` before it is written (``j`` NULL: no journal)."""
    if j == NULL or not jreserve(j, 1):
        return
    j.addr[j.n] = p
    j.old[j.n] = p[0]
    j.n += 1


cdef inline void jsave_range(JournalData* j, double* p, Py_ssize_t m) noexcept nogil:
    """Record ``p[0..m-1]`` before they are written."""
    cdef Py_ssize_t e, n
    if j == NULL or not jreserve(j, m):
        return
    n = j.n
    for e in range(m):
        j.addr[n + e] = p + e
        j.old[n + e] = p[e]
    j.n = n + m


cdef inline void jsave_ll(JournalData* j, long long* p) noexcept nogil:
    """Record the integer ``*p`` before it is written."""
    if j == NULL:
        return
    if j.ln == j.lcap and not journal_grow_ll(j, 1):
        return
    j.laddr[j.ln] = p
    j.lold[j.ln] = p[0]
    j.ln += 1


cdef struct Row:
    # One row of X: ``nnz`` stored values and their column indices.
    # ``ind == NULL`` marks a dense row: entry j is column j, ``nnz == d``.
    # Kernels read a row in one form: entry ``e`` has value ``x.val[e]`` and
    # column ``row_col(x, e)``; only the row readers (_drivers.pyx; the
    # twins' ``_dense_row`` in _kernel.pyx), the row helpers below and the
    # compiled scores (_scores.h) look at ``ind``.
    const double* val
    const int* ind
    int nnz


cdef inline int row_col(Row x, int e) noexcept nogil:
    """The column of the row's ``e``-th stored entry (``e`` in a dense row).

    The one way a kernel iterates a row: ``for e in range(x.nnz)``, value
    ``x.val[e]`` at column ``row_col(x, e)``. The row helpers below (the
    journal record, dot, axpy of a row: the hot loops every learner shares)
    write out the two forms themselves, ``if row_dense(x)``: in their callers'
    loops the compiler does not always unswitch ``row_col``'s test."""
    return e if x.ind == NULL else x.ind[e]


cdef inline bint row_dense(Row x) noexcept nogil:
    """True for a dense row (``x.val[c]`` is column ``c``: it can be read in
    place as a vector of the ``d`` features)."""
    return x.ind == NULL


cdef inline Row compact_dense(Row x, int* cind, double* cval) noexcept nogil:
    """The dense row ``x`` as its non-zero entries (in column order) written
    to ``cind``/``cval`` (``x.nnz`` entries each), when at most half of its
    entries are non-zero; else ``x`` itself (``row_dense`` tells which). Exact
    (the argument is in _drivers.pyx, above ``_RowReader``); used by the pass
    drivers' ``_RowReader.row`` and the live session's ``bind``."""
    cdef int n = skb_nonzeros(x.val, x.nnz, cind, cval)
    if 2 * n > x.nnz:
        return x
    x.val = cval
    x.ind = cind
    x.nnz = n
    return x


cdef inline void jsave_row(JournalData* j, double* w, Py_ssize_t s,
                           Row x) noexcept nogil:
    """Record the entries of the strided vector ``w`` (entry ``c`` at
    ``w[c * s]``) on the row's support before ``w += a x``."""
    cdef int e
    cdef Py_ssize_t n
    if j == NULL or not jreserve(j, x.nnz):
        return
    n = j.n
    if row_dense(x):
        for e in range(x.nnz):
            j.addr[n + e] = w + e * s
            j.old[n + e] = w[e * s]
    else:
        for e in range(x.nnz):
            j.addr[n + e] = w + x.ind[e] * s
            j.old[n + e] = w[x.ind[e] * s]
    j.n = n + x.nnz


cdef inline bint jreserve_row(JournalData* j, Py_ssize_t m,
                              Py_ssize_t m_ll) noexcept nogil:
    """Before a row: room for the ``m`` floating-point and ``m_ll`` integer
    entries its kernel may record (``journal_bound``). False, with ``failed``
    set, when the journal cannot grow: the driver then stops before the row,
    so that no write is ever made without its record."""
    if j.n + m > j.cap and not journal_grow(j, m):
        return False
    if j.ln + m_ll > j.lcap and not journal_grow_ll(j, m_ll):
        return False
    return True


cdef class Journal:
    cdef JournalData data
    # kernels with writes deferred to the commit (see ``Journal.defer``)
    cdef list deferred


cdef class BaseKernel:
    cdef readonly int n_classes
    cdef readonly int n_features
    cdef readonly bint full_information
    # Non-zero stops the pass (see STATUS_*); reset by the estimator.
    cdef public int status
    # k scores of the current row, written by ``compute_scores``.
    cdef double[::1] scores
    # The distribution of the current round, and scratch for tie marginals.
    cdef double[::1] proba
    cdef double[::1] proba_tmp
    # The journal of the current call (NULL: writes are not recorded), and
    # the object that owns it.
    cdef JournalData* jd
    cdef readonly Journal journal
    # rounds played by the last run_pass or run_logged on this kernel
    cdef readonly Py_ssize_t rows_played
    # the exploration rule: ``distribution`` is its ``distribution``
    # (``set_explorer``; greedy by default)
    cdef readonly Explorer explorer
    # scratch: the exact maximisers of a tied round (``tie_marginal``)
    cdef int[::1] tie_labels
    # set by the generic ``act`` once it has checked the distribution it drew
    # from (``sample_checked``): the pass drivers then skip their own check of
    # ``proba`` (``played_ok``). An ``act`` that overrides the generic one
    # never sets it, so the drivers check its distribution; one that called
    # the generic ``act`` and then changed ``proba`` would have to clear it.
    cdef bint proba_checked

    cdef void compute_scores(self, Row x, long long t) noexcept nogil
    cdef void distribution(self, const double* s, long long t, int greedy,
                           double* p) noexcept nogil
    cdef void marginal_distribution(self, long long t, double* out) noexcept nogil
    cdef double tie_marginal(self, long long t, int action) noexcept nogil
    cdef double marginal_over(self, long long t, int action, const int* labels,
                              int m) noexcept nogil
    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil
    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil
    cdef void learn_full(self, Row x, long long t, int played, int greedy,
                         int label) noexcept nogil
    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil
    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil
    cpdef set_journal(self, Journal journal)


cdef class LinearKernel(BaseKernel):
    # A learner whose scores are ``W x``. Its default distribution plays the
    # greedy label with probability one.
    # The weights, stored feature-major and updated in place: ``W`` is
    # (d, k) C-contiguous, ``W[c, r]`` class ``r``'s weight on feature ``c``;
    # the estimator's ``coef_`` (k, d) is its transpose (a Fortran-ordered
    # array). A feature's k weights are contiguous, so the scores of a sparse
    # row read about 8 k / 64 cache lines per stored entry instead of k (see
    # ``skb_linear_scores``). Class ``r``'s weight vector is ``&W[0, r]`` with
    # stride ``n_classes`` (the row helpers' ``s``).
    cdef double[:, ::1] W
    # whether W is larger than PREFETCH_MIN_BYTES (_kernel.pyx): a kernel
    # whose update writes more than W's lines on the row then prefetches them
    # at the end of ``act`` (SquareCB's)
    cdef readonly bint prefetch

    cdef void add_row(self, int r, double a, Row x) noexcept nogil
    cdef void add_row_div(self, int r, Row x, double denom) noexcept nogil


cdef inline bint is_finite(double v) noexcept nogil:
    """True when ``v`` is finite: ``v - v`` is 0 for a finite ``v`` and NaN for
    inf and NaN. The one finiteness test of the kernels (``all_finite`` is its
    array form; no ``isfinite`` call, no branch)."""
    return v - v == 0.0


cdef inline bint all_finite(const double* s, int k) noexcept nogil:
    """True when every ``s[r]`` is finite (``is_finite``'s test, summed over the
    entries without a branch: one NaN or infinite entry makes the sum NaN)."""
    cdef int r
    cdef double acc = 0.0
    for r in range(k):
        acc = acc + (s[r] - s[r])
    return acc == 0.0


cdef inline bint valid_distribution(const double* p, int k) noexcept nogil:
    """True when ``p[0..k-1]`` is a probability vector: every entry finite and
    non-negative, the sum within ``SKB_DISTRIBUTION_TOL`` of 1 (O(k), branch-free).
    A NaN entry makes the sum NaN and an infinite one makes it infinite or
    NaN, so the sum's test fails for them; a negative entry makes the running
    minimum (from 0, a ``minsd`` per entry) negative."""
    cdef int r
    cdef double acc = 0.0
    cdef double mn = 0.0
    for r in range(k):
        mn = p[r] if p[r] < mn else mn
        acc = acc + p[r]
    return (mn >= 0.0 and acc - 1.0 <= SKB_DISTRIBUTION_TOL
            and 1.0 - acc <= SKB_DISTRIBUTION_TOL)


cdef inline double row_sq_norm(Row x) noexcept nogil:
    """``||x||^2`` summed sequentially over the row's entries. Rows reach the
    kernels canonical (each column at most once, in increasing order: the
    estimators' validation sums duplicates), so this is the squared norm of the
    row as a vector, and the same sum for a dense row and its CSR twin."""
    cdef double s = 0.0
    cdef int j
    for j in range(x.nnz):
        s = s + x.val[j] * x.val[j]
    return s


# The row helpers below read and write a *strided* vector ``w``: entry ``c`` at
# ``w[c * s]``. A learner's weights are stored feature-major (``LinearKernel``:
# ``W`` is (d, k), class ``r``'s weight on feature ``c`` at ``W[c, r]``), so
# class ``r``'s weight vector is ``&W[0, r]`` with stride ``k``; a vector of
# its own has stride 1. The operations on each entry, and the order of a sum
# over the row's entries, do not depend on the stride.


cdef inline double row_dot(const double* w, Py_ssize_t s, Row x) noexcept nogil:
    """Return ``w . x``, summed sequentially over the row's stored entries."""
    cdef double acc = 0.0
    cdef int j
    if row_dense(x):
        for j in range(x.nnz):
            acc = acc + w[j * s] * x.val[j]
    else:
        for j in range(x.nnz):
            acc = acc + w[x.ind[j] * s] * x.val[j]
    return acc


cdef inline void row_axpy(double a, Row x, double* w, Py_ssize_t s) noexcept nogil:
    """``w += a * x`` (exact for a = +1 or -1)."""
    cdef int j
    if row_dense(x):
        for j in range(x.nnz):
            w[j * s] += a * x.val[j]
    else:
        for j in range(x.nnz):
            w[x.ind[j] * s] += a * x.val[j]


cdef inline void add_row_pair(JournalData* j, double* w, double a, double* acc,
                              double b, Row x, bint divide,
                              Py_ssize_t s) noexcept nogil:
    """``w += a * x`` (``w += x / a`` when ``divide``) and ``acc += b * x`` in
    one sweep of the row, journaled first (``jsave_row`` on ``w``, then on
    ``acc``): each entry gets exactly the operations of
    ``row_axpy``/``row_add_div`` on ``w`` and ``row_axpy`` on ``acc``. ``w``
    and ``acc`` are distinct vectors of stride ``s`` (a learner's state and
    its accumulator)."""
    cdef int e
    cdef Py_ssize_t c
    cdef double v
    jsave_row(j, w, s, x)
    jsave_row(j, acc, s, x)
    if row_dense(x):
        if divide:
            for e in range(x.nnz):
                v = x.val[e]
                w[e * s] += v / a
                acc[e * s] += b * v
        else:
            for e in range(x.nnz):
                v = x.val[e]
                w[e * s] += a * v
                acc[e * s] += b * v
    else:
        if divide:
            for e in range(x.nnz):
                c = x.ind[e] * s
                v = x.val[e]
                w[c] += v / a
                acc[c] += b * v
        else:
            for e in range(x.nnz):
                c = x.ind[e] * s
                v = x.val[e]
                w[c] += a * v
                acc[c] += b * v


cdef inline void add_row_pair_twice(JournalData* j, double* w, double a,
                                    double* acc, double b, double c, double e,
                                    Row x, Py_ssize_t s) noexcept nogil:
    """Two ``add_row_pair`` updates of the same ``w`` and ``acc`` in one sweep
    of the row: ``w += a * x`` then ``w += x / c``, and ``acc += b * x`` then
    ``acc += e * x``. Each entry gets exactly the operations, in the order, of
    ``add_row_pair(j, w, a, acc, b, x, False, s)`` followed by
    ``add_row_pair(j, w, c, acc, e, x, True, s)`` (the entries are distinct
    columns, so the order across entries does not matter); the row is read,
    and each written entry journaled, once instead of twice."""
    cdef int k
    cdef Py_ssize_t col
    cdef double v
    jsave_row(j, w, s, x)
    jsave_row(j, acc, s, x)
    if row_dense(x):
        for k in range(x.nnz):
            v = x.val[k]
            col = k * s
            w[col] = (w[col] + a * v) + v / c
            acc[col] = (acc[col] + b * v) + e * v
    else:
        for k in range(x.nnz):
            col = x.ind[k] * s
            v = x.val[k]
            w[col] = (w[col] + a * v) + v / c
            acc[col] = (acc[col] + b * v) + e * v


cdef inline void row_add_div(Row x, double denom, double* w,
                             Py_ssize_t s) noexcept nogil:
    """``w += x / denom`` (elementwise division, as written in the papers)."""
    cdef int j
    if row_dense(x):
        for j in range(x.nnz):
            w[j * s] += x.val[j] / denom
    else:
        for j in range(x.nnz):
            w[x.ind[j] * s] += x.val[j] / denom


cdef inline int tie_pick(double u2, int m) noexcept nogil:
    """The shared tie rule: which of ``m >= 1`` exact maximisers (in increasing
    class order) the greedy label is, ``min(int(u2 * m), m - 1)`` (uniform for
    ``u2`` uniform on [0, 1))."""
    cdef int pick = <int>(u2 * m)
    if pick > m - 1:
        pick = m - 1
    return pick


cdef inline int argmax_ties(const double* s, int k, double u2,
                            int* n_ties) noexcept nogil:
    """Index of the maximum of ``s``; exact ties broken uniformly with ``u2``.

    With ``m`` exact maximisers in increasing index order, returns the
    ``tie_pick(u2, m)``-th of them and writes ``m`` to ``n_ties``.
    """
    cdef bint finite
    return argmax_ties_finite(s, k, u2, n_ties, &finite)


cdef inline int argmax_ties_finite(const double* s, int k, double u2,
                                   int* n_ties, bint* finite) noexcept nogil:
    """``argmax_ties``, and ``all_finite(s, k)`` to ``finite`` from the same
    sweep (the generic ``act``: one loop over the scores instead of two). With
    a NaN score the index returned is still in ``[0, k)``."""
    cdef int r, m = 1, first = 0, pick
    cdef double best = s[0]
    cdef double acc = s[0] - s[0]
    for r in range(1, k):
        acc = acc + (s[r] - s[r])
        if s[r] > best:
            best = s[r]
            first = r
            m = 1
        elif s[r] == best:
            m += 1
    finite[0] = acc == 0.0
    n_ties[0] = m
    if m == 1:
        return first
    pick = tie_pick(u2, m)
    for r in range(first, k):
        if s[r] == best:
            if pick == 0:
                return r
            pick -= 1
    return k - 1  # unreachable


cdef inline int last_positive(const double* p, int k) noexcept nogil:
    """The last class with positive probability (0 if none): the draw when
    rounding leaves a distribution's running sum at or below ``u1``."""
    cdef int r = k - 1
    while r > 0 and not p[r] > 0.0:
        r -= 1
    return r


cdef inline int sample_checked(const double* p, int k, double u1,
                               bint* valid) noexcept nogil:
    """``sample_inverse_cdf(p, k, u1)`` and ``valid_distribution(p, k)`` to
    ``valid`` from one sweep of ``p`` (the generic ``act``). The running sum is
    the sampler's (and the check's) sequential sum; for ``p >= 0`` it never
    decreases, so the first ``r`` with ``u1 < c_r`` is the number of ``r`` with
    ``c_r <= u1`` (counted without a branch). When ``valid`` is False the
    index returned is in ``[0, k)`` but means nothing."""
    cdef int r, a = 0
    cdef double c = 0.0, mn = 0.0
    for r in range(k):
        c = c + p[r]
        mn = p[r] if p[r] < mn else mn
        a += c <= u1
    valid[0] = (mn >= 0.0 and c - 1.0 <= SKB_DISTRIBUTION_TOL
                and 1.0 - c <= SKB_DISTRIBUTION_TOL)
    if a < k:
        return a
    return last_positive(p, k)


cdef inline int sample_inverse_cdf(const double* p, int k, double u1) noexcept nogil:
    """Draw from ``p`` by inverse CDF on ``u1``: the first ``r`` with
    ``u1 < p[0] + ... + p[r]`` (summed sequentially, as ``np.cumsum``).

    If rounding leaves the total at or below ``u1``, the last class with
    positive probability is returned.
    """
    cdef int r
    cdef double c = 0.0
    for r in range(k):
        c = c + p[r]
        if u1 < c:
            return r
    return last_positive(p, k)
