"""Sufficient statistics of off-policy evaluation: per-partition, merged, estimated.

The logged rounds ``(x_i, a_i, r_i, p_i)`` live in the partitions of a Dask
DataFrame (e.g. ``dask.dataframe.read_parquet`` of a directory of daily logs)
or in the row chunks of Dask arrays. Each partition is reduced to *sufficient
statistics* (counts, means and centred co-moments); the statistics of two
partitions merge exactly (Chan, Golub and LeVeque, 1983), and the estimates and
intervals of :func:`skbandit.evaluation.evaluate_policy` are functions of the
merged statistics. Several candidate policies are evaluated in the same pass.

For one policy ``pi`` with importance weights ``w_i = pi(a_i | x_i) / p_i``
(``min(w_i, clip)`` when clipped), per round the vector ``z_i = (u_i, w_i,
d_i)`` with ``u_i = w_i r_i`` and the doubly robust term ``d_i = sum_a pi(a |
x_i) h(x_i, a) + w_i (r_i - h(x_i, a_i))``. With ``n``, the means ``(u, w, d)``
and the centred co-moments ``C = sum_i (z_i - zbar)(z_i - zbar)^T``:

* IPS: ``V = ubar``, ``sd^2 = C_uu / (n - 1)``;
* SNIPS: ``V = ubar / wbar``, ``sd^2 = (C_uu - 2 V C_uw + V^2 C_ww) /
  ((n - 1) wbar^2)``, the sample variance of the delta-method terms
  ``w_i (r_i - V) / wbar`` (whose mean is zero);
* DR: ``V = dbar``, ``sd^2 = C_dd / (n - 1)``;

and the interval is ``V -+ z sd / sqrt(n)``, as in memory. The effective
sample size is ``(sum w)^2 / sum w^2 = (n wbar)^2 / (C_ww + n wbar^2)``.

The doubly robust reward model is ridge regression per action (scikit-learn's
``Ridge(alpha)``, with intercept: the in-memory default), cross-fitted by
partition: the predictions on a partition come from the models fitted on all
the other partitions. A ridge fit needs only the per-action count, means and
co-moments of ``(x, r)``, so the models are fitted from the per-partition
statistics (leave-one-partition-out merges of prefixes and suffixes, no
subtraction) without moving rows. :func:`cross_fit_ridge_predictions` is the
in-memory equivalent with explicit folds.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from skbandit.evaluation._ope_checks import _logged_codes
from skbandit.evaluation._ope_intervals import _interval
from skbandit.evaluation._ope_results import OffPolicyEstimate
from skbandit.feedback import LoggedFeedback

__all__ = ["cross_fit_ridge_predictions"]


@dataclass(frozen=True)
class Moments:
    """Count, mean and centred co-moment matrix of the rows of an (n, m) array.

    ``merge`` combines two sets of rows exactly (Chan, Golub and LeVeque,
    1983): with ``delta = mean_b - mean_a`` and ``n = n_a + n_b``,
    ``mean = mean_a + delta n_b / n`` and
    ``C = C_a + C_b + delta delta^T n_a n_b / n``.
    """

    n: int
    mean: np.ndarray
    comoment: np.ndarray

    @classmethod
    def of(cls, Z: np.ndarray) -> Moments:
        m = Z.shape[1]
        if Z.shape[0] == 0:
            return cls(0, np.zeros(m), np.zeros((m, m)))
        mean = Z.mean(axis=0)
        D = Z - mean
        return cls(int(Z.shape[0]), mean, D.T @ D)

    def merge(self, other: Moments) -> Moments:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        scale = self.n * other.n / n
        comoment = self.comoment + other.comoment + np.outer(delta, delta) * scale
        return Moments(n, mean, comoment)


@dataclass(frozen=True)
class _RewardStatistics:
    """Per action: the moments of ``(x, r)`` over the rows where it was logged."""

    moments: tuple[Moments, ...]

    @classmethod
    def of(cls, X, codes, rewards, k) -> _RewardStatistics:
        Z = np.column_stack([X, rewards])
        return cls(tuple(Moments.of(Z[codes == a]) for a in range(k)))

    def merge(self, other: _RewardStatistics) -> _RewardStatistics:
        pairs = zip(self.moments, other.moments, strict=True)
        return _RewardStatistics(tuple(a.merge(b) for a, b in pairs))

    def ridge(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """``(coef, intercept)`` of shapes (k, d), (k,): one ridge per action.

        ``coef = (C_xx + alpha I)^{-1} C_xr`` and ``intercept = rbar - xbar .
        coef`` (``Ridge(alpha)`` with intercept, which centres ``x`` and
        ``r``). On fewer than 2 rows or a constant reward ``C_xr = 0``, so the
        prediction is the mean reward, as :func:`evaluate_policy`'s shortcut
        gives; an action without rows is predicted by the mean reward of all
        the rows, as there.
        """
        d = self.moments[0].mean.shape[0] - 1
        everything = self.moments[0]
        for m in self.moments[1:]:
            everything = everything.merge(m)
        coef, intercept = np.zeros((len(self.moments), d)), np.zeros(len(self.moments))
        for a, m in enumerate(self.moments):
            if m.n == 0:
                intercept[a] = everything.mean[d]
                continue
            A = m.comoment[:d, :d] + alpha * np.eye(d)
            coef[a] = np.linalg.solve(A, m.comoment[:d, d])
            intercept[a] = m.mean[d] - m.mean[:d] @ coef[a]
        return coef, intercept


def _leave_one_out(stats: Sequence[Any]) -> list[Any]:
    """``merge`` of all the items but the ``j``-th, for each ``j``: a prefix
    merged with a suffix (2 P merges, no subtraction)."""
    P = len(stats)
    prefix: list[Any] = [None] * P  # prefix[j]: items 0..j-1
    suffix: list[Any] = [None] * P  # suffix[j]: items j+1..P-1
    for j in range(1, P):
        prefix[j] = stats[0] if j == 1 else prefix[j - 1].merge(stats[j - 1])
    for j in range(P - 2, -1, -1):
        suffix[j] = stats[P - 1] if j == P - 2 else stats[j + 1].merge(suffix[j + 1])
    return [
        suffix[j]
        if prefix[j] is None
        else (prefix[j] if suffix[j] is None else prefix[j].merge(suffix[j]))
        for j in range(P)
    ]


def _fold_models(stats: Sequence[_RewardStatistics], alpha: float) -> list:
    """The ridge models of each fold, fitted on the other folds' statistics."""
    if len(stats) < 2:
        raise ValueError(
            "the doubly robust estimator cross-fits its reward model by "
            f"partition: it needs at least 2 partitions (folds), got {len(stats)}"
        )
    return [s.ridge(alpha) for s in _leave_one_out(stats)]


