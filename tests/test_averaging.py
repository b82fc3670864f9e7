"""The averaged iterate (``average=True``) of the Banditron and the Gaptron.

``average_coef_`` is defined as the mean of the weights after each round played
so far; here it is computed from that definition (a snapshot of ``coef_`` after
every single-row call) and compared with the learner's O(nnz) bookkeeping, for
plain labels and for logged feedback. The plays never depend on ``average``.
The NumPy references replay the accumulator bit for bit (test_reference.py,
test_gaptron.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback, Banditron, Gaptron, LoggedFeedback

LEARNERS = [
    pytest.param(Banditron, {}, id="Banditron"),
    pytest.param(Gaptron, {}, id="Gaptron"),
    pytest.param(Gaptron, {"feedback": "full", "loss": "hinge"}, id="Gaptron-full"),
    pytest.param(
        Gaptron, {"step_size": "constant", "x_norm_bound": 10.0}, id="Gaptron-auto"
    ),
]


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize(("cls", "params"), LEARNERS)
def test_average_coef_is_the_mean_of_the_iterates(cls, params, container):
    k, n = 4, 120
    X, y = make_stream(n=n, d=7, k=k, seed=5)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est = cls(random_state=2, **params)
    snapshots = []
    for t in range(n):
        est.partial_fit(Xc[t : t + 1], y[t : t + 1], classes=np.arange(k))
        snapshots.append(est.coef_.copy())
        if t in (0, 7, n - 1):
            mean = np.mean(snapshots, axis=0)
            assert_allclose(est.average_coef_, mean, rtol=1e-9, atol=1e-12)
    # one call on the whole stream: the same trajectory, the same mean
    whole = cls(random_state=2, **params).partial_fit(Xc, y, classes=np.arange(k))
    assert_array_equal(whole.coef_, est.coef_)
    assert_allclose(whole.average_coef_, np.mean(snapshots, axis=0), rtol=1e-9)


@pytest.mark.parametrize(("cls", "params"), LEARNERS[:2])
def test_average_coef_with_logged_feedback(cls, params):
    """Logged rounds are averaged like the learner's own (same round index)."""
    k, n = 3, 80
    X, y = make_stream(n=n, d=5, k=k, seed=8)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, k, n)
    rewards = (actions == y).astype(float)
    props = np.full(n, 1.0 / k)
    est = cls(random_state=0, **params)
    snapshots = []
    for t in range(n):
        logged = LoggedFeedback(
            actions[t : t + 1], rewards[t : t + 1], props[t : t + 1]
        )
        est.partial_fit(X[t : t + 1], logged, classes=np.arange(k))
        snapshots.append(est.coef_.copy())
    assert_allclose(est.average_coef_, np.mean(snapshots, axis=0), rtol=1e-9)


@pytest.mark.parametrize(("cls", "params"), LEARNERS)
def test_plays_do_not_depend_on_average(cls, params):
    """average changes what predict uses, never the plays or the state."""
    k = 5
    X, y = make_stream(n=300, d=8, k=k, seed=3)
    runs = []
    for average in (True, False):
        fb = BanditFeedback(y)
        est = cls(average=average, random_state=4, max_iter=2, **params).fit(X, fb)
        runs.append((est, fb))
    (a, fa), (b, fbb) = runs
    assert_array_equal(fa.actions_, fbb.actions_)
    assert_array_equal(fa.propensities_, fbb.propensities_)
    for name in a._state_attrs:
        assert_array_equal(getattr(a, name), getattr(b, name))
    assert_array_equal(a.exploration_distribution(X), b.exploration_distribution(X))
    assert_allclose(a.decision_function(X), X @ a.average_coef_.T, rtol=1e-12)
    assert_allclose(b.decision_function(X), X @ b.coef_.T, rtol=1e-12)
    assert_array_equal(a.predict(X), np.argmax(X @ a.average_coef_.T, axis=1))
    # switching the parameter after fitting switches the prediction weights
    b.set_params(average=True)
    assert_array_equal(b.predict(X), a.predict(X))


def test_average_before_any_round_is_the_initial_weights():
    est = Banditron().fit(np.eye(3), [0, 1, 2])
    est2 = Banditron()
    est2.sample_actions(np.eye(3), classes=[0, 1, 2])  # fitted, t_ = 0
    assert est2.t_ == 0
    assert_array_equal(est2.average_coef_, np.zeros((3, 3)))
    assert est.average_coef_.shape == (3, 3)


def test_average_is_validated():
    with pytest.raises(ValueError, match="'average' parameter"):
        Banditron(average="yes").fit(np.eye(3), [0, 1, 2])
