"""Conservative one-vs-all with Passive-Aggressive binary learners."""

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
from skbandit.multiclass._conservative_ova_fast import PA_UPDATES, ConservativeOVAKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["ConservativeOneVsAll"]


@learner_doc
class ConservativeOneVsAll(ExplorationMixin, LinearBanditClassifier):
    r"""Conservative one-vs-all with Passive-Aggressive learners (bandit feedback).

    One binary linear learner ``w_s`` per class (no bias, zero at the start),
    with scores ``f_s = w_s . x``. Each round the learner plays the label of
    loss-based decoding,

    .. math:: \hat y = \arg\min_r \; (1 - f_r)_+ + \sum_{s \neq r} (1 + f_s)_+
              = \arg\max_r f_r ,

    (the cost is strictly decreasing in ``f_r`` and the other terms do not
    depend on ``r``), exact ties broken at random. There is **no exploration**
    by default (``exploration=None``: ``Greedy()``): the played label is the
    greedy one, and the learner is told only whether it
    was right.

    * Right (``y = ŷ``): every learner ``s`` makes a PA step on ``(x, z_s)``
      with ``z_ŷ = +1`` and ``z_s = -1`` for ``s ≠ ŷ``.
    * Wrong: only learner ``ŷ`` makes a PA step on ``(x, -1)`` (the only
      thing the feedback reveals); the others are not changed ("conservative").

    PA step on ``(x, z)``: loss ``l = max(0, 1 - z f_s)``, update
    ``w_s += tau z x`` with

    * ``update="pa"``: ``tau = l / ||x||^2``;
    * ``update="pa1"``: ``tau = min(C, l / ||x||^2)``;
    * ``update="pa2"``: ``tau = l / (||x||^2 + 1 / (2 C))``.

    A row with ``||x|| = 0`` changes nothing.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the update uses no probability: a rewarded logged
    action is the label, an unrewarded one is not, whatever policy chose it;
    the mistake bounds are for the learner's own predictions. Rewards must be
    0 or 1.

    Parameters
    ----------
    update : {"pa", "pa1", "pa2"}, default="pa"
        The Passive-Aggressive step size (Crammer et al. 2006): PA, PA-I or
        PA-II. Chen et al. (2009) report PA-I in their Table I.
    C : float, default=1.0
        Aggressiveness of PA-I and PA-II (> 0); unused by ``"pa"``.
    exploration : str, exploration rule or None, default=None
        How a round's scores become the distribution played
        (:mod:`skbandit.exploration`). ``None``: the paper's greedy play
        (``Greedy()``, no exploration); a rule's name or object: that rule
        (``None`` parameters take the rule's own fallbacks). Every rule is
        accepted: the update uses the played label (a rewarded one is the
        label, an unrewarded one is not), whatever the rule.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's generator. Two uniforms are drawn per round as for
        every skbandit learner; only the second (argmax ties) is used, so the
        learner is deterministic apart from ties.

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        The binary learners' weights, one row per class.
    {features_in}
    {rounds_played}
    n_mistakes_ : int
        Rounds whose played label was wrong (online error ``n_mistakes_ / t_``).
    n_greedy_mistakes_ : int
        Same as ``n_mistakes_`` (the learner always plays its greedy label).
    {n_iter}
    {exploration_}

    See Also
    --------
    Banditron : Linear bandit learner with epsilon-greedy exploration.
    SeparableOneVsAll : One-vs-all Perceptrons for linearly separable streams.

    Notes
    -----
    Chen et al. (2009) state a mistake bound (their Theorem 2) that a later
    paper reports to be wrong; no bound is claimed here.

    References
    ----------
    .. [1] G. Chen, G. Chen, J. Zhang, S. Chen and C. Zhang, "Beyond Banditron:
       A conservative and efficient reduction for online multiclass prediction
       with bandit setting model", ICDM 2009.
    .. [2] K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer,
       "Online passive-aggressive algorithms", JMLR 7, 2006.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import ConservativeOneVsAll
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = ConservativeOneVsAll(update="pa1", random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> clf.t_
    1797
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")
    online error 0.30
    """

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "update": [StrOptions(set(PA_UPDATES))],
        "C": [Interval(Real, 0, None, closed="neither")],
        "exploration": exploration_constraint(),
    }

    _default_exploration = "greedy"
    _exploration_values = rule_values()

    def __init__(
        self,
        *,
        update: str = "pa",
        C: float = 1.0,
        exploration: str | BaseExploration | None = None,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.update = update
        self.C = C
        self.exploration = exploration

    def _make_kernel(self):
        kernel = ConservativeOVAKernel(
            self.coef_.T, int(PA_UPDATES[self.update]), float(self.C)
        )
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel
