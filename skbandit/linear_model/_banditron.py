"""Banditron: the multiclass Perceptron with epsilon-greedy exploration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier
from skbandit.exploration import (
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._averaging import AveragedIterateMixin
from skbandit.linear_model._banditron_fast import BanditronKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["Banditron"]


@learner_doc
class Banditron(ExplorationMixin, AveragedIterateMixin, LinearBanditClassifier):
    r"""Banditron: online multiclass learning from bandit feedback.

    Each round the learner computes the scores ``W x``, plays the greedy
    label with probability ``1 - gamma`` and a uniformly random label with
    probability ``gamma`` (its exploration rule, epsilon-greedy with
    ``epsilon = gamma``), and learns only whether the played label was right.
    It then makes the update whose expectation is the multiclass Perceptron's:
    ``w_greedy -= x`` every round and, if the played label ``a`` was right,
    ``w_a += x / p(a)``. Regret O(T^(2/3)) with respect to the hinge loss.

    The learner plays with its current weights ``coef_`` (the paper's
    :math:`W_t`). With ``average=True`` (the default), ``predict`` and
    ``decision_function`` use the mean of the weights after each round played
    so far, :math:`\bar W_T = \frac{1}{T} \sum_{t=1}^{T} W_{t+1}`
    (``average_coef_``; the averaged Perceptron of Freund and Schapire, the
    online-to-batch conversion of Cesa-Bianchi, Conconi and Gentile), as
    ``SGDClassifier(average=True)`` does: the last iterate of a bandit learner
    jumps by ``x / p(a)`` on every rewarded exploration round, its mean does
    not. The plays, the online error and ``exploration_distribution`` do not
    depend on ``average``.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the update is the same with the logged action ``a``
    and reward, and ``p(a)`` is the logged propensity unless the round is the
    learner's own (then the paper's ``p_g(a)``). With the logging policy's
    propensity the expected update is still the Perceptron's, provided that
    policy gives every label a positive probability, so off-policy logs are
    fine. Rewards must be 0 or 1.

    Parameters
    ----------
    {exploration_epsilon}
        Every rule is accepted: the update ``w_a += x / p(a)`` uses the
        probability of the played label under the rule, whatever it is. The
        rate ``epsilon`` (the paper's ``gamma``, the probability mass spread
        uniformly over the classes): the papers tune it per data set (Kakade et
        al. 2008: 0.014 on SynSep; Chen et al. 2009: 0.03 to 0.3). Recommended
        range (the rule in Notes): 0.05 to 0.125; smaller (down to 2^-10) on
        (nearly) separable streams, where the online error's floor is about
        ``(k - 1) / k * epsilon``. Search it with
        ``{"exploration__epsilon": [...]}``.
    average : bool, default=True
        Whether ``predict`` and ``decision_function`` use the averaged weights
        ``average_coef_`` (mean over all rounds played, ``fit``'s passes and
        ``partial_fit``'s rounds alike) instead of the current ``coef_``. The
        averaged weights are kept up to date either way (O(nnz(x)) per round),
        so the parameter can be changed after fitting.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's own ``numpy.random.Generator``, which draws two
        uniforms per round (action, tie-break) and the shuffles of ``fit``. It
        is created on the first ``partial_fit`` (or by each ``fit``) and then
        advanced across calls, so a stream fed in chunks gives exactly the
        result of one call.

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        The current weights the learner plays with, one row per class (also
        when there are two classes).
    average_coef_ : ndarray of shape (n_classes, n_features)
        The mean of the weights after each round played so far,
        ``coef_ - A / t_`` with ``A`` the sum over rounds ``t`` of
        ``(t - 1)`` times that round's update (``coef_`` before any round).
        ``predict`` uses it when ``average=True``.
    {features_in}
    {rounds_played}
    n_mistakes_ : int
        Rounds whose played (explored) action was wrong. ``n_mistakes_ / t_``
        is the online error the papers report.
    {greedy_mistakes}
    {n_iter}
    exploration_ : exploration rule
        The rule played, ``exploration`` resolved (every parameter set).

    See Also
    --------
    MulticlassPerceptron : The full-information baseline.

    Notes
    -----
    The default rate, ``EpsilonGreedy(0.125)``, was chosen on tuning streams
    (one pass, 5 seeds, ``epsilon`` in 2^-10 ... 2^-1) by the rule of
    ``docs/experiments.md`` ("Defaults from evidence": the smallest worst excess
    of a seed's online error over the best seed-averaged error across the tuning
    streams); the script, tables and recommended range are in
    ``docs/results/defaults/``. Separable streams favour a smaller ``epsilon``.
    The last iterate stays fragile after several passes; for real data,
    :class:`ConservativeOneVsAll` or :class:`SquareCB` learn much faster.

    ``average=True`` is the default because the averaged weights pass
    scikit-learn's ``check_classifiers_train`` criterion for seeds on which
    the last iterate fails (``docs/results/defaults/averaging/``, whose
    ``run.py`` prints the figures). The online error is unchanged (the plays
    use ``coef_``); the accumulator costs one more O(nnz(x)) update per
    update.

    References
    ----------
    .. [1] S. M. Kakade, S. Shalev-Shwartz and A. Tewari, "Efficient bandit
       algorithms for online multiclass prediction", ICML 2008.
    .. [2] Y. Freund and R. E. Schapire, "Large margin classification using
       the perceptron algorithm", Machine Learning 37, 1999 (averaging).
    .. [3] N. Cesa-Bianchi, A. Conconi and C. Gentile, "On the generalization
       ability of on-line learning algorithms", IEEE Trans. Inf. Theory 50,
       2004 (online-to-batch conversion by averaging).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import Banditron
    >>> from skbandit.exploration import EpsilonGreedy
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> clf.t_
    1797
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")
    online error 0.72
    """

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
        **AveragedIterateMixin._average_constraints,
    }

    # scores W x (+ b): an OnlineSelector may share them (base.py)
    _pure_scores = True

    # coef_ and the accumulator of the averaged iterate, A = sum (t - 1) Delta_t
    _state_attrs = ("coef_", "_average_acc")
    _feature_major = ("coef_", "_average_acc")

    _default_exploration = "epsilon_greedy"
    _exploration_values = rule_values(epsilon=0.125)

    def __init__(
        self,
        *,
        exploration: str | BaseExploration | None = None,
        average: bool = True,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration
        self.average = average

    def _make_kernel(self):
        kernel = BanditronKernel(self.coef_.T, self._average_acc.T)
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel
