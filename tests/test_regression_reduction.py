"""RegressionReduction: what only it does (the shared suite covers the protocol).

- Plays, propensities and update counts equal the reference loop of
  ``_reference_regression`` on the same uniforms (per class, mini-batches,
  multi-output).
- The multi-output update has the played class's gradient only.
- Mini-batches: frozen policy within a batch, invariance to how the stream is
  cut into calls for every batch size, a pickle mid-batch resumes exactly.
- Failure: a regressor that raises or diverges leaves the learner as before.
- It learns a nonlinear stream the linear SquareCB cannot.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from _helpers import assert_same_learner, run_benchmark, snapshot
from _reference_regression import BucketMean, regression_reduction
from numpy.testing import assert_array_equal
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import SGDRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from skbandit import BanditFeedback, RegressionReduction, SquareCB
from skbandit.exploration import EpsilonGreedy


def _stream(n=120, d=5, k=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    # a contextual label: the bucket of x_0 shifts the class
    y = (rng.integers(0, 2, n) + 2 * (X[:, 0] > 0)) % k
    return X, y


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"batch_size": 3},
        {"per_class": False, "batch_size": 2},
        {"per_class": False},
        {"exploration": EpsilonGreedy(0.2), "batch_size": 5},
        {"initial_reward": 0.0},
    ],
    ids=["online", "batch3", "multi-batch2", "multi-online", "eps-batch5", "r0=0"],
)
def test_plays_and_propensities_equal_the_reference(params):
    """The reduction's loop, written again from its docstring, on the same
    uniforms (caught: targets without the ``initial_reward`` offset, the buffer
    learned one round late or early, the per-class floor's counts not passed,
    the multi-output targets of unplayed classes set to 0)."""
    k, seed = 4, 3
    X, y = _stream(k=k, seed=1)
    params = {"estimator": BucketMean(), **params}
    feedback = BanditFeedback(y)
    est = RegressionReduction(random_state=seed, **params)
    est.partial_fit(X, feedback, classes=range(k))
    U = np.random.default_rng(seed).random((X.shape[0], 2))
    played, props, state = regression_reduction(X, y, U, k, **params)
    assert_array_equal(feedback.actions_, played)
    assert_array_equal(feedback.propensities_, props)
    assert_array_equal(est.n_updates_, state["n_updates_"])
    assert est.n_buffered_ == len(state["buffer"])
    assert est.n_mistakes_ == int(np.sum(played != y))


class _SGDSubclass(SGDRegressor):
    """scikit-learn's ``SGDRegressor`` under another class: the reduction
    asks it for ``predict``."""


class _ShiftedSGD(SGDRegressor):
    """An ``SGDRegressor`` subclass whose ``predict`` is not its formula."""

    def predict(self, X):
        return super().predict(X) + 0.25


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_default_regressor_outputs_are_its_predict_bit_for_bit(form):
    """The default regressor's outputs are computed from its fitted ``coef_``
    and ``intercept_`` instead of ``predict`` (which validates the rows
    again): the same bits as ``predict``, so the reduction plays exactly as
    with ``predict``; a subclass is asked for ``predict`` (caught: the
    intercept left out, the weights of another class's regressor, a
    subclass's own ``predict`` bypassed)."""
    import scipy.sparse as sp

    from skbandit.multiclass._regression_models import (
        _default_regressor,
        _regressor_outputs,
    )

    X, y = _stream(n=200, d=6, k=4, seed=2)
    rows = sp.csr_matrix(X) if form == "csr" else X
    sgd = SGDRegressor(random_state=0).partial_fit(rows, y.astype(float))
    assert sgd.intercept_[0] != 0.0
    assert_array_equal(_regressor_outputs(sgd, rows, 200), sgd.predict(rows))
    shifted = _ShiftedSGD(random_state=0).partial_fit(rows, y.astype(float))
    assert_array_equal(_regressor_outputs(shifted, rows, 200), shifted.predict(rows))
    # the learner: the default regressor and its twin asked for predict
    default = RegressionReduction(random_state=1)
    twin = RegressionReduction(
        estimator=_SGDSubclass(**_default_regressor().get_params()), random_state=1
    )
    plays = []
    for est in (default, twin):
        feedback = BanditFeedback(y)
        est.partial_fit(rows, feedback, classes=range(4))
        plays.append(feedback.actions_)
    assert_array_equal(plays[0], plays[1])
    assert_array_equal(default.decision_function(rows), twin.decision_function(rows))
    for a, b in zip(default.estimators_, twin.estimators_, strict=True):
        assert_array_equal(a.coef_, b.coef_)


class LinearMultiOutput(RegressorMixin, BaseEstimator):
    """``Y = X W``, one gradient step of the squared loss per ``partial_fit``
    (W starts at zero)."""

    def __init__(self, eta=0.1):
        self.eta = eta

    def partial_fit(self, X, Y):
        Y = np.asarray(Y, dtype=np.float64)
        if not hasattr(self, "W_"):
            self.W_ = np.zeros((X.shape[1], Y.shape[1]))
        self.W_ = self.W_ - self.eta * X.T @ (X @ self.W_ - Y)
        return self

    def predict(self, X):
        return X @ self.W_


def test_multi_output_update_moves_only_the_played_output():
    """With the unplayed outputs' targets at their own predictions, the
    squared loss's gradient is the played output's alone: the other columns of
    a linear multi-output model do not move (caught: targets 0 or
    ``initial_reward`` for unplayed classes)."""
    X, y = _stream(n=40, k=3, seed=2)
    est = RegressionReduction(
        estimator=LinearMultiOutput(), per_class=False, random_state=0
    )
    est.partial_fit(X[:1], y[:1], classes=range(3))  # the first update
    for i in range(1, 40):
        before = est.estimators_[0].W_.copy()
        fb = BanditFeedback(y[i : i + 1])
        est.partial_fit(X[i : i + 1], fb)
        a = int(fb.actions_[0])
        after = est.estimators_[0].W_
        others = [c for c in range(3) if c != a]
        assert_array_equal(after[:, others], before[:, others])
        target = float(fb.rewards_[0]) - est.initial_reward
        assert not np.array_equal(after[:, a], before[:, a]) or np.isclose(
            X[i] @ before[:, a], target
        )


@pytest.mark.parametrize("batch_size", [1, 4, 7])
def test_chunking_does_not_change_the_plays_for_any_batch_size(batch_size):
    """The buffer is state: a batch may span calls, so the plays and the state
    do not depend on how the stream is cut (caught: flushing the buffer at the
    end of every call)."""
    X, y = _stream(n=60, seed=4)
    kw = {"estimator": BucketMean(), "batch_size": batch_size, "random_state": 5}
    whole_fb = BanditFeedback(y)
    whole = RegressionReduction(**kw).partial_fit(X, whole_fb, classes=range(4))
    chunked = RegressionReduction(**kw)
    for lo in range(0, 60, 5):
        fb = BanditFeedback(y[lo : lo + 5])
        chunked.partial_fit(X[lo : lo + 5], fb, classes=range(4))
        assert_array_equal(fb.actions_, whole_fb.actions_[lo : lo + 5])
    assert_same_learner(chunked, whole)


def test_policy_is_frozen_within_a_batch():
    """Until the buffer holds ``batch_size`` rounds nothing is learned: the
    predicted rewards of a row are the same before and after the rounds in
    between (caught: learning every round)."""
    X, y = _stream(n=30, seed=6)
    est = RegressionReduction(
        estimator=BucketMean(), batch_size=10, exploration=EpsilonGreedy(0.3),
        random_state=0,
    )  # fmt: skip
    est.partial_fit(X[:10], y[:10], classes=range(4))  # one batch learned
    S = est.decision_function(X[20:])
    est.partial_fit(X[10:19], y[10:19])  # 9 rounds: buffered
    assert est.n_buffered_ == 9
    assert_array_equal(est.decision_function(X[20:]), S)
    est.partial_fit(X[19:20], y[19:20])  # the 10th: learned
    assert est.n_buffered_ == 0
    assert not np.array_equal(est.decision_function(X[20:]), S)


def test_pickle_mid_batch_resumes_identically():
    X, y = _stream(n=50, seed=7)
    kw = {
        "estimator": MLPRegressor(hidden_layer_sizes=(4,), random_state=0),
        "per_class": False,
        "batch_size": 4,
        "random_state": 1,
    }
    whole_fb = BanditFeedback(y)
    whole = RegressionReduction(**kw).partial_fit(X, whole_fb, classes=range(4))
    part = RegressionReduction(**kw).partial_fit(X[:22], y[:22], classes=range(4))
    assert part.n_buffered_ == 2
    resumed = pickle.loads(pickle.dumps(part))
    fb = BanditFeedback(y[22:])
    resumed.partial_fit(X[22:], fb)
    assert_array_equal(fb.actions_, whole_fb.actions_[22:])
    assert_same_learner(resumed, whole)


class _Failing(RegressorMixin, BaseEstimator):
    """Learns like ``BucketMean`` and raises on its ``fail_at``-th update, or
    predicts NaN after ``nan_after`` updates."""

    def __init__(self, fail_at=None, nan_after=None):
        self.fail_at = fail_at
        self.nan_after = nan_after

    def partial_fit(self, X, y):
        self.n_ = getattr(self, "n_", 0) + 1
        if self.fail_at is not None and self.n_ >= self.fail_at:
            raise RuntimeError("regressor failure")
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        if self.nan_after is not None and self.n_ >= self.nan_after:
            return np.full(X.shape[0], np.nan)
        return np.full(X.shape[0], self.mean_)


@pytest.mark.parametrize(
    "estimator, error",
    [
        (_Failing(fail_at=3), RuntimeError),
        (_Failing(nan_after=2), ValueError),
    ],
    ids=["raises", "diverges"],
)
def test_a_failing_regressor_leaves_the_learner_as_it_was(estimator, error):
    """The regressors are restored from the call's copy (caught: no copy, the
    failed update left in place; the generator or counters not restored)."""
    X, y = _stream(n=60, seed=8)
    est = RegressionReduction(estimator=estimator, random_state=0)
    est.partial_fit(X[:1], y[:1], classes=range(4))
    before = snapshot(est)
    fb = BanditFeedback(y[1:])
    with pytest.raises(error, match="regressor|non-finite"):
        est.partial_fit(X[1:], fb)
    from _helpers import assert_same_state

    assert_same_state(est, before)
    assert fb.n_rounds_ == 0


def test_multi_output_needs_a_multi_output_regressor():
    X, y = _stream(n=10, seed=9)
    est = RegressionReduction(estimator=SGDRegressor(), per_class=False)
    with pytest.raises(ValueError, match="per_class=True"):
        est.partial_fit(X, y, classes=range(4))
    assert not hasattr(est, "classes_")


def test_per_class_cannot_change_mid_stream():
    X, y = _stream(n=10, seed=9)
    est = RegressionReduction(estimator=BucketMean(), random_state=0)
    est.partial_fit(X, y, classes=range(4))
    before = snapshot(est)
    est.set_params(per_class=False)
    with pytest.raises(ValueError, match="per_class"):
        est.partial_fit(X, y)
    est.set_params(per_class=True)
    from _helpers import assert_same_state

    assert_same_state(est, before)


def test_regressor_seeds_follow_random_state():
    """A clone whose ``random_state`` is None gets a seed from the learner's:
    the same seed gives the same network, another seed another (caught: the
    clones left unseeded, i.e. not reproducible)."""
    X, y = _stream(n=20, seed=10)

    def fitted(seed):
        mlp = MLPRegressor(hidden_layer_sizes=(4,))
        return RegressionReduction(
            estimator=mlp, per_class=False, random_state=seed
        ).partial_fit(X, y, classes=range(4))

    a, b, c = fitted(0), fitted(0), fitted(1)
    assert_array_equal(a.estimators_[0].coefs_[0], b.estimators_[0].coefs_[0])
    assert not np.array_equal(a.estimators_[0].coefs_[0], c.estimators_[0].coefs_[0])
    assert a.estimator.random_state is None  # the parameter is not changed


def _xor(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    s = (X[:, :3] > 0).astype(int)
    return X, (s[:, 0] ^ s[:, 1]) + 2 * (s[:, 1] ^ s[:, 2])


def test_learns_a_nonlinear_stream_the_linear_learner_cannot():
    """On XOR of signs (4 classes; no linear score separates them, so a linear
    learner cannot beat chance by much) a small network under the same inverse
    gap weighting ends well below the linear SquareCB's error (caught: the
    network never learning, e.g. targets of the wrong class)."""
    X, y = _xor(4000, seed=0)
    mlp = MLPRegressor(hidden_layer_sizes=(32,), learning_rate_init=0.01)
    nonlinear = RegressionReduction(
        estimator=mlp, per_class=False, batch_size=8, random_state=0
    )
    nonlinear.partial_fit(X[:3000], y[:3000], classes=range(4))
    linear = SquareCB(random_state=0).partial_fit(X[:3000], y[:3000], classes=range(4))
    nonlinear_error = np.mean(nonlinear.predict(X[3000:]) != y[3000:])
    linear_error = np.mean(linear.predict(X[3000:]) != y[3000:])
    assert linear_error > 0.4  # the stream is not linearly learnable
    assert nonlinear_error < 0.5 * linear_error


# scikit-learn's checks with a network as the reward model (one multi-output
# MLP; its training-accuracy check runs 5 passes over about 100 rows: the
# network needs a larger step than MLPRegressor's default 1e-3)
@parametrize_with_checks(
    [
        RegressionReduction(
            estimator=MLPRegressor(
                hidden_layer_sizes=(16,), learning_rate_init=0.01, random_state=0
            ),
            per_class=False,
            batch_size=16,
            random_state=0,
        )
    ]
)
def test_sklearn_checks_with_a_network(estimator, check):
    check(estimator)


def test_bench_regression_reduction_smoke_run():
    """bench_regression_reduction.py runs every learner on every stream; its
    default regressor and the same regressor asked for ``predict`` play
    alike (equal errors: a formula that drifted from ``predict`` would
    play otherwise)."""
    out = run_benchmark(
        "bench_regression_reduction.py", "--n", "120", "--seeds", "0",
        "--max-rounds-batch1", "40",
    )  # fmt: skip
    blocks = out.stdout.split("\n\n")[1:]
    assert len(blocks) == 3, out.stdout
    for block in blocks:
        rows = {
            line[:43].strip(): line[43:].split()
            for line in block.splitlines()[2:]
            if line.strip()
        }
        assert len(rows) == 8, block
        fast = rows["SGD per class on RFF(500), batch 1"]
        asked = rows["the same, asked for predict"]
        assert fast[0] == asked[0], block
