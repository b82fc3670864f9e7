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
    sparse-structure, canonical-order, magnitude and finiteness checks, the
    test of rows already in that form (``_common_form``), and
    ``_kernel_arrays`` (the ``(data, indices, indptr, dense)`` view the
    compiled drivers take).
``_validation``
    ``InputValidationMixin``: input validation and label encoding —
    ``_validate_X`` (rows in the common form accepted as they are),
    ``_check_rows`` (a learner's row hook), ``_validate_params_cached``, the
    classes (``_check_classes``, ``_check_same_classes``), labels and logged
    actions as codes (``_one_label_code``, ``_scalar_code``, ``_check_logged``).
``_state``
    ``StateMixin``: the state protocol — ``_get_state``/``_set_state``,
    ``_reset`` (a new state), ``_rollback_point``/``_restore_point``,
    ``_model_bytes``, ``_state_finite``, ``_own_state_arrays``; the
    generator's snapshot (``_rng_snapshot``/``_rng_restore``: its
    ``bit_generator.state``); ``set_params`` and ``_check_unlocked`` (the lock
    of an open ``skbandit.LiveSession``).
``_transaction``
    ``TransactionMixin`` (a ``StateMixin``): the pass transaction and the
    failure guarantee — ``_transaction`` (a call), ``_play_blocks`` (the block
    loop over a pass object: undo journal, copy mode, early block ends,
    rollback), ``_kernel`` (the kernel kept across calls, ``_kernel_key``),
    ``_raise_kernel_status``.
``_training``
    ``TrainingMixin`` (a ``TransactionMixin``): ``fit``, ``partial_fit`` and
    ``_play``, a pass over labelled rows (``_LabelPass``: ``run_pass``).
``_acting``
    ``ActingMixin`` (a ``TransactionMixin``): acting (``sample_actions``, the
    serving cursor ``n_pending_``, ``_peek_uniforms``) and logged learning
    (``_partial_fit_logged``, ``_fit_logged``, ``_play_logged`` with
    ``_LoggedPass``: ``run_logged``, the ``OffPolicyWarning``).
``_scoring``
    ``ScoringMixin``: ``decision_function``, ``predict``,
    ``exploration_distribution`` (``run_distribution``).
``_stacklevel``
    ``_caller_stacklevel``: warnings point at the caller's line.
``_checks`` (compiled)
    The checks every training call makes, in C: the kernel cache's identity
    key (``kernel_key``, ``key_holds``), the parameters' identity check
    (``same_entries``), a rollback point's record (``rollback_record``), the
    state arrays' bytes (``array_bytes``) and the tests of dense and CSR rows
    already in the common form (``dense_common_form``, ``csr_common_form``).

Dependencies run one way: ``_checks`` and ``_stacklevel`` import nothing of
the skeleton; ``_rows`` imports ``_checks``; ``_validation`` imports ``_rows``;
the mixins import those (and ``_state`` its counters and generator snapshot);
``skbandit.base`` imports the mixins. Nothing here imports ``skbandit.base``.
Module-level settings live where they are used (a test patches them there):
``_rows._MAX_ABS_X``,
``_transaction._BLOCK_ROWS``, ``_transaction._COPY_RATIO``,
``_transaction.Journal``, ``_validation.validate_data``.
"""
