"""Reference of ``RegressionReduction``: the reduction's loop written again from
its docstring, around the same regressor (a black box), with the same uniforms.

What is checked is the reduction, not the regressor: scores, greedy label,
distribution (the rule's NumPy twin, ``BaseExploration.distribution``, through
``_reference.explore_round``), draw, logged propensity, the buffer of
``batch_size`` rounds and the targets each regressor learns. Per round ``t``
(1-based, global), with ``k`` classes and ``r0 = initial_reward``:

1. Outputs, one row at a time: ``o_a = model_a.predict(x)`` for a class whose
   regressor has learned (``n_a > 0``), else 0 (``per_class``); one
   multi-output model: 0 before its first update, then ``model.predict(x)``.
   Scores ``s = r0 + o``.
2. ``explore_round``: greedy label among the exact maximisers by ``u2``, the
   rule's distribution (``counts = n``: SquareCB's per-class floor), inverse
   CDF on ``u1``, the marginal over tied greedy labels.
3. The round ``(x, a, r, s)`` is buffered (``a`` and ``r`` the logged action
   and reward on a logged round); when the buffer holds ``batch_size`` rounds,
   ``per_class``: for each played class in increasing order, its model learns
   its rows with targets ``r - r0``; multi-output: the model learns every row
   with targets ``o`` (zero residual), ``r - r0`` at the played class.
   ``n_a`` counts the rows of class ``a`` learned.

The regressor of the shared suite's entries is ``SequentialSGD``, a linear
model whose row predictions are exact whatever the batch (so that it learns
digits in the pipeline test); ``BucketMean``, of ``test_regression_reduction``,
is the mean target of the rows learned so far, separately for ``x_0 > 0`` and
``x_0 <= 0`` (per output for a 2-D target): deterministic and exact too. A
scikit-learn network is not in the shared suite: its predictions of one row
depend in their last bits on the other rows of the ``predict`` call (BLAS
blocking), and dense and sparse rows take different products, so the suite's
bitwise comparisons do not hold for it; its scikit-learn checks run in
``test_regression_reduction``.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp
from _entry import Entry
from _reference import explore_round, resolved_exploration
from sklearn.base import BaseEstimator, RegressorMixin, clone

from skbandit import RegressionReduction
from skbandit.exploration import EpsilonGreedy, InverseGap


def _first_column(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X[:, [0]].toarray()).ravel()
    return np.asarray(X, dtype=np.float64)[:, 0]


class BucketMean(RegressorMixin, BaseEstimator):
    """The running mean of the targets, per bucket ``x_0 > 0`` / ``x_0 <= 0``
    (0 for a bucket without rows); sums in row order."""

    def partial_fit(self, X, y):
        y = np.asarray(y, dtype=np.float64)
        if not hasattr(self, "sums_"):
            self.sums_ = np.zeros((2, *y.shape[1:]))
            self.counts_ = np.zeros(2, dtype=np.int64)
        buckets = (_first_column(X) > 0).astype(int)
        for b, target in zip(buckets, y, strict=True):
            self.sums_[b] = self.sums_[b] + target
            self.counts_[b] += 1
        return self

    def predict(self, X):
        buckets = (_first_column(X) > 0).astype(int)
        means = np.zeros_like(self.sums_)
        seen = self.counts_ > 0
        means[seen] = (self.sums_[seen].T / self.counts_[seen]).T
        return means[buckets]


class SequentialSGD(RegressorMixin, BaseEstimator):
    """Linear regression by SGD on the squared loss, one row at a time (step
    ``eta``, weights and intercept from 0; a 2-D target: one column of
    weights per output). The predictions are sums in feature order of each
    row's own products, so a row's prediction does not depend on the other
    rows of the call (a BLAS product's may, in its last bits): the reference,
    which predicts row by row, and the learner, which predicts a segment at
    once, agree bit for bit, dense or sparse."""

    def __init__(self, eta=0.02):
        self.eta = eta

    def _rows(self, X) -> np.ndarray:
        return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)

    def _predict_rows(self, X) -> np.ndarray:
        C = self.coef_.reshape(self.coef_.shape[0], -1)
        out = np.cumsum(X[:, :, None] * C[None], axis=1)[:, -1] + self.intercept_
        return out.reshape((X.shape[0], *self.intercept_.shape))

    def partial_fit(self, X, y):
        X, y = self._rows(X), np.asarray(y, dtype=np.float64)
        if not hasattr(self, "coef_"):
            self.coef_ = np.zeros((X.shape[1], *y.shape[1:]))
            self.intercept_ = np.zeros(y.shape[1:])
        for x, target in zip(X, y, strict=True):
            err = self._predict_rows(x[None])[0] - target
            self.coef_ = self.coef_ - self.eta * np.multiply.outer(x, err)
            self.intercept_ = self.intercept_ - self.eta * err
        return self

    def predict(self, X):
        return self._predict_rows(self._rows(X))


def regression_reduction(
    X,
    y,
    U,
    k,
    *,
    t0=0,
    state=None,
    logged=None,
    estimator,
    per_class=True,
    batch_size=1,
    initial_reward=1.0,
    exploration=None,
):
    """``(played, propensities, state)`` of the rows of X from ``state``
    (None: fresh); ``logged = (actions, rewards, propensities)`` learns the
    logged rounds instead of simulating with labels ``y``."""
    rule = resolved_exploration("RegressionReduction", {"exploration": exploration}, k)
    r0 = float(initial_reward)
    if state is None:
        n_models = k if per_class else 1
        state = {
            "models": [clone(estimator) for _ in range(n_models)],
            "n_updates_": np.zeros(k, dtype=np.int64),
            "buffer": [],
        }
    state = copy.deepcopy(state)
    models, counts, buffer = state["models"], state["n_updates_"], state["buffer"]
    n = X.shape[0]
    played = np.empty(n, dtype=np.int64)
    props = np.empty(n)
    for i in range(n):
        x = X[i : i + 1]
        if per_class:
            out = np.array(
                [float(models[a].predict(x)[0]) if counts[a] > 0 else 0.0
                 for a in range(k)]
            )  # fmt: skip
        elif counts.sum() == 0:
            out = np.zeros(k)
        else:
            out = np.asarray(models[0].predict(x))[0]
        s = r0 + out
        a, _, _, marginal = explore_round(
            _Counted(rule, counts), s, t0 + i + 1, U[i, 0], U[i, 1]
        )
        if logged is None:
            r = 1.0 if a == y[i] else 0.0
            played[i], props[i] = a, marginal
        else:
            a, r = int(logged[0][i]), float(logged[1][i])
            played[i], props[i] = a, float(logged[2][i])
        buffer.append((x, a, r, out))
        if len(buffer) == batch_size:
            _learn(models, counts, buffer, per_class, r0)
            buffer.clear()
    return played, props, state


class _Counted:
    """The rule's twin with SquareCB's per-class floor context (``counts``)."""

    def __init__(self, rule, counts):
        self.rule, self.counts = rule, counts

    def distribution(self, s, t, g):
        return self.rule.distribution(s, t, g, counts=self.counts)


def _learn(models, counts, buffer, per_class, r0) -> None:
    rows = [b[0] for b in buffer]
    Xb = sp.vstack(rows, format="csr") if sp.issparse(rows[0]) else np.vstack(rows)
    actions = np.array([b[1] for b in buffer])
    targets = np.array([b[2] for b in buffer]) - r0
    if per_class:
        for a in sorted(set(actions.tolist())):
            mask = actions == a
            models[a].partial_fit(Xb[mask], targets[mask])
            counts[a] += int(mask.sum())
        return
    Y = np.array([b[3] for b in buffer])
    for j, a in enumerate(actions):
        Y[j, a] = targets[j]
        counts[a] += 1
    models[0].partial_fit(Xb, Y)


# --------------------------------------------------------------------------------------
# The shared test suite's declaration (``_registry.py``).

_INVALID = (
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": 1.5}, "batch_size"),
    ({"per_class": "yes"}, "per_class"),
    ({"initial_reward": 1.5}, "initial_reward"),
    ({"initial_reward": -0.1}, "initial_reward"),
    ({"estimator": "SGDRegressor"}, "estimator"),
    ({"exploration": InverseGap(0.0)}, "scale"),
    ({"exploration": EpsilonGreedy("adaptive")}, "SOBA"),
)

ENTRIES: list[Entry] = [
    Entry(
        RegressionReduction,
        params={"estimator": SequentialSGD()},
        invalid_params=_INVALID,
        valid_edge_params=(
            {"batch_size": 10_000},
            {"initial_reward": 0.0},
            {"exploration": EpsilonGreedy(1.0)},
            {"exploration": "greedy"},
        ),
        intercept=True,  # (the scores are not linear in x)
        python_loop=True,
    ),
    Entry(
        RegressionReduction,
        params={"estimator": SequentialSGD(), "batch_size": 3},
        variant="batch",
        intercept=True,  # (the scores are not linear in x)
        python_loop=True,
    ),
    Entry(
        RegressionReduction,
        params={"estimator": SequentialSGD(), "per_class": False, "batch_size": 2},
        variant="multi-output",
        intercept=True,  # (the scores are not linear in x)
        python_loop=True,
    ),
    Entry(
        RegressionReduction,
        params={"estimator": SequentialSGD(), "exploration": EpsilonGreedy(0.1)},
        variant="epsilon-greedy",
        epsilon_greedy=True,
        intercept=True,  # (the scores are not linear in x)
        python_loop=True,
    ),
]


def _logged_regression(params: dict, k: int):
    """The logged-feedback adapter (``_reference_logged.delayed_schedule``)."""

    def run(X, U, t0, state, logged):
        return regression_reduction(
            X, np.zeros(X.shape[0], int), U, k, t0=t0, state=state,
            logged=logged, **params,
        )  # fmt: skip

    return run, lambda state: {"n_updates_": state["n_updates_"]}


LOGGED_ADAPTERS = {"RegressionReduction": _logged_regression}
