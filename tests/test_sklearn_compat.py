"""scikit-learn's own estimator checks over every public estimator.

Every estimator of ``skbandit.__all__`` is checked at its default parameters
(``check_estimator(cls())``); the registry adds other settings, never replaces
the defaults. ``check_classifiers_train`` (a training accuracy above 0.83 on
three blobs after ``fit``) is seeded with 0 by scikit-learn; the learners whose
``fit`` is randomised are checked over more seeds below.
"""

from __future__ import annotations

import pytest
from _registry import estimators_for_sklearn_checks, public_estimator_classes
from sklearn.base import clone
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import (
    check_classifiers_train,
    parametrize_with_checks,
)

from skbandit import Banditron, Gaptron

CHECKED = estimators_for_sklearn_checks()


@parametrize_with_checks(CHECKED)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_every_public_estimator_is_checked_at_its_defaults():
    defaults = {
        type(est) for est in CHECKED if est.get_params() == type(est)().get_params()
    }
    public = set(public_estimator_classes())
    assert len(public) >= 9
    assert public <= defaults, sorted(c.__name__ for c in public - defaults)


# Estimators with an averaged iterate, whose default passes
# check_classifiers_train for every seed below;
# the seeds 0-199 were swept (see the Banditron's docstring, Notes).
SEEDED = [Banditron, Gaptron]


# the seeds the last iterate of the Banditron failed (0 and 15) and a few
# more run by default; the rest of the sweep with --runslow
DEFAULT_SEEDS = (0, 1, 2, 15)


@pytest.mark.parametrize(
    "seed",
    [
        pytest.param(s, marks=() if s in DEFAULT_SEEDS else pytest.mark.slow)
        for s in range(40)
    ],
)
@pytest.mark.parametrize("cls", SEEDED, ids=lambda c: c.__name__)
def test_check_classifiers_train_over_seeds(cls, seed, monkeypatch):
    """The training-accuracy check at the defaults, with the learner's seed
    ``seed`` instead of scikit-learn's fixed 0 (the last iterate of the
    Banditron failed for seeds 0 and 15 here)."""

    def seeded(estimator, random_state=0):
        estimator.set_params(random_state=seed)

    monkeypatch.setattr(estimator_checks, "set_random_state", seeded)
    check_classifiers_train(cls.__name__, clone(cls()))
