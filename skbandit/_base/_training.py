"""Training from labels (``TrainingMixin``): ``fit`` and ``partial_fit``.

``fit`` and ``partial_fit`` validate everything first, then (on a first call)
start a new state and play the rows with ``_play``, the block loop of
``skbandit._base._transaction`` with the compiled pass driver ``run_pass``.
Logged feedback passed to either is handed to ``skbandit._base._acting``.
A fitted learner's ``partial_fit`` skips scikit-learn's ``_fit_context`` (which
would not validate its parameters either): its parameters are validated again
when one was replaced (``_validate_params_cached``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.validation import check_consistent_length

from skbandit._base._rows import _kernel_arrays, _rows_in_order
from skbandit._base._transaction import TransactionMixin
from skbandit._base._validation import (
    PARTIAL_FIT_NEEDS_CLASSES,
    _check_classes,
    _one_code,
)
from skbandit._core._drivers import run_pass
from skbandit.feedback import BanditFeedback, LoggedFeedback

if TYPE_CHECKING:
    from skbandit._typing import ArrayLike, MatrixLike


class TrainingMixin(TransactionMixin):
    """Learning from (simulated) bandit feedback on labelled rows."""

    if TYPE_CHECKING:  # what it uses of the skeleton (skbandit.base)

        def _partial_fit_logged(self, X, logged, classes): ...
        def _fit_logged(self, X, logged): ...

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
        self._check_unlocked("fit")
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
            ``sample_actions`` and ``docs/logged.md``). For the lowest
            latency of a live loop, one row at a time, see
            ``skbandit.LiveSession``.
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream. Required on the first call, and must be
            the same (or omitted) on later calls.

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._check_unlocked("partial_fit")
        if "classes_" in self.__dict__:
            # fitted: _fit_context would not validate the parameters (nor
            # anything else); ``_partial_fit`` validates them if one changed
            return self._transaction(self._partial_fit, X, y, classes)
        return self._partial_fit_labels(X, y, classes)

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
        first_call = "classes_" not in self.__dict__
        if not first_call:
            # _fit_context validates the parameters of an unfitted learner only;
            # a parameter changed mid-stream must be checked too.
            self._validate_params_cached()
        new_classes = self._classes_of_call(
            classes,
            first_call,
            missing=PARTIAL_FIT_NEEDS_CLASSES,
            where="the first call to partial_fit",
        )
        code = None if first_call else self._one_label_code(y)
        if code is not None:  # one known label: no BanditFeedback to build
            X = self._validate_X(X, reset=False)
            if X.shape[0] != 1:
                check_consistent_length(X, y)  # (raises scikit-learn's error)
            feedback, record, codes = None, False, _one_code(code)
        else:
            X, feedback, record = self._validate_fit_input(X, y, reset=first_call)
            codes = feedback._encode(new_classes)
        if first_call:
            self._reset(new_classes, X.shape[1])
        self.n_iter_ = 0
        self._play(X, codes, _rows_in_order(X.shape[0]), feedback, record)
        self.n_iter_ = 1
        return self

    def _play(self, X, codes, rows, feedback, record) -> None:
        """Play ``rows`` of X in order, block by block; update state, counters
        and (when ``record``) the feedback log. A failed block is rolled back."""
        self._play_blocks(X, rows, _LabelPass(self, X, codes, feedback, record))


class _LabelPass:
    """The pass of ``_play`` (``TransactionMixin._play_blocks``): rounds on
    labelled rows (``run_pass``), their counters and, when ``record``, the
    feedback log, which a failed block truncates back."""

    __slots__ = ("est", "arrays", "codes", "feedback", "record", "mark")

    def __init__(self, est, X, codes, feedback, record) -> None:
        self.est = est
        self.arrays = _kernel_arrays(X)  # (data, indices, indptr, dense)
        self.codes = codes
        self.feedback = feedback
        self.record = record
        self.mark = 0

    def begin(self) -> None:
        if self.record:
            self.mark = self.feedback._log_mark()

    def run(self, kernel, block, uniforms):
        # the rounds' actions and propensities are written out only for the
        # feedback log; the driver counts the mistakes itself
        n = block.shape[0]
        out = (
            (
                np.empty(n, dtype=np.int32),  # played
                np.empty(n, dtype=np.int32),  # greedy
                np.empty(n, dtype=np.float64),  # rewards
                np.empty(n, dtype=np.float64),  # propensities
            )
            if self.record
            else ()
        )
        data, indices, indptr, dense = self.arrays
        done, mistakes, greedy_mistakes = run_pass(
            kernel, data, indices, indptr, dense, block, self.codes, uniforms,
            self.est.t_, *out,
        )  # fmt: skip
        return done, (out, mistakes, greedy_mistakes)

    def commit(self, block, result) -> None:
        est = self.est
        out, mistakes, greedy_mistakes = result
        n = block.shape[0]
        est.t_ += n
        est.n_mistakes_ += mistakes
        # Bookkeeping for evaluation only (the greedy action's mistakes);
        # the learner's state never depends on it.
        est.n_greedy_mistakes_ += greedy_mistakes
        if self.record:
            played, greedy, rewards, propensities = (a[:n] for a in out)
            self.feedback._record(block, played, rewards, propensities, est.classes_)

    def rollback(self) -> None:
        if self.record:
            self.feedback._truncate_log(self.mark)
