"""scikit-learn's own estimator checks over every registered estimator."""

from __future__ import annotations

from _registry import estimators_for_sklearn_checks
from sklearn.utils.estimator_checks import parametrize_with_checks


@parametrize_with_checks(estimators_for_sklearn_checks())
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
