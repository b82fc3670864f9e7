"""scikit-learn's own estimator checks over every registered estimator."""

from __future__ import annotations

import pytest
from _registry import estimators_for_sklearn_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

# scikit-learn's checks play rows with ||x|| > 1 by design; Gaptron's warning for
# them is its documented behaviour (tested in test_gaptron.py), not a finding here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*of the rows played so far in this call have .*x_norm_bound=:UserWarning"
)


@parametrize_with_checks(estimators_for_sklearn_checks())
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
