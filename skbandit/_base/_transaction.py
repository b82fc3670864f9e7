"""The pass transaction (``TransactionMixin``): blocks, journal, rollback,
kernel cache.

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
  in its cached kernel's store across calls (exported when read), journals the
  store's writes and checkpoints its scalars per block. No learner copies
  its model for rollback beyond the copy mode below (bounded by the input a
  block reads), nor doubles its memory.
* A block whose rows are many for the model's size is rolled back by a copy
  of the state instead (``_get_state`` at its start, ``_set_state`` on a
  failure, and the whole state checked finite after it), when that copy is at
  most ``1/_COPY_RATIO`` (1/16) of the bytes of input the block reads: a batch
  call on a small model then pays less than the journal's per-entry records,
  and the copy is still bounded by the work done. One-row calls, and calls on
  large models, use the journal.
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

The one-row calls
-----------------
``sample_actions(row)``, ``partial_fit(row, LoggedFeedback(...))`` and the
simulator's ``partial_fit(row, [label])`` on a fitted learner play their round
through the compiled ``OneRow`` (``skbandit._core._kernel``; ``_one_row``),
kept in the kernel cache next to the kernel it plays (so whatever makes a new
kernel makes a new one; it is made at the end of the call that made the
kernel, ``_one_row_calls``, so that the first one-row call of a stream
allocates no more than the others): the row checked and bound by one compiled
check, the uniform pair drawn from the generator's ``bitgen_t`` (its state
saved and restored as raw bytes), an undo journal reused from call to call,
and the drivers' own round bodies (``act_round``, ``logged_round``,
``label_round``: a labelled round, ``OneRow.learn_label``, is ``run_pass``'s,
for every learner; ``skbandit._base._training._LabelPass``). The call is the
same transaction: ``_play_blocks`` with ``one``, whose rollback point (the
attributes as objects, what ``_rollback_point(rng=False)`` records) is read
by one compiled loop
(``skbandit._base._state._RollbackPlan``, kept in the cache with the
``OneRow``). The cache's validity is one compiled comparison (``Slots``,
``_cache_slots``), made on every call: nothing is assumed about what a caller
did between two calls (``set_params``, a replaced array, ...).

A one-row call of a fitted learner does not copy the instance dictionary as
``_transaction`` does: it plays at most one block, and outside that block's
rollback point it writes only ``n_iter_`` and caches, so ``partial_fit``
records ``t_`` and ``n_iter_`` and ``_one_row_failed`` puts ``n_iter_`` back
when the block did not finish (``t_`` unmoved). The pass is one object
(``_LabelPass``, ``_LoggedPass``) rather than four closures. Such a call
allocates about 1 KiB of Python objects in all (``benchmarks/bench_memory.py``;
docs/performance.md). One difference with ``_transaction``: a flag a hook sets
inside the block and outside the rollback point (``Gaptron``'s warn-once
``_x_norm_warned``) stays set if the block then fails in its commit (an
interrupt), as it does after a finished block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from skbandit._base import _rows, _state
from skbandit._base._rows import _input_bytes
from skbandit._base._state import _rng_restore, _RollbackPlan
from skbandit._core._kernel import (
    DISTRIBUTION_TOL,
    SLOT_ATTR,
    SLOT_CLASS_ATTR,
    Journal,
    KernelStatus,
    OneRow,
    Slots,
)
from skbandit.feedback import MIN_PROPENSITY

# Rows per call of the compiled pass driver. Uniforms are drawn per block so
# memory stays bounded on long streams; the generator yields the same stream
# of numbers whatever the block size, so results do not depend on it.
_BLOCK_ROWS = 1 << 16

# A block is rolled back by a copy of the state (not the undo journal) when
# the copy is at most 1/_COPY_RATIO of the bytes of input the block reads
# (module docstring, The failure guarantee).
_COPY_RATIO = 16

# The class attributes in a kernel's key (``_cache_slots``).
_CLASS_SLOTS = (
    "_make_kernel",
    "_parameter_constraints",
    "_state_attrs",
    "_rollback_point",
    "_restore_point",
)

STATUS_NONFINITE = int(KernelStatus.STATUS_NONFINITE)
STATUS_INVALID_DISTRIBUTION = int(KernelStatus.STATUS_INVALID_DISTRIBUTION)
STATUS_JOURNAL_ERROR = int(KernelStatus.STATUS_JOURNAL_ERROR)


class TransactionMixin:
    """Calls under the failure guarantee, played block by block with the
    cached kernel."""

    if TYPE_CHECKING:  # what it uses of the skeleton (skbandit.base)
        _parameter_constraints: dict
        _state_attrs: tuple[str, ...]
        _rng: np.random.Generator
        n_features_in_: int
        classes_: np.ndarray

        def _make_kernel(self): ...
        def _param_slots(self, owner=None) -> list[tuple]: ...
        def _lean_rows_allowed(self) -> bool: ...
        def _check_rows(self, X) -> None: ...
        def _scalar_code(self, action, classes: np.ndarray): ...

    def _transaction(self, method, *args):
        """Run ``method`` under the failure guarantee (module docstring).

        ``_play`` rolls a failed block back and counts finished blocks in
        ``_blocks_done``; if none finished, every attribute is restored here
        (this undoes what validation records on a first call, such as
        ``n_features_in_``, and a ``fit`` that had replaced the state).
        """
        saved = dict(self.__dict__)
        self._blocks_done = 0
        try:
            return method(*args)
        except BaseException:
            if self._blocks_done == 0:
                self.__dict__.clear()
                self.__dict__.update(saved)
            # the cached kernel may hold values derived from writes the journal
            # undid (``_kernel``): the next call builds a new one
            self.__dict__.pop("_kernel_cache", None)
            raise
        finally:
            self.__dict__.pop("_blocks_done", None)

    def _one_row_failed(self, t0, n_iter) -> None:
        """The failure path of a one-row call of a fitted learner (the lean
        one-row paths ``partial_fit(row, [label])`` and ``partial_fit(row,
        LoggedFeedback(...))``, whose transaction ``partial_fit`` writes out):
        ``_transaction``'s, without a copy of the instance dictionary.

        Such a call plays at most one block, whose rollback point
        (``_play_blocks``) restores the state attributes, counters and
        generator, and whose pass restores the log or the serving cursor;
        outside it the call writes only ``n_iter_`` (and caches that stay
        valid whatever happens: code tables, validated parameters; the kernel
        cache is dropped here as ``_transaction`` drops it). So the block had
        finished exactly when ``t_`` moved from ``t0`` (its commit adds 1, its
        rollback restores it); if it had not, ``n_iter_`` is set back to
        ``n_iter`` (None: it was not set, as after a first ``sample_actions``;
        a set ``n_iter_`` is an int) and the learner is as before the call.
        O(1), nothing copied.
        """
        d = self.__dict__
        if d.get("t_") == t0:  # no block finished
            if n_iter is None:
                d.pop("n_iter_", None)
            else:
                d["n_iter_"] = n_iter
        d.pop("_kernel_cache", None)

    def _play_blocks(self, X, rows, play, logged=False, cached=None, one=None):
        """The block loop of every training pass, under the failure guarantee
        (module docstring).

        ``play`` is the pass (``_training._LabelPass``, ``_acting._LoggedPass``;
        one object per call, its methods bound on use: no closures). For each
        block of at most ``_BLOCK_ROWS`` rounds: ``play.begin()``, draw the
        uniforms, ``play.run(kernel, block, uniforms) -> (done, outputs)``
        plays it with the call's undo journal attached to the kernel, then
        ``_after_block`` and ``play.commit(block, outputs)`` (counters, log)
        for the ``done`` rounds played, and the journal is committed. A kernel that
        stops early with status 0 (its journal reached its limit) ends a
        shorter block: the generator is set back to after that block's draws.
        On any failure the journal is replayed backwards (the kernels' writes
        undone), the attributes, counters and generator are set back to the
        block's start, then ``play.rollback()`` (e.g. truncate the log). Per block
        this costs O(entries written + k); in the copy mode (module docstring)
        O(model), at most 1/_COPY_RATIO of the block's input. ``cached`` is
        ``_kernel()``'s answer when the caller has it (``_lean_kernel``).

        ``one``: the ``OneRow`` of a one-row call (``_one_row``), bound to X's
        row and the generator. The same loop, with its journal (kept from call
        to call) instead of a new one, its raw copy of the generator's state
        instead of the rollback point's, and the uniforms drawn into it
        (``play.run`` then plays with ``one``, getting ``uniforms=None``).

        A finished block is counted in ``_blocks_done`` when the call is a
        ``_transaction`` (a one-row call counts nothing: ``_one_row_failed``).
        """
        kernel, model_bytes = self._kernel() if cached is None else cached
        if logged and kernel.full_information:
            raise TypeError(
                f"{type(self).__name__} is a full-information learner: it learns "
                "from the true labels and cannot learn from LoggedFeedback."
            )
        # a block is rolled back by a copy of the state instead of the journal
        # when the copy is at most 1/_COPY_RATIO of the input the block reads
        # (batch calls on small models: the copy is then cheaper than journaling)
        if one is None:
            journal = Journal(self._journal_limit(model_bytes))
            may_copy = model_bytes * _COPY_RATIO <= _input_bytes(X, None)
        else:  # one row (one block): the journal, the row's size and the
            # rollback plan are one's
            journal = one.journal
            plan = self._rollback_plan(one)
            may_copy = model_bytes * _COPY_RATIO <= one.row_bytes
        # rows per block: _BLOCK_ROWS, or after a block the journal ended early
        # twice its rows (doubling again after a full one), so that a call
        # whose rows write much does not draw uniforms for rows it cannot play
        start, total, size = 0, rows.shape[0], _BLOCK_ROWS
        while start < total:
            # (a call of one block plays ``rows`` itself: no view per call)
            whole = start == 0 and total <= size
            block = rows if whole else rows[start : start + size]
            n = block.shape[0]
            if one is None:
                point = self._rollback_point()
            else:
                point = plan.record(self)
                one.save_generator()
            copy = may_copy and (
                one is not None  # (its one block is the whole input)
                or model_bytes * _COPY_RATIO <= _input_bytes(X, block)
            )
            saved = self._get_state() if copy else None
            try:
                play.begin()
                kernel = self._before_block(kernel, n)
                kernel.set_journal(None if copy else journal)
                if one is None:
                    uniforms = self._rng.random((n, 2))
                else:
                    uniforms = one.draw()  # None: the pair is one's
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
                    # (not with one row: a driver stops before its only round
                    # only with a status set, raised above)
                    block, n = block[:done], done
                    if one is not None:
                        one.restore_generator()
                    else:
                        _rng_restore(self._rng, point[0]["_rng"])
                    self._rng.random((n, 2))
                self._after_block(kernel)
                play.commit(block, out)
                journal.commit()
            except BaseException:
                kernel.status = 0
                journal.undo()
                if one is None:
                    self._restore_point(point)
                else:
                    plan.restore(self, point)
                    one.restore_generator()
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
        if one is None:
            # a fitted learner is ready for one-row calls: their ``OneRow`` and
            # rollback plan are made at the end of the call that made the
            # kernel, once per kernel (O(number of slots)), not by the first
            # one-row call of a stream, which then allocates what any other
            # does; its journal takes the buffers this call's releases
            del journal
            cache = self.__dict__.get("_kernel_cache")
            if cache is not None and len(cache) == 3 and cache[0].unchanged(self):
                self._one_row_calls(cache[1:3])

    def _journal_limit(self, model_bytes: int) -> int:
        """Entries the undo journal holds before a block ends early: 1/32 of
        the model's entries (``model_bytes`` of state arrays; the journal
        stores 16 bytes per entry: about 6 % of the model's memory), at least
        2**16 (1 MiB)."""
        return max(1 << 16, model_bytes // (8 * 32))

    def _kernel(self):
        """``(kernel, model_bytes)``: the kernel wrapping the current state
        arrays (made writeable and C-contiguous) and the bytes of those arrays.

        Cached across calls (``_kernel_cache``), which a one-row call would
        otherwise spend much of its time rebuilding. A kernel is built from the
        parameters and the state attributes alone (the slots ``_cache_slots``
        lists, a meta-learner's candidates' included) and updates the arrays in
        place, so it stays valid while every one of those slots holds the same
        object (its key, compiled ``Slots``: compared by identity in one loop
        without a Python call, O(number of slots), about 0.6 us for the
        default selector's 99): ``set_params``, a hook or a restore that
        replaces an array or a scalar, a new ``fit``, all make a new kernel.
        A kernel may keep values derived from the arrays it wraps and update
        them with its own writes (SquareCB's per-class exploration from
        ``n_updates_``), so only the learner's kernel may write the arrays
        while it is cached: ``_set_state``, which writes them in place, drops
        the cache, and so does a call that fails (``_transaction``; its
        derived values may hold what the journal undid), and pickling and
        copying (``__getstate__``). ``exploration_distribution``,
        not on the live loop, builds its own kernel.
        """
        cached = self._cached_kernel()
        if cached is not None:
            return cached
        self._own_state_arrays()
        kernel = self._make_kernel()
        key = self._cache_key()  # the arrays _own_state_arrays may have replaced
        model_bytes = self._model_bytes()
        self._kernel_cache = (key, kernel, model_bytes)
        return kernel, model_bytes

    def _cached_kernel(self):
        """``(kernel, model_bytes)`` of the cache when it is valid for the
        current objects (``_kernel``: every slot of its key holds the object
        it held when the kernel was built), else None."""
        cache = self.__dict__.get("_kernel_cache")
        if cache is not None and cache[0].unchanged(self):
            return cache[1], cache[2]
        return None

    def _one_row(self, X, cached):
        """The compiled one-row calls (``skbandit._core._kernel.OneRow``) of
        the cached kernel, bound to X's row and the learner's generator, or
        None (the caller takes the general path, which validates X, raises
        its errors and plays any other input). ``cached``: ``_lean_kernel``'s
        answer.

        Taken when the kernel cache is valid (``cached``; the ``OneRow`` is
        kept in the cache, so whatever drops or replaces the kernel drops it),
        the learner may skip ``_validate_X`` (``_lean_rows_allowed``), X is
        one row in the common form (``OneRow.bind_row``: the compiled check
        of ``_rows_fast``, then the learner's ``_check_rows`` as on every
        path) and the generator is a ``PCG64`` of the verified layout
        (``OneRow.bind_generator``)."""
        if cached is None or not self._lean_rows_allowed():
            return None
        one = self._one_row_calls(cached)
        if not (
            one.bind_generator(self._rng, _state._PCG64_RAW_SIZE)
            and one.bind_row(X, self.n_features_in_, _rows._MAX_ABS_X)
        ):
            return None
        self._check_rows(X)
        return one

    def _one_row_calls(self, cached):
        """The ``OneRow`` kept in the kernel cache with its rollback plan
        (``_one_row``), made now if the cache has none, with the table of
        class codes a one-row call reads its label or action in
        (``_scalar_code``; O(k), kept until the classes change). ``cached``:
        the valid cache's ``(kernel, model_bytes)``."""
        cache = self.__dict__["_kernel_cache"]  # valid: ``cached`` is from it
        if len(cache) > 3:
            return cache[3]
        classes = self.classes_
        self._scalar_code(classes[0], classes)  # (makes the table)
        one = OneRow(cached[0], Journal(self._journal_limit(cached[1])))
        # the rollback point's plan: built from the learners and their
        # classes' declarations, which the key watches (``_cache_slots``)
        self._kernel_cache = (*cache[:3], one, _RollbackPlan(self))
        return one

    def _lean_kernel(self):
        """The parameters' check of a lean one-row call on a fitted learner,
        and the cached kernel when valid (to pass on to ``_play_blocks`` or
        ``_act``), else None (the caller builds it, after validating its input).

        A valid cached kernel means the parameter objects are those it was
        built with (their slots, ``_param_slots``, are part of its key), and
        every kernel is built after its call validated them: then
        ``_validate_params_cached`` has nothing to check and is skipped, and the
        call compares the slots once instead of twice."""
        cached = self._cached_kernel()
        if cached is None:
            self._validate_params_cached()
        return cached

    def _rollback_plan(self, one):
        """The ``_RollbackPlan`` kept with ``one`` in the kernel cache
        (``_one_row``), or a new one (built from the current objects)."""
        cache = self.__dict__.get("_kernel_cache")
        if cache is not None and len(cache) > 4 and cache[3] is one:
            return cache[4]
        return _RollbackPlan(self)

    def _cache_key(self) -> Slots:
        """The key of a kernel built now (``_kernel``): the compiled ``Slots``
        of ``_cache_slots``, holding the objects they hold now."""
        return Slots(self._cache_slots(), self)

    def _cache_slots(self, owner=None) -> list[tuple]:
        """The slots (``skbandit._core._kernel.Slots``) of the objects a kernel
        and what is cached with it (``OneRow``, ``_RollbackPlan``) are built
        from: the class's factory ``_make_kernel`` (a test may replace it) and
        the declarations the slots and the rollback plan are derived from
        (``_parameter_constraints``, ``_state_attrs``, the rollback point's
        methods), the parameters (``_param_slots``: a rule's own parameters
        too) and the state attributes; a meta-learner adds its candidates'.
        Everything the list itself is derived from is in it, so while every
        slot holds the same object the list, the kernel and the plan are what
        they would be if built anew. ``owner``: as in ``_param_slots``."""
        return [
            *[(SLOT_CLASS_ATTR, owner, name) for name in _CLASS_SLOTS],
            *self._param_slots(owner),
            *[(SLOT_ATTR, owner, name) for name in self._state_attrs],
        ]

    def __getstate__(self):
        # the cached kernel (a compiled object wrapping the state arrays) is
        # not part of the learner: a copy or an unpickled learner builds its own
        # (scikit-learn's __getstate__ may return the instance's own __dict__)
        state = dict(super().__getstate__())
        state.pop("_kernel_cache", None)
        state.pop("_validated_params", None)  # (compiled slots: validated anew)
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
