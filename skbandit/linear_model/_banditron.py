"""Banditron: the multiclass Perceptron with epsilon-greedy exploration."""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

from sklearn.utils._param_validation import Interval

from skbandit.base import LinearBanditClassifier
from skbandit.linear_model._banditron_fast import BanditronKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["Banditron"]


class Banditron(LinearBanditClassifier):
    """Banditron: online multiclass learning from bandit feedback.

    Each round the learner computes the scores ``W x``, plays the greedy
    label with probability ``1 - gamma`` and a uniformly random label with
    probability ``gamma``, and learns only whether the played label was right.
    It then makes the update whose expectation is the multiclass Perceptron's:
    ``w_greedy -= x`` every round and, if the played label ``a`` was right,
    ``w_a += x / p(a)``. Regret O(T^(2/3)) with respect to the hinge loss.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the update is the same with the logged action ``a``
    and reward, and ``p(a)`` is the logged propensity unless the round is the
    learner's own (then the paper's ``p_g(a)``). With the logging policy's
    propensity the expected update is still the Perceptron's, provided that
    policy gives every label a positive probability, so off-policy logs are
    fine. Rewards must be 0 or 1.

    Parameters
    ----------
    gamma : float, default=0.05
        Exploration rate in (0, 1]: the probability mass spread uniformly over
        the classes. The papers tune it per data set (Kakade et al. 2008:
        0.014 on SynSep; Chen et al. 2009: 0.03 to 0.3).
    max_iter : int, default=5
        Passes over the data in ``fit``. ``partial_fit`` always makes one.
    shuffle : bool, default=True
        Whether ``fit`` visits the rows in a new random order each pass.
        ``partial_fit`` always plays the rows in the given order.
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's own ``numpy.random.Generator``, which draws two
        uniforms per round (action, tie-break) and the shuffles of ``fit``. It
        is created on the first ``partial_fit`` (or by each ``fit``) and then
        advanced across calls, so a stream fed in chunks gives exactly the
        result of one call.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class (also when there are two classes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.
    t_ : int
        Rounds played so far.
    n_mistakes_ : int
        Rounds whose played (explored) action was wrong. ``n_mistakes_ / t_``
        is the online error the papers report.
    n_greedy_mistakes_ : int
        Rounds whose greedy action was wrong (bookkeeping only).
    n_iter_ : int
        Passes made by the last call: ``max_iter`` for ``fit``, 1 for
        ``partial_fit``.

    See Also
    --------
    MulticlassPerceptron : The full-information baseline.

    References
    ----------
    .. [1] S. M. Kakade, S. Shalev-Shwartz and A. Tewari, "Efficient bandit
       algorithms for online multiclass prediction", ICML 2008.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import Banditron
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = Banditron(gamma=0.1, random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> clf.t_
    1797
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")
    online error 0.72
    """

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "gamma": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(
        self,
        *,
        gamma: float = 0.05,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.gamma = gamma

    def _make_kernel(self):
        return BanditronKernel(self.coef_, float(self.gamma))