def _predict(X, model) -> np.ndarray:
    coef, intercept = model
    return X @ coef.T + intercept


def _check_alpha(alpha) -> float:
    number = float("nan")
    if not isinstance(alpha, bool) and isinstance(alpha, numbers.Real):
        number = float(alpha)
    if not (np.isfinite(number) and number > 0):
        raise ValueError(f"alpha must be a positive number, got {alpha!r}")
    return number


def cross_fit_ridge_predictions(
    X, logged: LoggedFeedback, classes, folds, *, alpha=1.0
):
    """Cross-fitted ridge reward predictions ``h(x_i, a)`` with explicit folds.

    The in-memory equivalent of the doubly robust reward model of
    :func:`dask_off_policy_evaluation` (where the folds are the partitions):
    the rows of fold ``f`` are predicted by one ``Ridge(alpha)`` per action
    (with intercept) fitted on the rows of the other folds where that action
    was logged: ``coef = (Xc^T Xc + alpha I)^{-1} Xc^T rc`` on the centred
    rows, ``h(x, a) = x . coef + rbar - xbar . coef``. An action with fewer
    than 2 such rows or a constant reward is predicted by its mean reward, an
    action never logged there by the mean reward of those folds (as
    :func:`evaluate_policy` does). Pass the result as ``reward_predictions``
    to :func:`evaluate_policy` for the in-memory doubly robust estimate.

    Parameters
    ----------
    X : array-like of shape (n_rounds, n_features)
        Dense contexts, one row per logged round.
    logged : LoggedFeedback
    classes : array-like of shape (n_classes,)
        The actions, sorted.
    folds : array-like of shape (n_rounds,)
        The fold of each round (any labels; at least two distinct).
    alpha : float, default=1.0
        The ridge penalty (``Ridge``'s default).

    Returns
    -------
    H : ndarray of shape (n_rounds, n_classes)

    References
    ----------
    .. [1] M. Dudik, J. Langford and L. Li, "Doubly Robust Policy Evaluation
       and Learning", ICML 2011.
    .. [2] V. Chernozhukov et al., "Double/debiased machine learning for
       treatment and structural parameters", The Econometrics Journal, 2018
       (cross-fitting).
    """
    if not isinstance(logged, LoggedFeedback):
        raise TypeError(f"logged must be a LoggedFeedback, got {type(logged).__name__}")
    alpha = _check_alpha(alpha)
    X = np.asarray(X, dtype=np.float64)
    classes = np.asarray(classes)
    n = len(logged)
    folds = np.asarray(folds)
    if X.ndim != 2 or X.shape[0] != n or folds.shape != (n,):
        raise ValueError(
            f"X must be 2-D with one row per logged round and folds one label per "
            f"round: got X of shape {X.shape}, folds of shape {folds.shape}, "
            f"{n} logged rounds"
        )
    codes = _logged_codes(logged, classes)
    labels = np.unique(folds)
    members = [np.flatnonzero(folds == f) for f in labels]
    stats = [
        _RewardStatistics.of(X[m], codes[m], logged.rewards[m], classes.shape[0])
        for m in members
    ]
    H = np.empty((n, classes.shape[0]))
    for m, model in zip(members, _fold_models(stats, alpha), strict=True):
        H[m] = _predict(X[m], model)
    return H


@dataclass(frozen=True)
class PolicyStatistics:
    """What one policy's estimates need from the log: the moments of the
    per-round ``(u, w[, d])`` (see the module docstring), the clipped rounds
    and the smallest logged propensity."""

    moments: Moments
    n_clipped: int
    min_propensity: float

    def merge(self, other: PolicyStatistics) -> PolicyStatistics:
        return PolicyStatistics(
            self.moments.merge(other.moments),
            self.n_clipped + other.n_clipped,
            min(self.min_propensity, other.min_propensity),
        )


def estimates_from_statistics(
    stats: PolicyStatistics, methods: Sequence[str], confidence: float
) -> dict[str, OffPolicyEstimate]:
    """The estimates and normal intervals of ``methods`` from reduced statistics.

    The formulas of the module docstring; the intervals through the same
    ``_interval`` as :func:`evaluate_policy`.
    """
    z = float(norm.ppf(0.5 + confidence / 2.0))
    m = stats.moments
    n, C = m.n, m.comoment
    u, w = m.mean[0], m.mean[1]
    estimates = {}
    for method in methods:
        if method == "ips":
            value, var = u, C[0, 0]
        elif method == "snips":
            if w > 0:
                value = u / w
                var = (C[0, 0] - 2 * value * C[0, 1] + value**2 * C[1, 1]) / w**2
            else:
                value, var = float("nan"), float("nan")
        else:
            value, var = m.mean[2], C[2, 2]
        sd = np.sqrt(max(var, 0.0) / (n - 1))
        estimates[method] = _interval(method, value, sd, n, z)
    return estimates
