"""Input checks of off-policy evaluation, shared by the in-memory and Dask paths."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.validation import _num_samples

from skbandit.feedback import LoggedFeedback, _search_codes

METHODS = ("ips", "snips", "dr")
# tolerance on the row sums of a target policy's probabilities
_SUM_TOL = 1e-6


def _check_methods(methods) -> tuple[str, ...]:
    if isinstance(methods, str):
        methods = (methods,)
    methods = tuple(methods)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; choose among {METHODS}")
    if not methods:
        raise ValueError("methods is empty")
    return methods


def _check_options(
    methods, confidence, clip, min_effective_sample_size
) -> tuple[tuple[str, ...], float | None, float | None]:
    """The estimators' options, checked: ``(methods, clip, min_ess)``."""
    methods = _check_methods(methods)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    clip = _check_positive_or_none(clip, "clip")
    min_ess = _check_positive_or_none(
        min_effective_sample_size, "min_effective_sample_size"
    )
    return methods, clip, min_ess


def _logged_codes(logged: LoggedFeedback, classes: np.ndarray) -> np.ndarray:
    codes, known = _search_codes(logged.actions, classes)
    if not np.all(known):
        unknown = np.unique(logged.actions[~known])
        raise ValueError(
            f"logged actions not among the policy's classes: {unknown.tolist()[:10]}"
        )
    return codes


def _check_logged(logged) -> None:
    if not isinstance(logged, LoggedFeedback):
        raise TypeError(
            "logged must be a LoggedFeedback(actions, rewards, propensities), got "
            f"{type(logged).__name__}"
        )


def _check_contexts(X, n: int) -> None:
    """``X`` must hold one row (context) per logged round."""
    try:
        n_rows = _num_samples(X)
    except TypeError as exc:
        raise TypeError(
            f"X must be an array-like or sparse matrix of contexts: {exc}"
        ) from None
    if n_rows != n:
        raise ValueError(
            f"X has {n_rows} rows but logged has {n} rounds: X must hold the "
            "context of every logged round, in the log's order"
        )


def _check_target_proba(target_proba, n: int, k: int) -> np.ndarray:
    """``target_proba`` as a float64 (n, k) matrix of probability rows."""
    pi = np.asarray(target_proba, dtype=np.float64)
    if pi.ndim != 2:
        raise ValueError(
            f"target_proba must be 2-D, of shape (n_rounds, n_classes) = {(n, k)}; "
            f"got {pi.ndim} dimension(s), shape {pi.shape}"
        )
    if pi.shape[0] != n:
        raise ValueError(
            f"target_proba has {pi.shape[0]} rows but logged has {n} rounds: it "
            "needs one row of probabilities per logged round"
        )
    if pi.shape[1] != k:
        raise ValueError(
            f"target_proba has {pi.shape[1]} columns but classes has {k} actions: "
            "it needs one column per action, in classes order"
        )
    if not np.all(np.isfinite(pi)):
        bad = np.flatnonzero(~np.all(np.isfinite(pi), axis=1))
        raise ValueError(
            f"target_proba has non-finite values (NaN or inf) in rows "
            f"{bad.tolist()[:10]}"
        )
    if np.any(pi < 0.0):
        bad = np.flatnonzero(np.any(pi < 0.0, axis=1))
        raise ValueError(
            f"target_proba has negative probabilities in rows {bad.tolist()[:10]}"
        )
    sums = pi.sum(axis=1)
    off = np.abs(sums - 1.0) > _SUM_TOL
    if np.any(off):
        bad = np.flatnonzero(off)
        raise ValueError(
            f"the rows of target_proba must sum to one (within {_SUM_TOL:g}); rows "
            f"{bad.tolist()[:10]} sum to {sums[bad][:10].tolist()}"
        )
    return pi


def _check_reward_predictions(reward_predictions, n: int, k: int) -> np.ndarray:
    H = np.asarray(reward_predictions, dtype=np.float64)
    if H.shape != (n, k):
        raise ValueError(
            f"reward_predictions has shape {H.shape} but logged has {n} rounds and "
            f"classes has {k} actions: it needs shape (n_rounds, n_classes) = "
            f"{(n, k)}, the reward model's prediction for every round and action"
        )
    if not np.all(np.isfinite(H)):
        bad = np.flatnonzero(~np.all(np.isfinite(H), axis=1))
        raise ValueError(
            f"reward_predictions has non-finite values in rows {bad.tolist()[:10]}"
        )
    return H


def _check_positive_or_none(value, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number or None, got {value!r}")
    number = float(value)
    if not (np.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive number or None, got {value!r}")
    return number


def _check_reward_range(reward_range) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in reward_range)
    except (TypeError, ValueError):
        raise TypeError(
            f"reward_range must be a pair of numbers (lo, hi), got {reward_range!r}"
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(
            f"reward_range must be finite with lo < hi, got {reward_range!r}"
        )
    return lo, hi
