"""Training from labels (``TrainingMixin``): ``fit`` and ``partial_fit``.

``fit`` and ``partial_fit`` validate everything first, then (on a first call)
start a new state and play the rows with ``_play``, the block loop of
``skbandit._base._transaction`` with the compiled pass driver ``run_pass``.
Logged feedback passed to either is handed to ``skbandit._base._acting``;
labels on a fitted learner take the lean path (``_partial_fit_lean``: no
``_fit_context``, no ``validate_data`` for rows already in the common form, the
parameters re-validated only when one was replaced), one known label without
a ``BanditFeedback``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.validation import check_consistent_length

from skbandit._base._rows import _ONE_ROW, _kernel_arrays
from skbandit._base._validation import _check_classes, _one_code
from skbandit._core._kernel import run_pass
from skbandit.feedback import BanditFeedback, LoggedFeedback

if TYPE_CHECKING:
    from skbandit._typing import ArrayLike, MatrixLike


class TrainingMixin:
    """Learning from (simulated) bandit feedback on labelled rows."""

    if TYPE_CHECKING:  # what it uses of the skeleton (skbandit.base)

        def _transaction(self, method, *args): ...
        def _one_row_failed(self, t0, n_iter) -> None: ...
        def _lean_label_code(self, y): ...
        def _play_blocks(self, X, rows, play, logged=False, cached=None, one=None): ...
        def _lean_kernel(self): ...
        def _one_row(self, X, cached): ...
        def _partial_fit_logged(self, X, logged, classes): ...

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike | BanditFeedback) -> Self:
        """Learn from scratch: ``max_iter`` passes over (X, y) with bandit feedback.

        The classes are the distinct labels of ``y``. Each pass visits the rows
        in a random order when ``shuffle=True``, else in the given order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,), BanditFeedback or LoggedFeedback
            True labels, seen by the learner only through the reward bit; or
            logged feedback, learned instead of the learner's own plays (the
            classes are then the distinct logged actions).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._transaction(self._fit, X, y)

    def _fit(self, X, y):
        if isinstance(y, LoggedFeedback):
            return self._fit_logged(X, y)
        X, feedback, record = self._validate_fit_input(X, y, reset=True)
        classes = _check_classes(feedback._labels_for_classes())
        codes = feedback._encode(classes)
        # Everything is validated: start the new state.
        self._reset(classes, X.shape[1])
        # passes finished (a pass that fails leaves the count of those before it)
        self.n_iter_ = 0
        n = X.shape[0]
        for _ in range(self.max_iter):
            if self.shuffle:
                rows = self._rng.permutation(n).astype(np.int32)
            else:
                rows = np.arange(n, dtype=np.int32)
            self._play(X, codes, rows, feedback, record)
            self.n_iter_ += 1
        return self

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike | BanditFeedback,
        classes: ArrayLike | None = None,
    ) -> Self:
        """One pass over the rows of X, in order, with bandit feedback.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows of the stream, played in order.
        y : array-like of shape (n_samples,), BanditFeedback or LoggedFeedback
            True labels, seen by the learner only through the reward bit; or
            logged feedback (actions, rewards, propensities), from which the
            learner learns instead of playing its own actions (see
            ``sample_actions`` and ``docs/logged.md``). On a fitted learner
            (every call after the first of a stream), a float64 C-ordered
            NumPy ``X`` or a canonical CSR ``X`` takes the lean path (O(1)
            checks and compiled scans instead of scikit-learn's full
            validation; the same errors for bad input, the same play).
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream. Required on the first call, and must be
            the same (or omitted) on later calls.

        Returns
        -------
        self : object
            The updated estimator.
        """
        d = self.__dict__
        code = None
        if type(y) is LoggedFeedback:
            # Logged feedback validates its own parameters and input (the fast
            # single-row path skips scikit-learn's per-call context).
            if len(y) != 1 or "classes_" not in d:
                return self._transaction(self._partial_fit_logged, X, y, classes)
        elif "classes_" in d and not isinstance(y, LoggedFeedback):
            # A fitted learner: the lean path, for one known plain label (the
            # simulator's one-row call: a dictionary look-up instead of a
            # BanditFeedback) as for a chunk of a stream.
            code = self._lean_label_code(y)
            if code is None:
                return self._transaction(self._partial_fit_lean, X, y, code, classes)
        else:
            return self._partial_fit_labels(X, y, classes)
        # One round of a fitted learner (one logged round, or one label): the
        # one-row transaction, written out here (``_one_row_failed``,
        # without the bound method and argument tuple it would take per call)
        t0, n_iter = d.get("t_"), d.get("n_iter_")  # (None: not set)
        try:
            if code is None:
                return self._partial_fit_logged(X, y, classes)
            return self._partial_fit_lean(X, y, code, classes)
        except BaseException:
            self._one_row_failed(t0, n_iter)
            raise

    def _partial_fit_lean(self, X, y, code, classes):
        """``partial_fit`` of a fitted learner on labels, without
        scikit-learn's per-call machinery (``_fit_context``, ``validate_data``):
        the parameters are re-validated only when one was replaced
        (``_lean_kernel``), the rows go through ``_rows_fast`` (rows already in
        the common form after O(1) checks and one compiled scan, anything else
        through ``_validate_X``). ``code``: the code of ``y``'s one known
        plain label (``_lean_label_code``), or None: ``y`` (labels or a
        ``BanditFeedback``) is then validated and encoded as on the full path.
        The same checks in the same order, the same errors and the same play
        as the full path (``_partial_fit``)."""
        cached = self._lean_kernel()
        if classes is not None:
            self._check_same_classes(classes, "the first call to partial_fit")
        if code is not None:
            # one row in the common form: the compiled one-row call
            # (``_LabelPass._run_one``), else the general path below (which
            # validates X and raises its errors)
            one = None
            if cached is not None:
                one = self._one_row(X, cached)
            if one is not None:
                self.n_iter_ = 0
                self._play(X, _one_code(code), _ONE_ROW, None, False, cached, one)
                self.n_iter_ = 1
                return self
            X = self._rows_fast(X)
            if X.shape[0] != 1:  # (one row: consistent with the one label)
                check_consistent_length(X, y)
            feedback, record, codes, rows = None, False, _one_code(code), _ONE_ROW
        else:
            # (y first, as _validate_fit_input: the same error when both are bad)
            record = isinstance(y, BanditFeedback)
            feedback = y if record else BanditFeedback(y)
            X = self._rows_fast(X)
            check_consistent_length(X, feedback)
            codes = feedback._encode(self.classes_)
            rows = np.arange(X.shape[0], dtype=np.int32)
        self.n_iter_ = 0
        self._play(X, codes, rows, feedback, record, cached)
        self.n_iter_ = 1
        return self

    def _partial_fit_labels(self, X, y, classes):
        return self._transaction(self._partial_fit, X, y, classes)

    # scikit-learn's _fit_context skips parameter validation for a fitted learner
    # only in a method named partial_fit (_partial_fit re-validates them anyway).
    _partial_fit_labels.__name__ = "partial_fit"
    _partial_fit_labels = _fit_context(prefer_skip_nested_validation=True)(
        _partial_fit_labels
    )

    def _partial_fit(self, X, y, classes):
        if isinstance(y, LoggedFeedback):
            return self._partial_fit_logged(X, y, classes)
        first_call = not hasattr(self, "classes_")
        if not first_call:
            # _fit_context validates the parameters of an unfitted learner only;
            # a parameter changed mid-stream must be checked too.
            self._validate_params()
        if first_call:
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit "
                    "(the learner must know every possible action up front)."
                )
            new_classes = _check_classes(classes)
        elif classes is not None:
            self._check_same_classes(classes, "the first call to partial_fit")
        X, feedback, record = self._validate_fit_input(X, y, reset=first_call)
        codes = feedback._encode(new_classes if first_call else self.classes_)
        if first_call:
            self._reset(new_classes, X.shape[1])
        self.n_iter_ = 0
        self._play(X, codes, np.arange(X.shape[0], dtype=np.int32), feedback, record)
        self.n_iter_ = 1
        return self

    def _play(self, X, codes, rows, feedback, record, cached=None, one=None) -> None:
        """Play ``rows`` of X in order, block by block; update state, counters
        and (when ``record``) the feedback log. A failed block is rolled back.
        ``one``: the ``OneRow`` of a one-row call of a fitted learner
        (``_one_row``: X's row bound), which plays the round
        (``_LabelPass._run_one``)."""
        play = _LabelPass(self, X, codes, feedback, record, one)
        self._play_blocks(X, rows, play, cached=cached, one=one)


