"""One-vs-all for the separable case (Beygelzimer, Pal, Szorenyi, Thiruvenkatachari,
Wei and Zhang, 2019): linear and rational-kernel Perceptrons."""

import numpy as np

from libc.math cimport sqrt
from libc.string cimport memcpy

from skbandit._core._kernel cimport (
    BaseKernel,
    LinearKernel,
    Row,
    is_finite,
    jsave_ll,
    jsave_range,
    row_col,
    row_dense,
    row_sq_norm,
)

# ``status`` of a kernel whose support store could not grow; the exception is
# kept in ``error`` and raised by the estimator (negative: no clash with the
# shared ``KernelStatus`` values).
STATUS_STORE_ERROR = -1


cdef class SeparableLinearKernel(LinearKernel):
    """One linear Perceptron per class; ``f_r = w_r . x``, YES when ``f_r >= 0``.

    The played learner receives ``(x, YES)`` if the action was right, ``(x, NO)``
    otherwise, and makes a Perceptron step on its own mistake (``w += x`` on a
    missed YES, ``w -= x`` on a wrong YES). With ``full`` the other learners too
    receive their label on right rounds (the label is then known)."""

    cdef bint full

    def __init__(self, double[:, ::1] W, bint full):
        LinearKernel.__init__(self, W, False)
        self.full = full

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # a step on the played class (a column of W); with ``full``, on every class
        return <Py_ssize_t>(self.n_classes if self.full else 1) * x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int r
        cdef const double* s = &self.scores[0]
        if reward != 0.0:
            if s[played] < 0.0:
                self.add_row(played, 1.0, x)
            if self.full:
                for r in range(self.n_classes):
                    if r != played and s[r] >= 0.0:
                        self.add_row(r, -1.0, x)
        elif s[played] >= 0.0:
            self.add_row(played, -1.0, x)



