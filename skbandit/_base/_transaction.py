"""The pass transaction (``TransactionMixin``): blocks, journal, rollback.

The failure guarantee
---------------------
* A call that fails validation (bad input or parameters) changes nothing.
* Rows are played in blocks of at most ``_BLOCK_ROWS``. A failure or interrupt
  while a block is played (including the non-finite check below) restores the
  learner, counters, generator and feedback log to their values after the last
  finished block; if no block of the call had finished, the learner is exactly
  as before the call (a failed first call leaves it unfitted).
* Rollback costs what the block did, not the model's size. Every kernel
  records the address and old value of each state entry before it writes it,
  in an undo journal shared by all kernels of the call
  (``skbandit._core._kernel.Journal``; a selector's candidates write to the
  same one). A failed block is undone by replaying the journal backwards (bit
  for bit); the attributes themselves (arrays by reference, scalars), the
  counters and the generator are restored from a record of O(number of
  attributes) taken at the block's start. ``SOBA(covariance="full")`` does not
  journal its (kd)^2 inverse: its rank-one updates stay pending until the block
  is committed; the rational-kernel ``SeparableOneVsAll`` keeps its support set
  in its kernel's store across calls (exported when read), journals the
  store's writes and checkpoints its scalars per block. No learner copies
  its model for rollback beyond the copy mode below (bounded by the input a
  block reads), nor doubles its memory.
* A block whose rows are many for the model's size is rolled back by a copy
  of the state instead (``_get_state`` at its start, ``_set_state`` on a
  failure, and the whole state checked finite after it), when that copy is at
  most ``1/_COPY_RATIO`` (1/16) of the block's work: the bytes of input it
  reads plus the bytes its journal may record (16 an entry, the kernel's
  ``journal_bound`` of a row of the block's mean number of stored entries,
  for each row; ``_block_work``). A batch call on a small model, or on a
  model whose rounds write much more than their rows hold (the random
  features of a ``BanditPipeline``: ``D`` weights written from ``d``
  features), then pays less than the journal's per-entry records, and the
  copy is still bounded by the work done. One-row calls and calls on large
  models use the journal.
* The journal holds at most ``_journal_limit()`` entries (1/32 of the model's,
  at least 2**16) past a row boundary: the pass then ends the block early,
  after that row, and the next block starts there (the generator is set back
  to after the rows played). Blocks are thus at most ``_BLOCK_ROWS`` rows, and
  fewer on a long call whose rows write much; where they end changes nothing
  but the point a failure rolls back to.
* Before each row the pass driver reserves in the journal the entries the
  row may record (the kernel's ``journal_bound``: an upper bound from the
  row's stored entries). A journal that cannot grow (out of memory) thus
  stops the pass before the row writes anything, and the ``MemoryError`` it
  raises comes with the same rollback: no write is ever made unrecorded. The
  buffers grow from that first reservation, doubling, up to the limit plus
  one row: a call's journal is proportional to what it writes.
* After each row the state entries it wrote are checked to be finite (O(what
  the row wrote); the kernel also stops at the first row whose scores are not
  finite), so an overflow raises a ``FloatingPointError`` naming its cause:
  importance weights ``1/p`` beyond ``2**32`` when the rows are logged rounds
  with propensities below the default floor (a lowered
  ``LoggedFeedback(min_propensity=...)``), else the features' scale.
* Every distribution a learner plays, logs or returns is checked to be a
  probability vector (the pass drivers check each round's, in O(k)); an
  invalid one raises a ``FloatingPointError`` naming it, with the same rollback.

The live session
----------------
``skbandit.LiveSession`` plays one row at a time without this loop: it
validates each row and feedback before any state changes and undoes a round
whose writes are not finite with the same journal (``skbandit.live``). While a
session is open the learner's training calls and ``set_params`` are refused
(``_check_unlocked``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from skbandit._base._checks import kernel_key, key_holds
from skbandit._base._rows import _input_bytes
from skbandit._base._state import StateMixin, _rng_restore
from skbandit._core._kernel import DISTRIBUTION_TOL, Journal, KernelStatus
from skbandit.feedback import MIN_PROPENSITY

# Rows per call of the compiled pass driver. Uniforms are drawn per block so
# memory stays bounded on long streams; the generator yields the same stream
# of numbers whatever the block size, so results do not depend on it.
_BLOCK_ROWS = 1 << 16

# A block is rolled back by a copy of the state (not the undo journal) when
# the copy is at most 1/_COPY_RATIO of the bytes of input the block reads
# (module docstring, The failure guarantee).
_COPY_RATIO = 16

STATUS_NONFINITE = int(KernelStatus.STATUS_NONFINITE)
STATUS_INVALID_DISTRIBUTION = int(KernelStatus.STATUS_INVALID_DISTRIBUTION)
STATUS_JOURNAL_ERROR = int(KernelStatus.STATUS_JOURNAL_ERROR)


def _block_work(kernel, X, n_rows: int, input_bytes: int) -> int:
    """The work of a block of ``n_rows`` rows of X that read ``input_bytes``:
    those bytes plus 16 (an address and a value) per journal entry its rounds
    may record, each round bounded by the kernel's ``journal_bound`` of a row
    of the block's mean number of stored entries. A one-row block counts its
    input only (a one-row call keeps the journal: a copy of the model a row
    would cost more than the row's writes)."""
    if n_rows <= 1:
        return input_bytes
    per_entry = 8 if not sp.issparse(X) else 12
    entries, entries_ll = kernel.py_journal_bound(input_bytes // (per_entry * n_rows))
    return input_bytes + 16 * (entries + entries_ll) * n_rows


class TransactionMixin(StateMixin):
    """Calls under the failure guarantee, played block by block: the state
    protocol (``StateMixin``) is what a block records and restores."""

    if TYPE_CHECKING:  # the learner's hooks (skbandit.base)

        def _make_kernel(self): ...
        def _before_block(self, kernel, n_rows: int): ...
        def _after_block(self, kernel) -> None: ...

    def _transaction(self, method, *args):
        """Run ``method`` under the failure guarantee (module docstring).

        ``_play`` rolls a failed block back and counts finished blocks in
        ``_blocks_done``; if none finished, every attribute is restored here
        (this undoes what validation records on a first call, such as
        ``n_features_in_``, and a ``fit`` that had replaced the state).
        """
        saved = self.__dict__.copy()
        self._blocks_done = 0
        try:
            return method(*args)
        except BaseException:
            if self._blocks_done == 0:
                self.__dict__.clear()
                self.__dict__.update(saved)
            # the kernel may hold values derived from writes the journal undid
            self.__dict__.pop("_kernel_cache", None)
            raise
        finally:
            self.__dict__.pop("_blocks_done", None)

    def _play_blocks(self, X, rows, play, logged=False):
        """The block loop of every training pass, under the failure guarantee
        (module docstring).

        ``play`` is the pass (``_training._LabelPass``, ``_acting._LoggedPass``;
        one object per call). For each block of at most ``_BLOCK_ROWS`` rounds:
        ``play.begin()``, draw the uniforms, ``play.run(kernel, block,
        uniforms) -> (done, outputs)`` plays it with the call's undo journal
        attached to the kernel, then ``_after_block`` and ``play.commit(block,
        outputs)`` (counters, log) for the ``done`` rounds played, and the
        journal is committed. A kernel that stops early with status 0 (its
        journal reached its limit) ends a shorter block: the generator is set
        back to after that block's draws. On any failure the journal is
        replayed backwards (the kernels' writes undone), the attributes,
        counters and generator are set back to the block's start, then
        ``play.rollback()`` (e.g. truncate the log). Per block this costs
        O(entries written + k); in the copy mode (module docstring) O(model),
        at most 1/_COPY_RATIO of the block's work (``_block_work``).

        A finished block is counted in ``_blocks_done`` when the call is a
        ``_transaction``.
        """
        kernel, model_bytes = self._kernel()
        if logged and kernel.full_information:
            raise TypeError(
                f"{type(self).__name__} is a full-information learner: it learns "
                "from the true labels and cannot learn from LoggedFeedback."
            )
        journal = Journal(self._journal_limit(model_bytes))
        # a block is rolled back by a copy of the state instead of the journal
        # when the copy is at most 1/_COPY_RATIO of the block's work (the input
        # it reads and the journal it may record; batch calls on small models,
        # or whose rounds write much: the copy is then cheaper than journaling)
        all_bytes = _input_bytes(X, None)
        may_copy = model_bytes * _COPY_RATIO <= _block_work(
            kernel, X, rows.shape[0], all_bytes
        )
        # rows per block: _BLOCK_ROWS, or after a block the journal ended early
        # twice its rows (doubling again after a full one), so that a call
        # whose rows write much does not draw uniforms for rows it cannot play
        start, total, size = 0, rows.shape[0], _BLOCK_ROWS
        while start < total:
            # (a call of one block plays ``rows`` itself: no view per call)
            whole = start == 0 and total <= size
            block = rows if whole else rows[start : start + size]
            n = block.shape[0]
            point = self._rollback_point()
            # (the rows of a pass are distinct: a block of as many rows as X
            # reads all of it, and its work is the call's, measured above)
            all_of_x = whole and n == X.shape[0]
            block_bytes = all_bytes if all_of_x else _input_bytes(X, block)
            copy = may_copy and (
                all_of_x
                or model_bytes * _COPY_RATIO <= _block_work(kernel, X, n, block_bytes)
            )
            saved = self._get_state() if copy else None
            try:
                play.begin()
                kernel = self._before_block(kernel, n)
                kernel.set_journal(None if copy else journal)
                uniforms = self._rng.random((n, 2))
                done, out = play.run(kernel, block, uniforms)
                if kernel.status != 0:
                    stop = min(done, n - 1)
                    if logged and kernel.status == STATUS_NONFINITE:
                        self._raise_weight_overflow(X, play, block[: stop + 1])
                    self._raise_kernel_status(kernel, X, row=block[stop])
                if copy and not self._state_finite():
                    if logged:
                        self._raise_weight_overflow(X, play, block)
                    self._raise_kernel_status(kernel, X, status=STATUS_NONFINITE)
                block_rows = n
                if done < n:  # the journal reached its limit: a shorter block
                    block, n = block[:done], done
                    _rng_restore(self._rng, point[0]["_rng"])
                    self._rng.random((n, 2))
                self._after_block(kernel)
                play.commit(block, out)
                journal.commit()
            except BaseException:
                kernel.status = 0
                journal.undo()
                self._restore_point(point)
                if saved is not None:
                    self._set_state(saved)  # into the block's own arrays
                play.rollback()
                raise
            start += n
            size = min(_BLOCK_ROWS, 2 * n if n < block_rows else 2 * size)
            counted = self.__dict__.get("_blocks_done")
            if counted is not None:
                self._blocks_done = counted + 1
        kernel.set_journal(None)

    def _journal_limit(self, model_bytes: int) -> int:
        """Entries the undo journal holds before a block ends early: 1/32 of
        the model's entries (``model_bytes`` of state arrays; the journal
        stores 16 bytes per entry), at least 2**16."""
        return max(1 << 16, model_bytes // (8 * 32))

    def _kernel(self):
        """``(kernel, model_bytes)``: a kernel wrapping the current state
        arrays (made writeable and contiguous in their layout first), built
        from the current parameters, and the bytes of those arrays.

        Kept from call to call (``_kernel_cache``) while what it is built from
        is the same: the objects of ``_kernel_key`` (the learner's attributes
        and the objects they hold), compared with ``is``. A kernel
        may keep values derived from the arrays it wraps and update them with
        its own writes (SquareCB's per-class exploration from ``n_updates_``),
        so the cache is dropped by whatever else writes the arrays or may leave
        them as the kernel did not: ``_set_state``, ``set_params``, a failed
        call, a ``LiveSession``, pickling and copying."""
        cache = self.__dict__.get("_kernel_cache")
        if cache is None or not key_holds(cache[0], self, _NOT_KEYED, TransactionMixin):
            self._own_state_arrays()
            kernel = self._make_kernel()
            # (the arrays _own_state_arrays may have replaced)
            cache = self._kernel_cache = (_kernel_key(self), kernel)
        # (measured on every call: a store may grow in place)
        return cache[1], self._model_bytes()

    def __getstate__(self):
        # an open live session is not part of the learner: a copy or an
        # unpickled learner is not locked (scikit-learn's __getstate__ may
        # return the instance's own __dict__)
        state = dict(super().__getstate__())
        state.pop("_live_session", None)
        state.pop("_validated_params", None)
        state.pop("_kernel_cache", None)
        return state

    def _raise_weight_overflow(self, X, play, rows) -> None:
        """Raise the ``FloatingPointError`` of an overflow while learning the
        logged ``rows`` of a ``_LoggedPass`` (``play``) when one of their
        propensities is below the default floor ``MIN_PROPENSITY`` (``2**-32``;
        possible only with a lowered ``LoggedFeedback(min_propensity=...)``):
        the rows' magnitude bound (``_rows._MAX_ABS_X``) keeps the arithmetic
        finite for importance weights ``1/p`` up to ``2**32``, so beyond it the
        weight is the cause. Returns otherwise (the features are:
        ``_raise_kernel_status``)."""
        smallest = float(np.min(play.propensities[rows]))
        if smallest >= MIN_PROPENSITY:
            return
        data = X.data if sp.issparse(X) else X
        scale = float(np.max(np.abs(data))) if data.size else 0.0
        raise FloatingPointError(
            f"{type(self).__name__}: the scores or the state became non-finite "
            "(floating-point overflow) learning logged rounds with propensities "
            f"as small as {smallest:.3g}: importance weights 1/p up to "
            f"{1.0 / smallest:.3g}, beyond the 2**32 the learners' arithmetic "
            "allows for (the features are within bounds; the largest |x| in "
            f"this call is {scale:.3g}). Keep LoggedFeedback's min_propensity at "
            "its default (2**-32) or above, or clip or drop the rounds of tiny "
            "propensities. The learner is left as after its last finished block "
            "of rows."
        )

    def _raise_kernel_status(self, kernel, X, status=None, row=None, proba=None):
        """Raise the error for a kernel's non-zero status (the caller rolls
        back). ``row`` is the index in X of the row that stopped the kernel,
        ``proba`` the invalid distribution (default: the kernel's last)."""
        status = kernel.status if status is None else status
        if status == STATUS_JOURNAL_ERROR:
            raise MemoryError(
                f"{type(self).__name__}: the undo journal of this call could not "
                "grow (out of memory); the learner is left as after its last "
                "finished block of rows."
            )
        if status == STATUS_INVALID_DISTRIBUTION:
            p = kernel.py_proba() if proba is None else proba
            where = "" if row is None else f" on row {int(row)} of X"
            with np.printoptions(precision=4, threshold=10):
                shown = str(np.asarray(p))
            raise FloatingPointError(
                f"{type(self).__name__}: its exploration distribution{where} is "
                f"not a valid probability vector (entries finite and >= 0, "
                f"summing to 1 within {DISTRIBUTION_TOL:g}): p = {shown}, sum "
                f"{float(np.sum(p)):.17g}. Its arithmetic broke down (e.g. an "
                "overflow of its exploration schedule or scores); nothing was "
                "played or logged from that distribution, and the learner is "
                "left as after its last finished block of rows."
            )
        if status == STATUS_NONFINITE:
            data = X.data if sp.issparse(X) else X
            scale = float(np.max(np.abs(data))) if data.size else 0.0
            raise FloatingPointError(
                f"{type(self).__name__}: the scores or the state became "
                f"non-finite (floating-point overflow); the largest |x| in this "
                f"call is {scale:.3g}. Scale the features, e.g. with "
                "sklearn.preprocessing.MaxAbsScaler or StandardScaler. The "
                "learner is left as after its last finished block of rows."
            )
        raise RuntimeError(f"kernel stopped with unknown status {status}")


# Attributes that change on every call and that no kernel is built from.
_NOT_KEYED = frozenset(
    {
        "t_",
        "n_mistakes_",
        "n_greedy_mistakes_",
        "n_iter_",
        "_n_pending",
        "_blocks_done",
        "_kernel_cache",
        "_validated_params",
        "_live_session",
        "_code_table",
    }
)


def _kernel_key(est) -> list:
    """What a kernel of ``est`` is built from, as the objects that hold it
    (``TransactionMixin._kernel``): the learner's class, its ``_make_kernel``,
    every entry of its instance dictionary (name and object: the parameters,
    the state, the fitted attributes) but the counters (``_NOT_KEYED``), and
    what those hold one level down: the items of a list or tuple (a
    selector's candidates, a pipeline's steps), the attributes of an object
    (an exploration rule, a transformer), a learner's own key (a candidate, a
    pipeline's learner). An entry that changes without changing the kernel
    only costs a rebuild. Compiled (``skbandit._base._checks``)."""
    return kernel_key(est, _NOT_KEYED, TransactionMixin)
