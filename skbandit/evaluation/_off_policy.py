"""Off-policy evaluation of a policy on logged bandit data: results as data.

Logged rounds ``(x_i, a_i, r_i, p_i)`` were collected by some logging policy
(``p_i`` is the probability with which it chose ``a_i``). The value of a target
policy ``pi`` (the probability ``pi(a | x)`` of playing ``a`` on ``x``) is its
expected reward, ``V(pi) = E_x E_{a ~ pi(.|x)} r(x, a)``. With the importance
weights ``w_i = pi(a_i | x_i) / p_i`` (Dudik, Langford and Li, 2011):

* inverse propensity scoring: ``V_IPS = mean_i w_i r_i``;
* self-normalised IPS: ``V_SNIPS = sum_i w_i r_i / sum_i w_i``;
* doubly robust, with a reward model ``h(x, a)``:
  ``V_DR = mean_i [ sum_a pi(a | x_i) h(x_i, a) + w_i (r_i - h(x_i, a_i)) ]``.

IPS and DR are unbiased when every ``p_i`` is the true propensity (and positive
wherever ``pi`` is); DR stays unbiased with any reward model fitted on other
rows (cross-fitting), and has a smaller variance the better the model. The
confidence intervals are normal approximations from the sample variance of the
per-round terms (SNIPS: of its linearisation, the delta method) when the
effective sample size of the weights is large enough; below that, IPS and SNIPS
get a finite-sample betting interval (Waudby-Smith and Ramdas, 2024;
Karampatziakis, Mineiro and Ramdas, 2021) and DR none.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm
from sklearn.base import clone
from sklearn.model_selection import KFold
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_is_fitted

from skbandit.base import _caller_stacklevel
from skbandit.evaluation._ope_checks import (
    METHODS,
    _check_contexts,
    _check_logged,
    _check_methods,
    _check_options,
    _check_reward_predictions,
    _check_reward_range,
    _check_target_proba,
    _logged_codes,
)
from skbandit.evaluation._ope_intervals import (
    _effective_sample_size,
    _interval,
    _replace_low_ess_intervals,
)
from skbandit.evaluation._ope_results import (
    LowEffectiveSampleSizeWarning,
    OffPolicyEstimate,
    OffPolicyResult,
)
from skbandit.feedback import LoggedFeedback

__all__ = [
    "LowEffectiveSampleSizeWarning",
    "OffPolicyEstimate",
    "OffPolicyResult",
    "evaluate_policy",
    "make_off_policy_scorer",
    "off_policy_evaluation",
]

# below this effective sample size the intervals are flagged as untrustworthy
DEFAULT_MIN_ESS = 100.0
# cross-fitting folds of DR: a fixed shuffled split unless told otherwise
DEFAULT_RANDOM_STATE = 0


def _reward_model_predictions(X, codes, rewards, k, reward_model, n_folds, seed):
    """Cross-fitted ``h(x_i, a)`` for every row and action, shape (n, k).

    The rows are split into ``n_folds`` folds; the predictions on a fold come
    from models fitted on the other folds, one clone of ``reward_model`` per
    action on the rows where that action was logged (an action never logged in
    the training folds is predicted by their mean reward).
    """
    n = rewards.shape[0]
    H = np.empty((n, k), dtype=np.float64)
    folds = KFold(n_splits=n_folds, shuffle=True, random_state=seed)
    for train, test in folds.split(np.arange(n)):
        fallback = float(rewards[train].mean())
        for a in range(k):
            rows = train[codes[train] == a]
            if rows.shape[0] < 2 or np.ptp(rewards[rows]) == 0.0:
                # too little data or a constant reward: the mean is the fit
                value = float(rewards[rows].mean()) if rows.shape[0] else fallback
                H[test, a] = value
                continue
            model = clone(reward_model).fit(_safe_indexing(X, rows), rewards[rows])
            H[test, a] = np.asarray(
                model.predict(_safe_indexing(X, test)), dtype=np.float64
            )
    return H


def _importance_weights(
    pi_logged: np.ndarray, propensities: np.ndarray, clip: float | None
) -> tuple[np.ndarray, int]:
    """The importance weights ``w_i = pi(a_i | x_i) / p_i``, clipped.

    Parameters
    ----------
    pi_logged : ndarray of shape (n_rounds,)
        The target policy's probability ``pi(a_i | x_i)`` of each logged
        action.
    propensities : ndarray of shape (n_rounds,)
        The logging policy's propensities ``p_i``.
    clip : float or None
        Clipping threshold: the weights are ``min(w_i, clip)``; ``None``
        leaves them as they are.

    Returns
    -------
    weights : ndarray of shape (n_rounds,)
        The (clipped) importance weights.
    n_clipped : int
        How many weights exceeded ``clip`` (0 without clipping).
    """
    w = pi_logged / propensities
    n_clipped = 0
    if clip is not None:
        n_clipped = int(np.count_nonzero(w > clip))
        w = np.minimum(w, clip)
    return w, n_clipped


def evaluate_policy(
    target_proba,
    logged: LoggedFeedback,
    classes,
    *,
    X=None,
    methods: Sequence[str] = METHODS,
    reward_model=None,
    reward_predictions=None,
    n_folds: int = 2,
    clip: float | None = None,
    min_effective_sample_size: float | None = DEFAULT_MIN_ESS,
    confidence: float = 0.95,
    reward_range: tuple[float, float] = (0.0, 1.0),
    random_state=DEFAULT_RANDOM_STATE,
    name: str = "policy",
    policy: str = "given",
) -> OffPolicyResult:
    """Estimate the value of a policy given by its probabilities on the log.

    With the importance weights ``w_i = pi(a_i | x_i) / p_i`` (or, with
    ``clip=M``, ``min(w_i, M)``) and a reward model ``h``:

    * IPS: ``V = mean_i w_i r_i``;
    * SNIPS: ``V = sum_i w_i r_i / sum_i w_i``;
    * DR: ``V = mean_i [sum_a pi(a | x_i) h(x_i, a) + w_i (r_i - h(x_i, a_i))]``.

    **Intervals.** When the effective sample size ``(sum w)^2 / sum w^2`` of
    the weights is at least ``min_effective_sample_size``, the intervals are
    normal approximations ``V -+ z * sd / sqrt(n)``, with ``sd`` the sample
    standard deviation (``ddof=1``) of the per-round terms (IPS: ``w_i r_i``;
    DR: the bracket above; SNIPS: its delta-method linearisation
    ``w_i (r_i - V) / mean(w)``). Below it they are not to be trusted (on
    logs with few effective rounds, normal intervals cover the true value far
    less often than their level: ``benchmarks/ope_coverage.py``,
    ``docs/results/off-policy-coverage/``), so the rule is:

    * IPS, and SNIPS unclipped: the **betting interval** on the value, whose
      coverage is at least its nominal level at every sample size when the
      propensities are right (and positive wherever ``pi`` is) and the
      rewards lie in ``reward_range = (lo, hi)``. Unclipped,
      ``E[w] = 1`` gives ``V = lo + E[w (r - lo)] = hi - E[w (hi - r)]``, two
      means of nonnegative terms; each gets a one-sided lower confidence bound
      at level ``alpha / 2`` by betting (a nonnegative martingale
      ``prod_t (1 + lambda_t (x_t - m))`` and Ville's inequality;
      Waudby-Smith and Ramdas 2024, Karampatziakis, Mineiro and Ramdas 2021),
      so that the two-sided interval has level ``1 - alpha``. Clipped, the
      terms ``min(w, M) r`` lie in ``[M min(lo, 0), M max(hi, 0)]`` and the
      same bounds give the interval on ``V_clip = E[min(w, M) r]``. The
      bets are Waudby-Smith and Ramdas's predictable plug-in, run in the
      log's order, so the interval stays valid on
      adaptively collected logs; it is wider than the normal one.
    * DR: no interval (its terms are unbounded on both sides without
      clipping); clipped SNIPS: no interval (its target is a ratio the betting
      bounds do not cover); anything, when a reward lies outside
      ``reward_range``.

    A replaced interval says so: ``estimate.interval`` is ``"betting"`` or
    ``"withheld"`` (``ci_low = ci_high = NaN``) and ``estimate.reason`` gives
    the reason; a :class:`LowEffectiveSampleSizeWarning` is raised.

    Parameters
    ----------
    target_proba : array-like of shape (n_rounds, n_classes)
        ``pi(a | x_i)`` for every logged row and action (columns in
        ``classes`` order): finite, non-negative, each row summing to one
        within ``1e-6``. Checked, with an error naming the bad rows.
    logged : LoggedFeedback
        The logged actions, rewards and the logging policy's propensities.
    classes : array-like of shape (n_classes,)
        The actions, sorted.
    X : {array-like, sparse matrix} of shape (n_rounds, n_features), default=None
        The logged contexts, one row per logged round (a NumPy array, a pandas
        DataFrame, a SciPy sparse matrix: whatever the reward model accepts;
        the cross-fitting folds are selected with scikit-learn's
        ``_safe_indexing``); needed by the doubly robust estimator when its
        reward model is fitted here (``reward_predictions=None``).
    methods : sequence of {"ips", "snips", "dr"}, default=all three
    reward_model : regressor, default=None
        The DR reward model: any scikit-learn regressor, cloned and fitted per
        action by cross-fitting (``n_folds`` folds): the predictions on a fold
        come from models fitted on the other folds only. Default: ``Ridge()``.
    reward_predictions : array-like of shape (n_rounds, n_classes), default=None
        Precomputed reward-model predictions ``h(x_i, a)`` for DR (columns in
        ``classes`` order), used as given instead of fitting ``reward_model``
        (e.g. the matrix of another library, or ``result.reward_predictions``
        of an earlier run). DR is unbiased only if ``h`` does not depend on the
        round it corrects: fit it on other data or by cross-fitting.
    n_folds : int, default=2
        Folds of the cross-fitting.
    clip : float or None, default=None
        Weight clipping: use ``min(w_i, clip)`` in every estimator. Off by
        default. Clipping lowers the variance at the price of a bias: the
        estimators then target the clipped value; IPS's is
        ``V_clip = E[min(w, clip) r] = V(pi) - E[(w - clip)_+ r]``, below the
        true value by ``E[(w - clip)_+ r]`` (for non-negative rewards), DR's
        is off by ``E[(w - clip)_+ (r - h(x, a))]``, and SNIPS targets
        ``E[min(w, clip) r] / E[min(w, clip)]``. The intervals cover the
        clipped value, not ``V(pi)``.
    min_effective_sample_size : float or None, default=100
        When the effective sample size ``(sum w)^2 / sum w^2`` of the weights
        used (clipped, if ``clip`` is set) is below this, the normal
        intervals rest on too few effective rounds: they are replaced as
        above and a :class:`LowEffectiveSampleSizeWarning` is raised.
        ``None`` keeps the normal intervals at every size, without warning.
    confidence : float, default=0.95
        Level of the intervals.
    reward_range : (float, float), default=(0.0, 1.0)
        Bounds ``(lo, hi)`` on every possible reward, known in advance; used
        only by the betting interval (a reward outside it withholds the
        interval below the threshold).
    random_state : int, RandomState instance or None, default=0
        Seeds the shuffled cross-fitting folds of DR. The default is a fixed
        split: the same rounds give the same estimate at every call (model
        selection then compares candidates on the same split). ``None`` draws
        a new split at each call.
    name, policy : str
        Labels stored in the result.

    Returns
    -------
    result : OffPolicyResult
        With the weights used, the effective sample size, the smallest logged
        propensity and, for DR, the reward-model predictions used.

    Warns
    -----
    LowEffectiveSampleSizeWarning
        When the effective sample size is below ``min_effective_sample_size``.

    References
    ----------
    .. [1] M. Dudik, J. Langford and L. Li, "Doubly Robust Policy Evaluation
       and Learning", ICML 2011.
    .. [2] A. Kong, "A note on importance sampling using standardized
       weights", Technical report 348, Department of Statistics, University of
       Chicago, 1992 (the effective sample size).
    .. [3] I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random
       variables by betting", JRSS B 86(1), 2024 (arXiv:2010.09686).
    .. [4] N. Karampatziakis, P. Mineiro and A. Ramdas, "Off-policy
       confidence sequences", ICML 2021.
    .. [5] A. Swaminathan and T. Joachims, "The self-normalized estimator
       for counterfactual learning", NeurIPS 2015 (SNIPS).
    """
    _check_logged(logged)
    methods, clip, min_ess = _check_options(
        methods, confidence, clip, min_effective_sample_size
    )
    reward_range = _check_reward_range(reward_range)
    classes = np.asarray(classes)
    n, k = len(logged), classes.shape[0]
    pi = _check_target_proba(target_proba, n, k)
    if X is not None:
        _check_contexts(X, n)
    H = None
    if reward_predictions is not None:
        H = _check_reward_predictions(reward_predictions, n, k)
    if n < 2:
        raise ValueError("off-policy evaluation needs at least 2 logged rounds")
    codes = _logged_codes(logged, classes)
    if "dr" in methods and H is None:
        if X is None:
            raise ValueError(
                "the doubly robust estimator needs X (the contexts) to fit its "
                "reward model, or reward_predictions"
            )
        if reward_model is None:
            from sklearn.linear_model import Ridge

            reward_model = Ridge()
        H = _reward_model_predictions(
            X, codes, logged.rewards, k, reward_model, n_folds, random_state
        )
    r, p = logged.rewards, logged.propensities
    w, n_clipped = _importance_weights(pi[np.arange(n), codes], p, clip)
    ess = _effective_sample_size(w)
    low_ess = min_ess is not None and ess < min_ess
    z = float(norm.ppf(0.5 + confidence / 2.0))
    estimates = {}
    for method in methods:
        if method == "ips":
            terms = w * r
            value = terms.mean()
        elif method == "snips":
            total = w.sum()
            value = float((w * r).sum() / total) if total > 0 else float("nan")
            # delta method: the linearisation of the ratio of means
            terms = w * (r - value) / w.mean() if total > 0 else np.full(n, np.nan)
        else:
            assert H is not None
            terms = (pi * H).sum(axis=1) + w * (r - H[np.arange(n), codes])
            value = terms.mean()
        estimates[method] = _interval(method, value, terms.std(ddof=1), n, z)
    if low_ess:
        assert min_ess is not None
        _replace_low_ess_intervals(
            estimates, w, r, clip, reward_range, 1.0 - confidence, ess, min_ess
        )
        warnings.warn(
            f"the effective sample size (sum w)^2 / sum w^2 of the importance "
            f"weights is {ess:.1f} of {n} logged rounds, below "
            f"min_effective_sample_size={min_ess:g}: no normal-approximation "
            "interval is given (IPS and SNIPS: the betting interval; DR: none; "
            f"the smallest logged propensity is {float(p.min()):.3g}). Consider "
            "more rounds, a logging policy closer to the target, or weight "
            "clipping (clip=...).",
            LowEffectiveSampleSizeWarning,
            stacklevel=_caller_stacklevel(),
        )
    return OffPolicyResult(
        name=name,
        policy=policy,
        n_rounds=n,
        confidence=confidence,
        estimates=estimates,
        weights=w,
        effective_sample_size=ess,
        min_propensity=float(p.min()),
        clip=clip,
        n_clipped=n_clipped,
        reward_predictions=H if "dr" in methods else None,
    )


def _check_policy(policy: str) -> None:
    """Raise a ``ValueError`` unless ``policy`` is ``"greedy"`` or
    ``"exploration"`` (which policy of a fitted learner is evaluated)."""
    if policy not in ("greedy", "exploration"):
        raise ValueError(f"policy must be 'greedy' or 'exploration', got {policy!r}")


def _target_proba(estimator, X, policy: str) -> np.ndarray:
    check_is_fitted(estimator)
    _check_policy(policy)
    if policy == "exploration":
        return estimator.exploration_distribution(X)
    pred = estimator.predict(X)
    classes = estimator.classes_
    codes = np.searchsorted(classes, pred)
    pi = np.zeros((codes.shape[0], classes.shape[0]))
    pi[np.arange(codes.shape[0]), codes] = 1.0
    return pi


def off_policy_evaluation(
    estimator,
    X,
    logged: LoggedFeedback,
    *,
    policy: str = "greedy",
    methods: Sequence[str] = METHODS,
    reward_model=None,
    reward_predictions=None,
    n_folds: int = 2,
    clip: float | None = None,
    min_effective_sample_size: float | None = DEFAULT_MIN_ESS,
    confidence: float = 0.95,
    reward_range: tuple[float, float] = (0.0, 1.0),
    random_state=DEFAULT_RANDOM_STATE,
    name: str | None = None,
) -> OffPolicyResult:
    """Estimate the value of a fitted learner's policy on logged data.

    The target policy is the learner's greedy action (``predict``, a
    deterministic policy) or its exploration distribution
    (``exploration_distribution``), frozen in its current state: the value is
    the expected reward per round of that fixed policy on rows like the
    logged ones. The learner is not changed. See :func:`evaluate_policy` for
    the estimators and their intervals.

    Parameters
    ----------
    estimator : fitted skbandit learner (or any classifier with ``classes_``
        and ``predict``; ``exploration_distribution`` for the exploration policy)
    X : {array-like, sparse matrix} of shape (n_rounds, n_features)
        The logged contexts, one row per logged round, in any form the learner
        accepts (NumPy array, pandas DataFrame, SciPy sparse matrix).
    logged : LoggedFeedback
        Logged actions, rewards and propensities of the logging policy.
    policy : {"greedy", "exploration"}, default="greedy"
    methods, reward_model, reward_predictions, n_folds, clip, \
