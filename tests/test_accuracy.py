"""Accuracy regressions on small real data, with thresholds from the papers.

Online error = n_mistakes_ / t_ (mistakes of the *played* action), as reported by
Chen et al. (2009), Table I: on USPS, Banditron (gamma = 0.3) 50.28 %, multiclass
Perceptron 14.47 % (one pass, averaged over 10 runs).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from skbandit import Banditron, MulticlassPerceptron


def _online_error(est, X, y, k):
    est.partial_fit(X, y, classes=np.arange(k))
    assert est.t_ == len(y)
    return est.n_mistakes_ / est.t_


def test_usps_banditron_online_error(usps_stream):
    X, y = usps_stream
    errors = [
        _online_error(Banditron(gamma=0.3, random_state=seed), X, y, 10)
        for seed in (0, 1, 2)
    ]
    # paper: 0.5028; a few points of slack for 3 seeds instead of 10 runs
    assert np.mean(errors) <= 0.55, errors
    # exploration floor: each round plays a wrong label with probability at least
    # gamma * (k - 1) / k = 0.27, so an error far below it means no exploration
    assert min(errors) >= 0.25, errors


def test_usps_perceptron_online_error(usps_stream):
    X, y = usps_stream
    error = _online_error(MulticlassPerceptron(random_state=0), X, y, 10)
    # paper: 0.1447
    assert error <= 0.17, error


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X.astype(np.float64), y


def test_digits_perceptron(digits):
    X, y = digits
    # One pass over the 1,797 digits (10 classes, 64 pixels in 0..16). USPS is the
    # same task at 5x the size and gives 0.1447 in Chen et al.; the shorter stream
    # makes more early mistakes, so allow up to 0.25 (the reference implementation
    # in _reference.py gives about 0.18).
    errors = [
        _online_error(MulticlassPerceptron(random_state=s), X, y, 10) for s in range(3)
    ]
    assert np.mean(errors) <= 0.25, errors
    # Digits is (almost) linearly separable -- a linear SVM fits the training set
    # exactly -- so five Perceptron passes classify most training points; the last
    # iterate fluctuates, hence 0.85 averaged over seeds (reference: 0.90-0.97).
    accs = [
        MulticlassPerceptron(max_iter=5, random_state=s).fit(X, y).score(X, y)
        for s in range(3)
    ]
    assert np.mean(accs) >= 0.85, accs


def test_digits_banditron(digits):
    X, y = digits
    k = 10
    # A uniform guess errs with probability 0.9 and the exploration floor is
    # gamma * (k - 1) / k = 0.27. One pass must learn well away from 0.9: <= 0.75
    # (USPS, the same task with 5x more rounds, gives 0.50 in the paper; the
    # reference implementation gives 0.60-0.64 on this shorter stream).
    errors = [
        _online_error(Banditron(gamma=0.3, random_state=s), X, y, k) for s in range(3)
    ]
    assert np.mean(errors) <= 0.75, errors
    assert min(errors) >= 0.25, errors
    # Five shuffled passes: the error keeps dropping (reference: about 0.48).
    fitted = [
        Banditron(gamma=0.3, max_iter=5, random_state=s).fit(X, y) for s in range(3)
    ]
    online = [est.n_mistakes_ / est.t_ for est in fitted]
    assert all(est.t_ == 5 * len(y) for est in fitted)
    assert np.mean(online) <= 0.6, online
    assert np.mean(online) < np.mean(errors), (online, errors)
