"""Off-policy evaluation over a Dask collection: per-partition statistics, reduced.

The logged rounds ``(x_i, a_i, r_i, p_i)`` live in the partitions of a Dask
DataFrame (e.g. ``dask.dataframe.read_parquet`` of a directory of daily logs)
or in the row chunks of Dask arrays. Each partition is reduced to the
sufficient statistics of ``skbandit.evaluation._ope_statistics`` (whose
docstring has the formulas), the statistics are merged along a tree, and the
estimates and intervals of :func:`skbandit.evaluation.evaluate_policy` are
computed from the merged ones. Several candidate policies are evaluated in the
same pass.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from skbandit.base import _caller_stacklevel
from skbandit.evaluation._off_policy import (
    DEFAULT_MIN_ESS,
    _check_policy,
    _importance_weights,
    _target_proba,
)
from skbandit.evaluation._ope_checks import (
    METHODS,
    _check_options,
    _check_target_proba,
    _logged_codes,
)
from skbandit.evaluation._ope_intervals import _low_ess_estimate
from skbandit.evaluation._ope_results import (
    LowEffectiveSampleSizeWarning,
    OffPolicyResult,
)
from skbandit.evaluation._ope_statistics import (
    Moments,
    PolicyStatistics,
    _check_alpha,
    _fold_models,
    _predict,
    _RewardStatistics,
    estimates_from_statistics,
)
from skbandit.feedback import LoggedFeedback

__all__ = ["dask_off_policy_evaluation"]

DASK_EXTRA = 'pip install "skbandit[dask]"'


def require_dask(what: str, modules: Sequence[str] = ("dask",)) -> None:
    """Import ``modules`` or raise an ``ImportError`` naming the extra."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise ImportError(
                f"{what} needs {module}, which is not installed: {DASK_EXTRA}"
            ) from None


# --------------------------------------------------------------------------
# one partition
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Columns:
    features: tuple[str, ...] | None
    action: str
    reward: str
    propensity: str


def _partition_arrays(part, columns: _Columns):
    """``(X, LoggedFeedback)`` of one partition (a pandas DataFrame, or a
    tuple of the NumPy chunks of X, actions, rewards and propensities)."""
    if isinstance(part, tuple):
        X, actions, rewards, propensities = part
    else:
        names = columns.features
        if names is None:
            from pandas.api.types import is_numeric_dtype

            own = (columns.action, columns.reward, columns.propensity)
            names = tuple(
                c for c in part.columns if c not in own and is_numeric_dtype(part[c])
            )
        # filled column by column: one copy into the C-ordered float64 form
        # the policies and the reward model read (a pandas frame keeps each
        # column apart, so its to_numpy is column-major and needs a second)
        X = np.empty((len(part), len(names)), dtype=np.float64)
        for j, name in enumerate(names):
            X[:, j] = part[name].to_numpy(dtype=np.float64)
        actions = part[columns.action].to_numpy()
        rewards = part[columns.reward].to_numpy(dtype=np.float64)
        propensities = part[columns.propensity].to_numpy(dtype=np.float64)
    X = np.ascontiguousarray(X, dtype=np.float64)
    return X, LoggedFeedback(actions, rewards, propensities)


def _partition_reward_statistics(part, index, columns, classes) -> _RewardStatistics:
    X, logged = _partition_arrays(part, columns)
    codes = _logged_codes(logged, classes)
    return _RewardStatistics.of(X, codes, logged.rewards, classes.shape[0])


def _policy_proba(policy, X, kind: str, k: int) -> np.ndarray:
    pi = _target_proba(policy, X, kind) if hasattr(policy, "predict") else policy(X)
    return _check_target_proba(pi, X.shape[0], k)


def _policy_terms(policy, X, H, codes, kind, classes):
    """``(pi(a_i | x_i), sum_a pi(a | x_i) h(x_i, a))`` of one policy on a
    partition (the second None without ``H``).

    A fitted learner's greedy policy puts all its mass on its prediction
    ``g_i``: the terms are then ``[g_i = a_i]`` and ``h(x_i, g_i)``, read
    without the (n, k) matrix of target probabilities, and they are the
    same numbers (the other terms of the sum are zeros)."""
    n = X.shape[0]
    rows = np.arange(n)
    if kind == "greedy" and hasattr(policy, "predict"):
        greedy = np.searchsorted(classes, policy.predict(X))
        return (greedy == codes).astype(np.float64), (
            None if H is None else H[rows, greedy]
        )
    pi = _policy_proba(policy, X, kind, classes.shape[0])
    return pi[rows, codes], (None if H is None else (pi * H).sum(axis=1))