class _LabelPass:
    """The pass of ``_play`` (``TransactionMixin._play_blocks``): rounds on
    labelled rows (``run_pass``, or the compiled one-row calls of ``one``:
    ``_run_one``), their counters and, when ``record``, the feedback log,
    which a failed block truncates back."""

    __slots__ = (
        "est", "arrays", "codes", "feedback", "record", "mark", "one", "reward",
    )  # fmt: skip

    def __init__(self, est, X, codes, feedback, record, one=None) -> None:
        self.est = est
        # (data, indices, indptr, dense); a ``OneRow`` plays its bound row
        self.arrays = _kernel_arrays(X) if one is None else None
        self.codes = codes
        self.feedback = feedback
        self.record = record
        self.mark = 0
        self.one = one
        self.reward = 0.0

    def begin(self) -> None:
        if self.record:
            self.mark = self.feedback._log_mark()

    def run(self, kernel, block, uniforms):
        if self.one is None:
            return self._run_arrays(kernel, block, uniforms)
        return self._run_one(kernel, self.one)

    def _run_arrays(self, kernel, block, uniforms):
        n = block.shape[0]
        out = (
            np.empty(n, dtype=np.int32),  # played
            np.empty(n, dtype=np.int32),  # greedy
            np.empty(n, dtype=np.float64),  # rewards
            np.empty(n, dtype=np.float64),  # propensities
        )
        data, indices, indptr, dense = self.arrays
        done = run_pass(
            kernel, data, indices, indptr, dense, block, self.codes, uniforms,
            self.est.t_, *out,
        )  # fmt: skip
        return done, out

    def _run_one(self, kernel, one):
        """The round of the one row bound to ``one``, as ``run_pass`` plays it
        (the same compiled round, ``label_round``), through the compiled
        one-row call ``OneRow.learn_label``: the pair ``_play_blocks`` drew
        (``one.draw()``), the row's label code, the block's kernel. It takes
        no arrays as typed memory views, as ``run_pass`` does (about 5 KiB of
        Python objects made per call for its ten arrays). Returns
        ``(done, None)``; ``commit`` reads the round's greedy label from
        ``one.greedy`` and its reward from ``reward``."""
        done = one.learn_label(kernel, self.est.t_, self.codes.item(0))
        self.reward = one.reward
        return done, None

    def commit(self, block, out) -> None:
        est, codes = self.est, self.codes
        if out is None:  # the one round of ``_run_one``: Python scalars
            est.t_ += 1
            est.n_mistakes_ += 0 if self.reward == 1.0 else 1
            est.n_greedy_mistakes_ += int(self.one.greedy != codes.item(0))
            return
        n = block.shape[0]
        played, greedy, rewards, propensities = (a[:n] for a in out)
        est.t_ += n
        est.n_mistakes_ += int(n - np.count_nonzero(rewards))
        # Bookkeeping for evaluation only (the greedy action's mistakes);
        # the learner's state never depends on it.
        est.n_greedy_mistakes_ += int(np.count_nonzero(greedy != codes[block]))
        if self.record:
            self.feedback._record(block, played, rewards, propensities, est.classes_)

    def rollback(self) -> None:
        if self.record:
            self.feedback._truncate_log(self.mark)
