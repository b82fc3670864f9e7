"""The parts of the estimator skeleton ``skbandit.base.BaseBanditClassifier``.

One module per responsibility; ``BaseBanditClassifier`` (``skbandit/base.py``:
the parameters, the hooks a learner implements, the tags) is composed of the
mixins below, which define disjoint sets of names. Method resolution order:
``BaseBanditClassifier``, ``ClassifierMixin``, ``ScoringMixin``,
``ActingMixin``, ``TrainingMixin``, ``TransactionMixin``, ``StateMixin``,
``InputValidationMixin``, ``BaseEstimator``.

Module map
----------
``_rows``
    The one row form every kernel reads (float64, finite, ``|x| <= 2**480``,
    dense C-ordered or canonical CSR): the magnitude bound ``_MAX_ABS_X``, the
    sparse-structure, canonical-order, magnitude and finiteness checks, the lean
    row test ``_lean_rows_ok`` (the compiled ``lean_rows``), and
    ``_kernel_arrays`` (the ``(data, indices, indptr, dense)`` view the
    compiled drivers take).
``_validation``
    ``InputValidationMixin``: input validation and label encoding —
    ``_validate_X`` (the full path), ``_rows_fast`` (the lean path),
    ``_lean_rows_allowed`` (may a learner's rows skip ``_validate_X``),
    ``_check_rows`` (a learner's row hook), ``_validate_params_cached``, the
    classes (``_check_classes``, ``_check_same_classes``), labels and logged
    actions as codes (``_lean_label_code``, ``_scalar_code``, ``_check_logged``).
``_state``
    ``StateMixin``: the state protocol — ``_get_state``/``_set_state``,
    ``_reset`` (a new state), ``_rollback_point``/``_restore_point`` (and
    ``_RollbackPlan``, the same record read by one compiled loop for a
    one-row call), ``_model_bytes``, ``_state_finite``, ``_own_state_arrays``; the
    generator's exact snapshot (``_rng_snapshot``/``_rng_restore``: the raw
    bytes of a ``PCG64``, verified once against its ``state`` property).
``_transaction``
    ``TransactionMixin``: the pass transaction and the failure guarantee —
    ``_transaction`` (a call; ``_one_row_failed``, a one-row call's, without
    copying the instance dictionary), ``_play_blocks`` (the block loop over a
    pass object: undo journal, copy mode, early block ends, rollback), the
    kernel cache (``_kernel``, ``_cached_kernel``, ``_lean_kernel`` (a one-row
    call's parameter check), ``_cache_key``/``_cache_slots``: the compiled
    ``Slots`` of what a kernel is built from, ``__getstate__``), ``_one_row``
    and ``_one_row_calls`` (the compiled one-row calls, ``OneRow``, kept with
    the cached kernel), ``_raise_kernel_status``.
``_training``
    ``TrainingMixin``: ``fit``, ``partial_fit`` (the full path, and the lean
    path of a fitted learner: one row or a chunk) and ``_play``, a pass over
    labelled rows (``_LabelPass``: ``run_pass``, or one row through
    ``OneRow.learn_label``, the same compiled round).
``_acting``
    ``ActingMixin``: live acting (``sample_actions``, the serving cursor
    ``n_pending_``, ``_peek_uniforms``; one row through ``OneRow.act``) and
    logged learning
    (``_partial_fit_logged``, ``_fit_logged``, ``_play_logged`` with
    ``_LoggedPass``: ``run_logged`` or ``OneRow.learn_logged``, the
    ``OffPolicyWarning``).
``_scoring``
    ``ScoringMixin``: ``decision_function``, ``predict``,
    ``exploration_distribution`` (``run_distribution``).
``_stacklevel``
    ``_caller_stacklevel``: warnings point at the caller's line.

Dependencies run one way: ``_rows`` and ``_stacklevel`` import nothing of the
skeleton; ``_validation`` imports ``_rows``; the mixins import those two (and
``_state`` its counters and generator snapshot); ``skbandit.base`` imports the
mixins. Nothing here imports ``skbandit.base``. Module-level settings live
where they are used (a test patches them there): ``_rows._MAX_ABS_X``,
``_transaction._BLOCK_ROWS``, ``_transaction._COPY_RATIO``,
``_transaction.Journal``, ``_validation.validate_data``.
"""
