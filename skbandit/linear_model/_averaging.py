"""The averaged iterate of a linear bandit learner (``average=True``).

A learner whose kernel adds each round's update ``Delta_t`` of ``coef_`` also
to an accumulator ``A`` with the weight ``t - 1`` (``t`` the global round
index) has ``A = sum_t (t - 1) Delta_t``, and the mean of the weights after
rounds ``1 .. T``, ``(W_2 + ... + W_{T+1}) / T``, is ``coef_ - A / T``: O(nnz(x))
per round instead of O(k d). The learner plays with ``coef_``; ``predict``
and ``decision_function`` use the mean when ``average`` is true (the averaged
Perceptron of Freund and Schapire, 1999; the online-to-batch conversion of
Cesa-Bianchi, Conconi and Gentile, 2004; ``SGDClassifier(average=True)``).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skbandit.base import feature_major_zeros, linear_scores

__all__ = ["AveragedIterateMixin"]


class AveragedIterateMixin:
    """Mix into a ``LinearBanditClassifier`` (before it) whose kernel takes the
    accumulator ``_average_acc`` (shape of ``coef_``) and fills it as above.
    The subclass lists ``"_average_acc"`` in ``_state_attrs`` (so a failed
    block rolls it back) and has an ``average`` parameter."""

    _average_constraints: dict = {"average": ["boolean"]}
    # set by the learner it is mixed into (annotations only, for type checkers)
    coef_: np.ndarray
    t_: int
    average: bool

    def _init_state(self, n_features, n_classes):
        super()._init_state(n_features, n_classes)
        self._average_acc = feature_major_zeros(n_classes, n_features)

    @property
    def average_coef_(self) -> np.ndarray:
        """The mean of the weights after each round played so far."""
        check_is_fitted(self)
        if self.t_ == 0:
            return self.coef_.copy()
        return self.coef_ - self._average_acc / self.t_

    def _score_rows(self, X):
        W = self.average_coef_ if self.average else self.coef_
        return linear_scores(X, W)
