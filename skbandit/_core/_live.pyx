"""The compiled round of a live session (``skbandit.LiveSession``).

``LiveRound`` plays one kernel's rounds on one row at a time: the row is
checked and bound in C (``bind``), the uniform pair of a round is drawn from
the learner's own generator through NumPy's public C interface to bit
generators (the ``bitgen_t`` of ``bit_generator.capsule``, as in NumPy's
"Extending via Cython"), and the round bodies are those of the pass drivers
(``act_round`` and ``logged_round`` of _rounds.pxd), so a session plays what
``sample_actions`` and ``partial_fit(x, LoggedFeedback(...))`` play.

The pairs. ``Generator.random((n, 2))`` draws ``next_double`` twice per row,
so the pair of round ``t`` is the ``t``-th pair of ``next_double`` calls.
``sample_actions`` reads the pairs of served rows ahead without consuming
them; ``partial_fit`` with logged feedback consumes one per row. The session
consumes a pair when it first needs it (``act`` on a served row, or ``learn``
of a row that was not served) and keeps the pairs drawn for rows served and
not learned yet in a queue, oldest first: ``learn`` takes the oldest. A
round therefore uses the pair the two public calls would give it; the caller
(``LiveSession.close``) sets the generator back by the pairs still queued, so
that after the session the generator is where ``sample_actions`` would have
left it.

Learning the row just served. ``act`` keeps what it returned (the action, the
greedy label, the draw's probability and the propensity), its round, its pair
and a copy of the row's entries. A ``learn`` whose round, pair and bound row
(entries compared bit for bit) are those, with no other call on the kernel in
between, does not call the kernel's ``act`` again: ``act`` is a deterministic
function of the state, the row, the round and the pair, and what it left in
the kernel for ``learn`` is still there. Every other call that reaches the
kernel drops the record first (``act``, ``learn``, ``unlearn``, ``set_kernel``,
and ``forget``, which the session calls before a learner's ``_before_block``).
The live loop (``act`` then ``learn`` of the same row) thus plays each round's
``act`` once. A dense row bound again with the values ``act`` read (compared
bit for bit with a copy) also keeps the check and the compaction of its
first ``bind``: a ``bind`` that rewrites the compaction drops the record.
"""


cimport cython
cimport numpy as cnp

from skbandit._core._ndarray cimport exact_array
from cpython.pycapsule cimport PyCapsule_GetPointer
from numpy.random cimport bitgen_t

import numpy as np
from scipy.sparse import csr_array, csr_matrix

from skbandit._core._kernel cimport (
    STATUS_OK,
    BaseKernel,
    Journal,
    Row,
    compact_dense,
    skb_scan_indices_i32,
    skb_within_bound,
)
from skbandit._core._rounds cimport Acted, act_round, logged_round
from libc.string cimport memcmp, memcpy

cnp.import_array()


# Target of ``Row.ind`` for an empty CSR row (``NULL`` would mean dense).
cdef int _EMPTY_INDEX = 0


