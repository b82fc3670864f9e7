"""The estimator skeleton shared by every skbandit learner.

``BaseBanditClassifier`` owns everything that is not the algorithm:
parameter and input validation, label encoding, the first-call rule of
``partial_fit``, the random generator, passes over the data, bookkeeping of
mistakes, and the feedback log. A learner subclass adds its parameters, its
state (``_init_state``), how it scores rows (``_score_rows``) and the compiled
kernel that plays one round (``_make_kernel``); the per-row loop runs in
``skbandit._core._kernel.run_pass``. ``LinearBanditClassifier`` provides the
state and scoring of learners whose scores are ``W x``.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from skbandit._core._kernel import run_pass
from skbandit.feedback import BanditFeedback

__all__ = ["BaseBanditClassifier", "LinearBanditClassifier"]

# Rows per call of the compiled pass driver. Uniforms are drawn per block so
# memory stays bounded on long streams; the generator yields the same stream
# of numbers whatever the block size, so results do not depend on it.
_BLOCK_ROWS = 1 << 16


def _make_rng(random_state) -> np.random.Generator:
    """The learner's own generator, from an int, None or a RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


def _as_feedback(y) -> BanditFeedback:
    return y if isinstance(y, BanditFeedback) else BanditFeedback(y)


def _check_classes(classes) -> np.ndarray:
    classes = np.unique(np.asarray(classes))
    if classes.ndim != 1 or classes.shape[0] < 2:
        n = classes.shape[0] if classes.ndim == 1 else classes.size
        raise ValueError(
            f"A bandit learner needs at least 2 classes; got {n} "
            f"class{'' if n == 1 else 'es'}: {classes.tolist()}."
        )
    return classes


