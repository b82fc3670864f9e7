"""Bandit Passive-Aggressive: PA steps along the Banditron's estimate."""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

from sklearn.utils._param_validation import Interval, StrOptions

from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier
from skbandit.exploration import (
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._bandit_pa_fast import UPDATES, BanditPAKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["BanditPassiveAggressive"]


@learner_doc
class BanditPassiveAggressive(ExplorationMixin, LinearBanditClassifier):
    r"""Bandit Passive-Aggressive: multiclass PA steps driven by bandit feedback.

    Each round the learner computes the scores ``s = W x``, plays the greedy
    label ``g`` with probability ``1 - gamma`` and a uniformly random label with
    probability ``gamma`` (the Banditron's exploration, its default rule
    ``EpsilonGreedy(epsilon=gamma)``), and learns only whether
    the played label ``a`` was right (reward ``r``). Its update is a
    Passive-Aggressive step (Crammer et al. 2006) whose direction is the
    Banditron's importance-weighted estimate (Kakade et al. 2008) of the
    multiclass update direction :math:`\Phi(x, y) - \Phi(x, g)`,

    .. math:: \tilde U = x \left(\frac{r}{q} e_a - e_g\right)^\top ,
              \qquad \mathbb{E}_a[\tilde U] = x (e_y - e_g)^\top ,

    with ``q`` the probability with which ``a`` was drawn: the smallest change
    of ``W`` that meets the constraint :math:`\langle W, \tilde U \rangle \ge 1`
    (hard PA), or its soft versions PA-I and PA-II:

    .. math:: m = \frac{r}{q} s_a - s_g, \quad \ell = (1 - m)_+, \quad
              W \leftarrow W + \tau \tilde U, \quad
              \tau = \frac{\ell}{\|\tilde U\|^2} \;\text{(PA)}, \;
              \min\left(C, \frac{\ell}{\|\tilde U\|^2}\right) \;\text{(PA-I)}, \;
              \frac{\ell}{\|\tilde U\|^2 + 1/(2C)} \;\text{(PA-II)},

    where :math:`\|\tilde U\|^2 = \|x\|^2 (r/q - 1)^2` when ``a == g`` and
    :math:`\|x\|^2 ((r/q)^2 + 1)` otherwise. A wrong round (``r = 0``) pushes
    the greedy score down to at most -1; a right greedy round pushes it up; a
    right exploration round raises ``s_a`` only to about ``q (1 + s_g)`` (the
    PA step divides by :math:`\|\tilde U\|^2 \approx \|x\|^2 / q^2`), so the
    weights never jump by ``x / q`` as the Banditron's do, and the learner
    learns mostly from its greedy rounds. The exact floating-point operations
    are those of ``docs/algorithms.md``.

    Passive-Aggressive steps driven by the Banditron's estimate under
    epsilon-greedy exploration are the idea of Zhong, Daucé and Ralaivola
    (2015, "PAB"); the rule above is derived here from the PA problem with
    :math:`\tilde U` in place of the full-information direction, and is not
    claimed to reproduce their paper's update term for term.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the same update with the logged action and reward;
    ``q`` is the logged propensity unless the round is the learner's own (then
    the probability under its tie-broken greedy label). Rewards must be 0 or 1.

    Parameters
    ----------
    exploration : str, exploration rule or None, default=None
        How a round's scores become the distribution played
        (:mod:`skbandit.exploration`). ``None``: epsilon-greedy,
        ``EpsilonGreedy(epsilon=0.125)`` (the Banditron's rate, the paper's
        ``gamma``; not tuned for this learner); a rule's name: that rule with
        this learner's values; an object: that rule (``None`` parameters take
        this learner's values). Every rule is accepted: the estimate divides
        by the probability ``q`` of the played label under the rule.
    update : {"pa", "pa1", "pa2"}, default="pa1"
        The Passive-Aggressive step: hard PA, PA-I (step capped at ``C``) or
        PA-II (``1/(2C)`` added to the denominator).
    C : float, default=1.0
        Aggressiveness of PA-I and PA-II, > 0 (unused by ``"pa"``).
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's own ``numpy.random.Generator``, which draws two
        uniforms per round (action, tie-break) and the shuffles of ``fit``;
        created on the first ``partial_fit`` (or by each ``fit``) and then
        advanced across calls, so a stream fed in chunks gives exactly the
        result of one call.

    Attributes
    ----------
    exploration_ : exploration rule
        The rule played, ``exploration`` resolved (every parameter set).
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class (also when there are two classes).
    {features_in}
    {rounds_played}
    n_mistakes_ : int
        Rounds whose played (explored) action was wrong.
    {greedy_mistakes}
    n_iter_ : int
        Passes finished by the last call.

    See Also
    --------
    Banditron : The same exploration and estimate, with a unit step.
    ConservativeOneVsAll : PA steps of one-vs-all learners, without exploration.

    References
    ----------
    .. [1] H. Zhong, E. Daucé and L. Ralaivola, "Online multiclass learning
       with 'bandit' feedback under a Passive-Aggressive approach", ESANN 2015.
    .. [2] K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer,
       "Online passive-aggressive algorithms", JMLR 7, 2006.
    .. [3] S. M. Kakade, S. Shalev-Shwartz and A. Tewari, "Efficient bandit
       algorithms for online multiclass prediction", ICML 2008.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import BanditPassiveAggressive
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = BanditPassiveAggressive(random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> clf.t_
    1797
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")
    online error 0.52
    """

    # scores W x (+ b): an OnlineSelector may share them (base.py)
    _pure_scores = True

    _default_exploration = "epsilon_greedy"
    _exploration_values = rule_values(epsilon=0.125)

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
        "update": [StrOptions(set(UPDATES))],
        "C": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        exploration: str | BaseExploration | None = None,
        update: str = "pa1",
        C: float = 1.0,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration
        self.update = update
        self.C = C

    def _make_kernel(self):
        kernel = BanditPAKernel(self.coef_.T, UPDATES[self.update], float(self.C))
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel
