"""The multiclass Perceptron: the full-information reference line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier
from skbandit.exploration import ExplorationMixin, exploration_constraint
from skbandit.linear_model._perceptron_fast import PerceptronKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["MulticlassPerceptron"]


@learner_doc
class MulticlassPerceptron(ExplorationMixin, LinearBanditClassifier):
    """Multiclass Perceptron with full-information feedback (baseline).

    Each round it predicts the greedy label ``argmax W x`` and, on a mistake,
    updates ``w_y += x`` and ``w_greedy -= x``. Unlike the bandit learners it
    sees the true label every round: it is the full-information reference line
    in the papers' figures and tables. It always plays its greedy label, so
    ``n_mistakes_ == n_greedy_mistakes_`` and every logged propensity is 1.

    A full-information learner: it can act (``sample_actions`` plays its greedy
    label) but refuses ``LoggedFeedback``, which does not reveal the label.

    Parameters
    ----------
    exploration : "greedy", Greedy or None, default=None
        The exploration rule (:mod:`skbandit.exploration`); only the greedy
        rule is accepted: a full-information learner sees the label whatever
        it plays, so exploring would only add mistakes.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the generator that breaks exact ties of the argmax (two uniforms
        are drawn per round, as for every skbandit learner) and shuffles.

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class.
    {features_in}
    {rounds_played}
    n_mistakes_ : int
        Rounds predicted wrongly (online error ``n_mistakes_ / t_``).
    n_greedy_mistakes_ : int
        Same as ``n_mistakes_``.
    {n_iter}
    {exploration_}

    See Also
    --------
    Banditron : The same update learnt from bandit feedback.
    sklearn.linear_model.Perceptron : One-vs-all binary Perceptrons.

    References
    ----------
    .. [1] K. Crammer and Y. Singer, "Ultraconservative online algorithms for
       multiclass problems", JMLR 3, 2003.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import MulticlassPerceptron
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = MulticlassPerceptron(random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")
    online error 0.17
    """

    _full_information = True

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
    }

    _default_exploration = "greedy"
    _exploration_values = {"greedy": {}}
    _exploration_refusal = (
        "A full-information learner sees the label whatever it plays: "
        "exploring would only add mistakes."
    )

    def __init__(
        self,
        *,
        exploration: str | BaseExploration | None = None,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration

    def _make_kernel(self):
        kernel = PerceptronKernel(self.coef_.T)
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel
