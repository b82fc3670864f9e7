"""Online selection among bandit learners by off-policy estimates."""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from skbandit._core._drivers import run_scores
from skbandit._core._explore import EpsilonGreedyExplorer
from skbandit._learner_docs import learner_doc
from skbandit.base import BaseBanditClassifier, _kernel_arrays
from skbandit.exploration import (
    BaseExploration,
    EpsilonGreedy,
    ExplorationMixin,
    exploration_constraint,
)
from skbandit.multiclass._candidates import (
    _check_candidates,
    _score_twins,
    _seed_default_features,
    default_candidates,
    nonlinear_candidate,
)
from skbandit.multiclass._selector_fast import SelectorKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["OnlineSelector", "default_candidates", "nonlinear_candidate"]

# ``candidate_learning``: the kernel's codes (``_selector_fast.pyx``)
_LEARNING_MODES = {"all": 0, "own": 1, "capped": 2}

# Blocks of at least this many rounds use score twins (``_score_twins``): the
# check of the twins' states reads them once, less than the block's scoring.
_TWIN_MIN_ROWS = 32


# the skeleton's block hooks (no-ops): candidates that keep them are skipped
_BASE_BEFORE_BLOCK = BaseBanditClassifier._before_block
_BASE_AFTER_BLOCK = BaseBanditClassifier._after_block


def _length_error(candidates, kernels) -> RuntimeError:
    return RuntimeError(
        f"OnlineSelector: {len(candidates)} candidates for {len(kernels)} "
        "kernels (the candidates were changed while their kernels played)"
    )


