"""Scoring (``ScoringMixin``): ``decision_function``, ``predict``,
``exploration_distribution``.

All three validate the rows like training does and never change the learner:
the first two read the learner's ``_score_rows``, the third runs the compiled
distribution of its kernel (``run_distribution``) at the next round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skbandit._base._rows import _kernel_arrays
from skbandit._core._drivers import run_distribution
from skbandit._docstring import DISTRIBUTION_SECTIONS, fill_doc

if TYPE_CHECKING:
    from skbandit._typing import MatrixLike


class ScoringMixin:
    """Greedy prediction, scores and the exploration distribution."""

    if TYPE_CHECKING:  # what it uses of the skeleton (skbandit.base)
        classes_: np.ndarray
        t_: int

        def _score_rows(self, X) -> np.ndarray: ...
        def _make_kernel(self): ...
        def _validate_X(self, X, *, reset: bool): ...
        def _own_state_arrays(self) -> None: ...
        def _raise_kernel_status(
            self, kernel, X, status=None, row=None, proba=None
        ): ...

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        return self._score_rows(self._validate_X(X, reset=False))

    def decision_function(self, X: MatrixLike) -> np.ndarray:
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

    def predict(self, X: MatrixLike) -> np.ndarray:
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

    @fill_doc(distribution_sections=DISTRIBUTION_SECTIONS)
    def exploration_distribution(self, X: MatrixLike) -> np.ndarray:
        """Probability of playing each class on each row at the next round.

        The learner's exploration policy under its current state, computed by
        the same compiled function its kernel samples from; exact ties of the
        greedy label share the greedy mass, as the random tie-break does. It is
        the policy that plays the actions, not a model of ``P(y | x)``, and the
        logged propensity of a played action is this distribution at that
        action. Predicting does not advance the learner's generator.

        {distribution_sections}
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        self._own_state_arrays()
        kernel = self._make_kernel()
        out = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        data, indices, indptr, dense = _kernel_arrays(X)
        done = run_distribution(kernel, data, indices, indptr, dense, self.t_ + 1, out)
        if done != X.shape[0]:
            self._raise_kernel_status(kernel, X, row=done, proba=out[done])
        return out
