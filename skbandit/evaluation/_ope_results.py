"""The results of off-policy evaluation: estimates, intervals and warnings as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skbandit.evaluation._format import _require_pandas, format_table

__all__ = ["LowEffectiveSampleSizeWarning", "OffPolicyEstimate", "OffPolicyResult"]


class LowEffectiveSampleSizeWarning(UserWarning):
    """The importance weights leave too few effective rounds for the intervals.

    Raised by the off-policy estimators when the effective sample size
    ``(sum w)^2 / sum w^2`` of the importance weights (Kong, 1992) is below
    ``min_effective_sample_size`` (100 by default): the estimate then rests on
    a few heavily weighted rounds, and a normal-approximation interval is
    typically too narrow, so none is given: IPS and SNIPS get the betting
    interval instead and DR no interval (see :func:`evaluate_policy`). A large
    effective sample size is necessary, not sufficient: weights that the log
    never revealed (tiny propensities on actions the target policy favours)
    are not in the sum.
    """


@dataclass(frozen=True)
class OffPolicyEstimate:
    """One estimate of a policy's value, with its confidence interval.

    Attributes
    ----------
    method : {"ips", "snips", "dr"}
    value : float
        The estimated value (expected reward per round).
    std_error : float
        Standard error: the sample standard deviation of the per-round terms
        divided by ``sqrt(n)`` (whatever the interval).
    ci_low, ci_high : float
        The interval: ``value -+ z * std_error`` with ``z`` the normal
        quantile of the confidence level (``interval="normal"``), the betting
        interval (``"betting"``), or NaN (``"withheld"``).
    interval : {"normal", "betting", "withheld"}
        How the interval was made (see :func:`evaluate_policy`).
    reason : str or None
        Why the interval is not the normal one; ``None`` when it is.
    """

    method: str
    value: float
    std_error: float
    ci_low: float
    ci_high: float
    interval: str = "normal"
    reason: str | None = None

    def covers(self, value: float) -> bool:
        """Whether the interval contains ``value`` (``False`` when withheld)."""
        return bool(self.ci_low <= value <= self.ci_high)


@dataclass
class OffPolicyResult:
    """Off-policy estimates of one policy's value on one log.

    Attributes
    ----------
    name : str
        Name of the evaluated policy.
    policy : str
        ``"greedy"``, ``"exploration"`` or ``"given"`` (probabilities passed in).
    n_rounds : int
        Logged rounds used.
    confidence : float
        Level of the intervals.
    estimates : dict of str to OffPolicyEstimate
        One per method, in the order asked.
    weights : ndarray of float64
        Importance weights ``pi(a_i | x_i) / p_i`` used by the estimators
        (``min(., clip)`` when clipped).
    effective_sample_size : float
        ``(sum w)^2 / sum w^2`` of those weights: how many rounds the log is
        worth for this policy (small values mean high variance).
    min_propensity : float
        The smallest logged propensity ``min_i p_i`` (the largest possible
        weight is ``1 / min_propensity``).
    clip : float or None
        The weight clipping threshold used (``None``: no clipping).
    n_clipped : int
        Rounds whose weight exceeded ``clip`` and was clipped.
    reward_predictions : ndarray of shape (n_rounds, n_classes) or None
        The reward model's predictions ``h(x_i, a)`` that DR used: the
        cross-fitted ones (each row predicted by models fitted on the other
        folds), or those passed in; ``None`` when DR was not asked. Passing
        them back as ``reward_predictions`` reproduces the DR estimate.
    """

    name: str
    policy: str
    n_rounds: int
    confidence: float
    estimates: dict[str, OffPolicyEstimate] = field(default_factory=dict)
    weights: np.ndarray | None = None
    effective_sample_size: float = float("nan")
    min_propensity: float = float("nan")
    clip: float | None = None
    n_clipped: int = 0
    reward_predictions: np.ndarray | None = None

    def __getitem__(self, method: str) -> OffPolicyEstimate:
        return self.estimates[method]

    def summary(self) -> list[dict[str, Any]]:
        """One row per method: name, policy, method, value, std_error, interval."""
        return [
            {
                "name": self.name,
                "policy": self.policy,
                "method": e.method,
                "value": e.value,
                "std_error": e.std_error,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "interval": e.interval,
                "n_rounds": self.n_rounds,
                "ess": self.effective_sample_size,
                "min_propensity": self.min_propensity,
            }
            for e in self.estimates.values()
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain Python data (JSON-serialisable)."""
        return {
            "name": self.name,
            "policy": self.policy,
            "n_rounds": self.n_rounds,
            "confidence": self.confidence,
            "effective_sample_size": self.effective_sample_size,
            "min_propensity": self.min_propensity,
            "clip": self.clip,
            "n_clipped": self.n_clipped,
            "estimates": {
                m: {
                    "value": e.value,
                    "std_error": e.std_error,
                    "ci_low": e.ci_low,
                    "ci_high": e.ci_high,
                    "interval": e.interval,
                    "reason": e.reason,
                }
                for m, e in self.estimates.items()
            },
        }

    def to_frame(self):
        """A pandas DataFrame of ``summary()`` (needs pandas)."""
        pd = _require_pandas("OffPolicyResult.to_frame")
        return pd.DataFrame(self.summary())

    def __str__(self) -> str:
        level = f"{100 * self.confidence:g}%"
        head = (
            f"{self.name} ({self.policy} policy) on {self.n_rounds:,} logged rounds, "
            f"effective sample size {self.effective_sample_size:,.0f}, "
            f"smallest propensity {self.min_propensity:.3g}, "
            f"{level} intervals"
        )
        if self.clip is not None:
            head += f", weights clipped at {self.clip:g} ({self.n_clipped:,} rounds)"
        cols = ["method", "value", "std_error", "ci_low", "ci_high", "interval"]
        notes = [f"{e.method}: {e.reason}" for e in self.estimates.values() if e.reason]
        return "\n".join([head, format_table(self.summary(), cols), *notes])
