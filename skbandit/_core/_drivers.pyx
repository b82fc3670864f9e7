"""The row forms and the drivers of passes shared by every learner: the
rows of X (dense or CSR arrays) as ``Row``s (``_RowReader``, dense rows
compacted by ``compact_dense``), and the compiled loops over them
(``run_pass``, ``run_distribution``, ``run_scores``, ``run_act``,
``run_logged``). The round bodies are in _rounds.pxd, the kernels and the
undo journal in _kernel.pyx, the input checks in _scans.pyx."""


cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc


from skbandit._core._kernel cimport (
    STATUS_INVALID_DISTRIBUTION,
    STATUS_NONFINITE,
    STATUS_OK,
    BaseKernel,
    JournalData,
    Row,
    all_finite,
    compact_dense,
    row_dense,
    valid_distribution,
)
from skbandit._core._rounds cimport Acted, act_round, label_round, logged_round


# Target of ``Row.ind`` for an empty row of an all-zero CSR matrix (``NULL``
# would mean a dense row).
cdef int _EMPTY_INDEX = 0


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


cdef int _check_rows(const int[::1] rows, Py_ssize_t n_rows) except -1:
    """Each of ``rows`` indexes one of ``n_rows`` rows, else ``IndexError``."""
    cdef Py_ssize_t t
    for t in range(rows.shape[0]):
        if rows[t] < 0 or rows[t] >= n_rows:
            raise IndexError(f"row {rows[t]} out of range for {n_rows} rows")
    return 0


cdef int _check_reset(BaseKernel kernel) except -1:
    """A pass starts from a kernel whose status is reset, else ``RuntimeError``."""
    if kernel.status != STATUS_OK:
        raise RuntimeError(f"kernel status {kernel.status} was not reset")
    return 0


cdef inline bint _block_ends(BaseKernel kernel, JournalData* j) noexcept nogil:
    """After a learning round that was played: the pass ends there when the
    round set the kernel's status, or when the journal reached its limit (or
    was told to stop): the caller then commits the rounds played as a block."""
    return kernel.status != STATUS_OK or (j != NULL and (j.n >= j.limit or j.stop))


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


@cython.final
cdef class _RowReader:
    """The rows of X (dense flattened or CSR arrays) as ``Row``s, for every
    pass driver: made by ``_reader`` (O(1) shape checks: ``n_rows``), then
    ``row(i)`` without the GIL, dense rows compacted as described above into
    scratch buffers of ``d`` entries it owns (``PyMem_Malloc``)."""
    cdef const double[::1] data
    cdef const int[::1] indices
    cdef const int[::1] indptr
    cdef bint dense
    cdef int d
    cdef readonly Py_ssize_t n_rows
    cdef double* cval
    cdef int* cind
    cdef int skip

    def __dealloc__(self):
        PyMem_Free(self.cval)
        PyMem_Free(self.cind)

    cdef inline Row row(self, Py_ssize_t i) noexcept nogil:
        """Row ``i``: a CSR row, or a dense row or its non-zero entries."""
        cdef Row x = _row(self.data, self.indices, self.indptr, self.dense,
                          self.d, i)
        if not self.dense:
            return x
        if self.skip > 0:
            self.skip -= 1
            return x
        x = compact_dense(x, self.cind, self.cval)
        if row_dense(x):
            self.skip = _DENSE_SKIP
        return x