class BaseBanditClassifier(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of online multiclass learners with bandit feedback.

    Subclasses set ``_full_information`` (True only for baselines that see the
    true label) and implement ``_init_state``, ``_make_kernel`` and
    ``_score_rows``; ``LinearBanditClassifier`` does the first and last for
    learners whose scores are ``W x``.

    Protocol of one round: the kernel scores the row, plays an action drawn
    from its distribution using the round's first uniform (ties of the greedy
    argmax use the second), and learns only from ``reward = 1[action == y]``.
    """

    _parameter_constraints: dict = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    _full_information = False

    def __init__(self, *, max_iter=5, shuffle=True, random_state=None):
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    # ---------------------------------------------------------------- hooks
    @abstractmethod
    def _init_state(self, n_features: int, n_classes: int) -> None:
        """Create the learner's state arrays (e.g. ``coef_``) for a fresh fit."""

    @abstractmethod
    def _make_kernel(self):
        """A ``BaseKernel`` wrapping the current state arrays (updated in place)."""

    # ------------------------------------------------------------ validation
    def _validate_X(self, X, *, reset: bool):
        X = validate_data(
            self,
            X,
            reset=reset,
            accept_sparse="csr",
            accept_large_sparse=True,
            dtype=np.float64,
            order="C",
            ensure_all_finite=True,
        )
        if sp.issparse(X):
            X = _csr_with_int32_indices(X)
        return X

    def _validate_fit_input(self, X, y, *, reset: bool):
        feedback = _as_feedback(y)
        X = self._validate_X(X, reset=reset)
        check_consistent_length(X, feedback)
        return X, feedback

    # ------------------------------------------------------------- training
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn from scratch: ``max_iter`` passes over (X, y) with bandit feedback.

        The classes are the distinct labels of ``y``. Each pass visits the rows
        in a random order when ``shuffle=True``, else in the given order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,) or BanditFeedback
            True labels, seen by the learner only through the reward bit.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._transaction(self._fit, X, y)

    def _fit(self, X, y):
        X, feedback = self._validate_fit_input(X, y, reset=True)
        classes = _check_classes(feedback._labels_for_classes())
        codes = feedback._encode(classes)
        # Everything is validated: start the new state.
        self._reset(classes, X.shape[1])
        self.n_iter_ = self.max_iter
        n = X.shape[0]
        for _ in range(self.max_iter):
            if self.shuffle:
                rows = self._rng.permutation(n).astype(np.int32)
            else:
                rows = np.arange(n, dtype=np.int32)
            self._play(X, codes, rows, feedback)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over the rows of X, in order, with bandit feedback.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows of the stream, played in order.
        y : array-like of shape (n_samples,) or BanditFeedback
            True labels, seen by the learner only through the reward bit.
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream. Required on the first call, and must be
            the same (or omitted) on later calls.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._transaction(self._partial_fit, X, y, classes)

    def _partial_fit(self, X, y, classes):
        self._validate_params()
        first_call = not hasattr(self, "classes_")
        if first_call:
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit "
                    "(the learner must know every possible action up front)."
                )
            new_classes = _check_classes(classes)
        elif classes is not None:
            new_classes = _check_classes(classes)
            if not np.array_equal(new_classes, self.classes_):
                raise ValueError(
                    f"classes={new_classes.tolist()} is not the same as on the "
                    f"first call to partial_fit, was: {self.classes_.tolist()}"
                )
        X, feedback = self._validate_fit_input(X, y, reset=first_call)
        codes = feedback._encode(new_classes if first_call else self.classes_)
        if first_call:
            self._reset(new_classes, X.shape[1])
        self.n_iter_ = 1
        self._play(X, codes, np.arange(X.shape[0], dtype=np.int32), feedback)
        return self

    def _transaction(self, method, *args):
        """Run ``method``; if it raises, restore the attributes it changed.

        Validation happens before any state is touched, so in practice this
        only undoes what scikit-learn's ``validate_data`` records on a first
        call (``n_features_in_``, ``feature_names_in_``); it guarantees that a
        failed call never leaves a half-fitted learner. (A ``KeyboardInterrupt``
        is not rolled back: it stops the pass between two blocks of rows.)
        """
        saved = dict(self.__dict__)
        try:
            return method(*args)
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _reset(self, classes: np.ndarray, n_features: int) -> None:
        self.classes_ = classes
        self._rng = _make_rng(self.random_state)
        self.t_ = 0
        self.n_mistakes_ = 0
        self.n_greedy_mistakes_ = 0
        self._init_state(n_features, classes.shape[0])

    def _play(self, X, codes, rows, feedback) -> None:
        """Play ``rows`` of X in order; update state, counters and the log."""
        if sp.issparse(X):
            data, indices, indptr, dense = X.data, X.indices, X.indptr, False
        else:
            data = X.reshape(-1)
            indices = np.arange(X.shape[1], dtype=np.int32)
            indptr = np.zeros(1, dtype=np.int32)
            dense = True
        kernel = self._make_kernel()
        # Block by block, so that an interrupt between blocks (Ctrl-C) leaves a
        # consistent learner that has played a prefix of the rows.
        for start in range(0, rows.shape[0], _BLOCK_ROWS):
            block = rows[start : start + _BLOCK_ROWS]
            n = block.shape[0]
            played = np.empty(n, dtype=np.int32)
            greedy = np.empty(n, dtype=np.int32)
            rewards = np.empty(n, dtype=np.int8)
            propensities = np.empty(n, dtype=np.float64)
            uniforms = self._rng.random((n, 2))
            run_pass(
                kernel,
                data,
                indices,
                indptr,
                dense,
                block,
                codes,
                uniforms,
                played,
                greedy,
                rewards,
                propensities,
            )
            self.t_ += n
            self.n_mistakes_ += int(n - np.count_nonzero(rewards))
            # Bookkeeping for evaluation only (the greedy action's mistakes); the
            # learner's state never depends on it.
            self.n_greedy_mistakes_ += int(np.count_nonzero(greedy != codes[block]))
            feedback._record(block, played, rewards, propensities, self.classes_)

    # ------------------------------------------------------------ prediction
    @abstractmethod
    def _score_rows(self, X) -> np.ndarray:
        """Scores (n_samples, n_classes) of validated rows under the current state."""

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        return self._score_rows(self._validate_X(X, reset=False))

    def decision_function(self, X):
        """Class scores of each row (``X @ coef_.T`` for the linear learners).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            With two classes, ``score(classes_[1]) - score(classes_[0])`` as
            scikit-learn's binary convention asks.
        """
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """Greedy prediction: the class with the highest score.

        Deterministic: exact ties go to the first class in ``classes_`` order
        (during training, ties are broken at random).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearBanditClassifier(BaseBanditClassifier):
    """A learner whose state includes ``coef_`` (k x d, zero at the start) and
    whose scores are ``X @ coef_.T``; its kernel derives from ``LinearKernel``."""

    def _init_state(self, n_features, n_classes):
        self.coef_ = np.zeros((n_classes, n_features), dtype=np.float64)

    def _score_rows(self, X):
        return np.asarray(safe_sparse_dot(X, self.coef_.T, dense_output=True))


def _csr_with_int32_indices(X: sp.csr_matrix | sp.csr_array):
    """CSR with sorted-or-not int32 indices, as the kernels read them."""
    if X.indices.dtype == np.int32 and X.indptr.dtype == np.int32:
        return X
    if X.nnz >= 2**31 or X.shape[1] >= 2**31:
        raise ValueError(
            f"Sparse input with {X.nnz} stored values and {X.shape[1]} columns is "
            "too large: skbandit kernels use 32-bit indices."
        )
    X = X.copy()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X