def _partition_statistics(
    part, index, columns, classes, policies, kind, clip, models
) -> list[PolicyStatistics]:
    """Each policy's statistics on partition ``index`` (``models``: the
    cross-fitted reward model of each partition, ``None`` without DR)."""
    X, logged = _partition_arrays(part, columns)
    model = None if models is None else models[index]
    codes = _logged_codes(logged, classes)
    r, p = logged.rewards, logged.propensities
    n = r.shape[0]
    H = None if model is None else _predict(X, model)
    h_logged = None if H is None else H[np.arange(n), codes]
    out = []
    for policy in policies.values():
        pi_logged, h_policy = _policy_terms(policy, X, H, codes, kind, classes)
        w, n_clipped = _importance_weights(pi_logged, p, clip)
        cols = [w * r, w]
        if H is not None:
            cols.append(h_policy + w * (r - h_logged))
        min_p = float(p.min()) if n else float("inf")
        out.append(
            PolicyStatistics(Moments.of(np.column_stack(cols)), n_clipped, min_p)
        )
    return out


def _merge_lists(a: list[PolicyStatistics], b: list[PolicyStatistics]):
    return [x.merge(y) for x, y in zip(a, b, strict=True)]


def _tree_reduce(items: list, merge: Callable):
    """A balanced binary tree of delayed ``merge`` calls, in a fixed order
    (adjacent pairs, left to right): the result does not depend on the
    scheduling."""
    import dask

    merge = dask.delayed(merge, pure=True)
    while len(items) > 1:
        pairs = [merge(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + ([items[-1]] if len(items) % 2 else [])
    return items[0]


def _on_partition(part, func, *args, partition_info=None):
    return func(part, partition_info["number"], *args)


def _partitions(X, logged, columns: _Columns) -> tuple[int, Callable]:
    """The number of partitions of the Dask collection and ``apply(func,
    *args)``: one delayed ``func(partition, index, *args)`` per partition.

    On a DataFrame, ``func`` is fused with the task that makes the partition
    (``map_partitions``: e.g. the Parquet read), so that the partition lives
    only inside that task, on one worker.
    """
    import dask
    import dask.array as da

    if isinstance(X, da.Array):
        if logged is None or len(logged) != 3:
            raise TypeError(
                "with a Dask array of contexts, logged must be the tuple (actions, "
                "rewards, propensities) of 1-D Dask or NumPy arrays"
            )
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D Dask array, got {X.ndim} dimension(s)")
        X = X.rechunk({1: -1})
        vectors = []
        for name, v in zip(("actions", "rewards", "propensities"), logged, strict=True):
            v = da.asarray(v)
            if v.shape != (X.shape[0],):
                raise ValueError(
                    f"logged {name} has shape {v.shape}: it needs one entry per row "
                    f"of X, shape ({X.shape[0]},)"
                )
            vectors.append(v.rechunk((X.chunks[0],)).to_delayed())
        blocks = X.to_delayed()[:, 0]
        parts = [
            dask.delayed(tuple, pure=True)([b, a, r, p])
            for b, a, r, p in zip(blocks, *vectors, strict=True)
        ]

        def apply_blocks(func, *args):
            call = dask.delayed(func, pure=True)
            return [call(part, i, *args) for i, part in enumerate(parts)]

        return len(parts), apply_blocks
    if hasattr(X, "map_partitions") and hasattr(X, "columns"):
        if logged is not None:
            raise TypeError(
                "with a Dask DataFrame, the logged actions, rewards and "
                "propensities are its columns (action_column, reward_column, "
                "propensity_column): logged must be None"
            )
        missing = [
            c
            for c in (columns.action, columns.reward, columns.propensity)
            + (columns.features or ())
            if c not in X.columns
        ]
        if missing:
            raise ValueError(
                f"columns {missing} are not in the DataFrame, whose columns are "
                f"{list(X.columns)}"
            )
        frame = X

        def apply_frame(func, *args):
            out = frame.map_partitions(
                _on_partition,
                func,
                *args,
                meta=(None, "object"),
                enforce_metadata=False,
            )
            return list(out.to_delayed())

        return frame.npartitions, apply_frame
    raise TypeError(
        "X must be a Dask DataFrame of logged rounds or a 2-D Dask array of "
        f"contexts, got {type(X).__name__}"
    )


def _check_policies(policies, classes):
    if not isinstance(policies, Mapping) or not policies:
        raise TypeError(
            "policies must be a non-empty dict {name: fitted learner or callable "
            f"X -> target probabilities}}, got {type(policies).__name__}"
        )
    for name, policy in policies.items():
        if not (hasattr(policy, "predict") or callable(policy)):
            raise TypeError(
                f"policy {name!r} must be a fitted learner or a callable returning "
                f"the target probabilities, got {type(policy).__name__}"
            )
    if classes is None:
        fitted = [p for p in policies.values() if hasattr(p, "classes_")]
        if not fitted:
            raise ValueError(
                "classes is needed when no policy is a fitted learner with classes_"
            )
        classes = fitted[0].classes_
    classes = np.asarray(classes)
    for name, policy in policies.items():
        own = getattr(policy, "classes_", None)
        if own is not None and not np.array_equal(np.asarray(own), classes):
            raise ValueError(
                f"policy {name!r} has classes {np.asarray(own).tolist()}, not "
                f"{classes.tolist()}: all policies must act on the same classes"
            )
    return classes


def dask_off_policy_evaluation(
    policies: Mapping[str, Any],
    X,
    logged=None,
    *,
    classes=None,
    feature_columns: Sequence[str] | None = None,
    action_column: str = "action",
    reward_column: str = "reward",
    propensity_column: str = "propensity",
    policy: str = "greedy",
    methods: Sequence[str] = METHODS,
    alpha: float = 1.0,
    clip: float | None = None,
    min_effective_sample_size: float | None = DEFAULT_MIN_ESS,
    confidence: float = 0.95,
) -> dict[str, OffPolicyResult]:
    """Estimate the values of several policies on logs held in a Dask collection.

    Each partition is reduced, on the workers, to the sufficient statistics of
    every policy: the count ``n``, the means and the centred co-moments ``C``
    of ``z_i = (u_i, w_i, d_i)``, with ``w_i = pi(a_i | x_i) / p_i``,
    ``u_i = w_i r_i`` and ``d_i = sum_a pi(a | x_i) h(x_i, a) + w_i (r_i -
    h(x_i, a_i))``. The statistics are merged in a fixed binary tree (Chan,
    Golub and LeVeque: ``mean = mean_A + delta n_B / n``, ``C = C_A + C_B +
    delta delta^T n_A n_B / n``), and then IPS is ``ubar`` with variance
    ``C_uu / (n - 1)``, SNIPS ``V = ubar / wbar`` with ``(C_uu - 2 V C_uw +
    V^2 C_ww) / ((n - 1) wbar^2)`` (the delta method), DR ``dbar`` with
    ``C_dd / (n - 1)``, each with the interval ``V -+ z sd / sqrt(n)``: the
    formulas of :func:`evaluate_policy`, so the same numbers as in memory up
    to rounding, with memory per worker bounded by a few partitions. All the
    policies are evaluated in one pass over the data (DR takes one more pass
    first, to fit its reward model).

    The doubly robust reward model is cross-fitted by partition: one
    ``Ridge(alpha)`` per action fitted on all the *other* partitions, from
    their statistics (no rows move). The result depends only on the data and
    its partitioning, not on the scheduler, the number of workers or any
    seed. Its in-memory equivalent is :func:`evaluate_policy` with
    ``reward_predictions=cross_fit_ridge_predictions(X, logged, classes,
    folds)``, ``folds`` the partition of each row.

    Parameters
    ----------
    policies : dict of str to fitted learner or callable
        The candidate policies: a fitted learner (its greedy policy, or its
        exploration distribution with ``policy="exploration"``) or a callable
        mapping a partition's contexts (an ndarray) to the target
        probabilities ``pi(a | x)``, shape (n_rows, n_classes) in ``classes``
        order. They are shipped to the workers once.
    X : dask.dataframe.DataFrame or dask.array.Array
        The logged rounds: a Dask DataFrame with the contexts and the
        ``action_column``, ``reward_column`` and ``propensity_column`` (e.g.
        ``dask.dataframe.read_parquet(path)``), or a 2-D Dask array of
        contexts with ``logged``.
    logged : tuple of 3 arrays, default=None
        With a Dask array ``X``: the logged ``(actions, rewards,
        propensities)``, 1-D Dask (or NumPy) arrays, rechunked like ``X``'s
        rows. ``None`` with a DataFrame.
    classes : array-like of shape (n_classes,), default=None
        The actions, sorted; by default the fitted policies' ``classes_``
        (which must agree).
    feature_columns : sequence of str, default=None
        The context columns of a DataFrame, in the policies' feature order;
        by default its numeric columns but the three logged ones, in order
        (so the categorical columns that ``read_parquet`` makes of
        ``key=value`` directories, e.g. ``day=2024-01-31/``, are left out).
    action_column, reward_column, propensity_column : str
        The logged columns of a DataFrame.
    policy : {"greedy", "exploration"}, default="greedy"
        Which policy of the fitted learners is evaluated.
    methods : sequence of {"ips", "snips", "dr"}, default=all three
    alpha : float, default=1.0
        The ridge penalty of the DR reward model.
    clip, min_effective_sample_size, confidence
        As in :func:`evaluate_policy` (weight clipping; a
        :class:`LowEffectiveSampleSizeWarning` per policy whose effective
        sample size is below ``min_effective_sample_size``; the level).

    Returns
    -------
    results : dict of str to OffPolicyResult
        One per policy, in the order given (``weights`` and
        ``reward_predictions`` are ``None``: they are never gathered).

    References
    ----------
    .. [1] M. Dudik, J. Langford and L. Li, "Doubly Robust Policy Evaluation
       and Learning", ICML 2011.
    .. [2] T. F. Chan, G. H. Golub and R. J. LeVeque, "Algorithms for
       computing the sample variance: analysis and recommendations", The
       American Statistician 37(3), 1983 (merging moments).
    .. [3] A. Kong, "A note on importance sampling using standardized
       weights", Technical report 348, University of Chicago, 1992.
    """
    require_dask("dask_off_policy_evaluation", ("dask", "dask.array"))
    import dask

    methods, clip, min_ess = _check_options(
        methods, confidence, clip, min_effective_sample_size
    )
    _check_policy(policy)
    alpha = _check_alpha(alpha)
    classes = _check_policies(policies, classes)
    columns = _Columns(
        None if feature_columns is None else tuple(feature_columns),
        action_column,
        reward_column,
        propensity_column,
    )
    _, apply = _partitions(X, logged, columns)
    models = None
    if "dr" in methods:
        fits = apply(_partition_reward_statistics, columns, classes)
        (reward_stats,) = dask.compute(fits)
        models = dask.delayed(_fold_models(reward_stats, alpha), traverse=False)
    shipped = dask.delayed(dict(policies), pure=True, traverse=False)
    stats = apply(
        _partition_statistics, columns, classes, shipped, policy, clip, models
    )
    (merged,) = dask.compute(_tree_reduce(stats, _merge_lists))
    results = {}
    for name, s in zip(policies, merged, strict=True):
        n = s.moments.n
        if n < 2:
            raise ValueError("off-policy evaluation needs at least 2 logged rounds")
        w_mean, w_comoment = s.moments.mean[1], s.moments.comoment[1, 1]
        sum_w2 = w_comoment + n * w_mean**2
        ess = float((n * w_mean) ** 2 / sum_w2) if sum_w2 > 0 else 0.0
        estimates = estimates_from_statistics(s, methods, confidence)
        if min_ess is not None and ess < min_ess:
            # evaluate_policy's betting interval bets round after round in the
            # logged order, which no per-partition sum gives: withheld here
            why = (
                f"effective sample size {ess:.1f} < "
                f"min_effective_sample_size={min_ess:g}"
            )
            note = (
                "no normal-approximation interval, and the betting interval "
                "needs the rounds in logged order in one process (evaluate_policy "
                "on the collected rounds): no interval"
            )
            estimates = {
                m: _low_ess_estimate(e, why, None, note) for m, e in estimates.items()
            }
            warnings.warn(
                f"policy {name!r}: the effective sample size (sum w)^2 / sum w^2 "
                f"of the importance weights is {ess:.1f} of {n} logged rounds, "
                f"below min_effective_sample_size={min_ess:g}: the intervals are "
                "withheld (NaN bounds; see each estimate's reason)",
                LowEffectiveSampleSizeWarning,
                stacklevel=_caller_stacklevel(),
            )
        results[name] = OffPolicyResult(
            name=name,
            policy=policy if hasattr(policies[name], "predict") else "given",
            n_rounds=n,
            confidence=confidence,
            estimates=estimates,
            weights=None,
            effective_sample_size=ess,
            min_propensity=s.min_propensity,
            clip=clip,
            n_clipped=s.n_clipped,
            reward_predictions=None,
        )
    return results
