"""PNewtron: the diagonal Newtron baseline of the SOBA paper."""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils._param_validation import Interval

from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier, linear_scores
from skbandit.exploration import (
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._pnewtron_fast import PNewtronKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["PNewtron"]


@learner_doc
class PNewtron(ExplorationMixin, LinearBanditClassifier):
    r"""PNewtron: the diagonal Newtron, with bandit feedback.

    The diagonal version of Newtron (Hazan and Kale, 2011) that Beygelzimer,
    Orabona and Zhang (2017) compare SOBA with. Each round the learner plays
    from a softmax of its scores ``s = W x`` mixed with uniform exploration,

    .. math::

        p = \mathrm{softmax}(\alpha s), \qquad p' = (1 - \gamma) p + \gamma / k,

    with :math:`\alpha` = ``scale`` and :math:`\gamma` the rule's ``epsilon``
    (its exploration rule, ``Softmax(epsilon=0.0625, scale=scale)``), draws
    ``ỹ ~ p'``, learns only whether ``ỹ`` was right, and updates every
    round with an unbiased estimate ``∇̃`` of the gradient of the logistic loss:

    .. math::

        \tilde\nabla = \begin{cases}
        \frac{1 - p_y}{p'_y} (\tfrac1k \mathbb 1 - e_y) \otimes x, \ \kappa = p'_y
        & \text{if } \tilde y = y,\\
        \frac{p_{\tilde y}}{p'_{\tilde y}} (e_{\tilde y} - \tfrac1k \mathbb 1)
        \otimes x, \ \kappa = 1 & \text{otherwise,}
        \end{cases}

    then ``A += κβ ∇̃²`` (elementwise: ``A`` is a diagonal kept as a ``k x d``
    array, ``1/D`` at the start), ``b += (1 - κβ ⟨∇̃, W⟩) ∇̃`` and ``W = -b / A``.

    **Projection** (a choice, the papers leave it open for the diagonal
    version): after every round ``W`` is rescaled to Frobenius norm ``D`` when
    ``||W||_F > D``, as the SOBA authors' code does. Newtron itself projects
    onto the ball in the norm of ``A``; the rescaling is the Euclidean
    projection. Because ``W = -b / A`` is recomputed before the projection, the
    projection of a round does not accumulate into ``b``.

    Cost per round: ``O(k nnz(x))`` (the projection is kept lazily: ``W = σU``
    with ``||U||_F`` updated on the written entries and summed exactly every
    ``kd`` of them, see ``docs/algorithms.md``); memory ``O(kd)``.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the update combines the learner's own softmax with
    the probability of the played action (also its curvature weight), an
    analysis that assumes on-policy data. On logged rounds that are not its
    own it uses the logged propensity and warns (``OffPolicyWarning``).
    Rewards must be 0 or 1.

    Parameters
    ----------
    exploration : str, exploration rule or None, default=None
        How a round's scores become the distribution played
        (:mod:`skbandit.exploration`). ``None``: PNewtron's softmax,
        ``Softmax(epsilon=0.0625, scale=scale)``; a rule's name: that rule with
        this learner's values (``epsilon=0.0625`` for the rules with an
        ``epsilon``, ``scale`` for the softmax); an object: that rule
        (``None`` parameters take this learner's values). Every rule is
        accepted: the update uses the played label's probability under the
        rule as ``p'``, and its own ``softmax(scale s)`` as ``p``. The uniform
        share ``epsilon`` (the paper's ``gamma``), in [0, 1]: the SOBA paper
        tunes it over ``2^-16 ... 2^-1``. Recommended range (the rule in
        Notes): 0.05 to 0.125; 2^-10 to 2^-9 on (nearly) separable streams.
    scale : float, default=10.0
        Softmax inverse temperature ``α >= 0`` (the papers' ``alpha``, default
        10) of the update's ``p`` and of the default exploration (the
        ``scale`` of its ``Softmax`` rule).
    beta : float, default=0.01
        Curvature ``β >= 0`` of the second-order update (default 0.01).
    D : float, default=1.0
        Radius ``D > 0`` of the Frobenius ball of ``W``; ``A`` starts at ``1/D``.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's own ``numpy.random.Generator`` (two uniforms per
        round and the shuffles of ``fit``), advanced across calls.

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        ``W = sigma * coef_unscaled_``, with ``||W||_F <= D`` (computed on
        access: a new array).
    coef_unscaled_ : ndarray of shape (n_classes, n_features)
        ``U = -b / A`` on the entries updated so far (zero elsewhere): ``W``
        before the rescaling to the ball. A view of ``Ut_`` (``Ut_.T``).
    norm_state_ : ndarray of shape (3,)
        ``(||U||_F^2, sigma, entries updated since ||U||^2 was last summed
        exactly)`` with ``sigma = min(1, D / ||U||_F)``.
    b_ : ndarray of shape (n_classes, n_features)
        The accumulated ``b``. A view of ``Ab_`` (``Ab_[:, :, 1].T``).
    A_diag_ : ndarray of shape (n_classes, n_features)
        The diagonal ``A``. A view of ``Ab_`` (``Ab_[:, :, 0].T``).
    Ut_ : ndarray of shape (n_features, n_classes)
        ``U`` stored feature-major: ``Ut_[j, r] = U[r, j]``.
    Ab_ : ndarray of shape (n_features, n_classes, 2)
        ``A`` and ``b`` stored together, feature-major:
        ``Ab_[j, r] = (A[r, j], b[r, j])``.

        A round reads ``U`` and updates ``U``, ``A`` and ``b`` of every class
        on each stored feature of ``x``. Stored feature-major, those ``3k``
        values of one feature are contiguous (``24k`` bytes in sequence)
        instead of ``3k`` entries of three ``(k, d)`` arrays, each on its own
        cache line: once the model outgrows the caches, a round's cost stays
        nearly flat in ``d`` (``docs/algorithms.md``, PNewtron).
    {features_in}
    {rounds_played}
    n_mistakes_ : int
        Rounds whose played action was wrong.
    {greedy_mistakes}
    {n_iter}
    {exploration_}

    See Also
    --------
    SOBA : The second-order Banditron.
    Banditron : ε-greedy first-order learner.

    Notes
    -----
    The default rate, ``Softmax(0.0625)`` (2^-4), was chosen on tuning streams
    (one pass, 5 seeds, ``epsilon`` in 2^-10 ... 2^-1) by the rule of
    ``docs/experiments.md`` ("Defaults from evidence": the smallest worst excess
    of a seed's online error over the best seed-averaged error across the tuning
    streams); the script, tables and recommended range are in
    ``docs/results/defaults/``. Smaller values are better on average but
    unstable across seeds.

    References
    ----------
    .. [1] E. Hazan and S. Kale, "Newtron: an efficient bandit algorithm for
       online multiclass prediction", NIPS 2011.
    .. [2] A. Beygelzimer, F. Orabona and C. Zhang, "Efficient online bandit
       multiclass learning with Õ(√T) regret", ICML 2017, §5.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import PNewtron
    >>> X, y = load_digits(return_X_y=True)
    >>> from skbandit.exploration import Softmax
    >>> clf = PNewtron(exploration=Softmax(0.05), random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> clf.t_
    1797
    >>> bool(np.linalg.norm(clf.coef_) <= clf.D + 1e-12)
    True
    >>> round(float(clf.exploration_distribution(X[:1] / 16).sum()), 12)
    1.0
    """

    # Logged feedback: the update uses the learner's own softmax and the
    # probability of the played action as curvature, so off-policy rounds warn.
    _off_policy_ok = False

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
        "scale": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "D": [Interval(Real, 0, None, closed="neither")],
    }

    _state_attrs = ("Ut_", "Ab_", "norm_state_")

    _default_exploration = "softmax"
    _exploration_values = rule_values(epsilon=0.0625)

    def _exploration_defaults(self):
        return rule_values(epsilon=0.0625, softmax={"scale": self.scale})

    def __init__(
        self,
        *,
        exploration: str | BaseExploration | None = None,
        scale: float = 10.0,
        beta: float = 0.01,
        D: float = 1.0,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration
        self.scale = scale
        self.beta = beta
        self.D = D

    def _init_state(self, n_features, n_classes):
        # feature-major (see Attributes): U = 0, A = 1/D, b = 0
        self.Ut_ = np.zeros((n_features, n_classes), dtype=np.float64)
        self.Ab_ = np.empty((n_features, n_classes, 2), dtype=np.float64)
        self.Ab_[:, :, 0] = 1.0 / float(self.D)
        self.Ab_[:, :, 1] = 0.0
        self.norm_state_ = np.array([0.0, 1.0, 0.0])

    def __setstate__(self, state):
        if "Ut_" not in state and "b_" in state:
            # pickled in the class-major layout (coef_unscaled_, b_, A_diag_
            # as (k, d) arrays, before the feature-major layout): the same values
            state = dict(state)
            U, b, A = (state.pop(n) for n in ("coef_unscaled_", "b_", "A_diag_"))
            state["Ut_"] = np.ascontiguousarray(U.T)
            state["Ab_"] = np.ascontiguousarray(np.stack((A.T, b.T), axis=-1))
        super().__setstate__(state)

    def _state_view(self, name: str) -> np.ndarray:
        """The (n_classes, n_features) view of ``U``, ``A`` or ``b`` (``name``:
        the public attribute) in the feature-major state ``Ut_``, ``Ab_``."""
        key = "Ut_" if name == "coef_unscaled_" else "Ab_"
        state = self.__dict__.get(key)
        if state is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        if key == "Ut_":
            return state.T
        return state[:, :, 0 if name == "A_diag_" else 1].T

    @property
    def coef_unscaled_(self) -> np.ndarray:
        """``U = -b / A`` (n_classes, n_features): a view of ``Ut_``."""
        return self._state_view("coef_unscaled_")

    @property
    def A_diag_(self) -> np.ndarray:
        """The diagonal ``A`` (n_classes, n_features): a view of ``Ab_``."""
        return self._state_view("A_diag_")

    @property
    def b_(self) -> np.ndarray:
        """The accumulated ``b`` (n_classes, n_features): a view of ``Ab_``."""
        return self._state_view("b_")

    @property
    def coef_(self) -> np.ndarray:
        """``W = sigma U``: the weights, rescaled to ``||W||_F <= D``."""
        return self.norm_state_[1] * self.coef_unscaled_

    def _score_rows(self, X):
        # sigma (X U^T), the kernel's order of operations; ``linear_scores``
        # multiplies a dense X by U stored class-major, as for every linear
        # learner (BLAS sums as for the class-major layout)
        return self.norm_state_[1] * linear_scores(X, self.Ut_.T)

    def _make_kernel(self):
        kernel = PNewtronKernel(
            self.Ut_,
            self.Ab_,
            self.norm_state_,
            float(self.scale),
            float(self.beta),
            float(self.D),
        )
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel
