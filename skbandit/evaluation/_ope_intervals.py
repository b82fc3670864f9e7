"""Confidence intervals of the off-policy estimates.

The normal approximation from the sample variance of the per-round terms, the
effective sample size of the importance weights (Kong, 1992), and, below its
threshold, the finite-sample betting interval (Waudby-Smith and Ramdas, 2024;
Karampatziakis, Mineiro and Ramdas, 2021) or none.
"""

from __future__ import annotations

import numpy as np

from skbandit.evaluation._ope_results import OffPolicyEstimate

# the betting interval's bets stay within [0, c / m] (the capital stays >= 1 - c)
_BET_CAP = 0.5


def _interval(method, value, terms_sd, n, z) -> OffPolicyEstimate:
    se = float(terms_sd / np.sqrt(n)) if n > 1 else float("nan")
    return OffPolicyEstimate(method, float(value), se, value - z * se, value + z * se)


def _effective_sample_size(w: np.ndarray) -> float:
    """``(sum w)^2 / sum w^2`` (Kong 1992), computed on ``w / max(w)`` (the
    same ratio) so that huge weights do not overflow; 0 when every ``w`` is 0."""
    top = float(w.max())
    if not top > 0.0:
        return 0.0
    scaled = w / top
    return float(scaled.sum() ** 2 / (scaled**2).sum())


def _betting_lower_bound(x: np.ndarray, alpha: float, upper: float) -> float:
    """Lower confidence bound at level ``1 - alpha`` on the mean of ``x >= 0``.

    The rounds are bets against "the mean is ``m``": the capital
    ``K(m) = prod_t (1 + lambda_t(m) (x_t - m))`` is a nonnegative martingale
    when the mean is ``m`` (also for adaptively logged rounds, each with mean
    ``m`` given the past), so ``P(K(m) >= 1 / alpha) <= alpha`` by Markov's
    (Ville's) inequality, and ``{m : K(m) < 1 / alpha}`` is a confidence set
    (Waudby-Smith and Ramdas 2024; for importance-weighted rewards, which are
    nonnegative but unbounded above, Karampatziakis, Mineiro and Ramdas 2021).
    The bets are their predictable plug-in
    ``lambda_t = sqrt(2 log(1 / alpha) / (n s_{t-1}^2))``, with the running
    estimates ``mu_t = (u / 2 + sum_{i <= t} x_i) / (t + 1)`` and
    ``s_t^2 = (u^2 / 4 + sum_{i <= t} (x_i - mu_i)^2) / (t + 1)``
    (``u = upper``), truncated to ``lambda_t(m) = min(lambda_t, 1 / (2 m))``
    so that every factor stays ``>= 1/2``. Each factor then decreases in
    ``m``, so the set is ``[m*, upper]`` and ``m*`` is found by bisection
    (rounded down).
    """
    n = x.shape[0]
    t = np.arange(1.0, n + 1.0)
    mu = (0.5 * upper + np.cumsum(x)) / (t + 1.0)
    with np.errstate(over="ignore"):  # an infinite variance makes a zero bet
        var = (0.25 * upper**2 + np.cumsum((x - mu) ** 2)) / (t + 1.0)
    var_before = np.concatenate(([0.25 * upper**2], var[:-1]))
    bets = np.sqrt(2.0 * np.log(1.0 / alpha) / (n * var_before))
    threshold = np.log(1.0 / alpha)

    def rejected(m: float) -> bool:
        lam = np.minimum(bets, _BET_CAP / m) if m > 0.0 else bets
        return bool(np.log1p(lam * (x - m)).sum() >= threshold)

    if not rejected(0.0):
        return 0.0
    if rejected(upper):
        return upper
    low, high = 0.0, upper
    while high - low > 1e-10 * upper:
        mid = 0.5 * (low + high)
        if rejected(mid):
            low = mid
        else:
            high = mid
    return low


def _betting_interval(w, r, clip, reward_range, alpha) -> tuple[float, float]:
    """The two-sided betting interval (each side at ``alpha / 2``) on the value
    that IPS estimates, for rewards in ``reward_range = (lo, hi)``.

    Unclipped, ``E[w] = 1`` and ``V = lo + E[w (r - lo)] = hi - E[w (hi - r)]``
    with both expectations of nonnegative terms, in ``[0, hi - lo]``. Clipped
    (``w <= M``), the terms ``w r`` lie in ``[a, b] = [M min(lo, 0),
    M max(hi, 0)]`` and ``V_clip = a + E[w r - a] = b - E[b - w r]``.
    """
    lo, hi = reward_range
    if clip is None:
        below, above, base_low, base_high = w * (r - lo), w * (hi - r), lo, hi
    else:
        base_low, base_high = clip * min(lo, 0.0), clip * max(hi, 0.0)
        below, above = w * r - base_low, base_high - w * r
    span = base_high - base_low
    low = base_low + _betting_lower_bound(below, alpha / 2.0, span)
    high = base_high - _betting_lower_bound(above, alpha / 2.0, span)
    return low, high


def _low_ess_estimate(
    normal: OffPolicyEstimate, why: str, interval: tuple[float, float] | None, note
) -> OffPolicyEstimate:
    """``normal`` with its interval replaced: by ``interval`` (the betting
    one) or, when ``None``, by NaN bounds; ``why`` and ``note`` make the reason."""
    if interval is None:
        low = high = float("nan")
        kind = "withheld"
    else:
        low, high = interval
        kind = "betting"
    return OffPolicyEstimate(
        normal.method,
        normal.value,
        normal.std_error,
        float(low),
        float(high),
        interval=kind,
        reason=f"{why}: {note}",
    )


def _replace_low_ess_intervals(
    estimates, w, r, clip, reward_range, alpha, ess, min_ess
) -> None:
    """Below the effective-sample-size threshold: the betting interval for IPS
    (and SNIPS, unclipped: it estimates the same value), no interval for DR,
    nor for anything when the rewards leave ``reward_range``."""
    why = f"effective sample size {ess:.1f} < min_effective_sample_size={min_ess:g}"
    lo, hi = reward_range
    in_range = bool(np.all((r >= lo) & (r <= hi)))
    betting = _betting_interval(w, r, clip, reward_range, alpha) if in_range else None
    for method, normal in estimates.items():
        interval = None
        if not in_range:
            note = (
                f"rewards outside reward_range=({lo:g}, {hi:g}), which the "
                "betting interval needs: no interval"
            )
        elif method == "dr":
            note = (
                "DR's terms w (r - h(x, a)) are unbounded on both sides, and no "
                "interval of it has coverage this far from the normal limit: no "
                "interval (the IPS and SNIPS betting interval bounds the same value)"
            )
        elif method == "snips" and clip is not None:
            note = (
                "clipped SNIPS estimates E[min(w, clip) r] / E[min(w, clip)], "
                "which the betting interval does not bound: no interval"
            )
        else:
            interval = betting
            note = (
                "the finite-sample betting interval on the value "
                f"(rewards in [{lo:g}, {hi:g}])"
            )
        estimates[method] = _low_ess_estimate(normal, why, interval, note)