min_effective_sample_size, confidence, reward_range, random_state
        As in :func:`evaluate_policy` (weight clipping is off by default and
        biases the estimates when on; below the effective-sample-size
        threshold a warning fires and the normal intervals are replaced; the
        cross-fitting folds are a fixed split by default).
    name : str, default=None
        Name in the result; the estimator's class name by default.

    Returns
    -------
    result : OffPolicyResult

    References
    ----------
    .. [1] M. Dudik, J. Langford and L. Li, "Doubly Robust Policy Evaluation
       and Learning", ICML 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit import Banditron, LoggedFeedback
    >>> from skbandit.exploration import EpsilonGreedy
    >>> from skbandit.evaluation import off_policy_evaluation
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2000, 5))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> actions = rng.integers(0, 2, size=2000)  # a uniform logging policy
    >>> rewards = (actions == y).astype(float)
    >>> logged = LoggedFeedback(actions, rewards, np.full(2000, 0.5))
    >>> clf = Banditron(exploration=EpsilonGreedy(0.1), random_state=0).fit(X, logged)
    >>> result = off_policy_evaluation(clf, X, logged, methods=["ips", "snips"])
    >>> 0.8 < result["snips"].value <= 1.0
    True
    """
    _check_logged(logged)
    _check_contexts(X, len(logged))
    pi = _target_proba(estimator, X, policy)
    return evaluate_policy(
        pi,
        logged,
        estimator.classes_,
        X=X,
        methods=methods,
        reward_model=reward_model,
        reward_predictions=reward_predictions,
        n_folds=n_folds,
        clip=clip,
        min_effective_sample_size=min_effective_sample_size,
        confidence=confidence,
        reward_range=reward_range,
        random_state=random_state,
        name=type(estimator).__name__ if name is None else name,
        policy=policy,
    )


def make_off_policy_scorer(
    method: str = "snips",
    *,
    policy: str = "greedy",
    reward_model=None,
    n_folds: int = 2,
    clip: float | None = None,
    min_effective_sample_size: float | None = DEFAULT_MIN_ESS,
    random_state=DEFAULT_RANDOM_STATE,
):
    """A scorer for model selection on logs: ``GridSearchCV(..., scoring=...)``.

    The returned callable ``scorer(estimator, X, logged)`` is the off-policy
    estimate (``method``) of the value of the fitted ``estimator``'s policy
    on the held-out logged rounds (greater is better). Fit and score with
    ``y = LoggedFeedback(...)`` and an explicit splitter (e.g. ``KFold``):
    the learners then learn from the logged rounds of the training folds.

    Parameters
    ----------
    method : {"ips", "snips", "dr"}, default="snips"
    policy : {"greedy", "exploration"}, default="greedy"
    reward_model, n_folds, random_state
        For ``method="dr"``, as in :func:`evaluate_policy`: by default
        (``random_state=0``) the cross-fitting folds are a fixed split, so the
        same model on the same rounds always gets the same score, and
        ``GridSearchCV`` compares candidates on one split rather than on
        noise. ``None`` draws new folds at every call.
    clip, min_effective_sample_size
        As in :func:`evaluate_policy`.

    Returns
    -------
    scorer : callable
    """
    (method,) = _check_methods(method)

    def scorer(estimator, X, y):
        if not isinstance(y, LoggedFeedback):
            raise TypeError(
                "the off-policy scorer needs y = LoggedFeedback(actions, rewards, "
                f"propensities), got {type(y).__name__}"
            )
        result = off_policy_evaluation(
            estimator,
            X,
            y,
            policy=policy,
            methods=(method,),
            reward_model=reward_model,
            n_folds=n_folds,
            clip=clip,
            min_effective_sample_size=min_effective_sample_size,
            random_state=random_state,
        )
        return result[method].value

    scorer.__name__ = f"off_policy_{method}_{policy}"
    return scorer