cdef _RowReader _reader(const double[::1] data, const int[::1] indices,
                       const int[::1] indptr, bint dense, int d):
    """The ``_RowReader`` of X's arrays (a C-level call: the memoryviews are
    handed over as they are, not through Python objects)."""
    cdef _RowReader X = _RowReader.__new__(_RowReader)
    X.n_rows = _n_rows(data, indices, indptr, dense, d)
    X.data, X.indices, X.indptr = data, indices, indptr
    X.dense, X.d, X.skip = dense, d, 0
    if dense:
        X.cval = <double*> PyMem_Malloc(max(d, 1) * sizeof(double))
        X.cind = <int*> PyMem_Malloc(max(d, 1) * sizeof(int))
        if X.cval == NULL or X.cind == NULL:
            raise MemoryError()
    return X


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
    int[::1] played=None,
    int[::1] greedy=None,
    double[::1] rewards=None,
    double[::1] propensities=None,
):
    """Play rounds ``rows[t]`` of X (dense or CSR arrays) with ``uniforms[t]``.

    Round ``t`` of the block has global index ``t0 + t + 1``. When the output
    arrays are given (all four or none), writes the played action, greedy
    action, reward and logged propensity of each round to them; the logged
    propensity is the policy's marginal probability of the played action,
    exact ties of the greedy label included. ``y`` holds the true label
    codes: it is read only by each round's ``label_round``, to form the
    reward (and handed to ``learn_full`` for full-information learners), and
    to count the greedy action's mistakes. ``dense`` means ``data`` is a
    C-ordered ``(n, d)`` array flattened (``indices``/``indptr`` unused); CSR
    arrays must have passed ``check_csr``.

    With a journal (``kernel.set_journal``), the state entries each round
    wrote are checked to be finite (else ``STATUS_NONFINITE``), and the pass
    ends early, with ``status`` 0, after the round at which the journal holds
    ``limit`` entries (the caller commits those rounds as a block).

    Returns ``(done, mistakes, greedy_mistakes)``: the number of rounds
    played (``len(rows)``, or fewer when the kernel set a non-zero
    ``status`` (the round that set it is not played), or when the journal
    reached its limit), and among them the rounds of reward 0 and those whose
    greedy action was not the label.
    """
    cdef Py_ssize_t t, n = rows.shape[0]
    cdef Py_ssize_t i
    cdef int d = kernel.n_features
    cdef int a, g
    cdef double marginal, reward
    cdef Py_ssize_t mistakes = 0, greedy_mistakes = 0
    cdef _RowReader X = _reader(data, indices, indptr, dense, d)
    cdef Py_ssize_t n_rows = X.n_rows
    cdef bint out = played is not None
    if out != (greedy is not None) or out != (rewards is not None) \
            or out != (propensities is not None):
        raise ValueError("give all four output arrays or none")
    if uniforms.shape[0] < n or uniforms.shape[1] != 2 or (out and (
            played.shape[0] < n or greedy.shape[0] < n or rewards.shape[0] < n
            or propensities.shape[0] < n)):
        raise ValueError("output or uniform arrays are shorter than rows")
    if y.shape[0] < n_rows:
        raise ValueError("fewer labels than rows")
    _check_rows(rows, n_rows)
    _check_reset(kernel)
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
            if out:
                played[t] = a
                greedy[t] = g
                rewards[t] = reward
                propensities[t] = marginal
            mistakes += reward == 0.0
            greedy_mistakes += g != y[i]
            if _block_ends(kernel, j):
                done = t + 1
                break
    kernel.rows_played = done
    return done, mistakes, greedy_mistakes


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
    cdef _RowReader X = _reader(data, indices, indptr, dense, kernel.n_features)
    cdef Py_ssize_t i, n = X.n_rows
    cdef int k = kernel.n_classes
    cdef Row x
    if out.shape[0] != n or out.shape[1] != k:
        raise ValueError("out has the wrong shape")
    _check_reset(kernel)
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
    cdef _RowReader X = _reader(data, indices, indptr, dense, kernel.n_features)
    cdef Py_ssize_t i, n = X.n_rows
    cdef int r
    if out.shape[0] != n or out.shape[1] != kernel.n_classes:
        raise ValueError("out has the wrong shape")
    with nogil:
        for i in range(n):
            kernel.compute_scores(X.row(i), t)
            for r in range(kernel.n_classes):
                out[i, r] = kernel.scores[r]


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
    cdef _RowReader X = _reader(data, indices, indptr, dense, kernel.n_features)
    cdef Py_ssize_t i, n = X.n_rows
    if uniforms.shape[0] < n or uniforms.shape[1] != 2 or played.shape[0] < n \
            or propensities.shape[0] < n:
        raise ValueError("output or uniform arrays are shorter than the rows")
    _check_reset(kernel)
    cdef Py_ssize_t done = n
    cdef Acted acted
    with nogil:
        for i in range(n):
            if not act_round(kernel, X.row(i), t0 + i + 1, uniforms[i, 0],
                             uniforms[i, 1], &acted):
                done = i
                break
            played[i] = acted.action
            propensities[i] = acted.marginal
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
    bint binary,
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
    logged reward. Full-information kernels are refused: they need the true
    label.

    Returns ``(done, mistakes, greedy_mistakes, n_off)``: the number of rounds
    played (fewer when the kernel set a non-zero ``status``, the round that
    set it in ``act`` not played; or when its journal reached its limit, as
    in ``run_pass``), and among them the rounds whose logged reward is not 1,
    the greedy mistakes the feedback reveals (the greedy action was the
    logged one and not rewarded, or, with ``binary`` 0/1 rewards, another
    action was rewarded: ``(a == g) != (r == 1)``; without labels the others
    are unknown) and the off-policy rounds.
    """
    cdef Py_ssize_t t, n = rows.shape[0]
    cdef Py_ssize_t i
    cdef int d = kernel.n_features, k = kernel.n_classes
    cdef _RowReader X = _reader(data, indices, indptr, dense, d)
    cdef Py_ssize_t n_rows = X.n_rows
    if kernel.full_information:
        raise TypeError("a full-information kernel cannot learn from logged "
                        "bandit feedback (it needs the true label)")
    if uniforms.shape[0] < n or uniforms.shape[1] != 2:
        raise ValueError("the uniform array is shorter than rows")
    if actions.shape[0] < n_rows or rewards.shape[0] < n_rows \
            or logged_propensities.shape[0] < n_rows:
        raise ValueError("fewer logged actions, rewards or propensities than rows")
    _check_rows(rows, n_rows)
    for i in range(n_rows):
        if actions[i] < 0 or actions[i] >= k:
            raise ValueError(f"logged action code {actions[i]} out of range "
                             f"for {k} classes")
    _check_reset(kernel)
    cdef Py_ssize_t done = n
    cdef JournalData* j = kernel.jd
    cdef Py_ssize_t bound_ll = kernel.journal_bound_ll()
    cdef int g
    cdef signed char own
    cdef bint right, same
    cdef Py_ssize_t mistakes = 0, greedy_mistakes = 0, n_off = 0
    with nogil:
        for t in range(n):
            i = rows[t]
            if not logged_round(kernel, j, X.row(i), t0 + t + 1, uniforms[t, 0],
                                uniforms[t, 1], actions[i], rewards[i],
                                logged_propensities[i], bound_ll, NULL, &g,
                                &own):
                done = t
                break
            right = rewards[i] == 1.0
            same = actions[i] == g
            mistakes += not right
            if binary:
                greedy_mistakes += same != right
            else:
                greedy_mistakes += same and not right
            n_off += not own
            if _block_ends(kernel, j):
                done = t + 1
                break
    kernel.rows_played = done
    return done, mistakes, greedy_mistakes, n_off
