"""SquareCB: inverse gap weighting over an online squared-loss reward regressor."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from skbandit._core._explore import py_inverse_gap
from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier, feature_major_zeros, linear_scores
from skbandit.exploration import (
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._squarecb_fast import SquareCBKernel
from skbandit.optim import StepSizeMixin, step_size_constraint

__all__ = ["SquareCB", "igw_distribution"]


@learner_doc
class SquareCB(StepSizeMixin, ExplorationMixin, LinearBanditClassifier):
    r"""SquareCB: inverse gap weighting over per-class online reward regressors.

    The learner keeps one linear regressor per class that predicts the reward
    of playing that class, :math:`\hat y_a = w_a \cdot x + b_a`, the intercepts
    starting at ``initial_reward`` (default 1: every class starts predicted
    right). At the global round :math:`t` (1-based, counted across calls and
    passes) it plays from the inverse-gap-weighting (IGW) distribution of Foster
    and Rakhlin [1]_ on the predictions clipped to the reward range,
    :math:`c_a = \min(\max(\hat y_a, 0), 1)`: with the greedy class
    :math:`g = \arg\max_a \hat y_a` (exact ties at random),

    .. math::

        p_a = \frac{1}{k + \gamma_{t,a} (c_g - c_a)} \quad (a \neq g,\ c_a < c_g),
        \qquad p_a = \frac{1}{k} \quad (a \neq g,\ c_a = c_g),
        \qquad p_g = 1 - \sum_{a \neq g} p_a ,

    with the schedule :math:`f(\tau) = \mathrm{scale} \cdot
    \tau^{\mathrm{exponent}}` (the parameters of its exploration rule,
    ``InverseGap(scale=300, exponent=0.75, clip=True)``) and the per-class
    exploration parameter

    .. math::

        \gamma_{t,a} = \min\bigl(f(t),\ f(k (n_a + 1))\bigr),

    :math:`n_a` the number of updates of class :math:`a`'s regressor so far. So
    :math:`p_g \geq 1/k`, every class keeps a probability that shrinks with its
    predicted gap, and a class whose regressor has been updated less than its
    share :math:`t / k` is explored as at the round :math:`k (n_a + 1)` it would
    have reached on that share (a class is not locked out merely because its
    regressor fell behind early). A tie gets :math:`1/k` whatever
    :math:`\gamma`, also when :math:`\gamma_{t,a}` overflows to infinity (no
    :math:`\infty \cdot 0`).
    Then only the played class's regressor takes one online step on the squared
    loss :math:`\frac{h}{2} (\hat y_a - r)^2`, where :math:`r` is the revealed
    reward (1 if the played class was right, else 0) and :math:`h = 1 / p_g(a)`
    with ``importance_weighted=True``, else 1.

    *What the theory covers.* The paper states IGW with losses, a fixed
    :math:`\gamma \propto \sqrt{KT / \mathrm{Reg}_{sq}(T)}` and an oracle whose
    predictions lie in the loss range: IGW on clipped predictions is exactly
    that (clipping a prediction to the range never increases its squared loss
    against a reward in the range). The anytime schedule :math:`f(t)` with
    exponent 1/2 is Vowpal Wabbit's ``--squarecb`` (scale 10 there). Three
    choices are heuristics, chosen on tuning streams and not covered by the
    paper's bound: the exponent 0.75 (between the anytime 1/2 and the 1 that
    ends exploration fastest on separable streams), the per-class clock
    :math:`k (n_a + 1)` (it only ever lowers :math:`\gamma`, i.e. explores
    more), and the optimistic start ``initial_reward=1`` (an untried class is
    predicted right until a miss lowers it: the greedy class then moves on to
    the next candidate, as with Vowpal Wabbit's zero initial cost).

    *Drift.* After an abrupt change of concept the greedy class misses, its
    prediction on the new rows falls towards 0, and once the classes' clipped
    predictions there are equal the rows are played uniformly whatever
    :math:`\gamma_{t,a}`: the learner relearns without a restart or forgetting
    (NAG's rate :math:`\eta \sqrt{n / N}` does not decay with :math:`t`;
    docs/algorithms.md, SquareCB).

    The oracle's step-size rule (``step_size``, :mod:`skbandit.optim`), for
    the played regressor with coordinates
    :math:`i` over the row's non-zero features (the intercept is a feature of
    constant value 1), with :math:`e = h (\hat y - r)` and
    :math:`g_i = e\, x_i`, takes the step
    :math:`w_i \leftarrow w_i - \eta_t\, g_i / q_i` with:

    - ``Normalized`` (default): algorithm NAG of Ross, Mineiro and Langford
      [2]_. Per feature a scale :math:`s_i` (the largest :math:`|x_i|` seen;
      with ``shared_scale=True`` one for all regressors, see below), per weight
      an accumulator :math:`G_i`; per regressor :math:`N` and the count
      :math:`n` of its updates. First, for each :math:`i` with
      :math:`|x_i| > s_i`: :math:`w_i \leftarrow w_i s_i / |x_i|` (NAG's
      past steps on :math:`w_i` are proportional to :math:`1 / s_i`: this is
      the weight they would have given at the new scale),
      :math:`s_i \leftarrow |x_i|`; then :math:`\hat y = w \cdot x + b`,
      :math:`n \leftarrow n + 1`,
      :math:`N \leftarrow N + \sum_i x_i^2 / s_i^2` (+1 for the intercept),
      :math:`G_i \leftarrow G_i + g_i^2`, :math:`q_i = s_i \sqrt{G_i}` and
      :math:`\eta_t = \eta \sqrt{n / N}`. The intercept's scale is fixed to 1
      and never rescaled. The learner's actions are invariant to rescaling any
      feature (in exact arithmetic): no feature scaling is needed.
    - ``AdaGrad``: diagonal AdaGrad [3]_, :math:`G_i \leftarrow G_i + g_i^2`,
      :math:`q_i = \sqrt{G_i}`, :math:`\eta_t = \eta`.
    - ``Constant``: :math:`q_i = 1`, :math:`\eta_t = \eta` (a constant step
      that depends on the features' scale; for comparison).

    :math:`\eta` is the rule's ``learning_rate``.

    With ``step_cap=c``, :math:`0 < c \leq 1` (default 1), the rate is capped,
    :math:`\eta_t \leftarrow \min(\eta_t, c / (h Q))` with
    :math:`Q = \sum_i x_i^2 / q_i + 1 / q_b` (:math:`q_b` the intercept's):
    the step moves the played regressor's prediction on the row towards the
    reward by :math:`\eta_t h Q |\hat y - r| \leq c\,|\hat y - r|`, so it never
    overshoots the reward (``c = 1`` stops at the reward, in the spirit of Vowpal
    Wabbit's safe updates). Without the cap a feature's first appearance
    (:math:`s_i = 0`, then :math:`s_i = |x_i|`) gets the step
    :math:`\eta_t\, \mathrm{sign}(e) / |x_i|`, which moves the prediction by
    :math:`\eta_t` per new feature and overshoots by far on a text row.
    :math:`Q` is invariant to feature scale.

    **Choices** (where the papers leave room):

    - *Shared scales* (``shared_scale=True``, default). A feature's scale is a
      property of the input stream, not of a class: :math:`s_i` is the largest
      :math:`|x_i|` over every row learned so far, whichever class was played
      (``scale_`` then has one row, stored once for the ``k`` regressors),
      and when it grows NAG's rescale
      :math:`w_{a,i} \leftarrow w_{a,i} s_i / |x_i|` is applied to the weight of
      every regressor :math:`a`, not only the played one. (Switched on
      mid-stream after per-class scales, ``scale_`` keeps its ``k`` rows and
      each grows to the shared maximum by its own test as values above it
      arrive; switched off after shared scales, the one row is copied to
      every regressor before the next update.) A regressor then
      never takes NAG's first-sight step (:math:`x_i / s_i = 1`) on a feature
      the other regressors have already seen at a larger value, which wastes
      the first rounds of each class on unscaled tables and spreads a step
      evenly over a document's words on tf-idf text. The actions stay
      invariant to rescaling any feature column. With ``shared_scale=False``
      each regressor is exactly NAG on its own sub-stream (Ross et al.'s
      algorithm); shared scales are a choice of this implementation, chosen
      on the tuning streams (below). The rescale of all ``k`` weights costs
      :math:`O(k)` per growth of a scale, which is rare after the first rows.
    - *N and n are per regressor* (attributes ``n_updates_`` and
      ``norm_sum_``): with ``shared_scale=False`` each class's regressor is
      exactly NAG run on the rounds where that class was played, up to the
      cap.
    - *Where NAG predicts.* The IGW scores use the weights as they are before
      the round; the played regressor is rescaled in the update, and its
      gradient uses its prediction after the rescaling, as NAG prescribes.
    - *Zero-division cases.* Zero entries (stored or dense) are skipped: they
      set no scale, add nothing to :math:`N` and have zero gradient. A
      coordinate whose :math:`G_i` is still 0 is not moved. An update with no
      error (:math:`\hat y = r`), or with :math:`N = 0` (an empty row without
      intercept), changes only the counts :math:`n` and :math:`N`.
    - *Importance weighting* of the update by :math:`1/p` (as Vowpal Wabbit's
      ``mtr`` reduction does) is off by default (worse on held-out streams,
      docs/algorithms.md).
    - *Defaults* ``InverseGap(scale=300, exponent=0.75)``,
      ``Normalized(learning_rate=0.5)``, ``step_cap=1``, ``initial_reward=1`` and
      ``shared_scale=True`` were chosen on a set of tuning streams only
      (``benchmarks/streams.py``: scikit-learn's digits and breast cancer data,
      USPS and covtype in other orders, generated streams with 20 classes,
      class imbalance, label noise, drift, tf-idf documents and small
      non-centred tables of raw scales) by the smallest worst ratio of online
      error to Vowpal Wabbit's best of five ``--cbify`` configurations
      (``benchmarks/robust_defaults.py``); the validation streams, never
      looked at while choosing, are in ``docs/results/robust-defaults/`` and
      docs/algorithms.md, SquareCB.
    - *Text.* ``step_size="adagrad"`` keeps the weighting tf-idf puts into
      the feature scales (``docs/results/squarecb-adagrad/``).

    One round costs O(k nnz(x)) for the scores and O(nnz(x)) for the update.
    Sparse input is used with its duplicate entries summed, as for every
    learner (a copy is made only when the matrix is not in canonical format).

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the regressor of the logged action takes one step
    towards the logged reward, which may be any real value in ``[0, 1]`` (a
    click-through rate, a rating scaled to ``[0, 1]``). The oracle is a
    regression on the rounds of each action, so it makes sense off-policy; with
    ``importance_weighted=True`` the weight ``h`` uses the logged propensity
    (the learner's own ``p_g(a)`` on its own rounds).

    Parameters
    ----------
    exploration : str, exploration rule or None, default=None
        How a round's predicted rewards become the distribution played
        (:mod:`skbandit.exploration`). ``None``: inverse gap weighting,
        ``InverseGap(scale=300.0, exponent=0.75, clip=True)`` with the
        per-class floor read from ``n_updates_`` (above); a rule's name: that
        rule with this learner's values (``scale=300``, ``exponent=0.75``,
        ``clip=True`` for ``"inverse_gap"``; the rules' own fallbacks for the
        others); an object: that rule (``None`` parameters take this learner's
        values). Every rule is accepted: the regression oracle learns the
        played class's reward whatever the rule. ``scale`` is the constant of
        the schedule :math:`f`, ``exponent`` its exponent (0 gives the paper's
        fixed :math:`\gamma`, 0.5 Vowpal Wabbit's anytime schedule); search
        them with ``{"exploration__scale": [...]}``.
    step_size : str or step-size rule, default="normalized"
        The step-size rule of the online squared-loss oracle (formulas above;
        :mod:`skbandit.optim`): a rule's name (``"normalized"``,
        ``"adagrad"``, ``"constant"``) is that rule with
        ``learning_rate=0.5`` (``Normalized(0.5)``, ``AdaGrad(0.5)``,
        ``Constant(0.5)``); an object: that rule (AdaGrad per coordinate:
        ``AdaGrad(per_coordinate=False)`` is refused). The rule played is
        ``step_size_``.
    fit_intercept : bool, default=True
        Whether each regressor has a bias :math:`b_a` (a constant feature 1).
    importance_weighted : bool, default=False
        Weight each update by :math:`1 / p_g(a)`, the probability with which
        the played class was drawn.
    step_cap : float in (0, 1], default=1.0
        Cap the step so that the played regressor's prediction on the row moves
        towards the reward by at most ``step_cap`` times its error (formula
        above): it never overshoots the reward.
    initial_reward : float in [0, 1], default=1.0
        The regressors' first prediction (the intercepts' initial value; with
        ``fit_intercept=False`` the predictions start at 0). 1 is optimistic:
        an untried class is played greedily until it misses.
    shared_scale : bool, default=True
        ``Normalized`` only: one NAG scale :math:`s_i` per feature for all
        regressors, the largest :math:`|x_i|` of every row learned, and its
        growth rescales every regressor's weight :math:`w_{a,i}` (above).
        ``False``: per-regressor scales (NAG on each class's sub-stream).
    {passes}
    {random_state}

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        The regressors' weights :math:`w_a`.
    intercept_ : ndarray of shape (n_classes,)
        The regressors' biases :math:`b_a`, starting at ``initial_reward``
        (zeros if ``fit_intercept=False``).
    scale_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        NAG's scales :math:`s_i` (``Normalized`` only; zeros otherwise): one
        row, shared by every regressor, when fitted with ``shared_scale=True``
        (stored once, and a new feature's scale is one write instead of
        ``k``), one row per regressor otherwise.
    grad_sq_ : ndarray of shape (n_classes, n_features)
        The accumulators :math:`G_i` (``Normalized`` and ``AdaGrad``).
    intercept_grad_sq_ : ndarray of shape (n_classes,)
        The intercepts' accumulators.
    norm_sum_ : ndarray of shape (n_classes,)
        NAG's :math:`N` of each regressor.
    n_updates_ : ndarray of shape (n_classes,)
        Updates of each regressor (rounds where its class was played).
    {action_rounds}
    step_size_ : step-size rule
        The step-size rule played: ``step_size`` resolved.

    See Also
    --------
    Banditron : Epsilon-greedy Perceptron with bandit feedback.

    References
    ----------
    .. [1] D. J. Foster and A. Rakhlin, "Beyond UCB: Optimal and efficient
       contextual bandits with regression oracles", ICML 2020
       (arXiv:2002.04986).
    .. [2] S. Ross, P. Mineiro and J. Langford, "Normalized online learning",
       UAI 2013 (arXiv:1305.6646).
    .. [3] J. Duchi, E. Hazan and Y. Singer, "Adaptive subgradient methods for
       online learning and stochastic optimization", JMLR 12, 2011.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import SquareCB
    >>> X, y = load_digits(return_X_y=True)  # pixels 0..16: no scaling needed
    >>> clf = SquareCB(random_state=0).partial_fit(X, y, classes=range(10))
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")  # one seed
    online error 0.27
    >>> errors = [
    ...     SquareCB(random_state=s).partial_fit(X, y, classes=range(10)).n_mistakes_
    ...     for s in range(10)
    ... ]
    >>> print(f"mean online error of 10 seeds {sum(errors) / (10 * len(y)):.2f}")
    mean online error of 10 seeds 0.29
    >>> P = clf.exploration_distribution(X[:1])  # the policy of the next round
    >>> print(P.shape, f"{P.sum():.6f}")
    (1, 10) 1.000000
    """

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
        "step_size": step_size_constraint(),
        "fit_intercept": ["boolean"],
        "importance_weighted": ["boolean"],
        "step_cap": [Interval(Real, 0, 1, closed="right")],
        "initial_reward": [Interval(Real, 0, 1, closed="both")],
        "shared_scale": ["boolean"],
    }

    # the regression oracle learns any reward in [0, 1] (docs/logged.md)
    _logged_rewards = "unit"

    _default_exploration = "inverse_gap"
    _exploration_values = rule_values(
        inverse_gap={"scale": 300.0, "exponent": 0.75, "clip": True}
    )

    _step_size_refusal = (
        "The regression oracle's AdaGrad keeps one accumulator per weight: "
        "AdaGrad needs per_coordinate=True."
    )

    def _step_size_values(self, n_classes):
        return {
            "normalized": {"learning_rate": 0.5},
            "adagrad": {"learning_rate": 0.5, "per_coordinate": True},
            "constant": {"learning_rate": 0.5},
        }

    def _step_size_accepts(self, rule):
        return getattr(rule, "per_coordinate", True)

    # scores W x (+ b): an OnlineSelector may share them (base.py)
    _pure_scores = True

    _state_attrs = (
        "coef_",
        "intercept_",
        "scale_",
        "grad_sq_",
        "intercept_grad_sq_",
        "norm_sum_",
        "n_updates_",
    )
    # the regressors' weights and scales are stored feature-major (Fortran
    # order; the oracle's W, S are their transposes); the squared-gradient sums
    # class-major (C order, the oracle's G as it is): a step reads one row
    _feature_major = ("coef_", "scale_")
    # _before_block replaces scale_ after set_params(shared_scale=False),
    # once: a parameter change, which a LiveSession locks
    _hook_rebinds = ("scale_",)
    _before_block_settles = True

    def __init__(
        self,
        *,
        exploration=None,
        step_size="normalized",
        fit_intercept=True,
        importance_weighted=False,
        step_cap=1.0,
        initial_reward=1.0,
        shared_scale=True,
        max_iter=5,
        shuffle=True,
        random_state=None,
    ):
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration
        self.step_size = step_size
        self.fit_intercept = fit_intercept
        self.importance_weighted = importance_weighted
        self.step_cap = step_cap
        self.initial_reward = initial_reward
        self.shared_scale = shared_scale

    def _init_state(self, n_features, n_classes):
        super()._init_state(n_features, n_classes)
        # the regressors start at the prior prediction initial_reward (the
        # intercept; without one, every prediction starts at 0)
        self.intercept_ = np.full(
            n_classes,
            float(self.initial_reward) if self.fit_intercept else 0.0,
            dtype=np.float64,
        )
        # shared scales are stored once (one row); per-class scales, one row
        # per regressor
        rows = 1 if self.shared_scale else n_classes
        self.scale_ = feature_major_zeros(rows, n_features)
        self.grad_sq_ = np.zeros((n_classes, n_features), dtype=np.float64)
        self.intercept_grad_sq_ = np.zeros(n_classes, dtype=np.float64)
        self.norm_sum_ = np.zeros(n_classes, dtype=np.float64)
        self.n_updates_ = np.zeros(n_classes, dtype=np.int64)

    def _make_kernel(self):
        kernel = SquareCBKernel(
            self.coef_.T,
            self.intercept_,
            self.scale_.T,
            self.grad_sq_,
            self.intercept_grad_sq_,
            self.norm_sum_,
            self.n_updates_,
            self._step_rule(self.classes_.shape[0]),
            bool(self.fit_intercept),
            bool(self.importance_weighted),
            float(self.step_cap),
            bool(self.shared_scale),
        )
        # the per-class floor of inverse gap weighting reads n_updates_
        kernel.set_explorer(
            self._explorer(self.classes_.shape[0], counts=self.n_updates_)
        )
        return kernel

    def _before_block(self, kernel, n_rows):
        # per-class scales after shared ones (``set_params(shared_scale=False)``
        # mid-stream): every regressor starts from the shared row, before any
        # learning (a new array: a failed call restores the old one)
        k = self.coef_.shape[0]
        if not self.shared_scale and self.scale_.shape[0] != k:
            self.scale_ = np.asfortranarray(np.repeat(self.scale_, k, axis=0))
            kernel = self._make_kernel()
        return kernel

    def _score_rows(self, X):
        scores = linear_scores(X, self.coef_)
        if self.fit_intercept:
            scores = scores + self.intercept_
        return scores


def igw_distribution(scores, greedy: int, gamma) -> np.ndarray:
    """The inverse-gap-weighting distribution (the compiled function SquareCB plays).

    With the scores clipped to the reward range, ``c = clip(scores, 0, 1)``:
    ``p_a = 1 / (k + gamma_a (c[greedy] - c[a]))`` for ``a != greedy`` with
    ``c[a] < c[greedy]``, ``p_a = 1 / k`` for a tie (whatever ``gamma_a``, even
    infinite), and ``p_greedy = 1 - sum_{a != greedy} p_a``.

    Parameters
    ----------
    scores : array-like of shape (n_classes,)
        Predicted rewards; ``greedy`` should be one of their maximisers.
    greedy : int
        Index of the greedy class.
    gamma : float or array-like of shape (n_classes,)
        The exploration parameter, one for all classes or one per class
        (SquareCB's :math:`\\gamma_{t,a}`).

    Returns
    -------
    p : ndarray of shape (n_classes,)
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    gamma = np.broadcast_to(np.asarray(gamma, dtype=np.float64), scores.shape)
    return py_inverse_gap(scores, int(greedy), np.ascontiguousarray(gamma), True)
