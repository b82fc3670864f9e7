"""scikit-learn's own estimator checks over every public estimator.

Every estimator of ``skbandit.__all__`` is checked at its default parameters
(``check_estimator(cls())``); the registry adds other settings, never replaces
the defaults. ``check_classifiers_train`` (a training accuracy above 0.83 on
three blobs after ``fit``) is seeded with 0 by scikit-learn; the learners whose
``fit`` is randomised are checked over more seeds below.

Every check scikit-learn yields runs, but for the two input-container variants
of ``check_classifiers_train`` on the Python-loop learner (``PYTHON_LOOP``,
about 10 s each, a third of this file): what they add over its plain
``check_classifiers_train`` (the same rounds on the same float64 values) is
that a read-only memmap and float32 rows are accepted and learnt alike, which
``test_python_loop_learner_on_readonly_and_float32_rows`` checks on a few rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from _registry import estimators_for_sklearn_checks, public_estimator_classes
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import (
    check_classifiers_train,
    estimator_checks_generator,
)

from skbandit import Banditron, Gaptron, RegressionReduction

CHECKED = estimators_for_sklearn_checks()

# The Python-loop learner (a scikit-learn regressor per class, called from
# Python each round): its check_classifiers_train variants on a read-only
# memmap and on float32 rows are replaced by the test below.
PYTHON_LOOP = RegressionReduction
CONTAINER_VARIANTS = (
    {"readonly_memmap": True},
    {"readonly_memmap": True, "X_dtype": "float32"},
)


def _check_id(check) -> str:
    """A test id as scikit-learn's own parametrisation prints it: an
    estimator's repr without whitespace; a check's function name, then its
    keyword arguments, e.g. ``check_classifiers_train(readonly_memmap=True)``."""
    if hasattr(check, "get_params"):
        return "".join(str(check).split())
    func = getattr(check, "func", check)
    kwargs = getattr(check, "keywords", {})
    args = ",".join(f"{k}={v}" for k, v in kwargs.items())
    return func.__name__ + (f"({args})" if args else "")


def _memmap(array: np.ndarray, folder) -> np.ndarray:
    """A read-only memory map of ``array`` (saved under ``folder``)."""
    path = folder / f"{id(array)}.npy"
    np.save(path, array)
    return np.load(path, mmap_mode="r")


def _replaced(estimator, check) -> bool:
    """A check_classifiers_train variant on a container, for the Python-loop
    learner at its defaults (see the module docstring)."""
    return (
        type(estimator) is PYTHON_LOOP
        and getattr(check, "func", None) is check_classifiers_train
        and check.keywords in CONTAINER_VARIANTS
    )


def _checks(estimators):
    """What ``parametrize_with_checks(estimators)`` parametrises, but for
    the replaced variants."""
    for estimator in estimators:
        for est, check in estimator_checks_generator(
            estimator, legacy=True, mark="xfail"
        ):
            if not _replaced(est, check):
                yield est, check


@pytest.mark.parametrize("estimator, check", list(_checks(CHECKED)), ids=_check_id)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_only_the_python_loop_container_variants_are_replaced():
    """Exactly two checks are left out of scikit-learn's list, both of the
    Python-loop learner at its defaults (a filter that dropped more, or
    missed a renamed variant, fails here)."""
    dropped = [
        _check_id(check)
        for estimator in CHECKED
        for est, check in estimator_checks_generator(
            estimator, legacy=True, mark="xfail"
        )
        if _replaced(est, check)
    ]
    assert dropped == [
        "check_classifiers_train(readonly_memmap=True)",
        "check_classifiers_train(readonly_memmap=True,X_dtype=float32)",
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_python_loop_learner_on_readonly_and_float32_rows(dtype, tmp_path):
    """The Python-loop learner at its defaults fits, predicts and scores rows
    in a read-only memmap (float64, and float32 converted) exactly as it does
    the same values in a writable float64 array (caught: a write into the
    caller's rows, a float32 row handed on unconverted and rounded apart)."""
    X, y = make_blobs(n_samples=30, random_state=0)
    X = X.astype(dtype)
    X_ro, y_ro = _memmap(X, tmp_path), _memmap(y, tmp_path)
    assert not X_ro.flags.writeable
    est = RegressionReduction(random_state=0).fit(X_ro, y_ro)
    twin = RegressionReduction(random_state=0).fit(X.astype(np.float64), y)
    assert_array_equal(est.predict(X_ro), twin.predict(X.astype(np.float64)))
    assert_array_equal(
        est.decision_function(X_ro), twin.decision_function(X.astype(np.float64))
    )
    assert est.t_ == twin.t_ == est.max_iter * len(y)


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