@cython.final
cdef class LiveRound:
    """One kernel's live rounds, one row at a time (module docstring).

    ``LiveRound(kernel, journal, bit_generator, bound, binary)``: the
    learner's kernel (its state arrays, updated in place), the undo journal
    attached to it (``kernel.set_journal``), the learner's bit generator, the
    magnitude bound of feature values and whether the learner's logged rewards
    are binary (for the greedy-mistake count).
    """

    cdef readonly BaseKernel kernel
    cdef readonly Journal journal
    cdef object bit_generator  # (keeps the ``bitgen_t`` alive)
    cdef bitgen_t* rng
    cdef int d
    cdef double bound
    cdef bint binary
    # the bound row and the object whose arrays it points into; a dense row
    # with at most half its entries non-zero is bound as those entries
    # (``compact_dense``, exactly as the pass drivers compact a dense row)
    cdef Row x
    cdef object held
    cdef double[::1] cval
    cdef int[::1] cind
    # the queue of drawn pairs, oldest first (``head``, ``count``), of which
    # the first ``served`` belong to rows served and not learned yet
    cdef double[:, ::1] pairs
    cdef Py_ssize_t head, count
    cdef readonly Py_ssize_t served
    # the pair and queue position of the last ``learn`` (for ``unlearn``)
    cdef double u1, u2
    cdef bint from_queue, was_served
    # the last ``act``'s propensity; the last ``learn``'s round outcome: its
    # greedy label, whether it was the learner's own draw, and its counts
    # (``_LoggedPass.commit``'s): ``wrong``, the played action not rewarded;
    # ``revealed``, a greedy mistake the feedback reveals (the greedy action
    # played and not rewarded, or, with binary rewards, another one rewarded)
    cdef readonly double propensity
    cdef readonly int greedy
    cdef readonly bint own
    cdef readonly int wrong, revealed
    # the last ``act``, kept for a ``learn`` of the same row that follows it
    # (``_acted_on``): what it returned, its round and pair, the form of the
    # row it read (``mnnz`` entries; ``mdense``: not compacted) and a copy of
    # it: a CSR row's entries (``mval``/``mind``), a dense row's values
    # (``mraw``, ``mraw_ok``)
    cdef Acted acted
    cdef bint memo
    cdef long long mt
    cdef double mu1, mu2
    cdef double[::1] mval
    cdef int[::1] mind
    cdef int mnnz
    cdef bint mdense
    cdef double[::1] mraw
    cdef bint mraw_ok
    # the values of the dense row bound last (``raw``; NULL for CSR), and
    # whether they are the kept ones (``same_raw``: ``bind`` then reused their
    # check and compaction)
    cdef const double* raw
    cdef bint same_raw

    def __init__(self, BaseKernel kernel not None, Journal journal not None,
                 bit_generator, double bound, bint binary):
        capsule = bit_generator.capsule
        self.rng = <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")
        self.bit_generator = bit_generator
        self.kernel = kernel
        self.journal = journal
        self.d = kernel.n_features
        self.bound = bound
        self.binary = binary
        self.held = None
        self.cval = np.empty(max(self.d, 1), dtype=np.float64)
        self.cind = np.empty(max(self.d, 1), dtype=np.int32)
        self.pairs = np.empty((8, 2), dtype=np.float64)
        self.head = self.count = self.served = 0
        self.mval = np.empty(max(self.d, 1), dtype=np.float64)
        self.mind = np.empty(max(self.d, 1), dtype=np.int32)
        self.mraw = np.empty(max(self.d, 1), dtype=np.float64)
        self.memo = False
        self.raw = NULL

    def set_kernel(self, BaseKernel kernel not None):
        """Play with ``kernel`` from now on (a learner's ``_before_block`` may
        replace its kernel); the journal is attached to it."""
        kernel.set_journal(self.journal)
        self.kernel = kernel
        self.memo = False

    def forget(self):
        """Drop the last ``act``'s record: the next ``learn`` calls ``act``
        again (a learner's hook is about to run, and may change what ``act``
        would return or what it left in the kernel)."""
        self.memo = False

    @property
    def queued(self):
        """Pairs drawn and not consumed by a learned round yet."""
        return self.count

    # ------------------------------------------------------------- the row
    def bind(self, x):
        """Point the next round at ``x`` when it is one row in the common form
        and return True: a native float64 C-contiguous ``ndarray`` of shape
        ``(d,)`` or ``(1, d)``, or a ``csr_matrix``/``csr_array`` of shape
        ``(1, d)`` with float64 values and int32 index arrays whose column
        indices are in ``[0, d)`` and strictly increasing; every value finite
        and within ``bound``. Else False, with nothing bound: the caller
        validates ``x`` the general way (which converts it or raises the error
        naming its problem) and binds the result."""
        cdef cnp.ndarray arr
        cdef const int* ind
        cdef const int* ptr
        cdef Py_ssize_t nnz
        cdef int bad = 0
        cdef const double* val
        if type(x) is np.ndarray:
            arr = <cnp.ndarray>x
            if cnp.PyArray_NDIM(arr) == 2:
                if cnp.PyArray_DIMS(arr)[0] != 1 or not exact_array(x, 2, cnp.NPY_DOUBLE):
                    return False
            elif not exact_array(x, 1, cnp.NPY_DOUBLE):
                return False
            if cnp.PyArray_SIZE(arr) != self.d:
                return False
            val = <const double*>cnp.PyArray_DATA(arr)
            self.held = x
            self.raw = val
            self.same_raw = False
            if (self.memo and self.mraw_ok and self.d > 0
                    and memcmp(val, &self.mraw[0], self.d * sizeof(double)) == 0):
                # the values the kept ``act`` read, bit for bit: checked then,
                # and their compaction is still in cval/cind (a bind that
                # writes those drops the record, below)
                self.x.val, self.x.ind, self.x.nnz = val, NULL, self.d
                if not self.mdense:
                    self.x.val, self.x.ind = &self.cval[0], &self.cind[0]
                    self.x.nnz = self.mnnz
                self.same_raw = True
                return True
            if not skb_within_bound(val, self.d, self.bound):
                self.held = None
                self.raw = NULL
                return False
            self.memo = False  # (cval/cind are rewritten)
            self.x.val = val
            self.x.ind = NULL
            self.x.nnz = self.d
            self.x = compact_dense(self.x, &self.cind[0], &self.cval[0])
            return True
        if type(x) is not csr_matrix and type(x) is not csr_array:
            return False
        self.raw = NULL
        self.same_raw = False
        if x.shape != (1, self.d):
            return False
        data, indices, indptr = x.data, x.indices, x.indptr
        if not (exact_array(data, 1, cnp.NPY_DOUBLE) and exact_array(indices, 1, cnp.NPY_INT32)
                and exact_array(indptr, 1, cnp.NPY_INT32)):
            return False
        nnz = cnp.PyArray_DIMS(<cnp.ndarray>data)[0]
        ptr = <const int*>cnp.PyArray_DATA(<cnp.ndarray>indptr)
        if (cnp.PyArray_DIMS(<cnp.ndarray>indptr)[0] != 2 or ptr[0] != 0
                or ptr[1] != nnz
                or cnp.PyArray_DIMS(<cnp.ndarray>indices)[0] != nnz):
            return False
        ind = <const int*>cnp.PyArray_DATA(<cnp.ndarray>indices)
        if nnz > 0:
            # strictly increasing (no descent) and every index in [0, d)
            if skb_scan_indices_i32(ind, nnz, self.d, &bad) != 0 or bad:
                return False
            if not skb_within_bound(<const double*>cnp.PyArray_DATA(
                    <cnp.ndarray>data), nnz, self.bound):
                return False
            self.x.val = <const double*>cnp.PyArray_DATA(<cnp.ndarray>data)
            self.x.ind = ind
        else:
            self.x.val = NULL
            self.x.ind = &_EMPTY_INDEX
        self.x.nnz = <int>nnz
        self.held = x
        return True

    # ----------------------------------------------------------- the pairs
    cdef inline void _draw(self, double* u1, double* u2) noexcept:
        u1[0] = self.rng.next_double(self.rng.state)
        u2[0] = self.rng.next_double(self.rng.state)

    cdef void _push(self, double u1, double u2):
        """Append a pair to the queue (grown when full)."""
        cdef Py_ssize_t cap = self.pairs.shape[0], i
        cdef double[:, ::1] grown
        if self.count == cap:
            grown = np.empty((2 * cap, 2), dtype=np.float64)
            for i in range(self.count):
                grown[i, 0] = self.pairs[(self.head + i) % cap, 0]
                grown[i, 1] = self.pairs[(self.head + i) % cap, 1]
            self.pairs = grown
            self.head = 0
            cap = 2 * cap
        i = (self.head + self.count) % cap
        self.pairs[i, 0] = u1
        self.pairs[i, 1] = u2
        self.count += 1

    def prefetch_pairs(self, Py_ssize_t n):
        """Draw the pairs of ``n`` rows served before the session (a learner's
        ``n_pending_``) into the queue, as served."""
        cdef double u1, u2
        for _ in range(n):
            self._draw(&u1, &u2)
            self._push(u1, u2)
        self.served += n

    # ----------------------------------------------------------- the rounds
    def act(self, long long t):
        """``run_act``'s round on the bound row at round ``t``: the drawn
        action code (its propensity to ``propensity``), or -1 with
        ``kernel.status`` set. The row's pair is the first queued pair not
        served yet, drawn now when there is none; it stays queued for
        ``learn``."""
        cdef BaseKernel kernel = self.kernel
        cdef Py_ssize_t cap = self.pairs.shape[0], i
        cdef double u1, u2
        if self.held is None:
            raise RuntimeError("LiveRound: no row is bound")
        held = self.held  # (alive while the round and ``_keep`` read its entries)
        self.held = None
        self.memo = False
        if self.served == self.count:
            self._draw(&u1, &u2)
            self._push(u1, u2)
        i = (self.head + self.served) % cap
        u1, u2 = self.pairs[i, 0], self.pairs[i, 1]
        if not act_round(kernel, self.x, t, u1, u2, &self.acted):
            return -1
        self._keep(t, u1, u2)
        del held
        self.served += 1
        self.propensity = self.acted.marginal
        return self.acted.action

    cdef void _keep(self, long long t, double u1, double u2) noexcept:
        # the record of the ``act`` just played (``_acted_on``)
        cdef Row x = self.x
        self.mt, self.mu1, self.mu2 = t, u1, u2
        self.mnnz = x.nnz
        self.mdense = x.ind == NULL
        self.mraw_ok = self.raw != NULL and self.d > 0
        if self.mraw_ok:  # (a dense row: its values, compacted or not)
            memcpy(&self.mraw[0], self.raw, self.d * sizeof(double))
        elif x.nnz > 0:  # (a CSR row: its entries)
            memcpy(&self.mval[0], x.val, x.nnz * sizeof(double))
            if not self.mdense:
                memcpy(&self.mind[0], x.ind, x.nnz * sizeof(int))
        self.memo = True

    cdef bint _acted_on(self, long long t, double u1, double u2) noexcept:
        """Whether the kernel's last call was ``act`` on the bound row (the
        same entries, compared bit for bit: a dense row's values by ``bind``)
        at round ``t`` with the pair ``(u1, u2)``: ``learn`` then reuses what
        it returned. Every other
        call that may reach the kernel drops the record first (``act``,
        ``learn``, ``unlearn``, ``set_kernel``, ``forget``), and the kernel is
        the session's own, so the state and what ``act`` left in the kernel
        are as ``act`` left them."""
        cdef Row x = self.x
        if not self.memo or t != self.mt or u1 != self.mu1 or u2 != self.mu2:
            return False
        if self.mraw_ok:  # (a dense row: compared by ``bind``)
            return self.same_raw
        if self.raw != NULL or x.nnz != self.mnnz or (x.ind == NULL) != self.mdense:
            return False
        if x.nnz == 0:
            return True
        if memcmp(&self.mval[0], x.val, x.nnz * sizeof(double)) != 0:
            return False
        return self.mdense or memcmp(&self.mind[0], x.ind, x.nnz * sizeof(int)) == 0

    def learn(self, long long t, int action, double reward, double propensity):
        """``run_logged``'s round on the bound row at round ``t`` with the
        logged action code, reward and propensity, the kernel's journal
        recording its writes: True when played (the round's greedy label,
        whether it was the learner's own draw and its counts to ``greedy``,
        ``own``, ``wrong`` and ``revealed``), False
        with ``kernel.status`` set (the journal then holds what to undo:
        ``unlearn``). The pair is the oldest queued one, drawn now when none
        is queued. When the kernel's last call was ``act`` on this row at
        round ``t`` with that pair (``_acted_on``: the live loop's act, then
        learn), what it returned is used and ``act`` is not called again."""
        cdef BaseKernel kernel = self.kernel
        cdef Py_ssize_t cap
        cdef int g = 0
        cdef signed char own = 0
        cdef bint done, reuse, right, same
        if self.held is None:
            raise RuntimeError("LiveRound: no row is bound")
        held = self.held  # (alive while the round reads its entries)
        self.held = None
        self.from_queue = self.count > 0
        if self.from_queue:
            cap = self.pairs.shape[0]
            self.u1 = self.pairs[self.head, 0]
            self.u2 = self.pairs[self.head, 1]
            self.head = (self.head + 1) % cap
            self.count -= 1
            self.was_served = self.served > 0
            if self.was_served:
                self.served -= 1
        else:
            self._draw(&self.u1, &self.u2)
            self.was_served = False
        reuse = self._acted_on(t, self.u1, self.u2)
        self.memo = False
        done = logged_round(kernel, kernel.jd, self.x, t, self.u1, self.u2,
                            action, reward, propensity,
                            kernel.journal_bound_ll(),
                            &self.acted if reuse else NULL, &g, &own)
        del held
        kernel.rows_played = 1 if done else 0
        self.greedy = g
        self.own = own != 0
        right = reward == 1.0
        same = action == g
        self.wrong = 0 if right else 1
        self.revealed = ((same != right) if self.binary else (same and not right))
        return done and kernel.status == STATUS_OK

    def unlearn(self):
        """Undo the last ``learn``: the journal replayed backwards (the
        kernel's writes), the kernel's status reset, and its pair put back at
        the head of the queue (served if it was), so that the next round draws
        what it would have drawn."""
        cdef Py_ssize_t cap = self.pairs.shape[0]
        self.memo = False
        self.journal.undo()
        self.kernel.status = STATUS_OK
        if self.count == cap:
            self._push(0.0, 0.0)  # (grow; the slot is overwritten below)
            self.count -= 1
            cap = self.pairs.shape[0]
        self.head = (self.head - 1 + cap) % cap
        self.pairs[self.head, 0] = self.u1
        self.pairs[self.head, 1] = self.u2
        self.count += 1
        if self.was_served:
            self.served += 1