@learner_doc
class OnlineSelector(ExplorationMixin, BaseBanditClassifier):
    r"""Online selection among bandit learners by off-policy estimates.

    Runs several candidate learners on one stream. Each round every candidate
    computes its exploration distribution ``P_c(. | x)``; the selector plays
    one action drawn from the mixture

    .. math:: Q = (1 - \mu_t) P_\ell + \mu_t \sum_{c=1}^{C} \beta_c P_c ,
              \qquad \mu_t = \max(\mu_{\min}, \mu_1 t^{-p}),

    where ``ℓ`` is the current leader, ``C`` the number of candidates, ``t ≥ 1``
    the round, ``μ_t`` the rate of its exploration rule ``EpsilonGreedy(μ_1,
    decay=p, min_epsilon=μ_min)`` (epsilon-greedy whose "uniform" part is the
    candidates' ``β``-average; an ``μ_min`` above ``μ_1`` counts as ``μ_1``)
    and ``β`` the candidates' shares of the exploration mass (uniform at the
    start, see below), and logs its propensity ``Q(a)``. The exploration share
    can decay as the estimates accumulate
    (``p = 1/3`` is the epsilon-greedy schedule ``ε_t ∝ t^{-1/3}`` of
    epoch-greedy, Langford and Zhang 2007; a heuristic here, the candidates'
    values change as they learn):
    the mixing cost, at most ``μ_t`` times the gap between the leader and the
    ``β``-average of the candidates, is then paid mostly early, while the floor
    ``μ_min`` keeps every candidate estimated (a change of concept can still
    move the leader). **Every** candidate then learns from the round through its
    logged-feedback update (the played action, the reward and the propensity
    ``Q(a)``: exactly what it would learn from ``partial_fit(x, LoggedFeedback(a,
    r, Q(a)))``), so all candidates keep learning whatever is played.

    The value of each candidate's policy is estimated off-policy by inverse propensity
    scoring (Horvitz and Thompson 1952; Dudík, Langford and Li 2011): ``z_c = r
    P_c(a) / Q(a)`` is an unbiased estimate of the reward ``P_c`` would have
    collected on the round, and ``Q ≥ μ_t β_c P_c`` bounds it by
    ``1 / (μ_t β_c)``. The sums are discounted by ``λ = 1 - 1 / window`` (none
    when ``window=None``) so that the estimates follow a drifting stream. On a
    rewarded round the leader is challenged (champion and challengers, as Vowpal
    Wabbit's ``--automl``, Wu et al. 2021): for each challenger ``c``, with the
    discounted mean ``Δ`` and variance ``σ²`` of the paired differences ``z_c -
    z_ℓ`` (one estimator of the difference on the same rounds: the candidates
    agree on most rows, so its variance is far below that of two separate
    estimates), the effective number of rounds ``n = (Σ λ^s)² / Σ λ^{2s}`` and the
    observed range ``R_c + R_ℓ`` of the differences (``R_c`` the discounted
    running maximum of ``z_c``, ``R_c ← max(λ R_c, z_c)``), the empirical
    Bernstein bound

    .. math:: \mathrm{LCB}_c = \Delta - h_c, \qquad
              h_c = \sqrt{2 \sigma^2 L / n} + (R_c + R_\ell) L / (3 n),
              \qquad L = \log\frac{1}{1 - \mathrm{confidence}}

    (Bernstein's inequality with the variance and range replaced by their
    observed values; Maurer and Pontil 2009 for the empirical version) is
    computed, and the challenger with the largest positive bound becomes the
    leader. The range term keeps the test from trusting a variance estimated
    from a few large importance weights: it needs about ``R L / (3 |Δ|)``
    rounds before a switch. Then the shares: ``β_c ∝ 1`` for the leader and for
    every candidate whose upper bound ``Δ + h_c`` against it is positive (still
    a contender), ``β_c ∝ eliminated_share`` for the others (ruled out for now:
    they cost less but keep being estimated and can come back), normalised to
    sum to one.

    **A challenger on trial.** With the share ``μ_t`` alone the test has
    little power once the share has decayed: a challenger ``c`` that
    disagrees with the leader is played on about ``μ_t β_c`` of those rounds,
    so the variance of the paired differences grows as ``1 / (μ_t β_c)`` and
    the test needs ``n ≳ 2 σ² L / Δ²`` effective rounds, often more than a
    window holds. So the challenger ``j`` with the largest positive lower
    bound at ``L = 1/2`` (about one standard error: ``Δ - sqrt(σ² / n) - (R_j
    + R_ℓ) / (6 n) > 0``) is put **on trial**: the round's share is then the
    first round's ``μ_1`` instead of ``μ_t``, the decayed part ``μ_1 - μ_t``
    going to ``P_j`` alone,

    .. math:: Q = (1 - \mu_1) P_\ell + \mu_t \sum_c \beta_c P_c
              + (\mu_1 - \mu_t) P_j ,

    so ``j``'s weights fall to about ``1 / (μ_1 - μ_t)`` and the test resolves
    within a window: ``j`` becomes the leader, or its estimate falls back and
    the trial ends. ``Q ≥ μ_t β_c P_c`` still holds, so the estimates stay
    unbiased and bounded as above (the propensities are chosen before the
    round: the differences remain a martingale difference sequence). No trial
    starts before the discount has halved the first round's weight (``λ^t ≤
    1/2``, about ``0.69 window`` rounds; from the start with ``window=None``):
    in the first rounds the candidates learn fastest and an exploring learner's
    value trails the one it is about to have, so an early trial locked a
    greedy candidate in on short tuning streams.

    **Guarantee** (for candidates whose values ``V_c`` are fixed, a stationary
    stream, ``window=None``). Let ``Δ = V_* - V_ℓ > 0`` be the gap of the best
    candidate over the leader, ``σ²`` and ``R`` the variance and the range of
    the paired difference ``z_* - z_ℓ`` (``R ≤ 1 / (μ_min β_min) + 1 / (1 -
    μ_1)``, ``β_min`` the smallest share; about ``1 / (μ_1 - μ_t)`` in place of
    ``1 / (μ_t β_*)`` while ``*`` is on trial). By Bernstein's inequality the
    estimate is within ``h(n) = sqrt(2 σ² L / n) + R L / (3 n)`` of ``Δ`` with
    probability at least ``1 - e^{-L} = confidence``, and the test switches
    once ``Δ ≥ 2 h(n)``, so after at most

    .. math:: n_\Delta \le \frac{32 \sigma^2 L}{\Delta^2}
              + \frac{4 R L}{3 \Delta}

    rounds: a regret of at most ``Δ n_Δ ≈ 32 σ² L / Δ + 4 R L / 3`` before the
    switch, for each worse leader. A worse challenger (gap ``-Δ``) takes the
    lead with probability at most ``1 - confidence`` per test, and is on trial
    only while its estimate is about one standard error ahead, which becomes
    rare once ``n ≫ σ² / Δ²`` (the probability that it is ahead at all is at
    most ``exp(-n Δ² / (2 σ² + 2 R Δ / 3))``). The mixture itself costs at most
    ``μ_t`` times the gap between the leader and the ``β``-average per round
    (``Σ_t μ_t ≈ μ_1 T^{1-p} / (1 - p)`` plus ``μ_min T``), and a trial at most
    ``(μ_1 - μ_t)`` times the gap between the leader and ``j``, negative when
    ``j`` is the better. What is heuristic: the candidates learn as the stream
    goes, so their values are not stationary (a candidate learns differently
    inside the selector than alone); the range is observed rather than known;
    the test is repeated on every rewarded round without a union bound over
    rounds; the discount replaces ``n`` by the effective ``n`` of a window;
    the start of trials is a rule of thumb (see ``docs/algorithms.md``, which
    also says what carries over from the analyses of Corral, Agarwal et al.
    2017, and regret balancing, Pacchiano et al. 2020).

    ``predict`` and ``decision_function`` are the leader's;
    ``exploration_distribution`` is the mixture ``Q``. The defaults were chosen
    on held-out tuning streams (``benchmarks/eval_selector.py``); the selector
    is not always within a few percent of its best candidate run alone: the
    candidates learn off-policy inside it, and a gap of a few tenths of a
    point of error between candidates that agree on most rows is too small
    for the test to see within a stream of tens of thousands of rounds
    (``docs/algorithms.md`` has the tables).

    Parameters
    ----------
    candidates : list of skbandit learners, default=None
        The candidate learners (bandit-feedback skbandit estimators; cloned at
        the start of a fit). ``None`` runs ``default_candidates(d)`` for rows
        of ``d`` features: ``SquareCB()``, ``SquareCB(exploration=InverseGap(300,
        exponent=0.5))``, ``ConservativeOneVsAll()`` and ``OffsetTree()``, after
        ``nonlinear_candidate()`` (the standardised row, times 0.1, beside
        1,000 random Fourier features of it, learnt by SquareCB started at
        ``initial_reward=0.2``; its features
        drawn with seed 0, a fixed map)
        when ``d <= 256`` and there are at most 100 classes. The first
        candidate is the leader at the start.
    exploration : "epsilon_greedy", EpsilonGreedy or None, default=None
        The exploration share ``μ_t`` (:mod:`skbandit.exploration`): the rate of
        an ``EpsilonGreedy`` rule whose "uniform" part is the candidates'
        ``β``-average. ``None`` (or ``"epsilon_greedy"``):
        ``EpsilonGreedy(0.5, decay=1/3, min_epsilon=0.02)``; an object's
        ``None`` epsilon takes 0.5. Only epsilon-greedy is accepted: the
        selector mixes its candidates' own policies, which do the exploring.
        ``epsilon`` is the mixing weight ``μ_1`` of the first round, in
        ``(0, 1]``, and the share of a round with a challenger on trial: the
        share ``μ_t`` is spread over the candidates' own distributions by the
        shares ``β``; it bounds the importance weights by ``1 / (μ_t β_c)``
        and costs at most ``μ_t`` times the gap between the leader and the
        ``β``-average of the candidates. ``decay`` is the
        exponent ``p`` in ``[0, 1]`` of ``μ_t = max(μ_min, μ_1 t^{-p})``
        (``0``: a fixed share ``μ_1``; ``1/3`` is the epoch-greedy schedule of
        Langford & Zhang 2007, a heuristic here, as the candidates keep
        learning: the share is large while the candidates are all poor and
        their differences cheap, and small once the leader is good).
        ``min_epsilon`` is the floor ``μ_min`` in ``[0, 1]`` (one above
        ``epsilon`` counts as ``epsilon``: a fixed share); it keeps every
        candidate estimated on a long stream, so that a change of concept can
        still move the leader.
    window : int or None, default=1000
        Effective memory of the estimates in rounds: discount
        ``λ = 1 - 1 / window`` per round. ``None``: no discount (stationary
        streams).
    confidence : float, default=0.95
        Confidence level of the switching and elimination tests: ``L =
        log(1 / (1 - confidence))`` in the Bernstein width. Higher switches
        and rules out later and less often.
    eliminated_share : float, default=0.05
        Relative share of the exploration mass kept by a candidate that the
        estimates have ruled out, in ``(0, 1]`` (1: no elimination).
    max_iter : int, default=5
        Passes over the data in ``fit``. ``partial_fit`` always makes one.
    shuffle : bool, default=True
        Whether ``fit`` visits the rows in a new random order each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the selector's generator: its uniforms draw the played action
        (``u1``) and break every candidate's ties (``u2``). The candidates'
        own generators are not used.

    Attributes
    ----------
    {classes}
    candidates_ : list of skbandit learners
        The fitted candidates (clones of ``candidates``), each in the state
        it would have after learning the same rounds from logged feedback.
    leader_ : int
        Index in ``candidates_`` of the current leader.
    n_switches_ : int
        Number of times the leader changed.
    value_estimates_ : ndarray of shape (n_candidates,)
        Discounted inverse-propensity estimates of each candidate's mean reward.
    ips_sums_ : ndarray of shape (n_candidates,)
        Discounted sums ``S_c`` of the ``z_c``.
    ips_cross_ : ndarray of shape (n_candidates, n_candidates)
        Discounted sums ``G_cd`` of ``z_c z_d``.
    ips_range_ : ndarray of shape (n_candidates,)
        Discounted running maxima ``R_c`` of the ``z_c`` (the observed range
        of the estimates in the Bernstein width).
    ips_weights_ : ndarray of shape (2,)
        Discounted sums of the weights and of their squares.
    leader_state_ : ndarray of shape (2,)
        The leader's index and the number of switches (int64).
    mix_shares_ : ndarray of shape (n_candidates,)
        The candidates' shares ``β`` of the exploration mass (sum to one).
    {features_in}
    {round_counts}
    {exploration_}

    See Also
    --------
    SquareCB, ConservativeOneVsAll, OffsetTree : The default candidates.

    References
    ----------
    A. Maurer and M. Pontil, "Empirical Bernstein bounds and sample variance
    penalization", COLT 2009.

    D. A. Freedman, "On tail probabilities for martingales", Annals of
    Probability 3(1), 1975 (Bernstein's inequality for martingale differences).

    A. Agarwal, H. Luo, B. Neyshabur and R. E. Schapire, "Corralling a band of
    bandit algorithms", COLT 2017.

    A. Pacchiano, M. Phan, Y. Abbasi-Yadkori, A. Rao, J. Zimmert, T. Lattimore
    and C. Szepesvári, "Model selection in contextual stochastic bandit
    problems", NeurIPS 2020.

    J. Langford and T. Zhang, "The epoch-greedy algorithm for contextual
    multi-armed bandits", NeurIPS 2007.

    Q. Wu, C. Wang, J. Langford, P. Mineiro and M. Rossi, "ChaCha for online
    AutoML", ICML 2021.

    D. Foster and A. Rakhlin, "Beyond UCB: optimal and efficient contextual
    bandits with regression oracles", ICML 2020.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import OnlineSelector
    >>> X, y = load_digits(return_X_y=True)
    >>> sel = OnlineSelector(random_state=0).partial_fit(X / 16, y, classes=range(10))
    >>> len(sel.candidates_), sel.t_  # 64 features: the nonlinear one first
    (5, 1797)
    >>> type(sel.candidates_[0]).__name__
    'BanditPipeline'
    """

    _parameter_constraints: dict = {
        **BaseBanditClassifier._parameter_constraints,
        "candidates": ["array-like", None],
        "exploration": exploration_constraint(),
        "window": [Interval(Integral, 1, None, closed="left"), None],
        "confidence": [Interval(Real, 0.5, 1, closed="neither")],
        "eliminated_share": [Interval(Real, 0, 1, closed="right")],
        "candidate_learning": [str, "array-like"],
    }

    _state_attrs = (
        "ips_sums_",
        "ips_cross_",
        "ips_range_",
        "ips_weights_",
        "leader_state_",
        "mix_shares_",
    )
    _fast_rows_ok = True
    # the hooks rebind none of the selector's attributes, only the
    # candidates' counters and what their own hooks rebind
    _hook_rebinds = ()
    # _before_block on one row runs the candidates' hooks and sets the
    # kernel's block length: settled when the candidates' are
    _before_block_settles = True

    def __init__(
        self,
        candidates=None,
        *,
        exploration: str | BaseExploration | None = None,
        window: int | None = 1_000,
        confidence: float = 0.95,
        eliminated_share: float = 0.05,
        candidate_learning: str | list[str] = "all",
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.candidates = candidates
        self.exploration = exploration
        self.window = window
        self.confidence = confidence
        self.eliminated_share = eliminated_share
        self.candidate_learning = candidate_learning

    # ----------------------------------------------------------- parameters
    def _check_selector_candidate(self, index: int) -> None:
        """Refuse to be a candidate of a selector (``_check_candidates``)."""
        raise InvalidParameterError(
            f"candidates[{index}] is an OnlineSelector: selectors do not nest."
        )

    def _validate_params(self) -> None:
        super()._validate_params()
        if isinstance(self.exploration, BaseExploration):
            self._check_mixer(self.exploration)
        candidates = _check_candidates(self.candidates)
        for c in candidates:
            c._validate_params()
        if "candidates_" in self.__dict__:
            self._learning_modes(self.candidates_)
        elif self.candidates is not None or isinstance(self.candidate_learning, str):
            # a list for the defaults is checked against the candidates the
            # rows call for (four or five) when they are made
            self._learning_modes(candidates)

    _default_exploration = "epsilon_greedy"
    _exploration_values = {"epsilon_greedy": {"epsilon": 0.5}}
    _exploration_refusal = (
        "The selector mixes its candidates' own policies, which do the exploring: "
        "its share of the mixture is an epsilon-greedy rate."
    )

    def _exploration_object(self, name):
        if name == "epsilon_greedy":
            return EpsilonGreedy(decay=1 / 3, min_epsilon=0.02)
        return super()._exploration_object(name)

    def _resolve_exploration(self):
        return self._check_mixer(super()._resolve_exploration())

    def _check_mixer(self, rule):
        """The selector's conditions on its rule: epsilon in (0, 1] (None: not
        yet resolved), decay in [0, 1]."""
        epsilon = rule.epsilon
        if epsilon == 0 or epsilon == "adaptive" or rule.decay > 1:
            raise InvalidParameterError(
                "The 'exploration' parameter of OnlineSelector must be an "
                "EpsilonGreedy with epsilon in (0, 1] (the mixing weight) and "
                f"decay in [0, 1]; got {rule!r}."
            )
        return rule

    @property
    def _logged_rewards(self) -> str:  # type: ignore[override]  # computed from the candidates (read only, by design)
        # the strictest of the candidates': "binary" if any update assumes bits
        kinds = {
            c._logged_rewards
            for c in self.__dict__.get("candidates_", None)
            or _check_candidates(self.candidates)
        }
        return "binary" if "binary" in kinds else "unit"

    # ---------------------------------------------------------------- state
    def _init_state(self, n_features, n_classes):
        candidates = [
            clone(c) for c in _check_candidates(self.candidates, n_features, n_classes)
        ]
        if self.candidates is None:
            _seed_default_features(candidates)
        for c in candidates:
            c.n_features_in_ = n_features
            c._reset(self.classes_, n_features)
            # the selector's uniforms drive every candidate: their own
            # generators are never drawn from (fixed, so the state is a
            # function of the selector's seed alone)
            c._rng = np.random.default_rng(0)
            c.n_iter_ = 0
        n = len(candidates)
        self.candidates_ = candidates
        self.ips_sums_ = np.zeros(n, dtype=np.float64)
        self.ips_cross_ = np.zeros((n, n), dtype=np.float64)
        self.ips_range_ = np.zeros(n, dtype=np.float64)
        self.ips_weights_ = np.zeros(2, dtype=np.float64)
        self.leader_state_ = np.zeros(2, dtype=np.int64)
        self.mix_shares_ = np.full(n, 1.0 / n)

    def _get_state(self) -> dict:
        state = super()._get_state()
        for i, c in enumerate(self.candidates_):
            state[f"candidates_[{i}]"] = c._get_state()
        return state

    def _set_state(self, state: dict) -> None:
        state = dict(state)
        for i, c in enumerate(self.candidates_):
            c._set_state(state.pop(f"candidates_[{i}]"))
        super()._set_state(state)

    def _own_state_arrays(self) -> None:
        super()._own_state_arrays()
        for c in self.candidates_:
            c._own_state_arrays()

    def _make_kernel(self):
        kernels = [c._make_kernel() for c in self.candidates_]
        return self._selector_kernel(kernels)

    def _selector_kernel(self, kernels):
        for c, kc in zip(self.candidates_, kernels, strict=True):
            if kc.full_information:
                raise ValueError(
                    f"{type(c).__name__} learns from the true label (a "
                    "full-information learner): it cannot be a candidate of "
                    "OnlineSelector, whose candidates learn from bandit feedback."
                )
        lam = 1.0 if self.window is None else 1.0 - 1.0 / self.window
        kernel = SelectorKernel(
            kernels,
            self.ips_sums_,
            self.ips_cross_,
            self.ips_range_,
            self.ips_weights_,
            self.leader_state_,
            self.mix_shares_,
            self._mixer(),
            lam,
            float(-np.log1p(-self.confidence)),
            float(self.eliminated_share),
            self._learning_modes(self.candidates_),
        )
        kernel.owners = list(self.candidates_)
        return kernel

    def _learning_modes(self, candidates) -> np.ndarray:
        """The kernel's learning mode of each candidate (``_LEARNING_MODES``)."""
        spec = self.candidate_learning
        names = [spec] * len(candidates) if isinstance(spec, str) else list(spec)
        if len(names) != len(candidates) or not all(
            isinstance(m, str) and m in _LEARNING_MODES for m in names
        ):
            raise InvalidParameterError(
                "The 'candidate_learning' parameter of OnlineSelector must be one "
                f"of {sorted(_LEARNING_MODES)} or a list of them, one per "
                f"candidate ({len(candidates)}); got {spec!r}."
            )
        return np.array([_LEARNING_MODES[m] for m in names], dtype=np.int32)

    def _mixer(self):
        """The compiled rule of the exploration share, its floor capped at
        epsilon (a floor above it: a fixed share)."""
        self._explorer(self.classes_.shape[0])
        rule = self.exploration_
        return EpsilonGreedyExplorer(
            float(rule.epsilon),
            float(rule.decay),
            float(min(rule.min_epsilon, rule.epsilon)),
        )

    def _before_block(self, kernel, n_rows):
        # a candidate may replace its kernel (e.g. after growing a buffer):
        # the candidates' hooks run in the kernel's compiled loop, which skips
        # those that keep the skeleton's no-op (a one-row call and a live
        # round run this every round)
        candidates = self.candidates_
        if len(candidates) != len(kernel.kernels):
            raise _length_error(candidates, kernel.kernels)
        new = kernel.before_hooks(candidates, n_rows, _BASE_BEFORE_BLOCK)
        if new is not None:
            kernel = self._selector_kernel(new)
        if n_rows >= _TWIN_MIN_ROWS:
            # candidates of one model compute their scores once in this block
            # (the same numbers): verified on their states now, used only
            # until _after_block (nothing else writes them inside a block)
            modes = self._learning_modes(candidates)
            kernel.set_twins(_score_twins(candidates, modes, _LEARNING_MODES["all"]))
        kernel.block_rows = n_rows
        return kernel

    def _after_block(self, kernel) -> None:
        # the score twins cleared, the candidates' own end-of-block work (the
        # no-op ones skipped) and their round counters, in the kernel's
        # compiled loop (which checks the candidates against the kernels)
        kernel.after_hooks(kernel.rows_played, _BASE_AFTER_BLOCK)

    # ----------------------------------------------------------- validation
    # ----------------------------------------------------------- prediction
    def _score_rows(self, X):
        # the leader's scores as its kernel computes them in play (the same
        # compiled sums for dense and sparse rows)
        leader = self.candidates_[self.leader_]
        leader._own_state_arrays()
        out = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        run_scores(leader._make_kernel(), *_kernel_arrays(X), self.t_ + 1, out)
        return out

    @property
    def leader_(self) -> int:
        """Index in ``candidates_`` of the current leader."""
        check_is_fitted(self)
        return int(self.leader_state_[0])

    @property
    def n_switches_(self) -> int:
        """Number of times the leader changed."""
        check_is_fitted(self)
        return int(self.leader_state_[1])

    @property
    def value_estimates_(self) -> np.ndarray:
        """Discounted IPS estimates of each candidate's mean reward."""
        check_is_fitted(self)
        w = self.ips_weights_[0]
        return self.ips_sums_ / w if w > 0 else np.zeros_like(self.ips_sums_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
