"""SOBA: the Second Order Banditron, full and diagonal (SOBAdiag)."""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier, feature_major_zeros
from skbandit.exploration import (
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._soba_fast import SOBAKernel

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["SOBA"]


@learner_doc
class SOBA(ExplorationMixin, LinearBanditClassifier):
    r"""SOBA: the Second Order Banditron, with bandit feedback.

    Each round the learner computes the scores ``s = W x``, plays the greedy
    label ``ŷ = argmax s`` with probability ``1 - gamma`` and a uniformly random
    label with probability ``gamma`` (its exploration rule, epsilon-greedy with
    ``epsilon = gamma``), and learns only whether the played label ``ỹ`` was
    right. It updates only on rounds where it was right (then it knows
    ``y = ỹ``), as a second-order (ridge-regression) learner on the vector
    ``vec(W)`` of length ``k d`` (rows of ``W`` stacked):

    .. math::

        \bar y = \arg\max_{i \ne y} s_i, \quad
        g = \frac{1}{p_y} (e_{\bar y} - e_y) \otimes x, \quad
        z = \sqrt{p_y}\, g, \quad
        m = \frac{\langle W, z\rangle^2 + 2 \langle W, g\rangle}{1 + z^T A^{-1} z}.

    If ``S + m >= 0``, where ``S = sum_s n_s m_s`` is the sum of the margins of
    the past updates (kept non-negative, the invariant of the paper's proof),
    the update is made (``n_t = 1``): ``S += m``, ``A += z z^T``, ``θ -= g`` and
    ``W = mat(A^{-1} θ)``, from ``A = a I`` and ``θ = 0``. When the greedy label
    was wrong and the explored one right, ``m >= 0`` and the update always
    happens; when the greedy label was right, it happens only if the margin
    budget allows it.

    ``covariance="full"`` is Algorithm 1 exactly: ``A^{-1}`` (``kd x kd``) is
    kept by Sherman-Morrison, ``O((kd)^2)`` time and memory per update. With
    ``v = A^{-1} z``:

    .. math::

        W \leftarrow W - \frac{\langle W, z\rangle + 1/\sqrt{p_y}}{1 + z^T v}\, v,
        \qquad A^{-1} \leftarrow A^{-1} - \frac{v v^T}{1 + z^T v}.

    ``covariance="diag"`` (SOBAdiag, the variant of the paper's experiments)
    keeps only the diagonal of ``A``: ``z^T A^{-1} z = sum_i z_i^2 / A_ii``,
    ``A_ii += z_i^2`` and ``W = θ / diag(A)`` on the touched entries (rows ``y``
    and ``ȳ``, the columns of ``x``): ``O(k nnz(x))`` per round, ``O(kd)``
    memory, for text-sized sparse input.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): SOBA's update scales its second-order statistics with
    the probability of the played action, and its analysis assumes its own
    epsilon-greedy distribution (``p >= gamma / k``). On logged rounds that are
    not its own it uses the logged propensity and warns (``OffPolicyWarning``). Rewards
    must be 0 or 1.

    Parameters
    ----------
    {exploration_epsilon}
        Every rule is accepted, but the analysis (and the scaling
        ``z = sqrt(p_y) g``) assumes epsilon-greedy's ``p >= gamma / k``. The
        rate ``epsilon`` (the paper's ``gamma``), in [0, 1]: recommended range
        (the rule in Notes): 2^-3 alone, 2^-4 (0.0625) misses it by half a
        point; 2^-5 is best on (nearly) separable streams.
        ``EpsilonGreedy(epsilon="adaptive")`` uses the rate of Appendix A
        (Theorem 5) of the paper,
        ``γ_t = min(1, sqrt(k (1 + sum_{s<t} n_s z_s^T A_s^{-1} z_s) / t))``,
        where ``z_s^T A_s^{-1} z_s = q_s / (1 + q_s)`` with
        ``q_s = z_s^T A_{s-1}^{-1} z_s`` (exact for ``covariance="full"``; the
        same formula on the diagonal ``q_s`` for ``"diag"``). The theorem takes
        ``a = X^2`` with ``X`` a bound on ``||x||``.
    a : float, default=1.0
        Regulariser ``a > 0``: ``A`` starts at ``a I``. The paper uses 1.
    covariance : {"diag", "full"}, default="diag"
        Keep the diagonal of ``A`` (SOBAdiag) or its whole inverse.
    max_memory : int, default=2**30
        Budget in bytes for the ``(kd)^2`` float64 inverse of
        ``covariance="full"``. A first ``fit``/``partial_fit`` whose inverse
        would exceed it is refused with an error that suggests
        ``covariance="diag"``. Unused by ``"diag"``.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's own ``numpy.random.Generator`` (two uniforms per
        round: action, tie-break; and the shuffles of ``fit``), advanced across
        calls.

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        ``W = mat(A^{-1} θ)``, one weight row per class.
    theta_ : ndarray of shape (n_classes, n_features)
        ``θ = - sum_s n_s g_s``, the sum of the importance-weighted
        Perceptron-style updates.
    A_diag_ : ndarray of shape (n_classes, n_features)
        The diagonal of ``A``, entry ``[r, j]`` for coordinate ``r d + j`` of
        ``vec(W)``. Only with ``covariance="diag"``.
    A_inv_ : ndarray of shape (n_classes * n_features, n_classes * n_features)
        ``A^{-1}``, symmetric. Only with ``covariance="full"``.
    cumulative_margin_ : float
        ``S = sum_s n_s m_s``, never negative.
    exploration_sum_ : float
        ``sum_s n_s z_s^T A_s^{-1} z_s``, which drives
        ``EpsilonGreedy(epsilon="adaptive")``.
    n_updates_ : int
        Rounds with an update (``n_t = 1``).
    {features_in}
    {rounds_played}
    n_mistakes_ : int
        Rounds whose played action was wrong (``n_mistakes_ / t_`` is the online
        error of the paper).
    {greedy_mistakes}
    {n_iter}
    {exploration_}

    See Also
    --------
    Banditron : The first-order learner SOBA improves on.
    PNewtron : The diagonal Newtron baseline of the paper's experiments.

    Notes
    -----
    ``ȳ``: when the greedy label is not ``y`` it is the greedy label (a maximiser
    of all scores, ties broken at random by the round's second uniform);
    otherwise the first maximiser among the other classes. Rows of a sparse
    matrix that store a column twice are summed first (the entries of ``x`` are
    squared).

    The default rate, ``EpsilonGreedy(0.125)`` (with ``covariance="diag"``), was
    chosen on tuning streams (one pass, 5 seeds, ``epsilon`` in 2^-10 ... 2^-1
    and ``"adaptive"``) by the rule of ``docs/experiments.md`` ("Defaults from
    evidence": the smallest worst excess of a seed's online error over the best
    seed-averaged error across the tuning streams); the script, tables and
    recommended range are in ``docs/results/defaults/``.

    References
    ----------
    .. [1] A. Beygelzimer, F. Orabona and C. Zhang, "Efficient online bandit
       multiclass learning with Õ(√T) regret", ICML 2017 (Algorithm 1, §5,
       Appendix A).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import SOBA
    >>> from skbandit.exploration import EpsilonGreedy
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = SOBA(exploration=EpsilonGreedy(0.25), random_state=0)
    >>> clf = clf.partial_fit(X / 16, y, classes=range(10))
    >>> clf.t_, clf.cumulative_margin_ >= 0
    (1797, True)
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")
    online error 0.66
    >>> full = SOBA(exploration=EpsilonGreedy(0.25), covariance="full", random_state=0)
    >>> full = full.fit(X / 16, y)
    >>> full.A_inv_.shape
    (640, 640)
    >>> print(f"online error {full.n_mistakes_ / full.t_:.2f} over 5 passes")
    online error 0.36 over 5 passes
    >>> print(f"greedy accuracy {full.score(X / 16, y):.2f}")
    greedy accuracy 0.90
    """

    # Logged feedback: SOBA's analysis uses its own distribution (p_y >= gamma/k
    # in z = sqrt(p_y) g), so off-policy rounds warn.
    _off_policy_ok = False

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
        "a": [Interval(Real, 0, None, closed="neither")],
        "covariance": [StrOptions({"diag", "full"})],
        "max_memory": [Interval(Real, 0, None, closed="neither")],
    }

    _default_exploration = "epsilon_greedy"
    _exploration_values = rule_values(epsilon=0.125)
    _exploration_statistic = True

    # W, theta and the diagonal A are stored feature-major (Fortran order);
    # A_inv_ is indexed by the class-major position r d + c of vec(W)
    _feature_major = ("coef_", "theta_", "A_diag_")

    @property
    def _state_attrs(self) -> tuple[str, ...]:  # type: ignore[override]  # a computed _state_attrs over base.py's class attribute (read only, by design)
        # The second-order state of the fitted variant (of the ``covariance``
        # parameter before the first fit).
        if "A_inv_" in self.__dict__ or "A_diag_" in self.__dict__:
            full = "A_inv_" in self.__dict__
        else:
            full = self.covariance == "full"
        return (
            "coef_",
            "theta_",
            "A_inv_" if full else "A_diag_",
            "_sums_",
            "_n_updates_",
        )

    # ``S``, the exploration sum and the update count live in two small arrays
    # (``_sums_ = [S, E]``, ``_n_updates_ = [n]``) that the kernel writes in
    # place: the attributes stay the same objects from call to call, so the
    # kernel cached across calls (``BaseBanditClassifier._kernel``) is reused
    # (a float written back after each block would be a new object each call,
    # and rebuild the kernel on every one-row call of the live loop).
    @property
    def cumulative_margin_(self) -> float:
        return float(self._sums_[0])

    @property
    def exploration_sum_(self) -> float:
        return float(self._sums_[1])

    @property
    def n_updates_(self) -> int:
        return int(self._n_updates_[0])

    def __setstate__(self, state):
        if "cumulative_margin_" in state:  # pickled when they were plain attributes
            state = dict(state)
            state["_sums_"] = np.array(
                [state.pop("cumulative_margin_"), state.pop("exploration_sum_")],
                dtype=np.float64,
            )
            state["_n_updates_"] = np.array([state.pop("n_updates_")], dtype=np.int64)
        super().__setstate__(state)

    def __init__(
        self,
        *,
        exploration: str | BaseExploration | None = None,
        a: float = 1.0,
        covariance: str = "diag",
        max_memory: int = 2**30,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration
        self.a = a
        self.covariance = covariance
        self.max_memory = max_memory

    def _init_state(self, n_features, n_classes):
        kd = n_classes * n_features
        full = self.covariance == "full"
        if full and 8 * kd * kd > self.max_memory:
            raise ValueError(
                f"SOBA(covariance='full') keeps the inverse of a kd x kd matrix, "
                f"kd = {n_classes} classes x {n_features} features = {kd}: "
                f"{8 * kd * kd / 2**20:,.1f} MiB of float64, above "
                f"max_memory={self.max_memory:,} bytes. Use covariance='diag' "
                "(SOBAdiag, O(kd) memory), or raise max_memory."
            )
        super()._init_state(n_features, n_classes)
        self.theta_ = feature_major_zeros(n_classes, n_features)
        a = float(self.a)
        # a new fit may switch the variant: drop the other one's state
        self.__dict__.pop("A_diag_" if full else "A_inv_", None)
        if full:
            self.A_inv_ = np.eye(kd) / a
        else:
            self.A_diag_ = np.full((n_classes, n_features), a, order="F")
        self._sums_ = np.zeros(2, dtype=np.float64)
        self._n_updates_ = np.zeros(1, dtype=np.int64)

    def _make_kernel(self):
        empty = np.empty((0, 0), dtype=np.float64)
        full = "A_inv_" in self.__dict__
        if full != (self.covariance == "full"):
            raise ValueError(
                f"covariance={self.covariance!r} does not match the fitted state "
                f"(covariance={'full' if full else 'diag'!r}); call fit to start over."
            )
        kernel = SOBAKernel(
            self.coef_.T,
            self.theta_.T,
            empty if full else self.A_diag_.T,
            self.A_inv_ if full else empty,
            full,
            self._sums_,
            self._n_updates_,
        )
        kernel.pending_passes = self._pending_passes
        # the adaptive rate reads _sums_[1] = sum_s n_s z_s^T A_s^-1 z_s
        kernel.set_explorer(
            self._explorer(self.classes_.shape[0], statistic=(self._sums_, 1))
        )
        return kernel

    # covariance="full": a block ends early once reading rows of A_inv through
    # its pending rank-one updates has cost this many passes over A_inv (the
    # updates are then applied; docs/algorithms.md). The cost of a round stays
    # within a small factor of an immediate update's.
    _pending_passes = 1.0