cdef class SeparableRationalKernel(BaseKernel):
    """One kernel Perceptron per class sharing one support set.

    ``f_r(x) = sum_j A[j, r] k(v_j, x)`` over the support vectors ``v_j``, oldest
    first, with the rational kernel ``k(v, x) = 1 / (1 - v.x / 2)`` and
    coefficients ``A[j, r]`` in ``{-1, 0, +1}``. A round adds at most one support
    vector (the row, with the sign of each learner that made a mistake on it).
    With a ``budget``, adding to a full set first removes the oldest support
    vector. With ``project``, a row with ``||x|| > 1`` enters the kernel as
    ``x / ||x||`` (an overflowing norm makes the scores NaN, which stops the
    pass).

    **Store.** Support vectors are kept sparse: their non-zero entries (column
    index, value; in the row's order, ascending for the canonical rows the
    estimator passes) lie contiguously in an entry pool, and a ring of slots
    holds each vector's start, length and ``k`` coefficients. Both are rings:
    a new vector goes after the newest (at the pool's start when it does not
    fit before the pool's end: the tail left free is reused once the oldest
    vectors are gone), the oldest leaves by advancing one index. Adding costs
    ``O(nnz(x) + k)`` and evicting ``O(1)``; nothing is shifted. When the pool
    or the slots are full they are reallocated with doubled capacity (at least
    twice the live entries), the live vectors copied in order: amortised
    ``O(1)`` per stored entry (counted in ``n_reallocations``,
    ``n_entries_moved``; ``n_evicted`` counts evictions).
    Memory is ``O(stored entries + n_support k + d)``.

    **Scores.** The row is scattered once into a zeroed work vector of length
    ``d`` (a dense row is read in place), each support vector's dot product
    ``sum_e v.val[e] * w[v.ind[e]]`` runs over the vector's own entries only,
    then the row's entries are zeroed again: ``O(nnz(x) + sum_j nnz(v_j))``
    per round, a branch-free loop over contiguous memory (a merge of two sorted
    index lists would cost ``O(nnz(x) + nnz(v_j))`` per vector and branch on
    every step). With ascending indices in both, the products are summed in
    ascending column order over the columns both have, exactly as the dot of
    a dense ``v_j`` with the row's stored entries (the other products are
    ``±0`` and leave a sum that starts at ``+0`` unchanged).

    The constructor copies the support set given in CSR form (``data``,
    ``indices``, ``indptr`` int64, ``dual_coef`` ``(n_sv, k)``), checking it;
    ``support_arrays`` returns it in the same form, oldest first. ``work``
    (optional) is a zeroed float64 vector of length ``d`` to use as the work
    vector instead of allocating one (``work_buffer`` returns it).
    """

    # entry pool: values and column indices, ring of capacity ``pool_capacity``
    cdef double[::1] pval
    cdef int[::1] pind
    cdef readonly Py_ssize_t pool_capacity
    # end of the newest vector's entries; ``wrapped``: the live entries run
    # from the oldest vector's start to the pool's end, then from 0 to ``hi``
    cdef Py_ssize_t hi
    cdef bint wrapped
    cdef readonly Py_ssize_t n_entries
    # slots: start and length of each vector's entries and its coefficients,
    # ring of capacity ``slot_capacity`` whose oldest slot is ``first``
    cdef Py_ssize_t[::1] sstart
    cdef Py_ssize_t[::1] snnz
    cdef double[:, ::1] A
    cdef readonly Py_ssize_t slot_capacity
    cdef Py_ssize_t first
    cdef readonly Py_ssize_t n_sv
    # largest number of support vectors (0: unbounded)
    cdef public Py_ssize_t budget
    # counters of the store's work: reallocations, entries they copied,
    # support vectors evicted (oldest first)
    cdef readonly Py_ssize_t n_reallocations
    cdef readonly Py_ssize_t n_entries_moved
    cdef readonly Py_ssize_t n_evicted
    cdef bint full
    cdef bint project
    # the factor of the current row (1, or 1 / ||x|| when projected)
    cdef double xscale
    cdef double[::1] coef
    # zeros, except while a row is scattered into it
    cdef double[::1] work
    cdef object work_obj
    # the exception of a failed reallocation (``status`` is then
    # STATUS_STORE_ERROR); set by the estimator's hooks: whether the kernel
    # still holds exactly the committed state
    cdef public object error
    # The checkpoint of the store at the start of a block (``checkpoint``):
    # its scalars and arrays. A block's writes into the arrays are recorded in
    # the call's journal (values, coefficients, slot starts and lengths) and,
    # for the column indices (int32, which the journal does not hold), in
    # ``ulog`` (old values of the ranges written, ``ulog_at`` their starts and
    # lengths), so ``restore`` undoes a block in O(what it wrote). A
    # reallocation writes only new arrays, so the checkpoint's stay intact.
    cdef double[::1] ck_pval
    cdef int[::1] ck_pind
    cdef Py_ssize_t[::1] ck_sstart
    cdef Py_ssize_t[::1] ck_snnz
    cdef double[:, ::1] ck_A
    cdef Py_ssize_t ck_scalars[11]
    cdef bint ck_active
    cdef int[::1] ulog
    cdef Py_ssize_t[::1] ulog_at
    cdef Py_ssize_t ulog_n
    cdef Py_ssize_t ulog_m

    def __init__(self, const double[::1] data, const int[::1] indices,
                 const long long[::1] indptr, const double[:, ::1] dual_coef,
                 int n_features, bint full, bint project=False,
                 Py_ssize_t budget=0, work=None):
        cdef Py_ssize_t n_sv = indptr.shape[0] - 1
        cdef Py_ssize_t nnz = data.shape[0]
        cdef Py_ssize_t j, e
        BaseKernel.__init__(self, <int>dual_coef.shape[1], n_features, False)
        problem = _check_support(data, indices, indptr, dual_coef, n_features)
        if problem:
            raise ValueError(f"inconsistent support set: {problem}")
        self.full = full
        self.project = project
        self.budget = budget
        self.xscale = 1.0
        self.coef = np.zeros(self.n_classes, dtype=np.float64)
        if work is None:
            work = np.zeros(max(n_features, 1), dtype=np.float64)
        elif not (isinstance(work, np.ndarray) and work.dtype == np.float64
                  and work.ndim == 1 and work.shape[0] == max(n_features, 1)):
            # a buffer kept by the estimator between calls (all zeros: every
            # round clears the entries it scattered)
            raise ValueError("work must be a float64 vector of length d")
        self.work = work
        self.work_obj = work
        self.error = None
        self.ck_active = False
        self.ulog = np.empty(0, dtype=np.int32)
        self.ulog_at = np.empty(0, dtype=np.intp)
        self.ulog_n = 0
        self.ulog_m = 0
        self.n_reallocations = 0
        self.n_entries_moved = 0
        self.n_evicted = 0
        self.pool_capacity = max(2 * nnz, 64)
        self.pval = np.empty(self.pool_capacity, dtype=np.float64)
        self.pind = np.empty(self.pool_capacity, dtype=np.int32)
        self.slot_capacity = max(2 * n_sv, 16)
        if budget > 0:
            self.slot_capacity = max(n_sv, min(self.slot_capacity, budget))
        self.sstart = np.empty(self.slot_capacity, dtype=np.intp)
        self.snnz = np.empty(self.slot_capacity, dtype=np.intp)
        self.A = np.zeros((self.slot_capacity, self.n_classes), dtype=np.float64)
        for e in range(nnz):
            self.pval[e] = data[e]
            self.pind[e] = indices[e]
        for j in range(n_sv):
            self.sstart[j] = indptr[j]
            self.snnz[j] = indptr[j + 1] - indptr[j]
        self.A[:n_sv] = dual_coef
        self.first = 0
        self.n_sv = n_sv
        self.n_entries = nnz
        self.hi = nnz
        self.wrapped = False

    def work_buffer(self):
        """The length-``d`` work vector (all zeros between rounds), for the
        estimator to hand to its next kernel instead of allocating one."""
        return self.work_obj

    def configure(self, bint full, bint project, Py_ssize_t budget):
        """Set the parameters a kernel kept across calls plays with."""
        self.full = full
        self.project = project
        self.budget = budget

    def checkpoint(self):
        """Remember the store as it is now (O(1)); ``restore`` returns to it."""
        self.ck_pval, self.ck_pind = self.pval, self.pind
        self.ck_sstart, self.ck_snnz, self.ck_A = self.sstart, self.snnz, self.A
        self.ck_scalars[:] = [
            self.pool_capacity, self.hi, self.wrapped, self.n_entries,
            self.slot_capacity, self.first, self.n_sv, self.n_evicted,
            self.n_reallocations, self.n_entries_moved, self.budget,
        ]
        self.ulog_n = 0
        self.ulog_m = 0
        self.ck_active = True

    def restore(self):
        """Return the store to the last ``checkpoint``, once the call's
        journal has been undone (it restores the values, coefficients, slot
        starts and lengths the block overwrote in the checkpoint's arrays);
        the column indices are restored here. O(entries the block wrote)."""
        cdef Py_ssize_t r, i, e, start, m, n = self.ulog_n
        if not self.ck_active:
            raise RuntimeError("no checkpoint to restore")
        for r in range(self.ulog_m - 1, -1, -1):
            start = self.ulog_at[2 * r]
            m = self.ulog_at[2 * r + 1]
            n -= m
            for e in range(m):
                self.ck_pind[start + e] = self.ulog[n + e]
        self.pval, self.pind = self.ck_pval, self.ck_pind
        self.sstart, self.snnz, self.A = self.ck_sstart, self.ck_snnz, self.ck_A
        (self.pool_capacity, self.hi, self.wrapped, self.n_entries,
         self.slot_capacity, self.first, self.n_sv, self.n_evicted,
         self.n_reallocations, self.n_entries_moved, self.budget) = self.ck_scalars
        self.ulog_n = 0
        self.ulog_m = 0
        self.status = 0
        self.error = None

    cdef bint log_indices(self, Py_ssize_t pos, Py_ssize_t m) noexcept:
        """Record ``pind[pos:pos + m]`` before a block overwrites them (only
        while ``pind`` is the checkpoint's array). False (``error`` and
        ``status`` set) if the log could not grow."""
        cdef Py_ssize_t e
        if not self.ck_active or &self.pind[0] != &self.ck_pind[0]:
            return True
        try:
            if self.ulog_n + m > self.ulog.shape[0]:
                grown = np.empty(max(2 * self.ulog.shape[0], self.ulog_n + m, 64),
                                 dtype=np.int32)
                grown[:self.ulog_n] = self.ulog[:self.ulog_n]
                self.ulog = grown
            if 2 * self.ulog_m + 2 > self.ulog_at.shape[0]:
                grown_at = np.empty(max(2 * self.ulog_at.shape[0], 32), dtype=np.intp)
                grown_at[:2 * self.ulog_m] = self.ulog_at[:2 * self.ulog_m]
                self.ulog_at = grown_at
        except BaseException as exc:
            self.error = exc
            self.status = STATUS_STORE_ERROR
            return False
        for e in range(m):
            self.ulog[self.ulog_n + e] = self.pind[pos + e]
        self.ulog_at[2 * self.ulog_m] = pos
        self.ulog_at[2 * self.ulog_m + 1] = m
        self.ulog_n += m
        self.ulog_m += 1
        return True

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # a new support vector: its values and its k coefficients
        return x.nnz + self.n_classes

    cdef Py_ssize_t journal_bound_ll(self) noexcept nogil:
        # its slot's start and length
        return 2

    cdef inline Py_ssize_t next_slot(self, Py_ssize_t i) noexcept nogil:
        """The slot after ``i`` in the ring (the next newer vector)."""
        i += 1
        return 0 if i == self.slot_capacity else i

    cdef inline const double* scatter(self, Row x) noexcept nogil:
        """The row as a dense vector: read in place, or scattered into ``work``."""
        cdef int e
        if row_dense(x):
            return x.val
        for e in range(x.nnz):
            self.work[row_col(x, e)] += x.val[e]
        return &self.work[0]

    cdef inline void unscatter(self, Row x) noexcept nogil:
        cdef int e
        if not row_dense(x):
            for e in range(x.nnz):
                self.work[row_col(x, e)] = 0.0

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        cdef int r, k = self.n_classes
        cdef Py_ssize_t i, j, e, end
        cdef double kv
        cdef double* s = &self.scores[0]
        cdef double sq = 0.0, dot
        cdef const double* w
        for r in range(k):
            s[r] = 0.0
        self.xscale = 1.0
        if self.project:
            sq = row_sq_norm(x)
            if sq > 1.0:
                # sq = inf would give 1 / inf = 0: use NaN so that the round stops
                self.xscale = 1.0 / sqrt(sq) if is_finite(sq) else sq - sq
        w = self.scatter(x)
        i = self.first
        for j in range(self.n_sv):
            dot = 0.0
            end = self.sstart[i] + self.snnz[i]
            for e in range(self.sstart[i], end):
                dot = dot + self.pval[e] * w[self.pind[e]]
            if self.xscale != 1.0:
                dot = dot * self.xscale
            kv = 1.0 / (1.0 - 0.5 * dot)
            for r in range(k):
                s[r] = s[r] + self.A[i, r] * kv
            i = self.next_slot(i)
        self.unscatter(x)
        if not self.xscale == self.xscale:
            for r in range(k):
                s[r] = self.xscale

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        cdef int r, k = self.n_classes
        cdef bint add = False
        cdef const double* s = &self.scores[0]
        for r in range(k):
            self.coef[r] = 0.0
        if reward != 0.0:
            if s[played] < 0.0:
                self.coef[played] = 1.0
                add = True
            if self.full:
                for r in range(k):
                    if r != played and s[r] >= 0.0:
                        self.coef[r] = -1.0
                        add = True
        elif s[played] >= 0.0:
            self.coef[played] = -1.0
            add = True
        if add:
            self.add_support(x)

    cdef void evict_oldest(self) noexcept nogil:
        """Forget the oldest support vector: O(1), its entries become free."""
        cdef Py_ssize_t old = self.sstart[self.first]
        self.n_entries -= self.snnz[self.first]
        self.n_evicted += 1
        self.first = self.next_slot(self.first)
        self.n_sv -= 1
        if self.n_sv == 0:
            self.hi = 0
            self.wrapped = False
        elif self.sstart[self.first] < old:
            # the oldest is now the first vector placed after the wrap (at 0,
            # while every earlier one starts after 0): the live entries are
            # contiguous again
            self.wrapped = False

    cdef Py_ssize_t reserve(self, Py_ssize_t m) noexcept nogil:
        """Start of ``m`` free contiguous pool entries after the newest vector,
        or -1 if there are none."""
        cdef Py_ssize_t pos, lo
        if self.n_sv == 0:
            self.hi = 0
            self.wrapped = False
        lo = self.sstart[self.first] if self.n_sv > 0 else 0
        if self.n_sv == 0 or not self.wrapped:
            if self.hi + m <= self.pool_capacity:
                pos = self.hi
            elif m <= lo:
                pos = 0
                self.wrapped = True
            else:
                return -1
        elif self.hi + m <= lo:
            pos = self.hi
        else:
            return -1
        self.hi = pos + m
        return pos

    cdef bint grow(self, Py_ssize_t m, bint slots) noexcept:
        """Reallocate the pool (room for ``m`` more entries) or the slots with
        doubled capacity, copying the live vectors in order. False (and the
        exception in ``error``, ``status`` set) if the allocation failed."""
        cdef Py_ssize_t j, i, p = 0, cap
        cdef double[::1] nval
        cdef int[::1] nind
        cdef Py_ssize_t[::1] nstart
        cdef Py_ssize_t[::1] nnnz
        cdef double[:, ::1] nA
        try:
            if slots:
                cap = 2 * self.slot_capacity
                if self.budget > 0 and cap > self.budget:
                    cap = self.budget
                nstart = np.empty(cap, dtype=np.intp)
                nnnz = np.empty(cap, dtype=np.intp)
                nA = np.zeros((cap, self.n_classes), dtype=np.float64)
                i = self.first
                for j in range(self.n_sv):
                    nstart[j] = self.sstart[i]
                    nnnz[j] = self.snnz[i]
                    nA[j, :] = self.A[i, :]
                    i = self.next_slot(i)
                self.sstart, self.snnz, self.A = nstart, nnnz, nA
                self.slot_capacity = cap
                self.first = 0
            else:
                cap = max(2 * self.pool_capacity, 2 * (self.n_entries + m))
                nval = np.empty(cap, dtype=np.float64)
                nind = np.empty(cap, dtype=np.int32)
                # new slot starts too: the old arrays stay as they were (a
                # checkpoint may hold them)
                nstart = np.empty(self.slot_capacity, dtype=np.intp)
                nnnz = np.empty(self.slot_capacity, dtype=np.intp)
                i = self.first
                for j in range(self.n_sv):
                    if self.snnz[i] > 0:
                        memcpy(&nval[p], &self.pval[self.sstart[i]],
                               self.snnz[i] * sizeof(double))
                        memcpy(&nind[p], &self.pind[self.sstart[i]],
                               self.snnz[i] * sizeof(int))
                    nstart[i] = p
                    nnnz[i] = self.snnz[i]
                    p += self.snnz[i]
                    i = self.next_slot(i)
                self.pval, self.pind = nval, nind
                self.sstart, self.snnz = nstart, nnnz
                self.pool_capacity = cap
                self.hi = p
                self.wrapped = False
                self.n_entries_moved += p
            self.n_reallocations += 1
            return True
        except BaseException as exc:
            self.error = exc
            self.status = STATUS_STORE_ERROR
            return False

    cdef void add_support(self, Row x) noexcept nogil:
        cdef Py_ssize_t m = 0, pos, slot, q
        cdef int e, r
        cdef bint ok
        cdef double v
        while self.budget > 0 and self.n_sv >= self.budget:
            self.evict_oldest()
        if self.n_sv == self.slot_capacity:
            with gil:
                ok = self.grow(0, True)
            if not ok:
                return
        for e in range(x.nnz):
            m += (x.val[e] * self.xscale) != 0.0
        pos = self.reserve(m)
        if pos < 0:
            with gil:
                ok = self.grow(m, False)
            if not ok:
                return
            pos = self.reserve(m)
        slot = self.first + self.n_sv
        if slot >= self.slot_capacity:
            slot -= self.slot_capacity
        if self.ck_active and m > 0:
            with gil:
                ok = self.log_indices(pos, m)
            if not ok:
                return
        # the writes below, recorded for a rollback (the drivers reserved them)
        if m > 0:
            jsave_range(self.jd, &self.pval[pos], m)
        jsave_range(self.jd, &self.A[slot, 0], self.n_classes)
        jsave_ll(self.jd, <long long*>&self.sstart[slot])
        jsave_ll(self.jd, <long long*>&self.snnz[slot])
        q = pos
        for e in range(x.nnz):
            v = x.val[e] * self.xscale
            if v != 0.0:
                self.pval[q] = v
                self.pind[q] = row_col(x, e)
                q += 1
        self.sstart[slot] = pos
        self.snnz[slot] = m
        for r in range(self.n_classes):
            self.A[slot, r] = self.coef[r]
        self.n_sv += 1
        self.n_entries += m

    def trim(self, Py_ssize_t budget):
        """Forget the oldest support vectors until at most ``budget`` are left."""
        while self.n_sv > budget:
            self.evict_oldest()

    def support_arrays(self):
        """The support set, oldest first: ``(data, indices, indptr,
        dual_coef)``, new arrays in CSR form (``indptr`` int64)."""
        data = np.empty(self.n_entries, dtype=np.float64)
        indices = np.empty(self.n_entries, dtype=np.int32)
        indptr = np.zeros(self.n_sv + 1, dtype=np.int64)
        dual_coef = np.empty((self.n_sv, self.n_classes), dtype=np.float64)
        cdef double[::1] d = data
        cdef int[::1] ind = indices
        cdef long long[::1] ptr = indptr
        cdef double[:, ::1] dc = dual_coef
        cdef Py_ssize_t j, e, i = self.first, p = 0
        for j in range(self.n_sv):
            for e in range(self.sstart[i], self.sstart[i] + self.snnz[i]):
                d[p] = self.pval[e]
                ind[p] = self.pind[e]
                p += 1
            ptr[j + 1] = p
            dc[j, :] = self.A[i, :]
            i = self.next_slot(i)
        return data, indices, indptr, dual_coef


def _check_support(const double[::1] data, const int[::1] indices,
                   const long long[::1] indptr, const double[:, ::1] dual_coef,
                   int n_features):
    """``""`` if the arrays are a support set in CSR form for ``n_features``
    columns; otherwise the first problem found."""
    cdef Py_ssize_t n_sv = indptr.shape[0] - 1, j
    if n_sv < 0:
        return "indptr is empty"
    if dual_coef.shape[0] != n_sv:
        return (f"dual_coef_ has {dual_coef.shape[0]} rows for {n_sv} support "
                "vectors")
    if indices.shape[0] != data.shape[0]:
        return (f"{data.shape[0]} values but {indices.shape[0]} column indices")
    if indptr[0] != 0 or indptr[n_sv] != data.shape[0]:
        return (f"indptr runs from {indptr[0]} to {indptr[n_sv]}, expected 0 to "
                f"{data.shape[0]}")
    for j in range(n_sv):
        if indptr[j + 1] < indptr[j]:
            return f"indptr decreases at {j + 1}"
    for j in range(indices.shape[0]):
        if indices[j] < 0 or indices[j] >= n_features:
            return (f"column index {indices[j]} is out of range for "
                    f"{n_features} features")
    return ""
