"""docs/adding_a_learner.md, followed with a toy learner (``_toy_learner.py``).

The recipe's registrations are one line each; here they are made for the toy
(its entries and logged-feedback adapter added to the registry's, its class
among the public estimators) and the shared suite runs on it: the protocol,
validation, label-leak, rollback and logged-feedback checks, scikit-learn's
``check_estimator``, and the bit-for-bit comparison with its NumPy reference.
"""

from __future__ import annotations

import _registry
import numpy as np
import pytest
import scipy.sparse as sp
import test_registry
import test_validation
from _data import make_stream
from _shared_suite import run_check, shared_checks
from _toy_learner import ENTRIES, LOGGED_ADAPTERS, ToyBanditron, reference
from numpy.testing import assert_array_equal
from sklearn.utils.estimator_checks import check_estimator

from skbandit import BanditFeedback

(TOY,) = ENTRIES
SHARED = (
    "test_protocol",
    "test_validation",
    "test_label_leak",
    "test_hardening",
    "test_rollback",
    "test_logged",
)


@pytest.fixture
def registered(monkeypatch):
    """The toy registered as the recipe says: its module's adapter in the
    registry (``REFERENCE_MODULES`` collects it), its class public."""
    for name, make in LOGGED_ADAPTERS.items():
        monkeypatch.setitem(_registry.LOGGED_ADAPTERS, name, make)
    public = _registry.public_estimator_classes()
    monkeypatch.setattr(
        _registry, "public_estimator_classes", lambda: [*public, ToyBanditron]
    )


def test_the_registry_checks_ask_for_the_toy_until_it_is_registered(monkeypatch):
    """Public but without an entry, the toy is named by the registry's check;
    with its module's entries and adapter collected, nothing is missing."""
    public = _registry.public_estimator_classes()
    monkeypatch.setattr(
        test_registry, "public_estimator_classes", lambda: [*public, ToyBanditron]
    )
    assert test_registry.missing_entries(_registry.ENTRIES) == ["ToyBanditron"]
    entries, adapters = _registry.collect(
        (*_registry.REFERENCE_MODULES, __import__("_toy_learner"))
    )
    assert test_registry.missing_entries(entries) == []
    assert "ToyBanditron" in adapters


@pytest.mark.parametrize("check", shared_checks(SHARED, TOY))
def test_shared_suite_on_the_toy(check, registered, request):
    run_check(check, TOY, request)


@pytest.mark.parametrize("params, match", TOY.invalid_params, ids=str)
def test_the_toy_rejects_its_invalid_settings(params, match):
    """The entry's own settings, through the shared validation checks."""
    test_validation.test_invalid_parameters_are_rejected(TOY, params, match, "fit")
    test_validation.test_invalid_parameter_mid_stream_leaves_state_unchanged(
        TOY, params, match
    )


@pytest.mark.parametrize("params", TOY.valid_edge_params, ids=str)
def test_the_toy_accepts_its_boundary_settings(params):
    test_validation.test_boundary_parameters_are_accepted(TOY, params)


def test_the_shared_suite_runs_many_checks():
    """Every shared module contributes (a rename cannot silently drop one)."""
    ids = [p.id.split("::")[0] for p in shared_checks(SHARED, TOY)]
    assert set(ids) == set(SHARED)
    assert len(ids) >= 60


def test_sklearn_check_estimator_on_the_toy():
    check_estimator(ToyBanditron())


@pytest.mark.parametrize("container", ["dense", "csr"])
def test_the_toy_matches_its_reference_bit_for_bit(container):
    """Two ``partial_fit`` calls against the NumPy reference: the plays, the
    logged propensities and every state array, equal bit for bit."""
    k, seed = 4, 5
    X, y = make_stream(n=120, d=9, k=k, kind="binary", seed=3)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est = TOY.make(random_state=seed)
    rng = np.random.default_rng(seed)
    W = A = None
    for lo, hi in ((0, 50), (50, 120)):
        fb = BanditFeedback(y[lo:hi])
        est.partial_fit(Xc[lo:hi], fb, classes=np.arange(k))
        U = rng.random((hi - lo, 2))
        tr = reference(X[lo:hi], y[lo:hi], U, k, TOY.params, W, A, t0=lo)
        W, A = tr.W, tr.A
        assert_array_equal(fb.actions_, tr.played)
        assert_array_equal(fb.propensities_, tr.propensities)
    assert_array_equal(est.coef_, W)
    assert_array_equal(est._acc, A)
