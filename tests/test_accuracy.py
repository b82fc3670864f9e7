"""Accuracy on real data, with thresholds from the papers.

Online error = n_mistakes_ / t_ (mistakes of the *played* action), as reported by
Chen, Chen, Zhang, Chen & Zhang, "Beyond Banditron: a conservative and efficient
reduction for online multiclass prediction with bandit setting model" (2009),
Table I: on USPS
(9,298 rows, 256 features in [0, 1], 10 classes), one pass, averaged over 10 runs,
the multiclass Perceptron makes 14.47 % online error and the Banditron with
gamma = 0.3 makes 50.28 %. The stream here is the training rows then the test rows
in file order; the paper does not give its order, hence the slack below.

The exact computation of each learner is checked against the NumPy references in
``test_reference.py``; these tests check the learning on a real task and catch
errors that make a learner learn differently enough to show in the online error.
"""

from __future__ import annotations

import numpy as np

from skbandit import Banditron, MulticlassPerceptron
from skbandit.exploration import EpsilonGreedy

K = 10


def _online_error(est, X, y):
    est.partial_fit(X, y, classes=np.arange(K))
    assert est.t_ == len(y)
    return est.n_mistakes_ / est.t_


def test_usps_banditron_online_error(usps_stream):
    X, y = usps_stream
    gamma = 0.3
    errors = [
        _online_error(
            Banditron(exploration=EpsilonGreedy(gamma), random_state=seed), X, y
        )
        for seed in (0, 1, 2)
    ]
    # Paper: 0.5028 (10 runs). A band of 5 points either side for 3 seeds on one
    # stream order. Above it: a learner that learns less from each reward (e.g. a
    # missing importance weight 1/p or a missing w_greedy -= x gives 0.75-0.90).
    # Below it: a learner that explores less than gamma says or sees more than the
    # reward bit.
    assert 0.45 <= np.mean(errors) <= 0.55, errors
    # Exploration floor (Kakade et al. 2008): every round plays a uniformly drawn
    # label with probability gamma, wrong with probability gamma * (k - 1) / k =
    # 0.27, so the expected online error is at least 0.27 whatever the weights;
    # 0.25 leaves 4 standard deviations of one 9,298-round run.
    assert min(errors) >= 0.25, errors
    assert gamma * (K - 1) / K > 0.25


def test_usps_perceptron_online_error(usps_stream):
    X, y = usps_stream
    errors = [
        _online_error(MulticlassPerceptron(random_state=s), X, y) for s in (0, 1, 2)
    ]
    # Paper: 0.1447 (10 runs). A band of 2.5 points either side (the seed only
    # breaks exact ties here, so the runs differ little; the paper's row order is
    # unknown). It catches a Perceptron that only penalises the greedy label
    # (w_greedy -= x without w_y += x: 0.58 online error) but not one that only
    # rewards the true label (w_y += x without w_greedy -= x: 0.134, since the
    # features are non-negative): no band the paper justifies separates 0.134 from
    # the correct learner's 0.137. That mutant is caught by the invariant below
    # and by the reference tests.
    assert 0.12 <= np.mean(errors) <= 0.17, errors


def test_usps_perceptron_updates_sum_to_zero(usps_stream):
    """Crammer & Singer (2003) ultraconservative additive updates: on a mistake
    w_r += tau_r x with sum_r tau_r = 0 (the Perceptron: tau_y = 1, tau_greedy =
    -1), so from W = 0 the class weights always sum to the zero vector."""
    X, y = usps_stream
    est = MulticlassPerceptron(random_state=0).partial_fit(X, y, classes=np.arange(K))
    assert est.n_mistakes_ > 1000
    scale = np.abs(est.coef_).max()
    assert scale > 1.0
    np.testing.assert_allclose(est.coef_.sum(axis=0), 0.0, atol=1e-12 * scale * K)
