"""Gaptron: randomised online gradient descent that exploits the surrogate gap."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import softmax
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions

from skbandit._learner_docs import learner_doc
from skbandit.base import LinearBanditClassifier, _caller_stacklevel
from skbandit.exploration import (
    BaseExploration,
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._averaging import AveragedIterateMixin
from skbandit.linear_model._gaptron_fast import (
    GaptronKernel,
    GaptronLoss,
    py_gap_map,
    py_surrogate_gradient,
    py_surrogate_loss,
)
from skbandit.optim import (
    BaseStepSize,
    StepSizeMixin,
    step_size_constraint,
)

if TYPE_CHECKING:
    from skbandit._typing import MatrixLike, RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["Gaptron"]

LOSS_CODES = {
    "logistic": int(GaptronLoss.LOSS_LOGISTIC),
    "hinge": int(GaptronLoss.LOSS_HINGE),
    "smooth_hinge": int(GaptronLoss.LOSS_SMOOTH_HINGE),
}

# Gamma of the bandit setting when neither the exploration's ``epsilon`` nor
# ``n_rounds`` is given.
DEFAULT_BANDIT_GAMMA = 0.125

# The constant c of the theory's gamma = min(1, k X ||U|| sqrt(c / T)) [rec].
_GAMMA_CONSTANT = {
    "logistic": 1.0 / (4.0 * math.log(2.0)),
    "hinge": 1.0,
    "smooth_hinge": 2.0,
}


def full_information_step(loss: str, n_classes: int, x_norm_bound: float) -> float:
    """The full-information step size ``eta`` (reconstructed; see the class docstring).

    logistic ``2 ln 2 / (k X^2)``, hinge ``1 / (2 k X^2)``, smooth hinge
    ``1 / (4 k X^2)``, with ``X = x_norm_bound``.
    """
    k, xx = n_classes, x_norm_bound * x_norm_bound
    if loss == "logistic":
        return 2.0 * math.log(2.0) / (k * xx)
    if loss == "hinge":
        return 1.0 / (2.0 * k * xx)
    if loss == "smooth_hinge":
        return 1.0 / (4.0 * k * xx)
    raise ValueError(f"unknown loss {loss!r}")


def theory_gamma(
    loss: str, n_classes: int, x_norm_bound: float, n_rounds: int
) -> float:
    """``min(1, k X sqrt(c / T))`` (comparator norm ``||U|| = 1``) [rec]."""
    c = _GAMMA_CONSTANT[loss]
    return min(1.0, n_classes * x_norm_bound * math.sqrt(c / n_rounds))


@learner_doc
class Gaptron(
    StepSizeMixin, ExplorationMixin, AveragedIterateMixin, LinearBanditClassifier
):
    r"""Gaptron: a randomised first-order learner that exploits the surrogate gap.

    Each round the learner computes the scores :math:`s = W x`, its greedy
    label :math:`y^* = \arg\max_r s_r` (exact ties broken at random) and the top
    margin :math:`m^* = s_{y^*} - \max_{r \neq y^*} s_r`. It plays a label drawn
    from

    .. math::

        p' = (1 - a(s))\, e_{y^*} + \frac{a(s)}{k} \mathbf{1}, \qquad
        p = (1 - \gamma)\, p' + \frac{\gamma}{k} \mathbf{1},

    where :math:`a(s) \in [0, 1]` is the loss's *gap map*, and then takes an
    online gradient descent step on a surrogate loss :math:`\ell`,
    :math:`W \leftarrow W - \eta_t\, w\, \nabla_s \ell(s, y) \otimes x`
    (no projection, :math:`W_1 = 0`). With ``feedback="full"`` the learner sees
    the true label :math:`y` and :math:`w = 1`. With ``feedback="bandit"`` it
    learns only whether the played label :math:`\tilde y` was right: if so,
    :math:`y = \tilde y` and :math:`w = 1 / p(y)` (importance weighting, an
    unbiased estimate of the full-information gradient); if not, no update.
    One round costs O(k d) (O(k nnz(x)) on sparse rows).

    With :math:`c = \arg\max_{r \neq y} s_r` (the first such class on ties)
    and :math:`m = s_y - s_c`, the losses, their gradients with respect to the
    scores and their gap maps are:

    - ``"logistic"``: :math:`\ell = -\log_2 \mathrm{softmax}(s)_y`,
      :math:`\nabla_s \ell = (\mathrm{softmax}(s) - e_y) / \ln 2`,
      :math:`a(s) = \min(1, -\log_2 \max_r \mathrm{softmax}(s)_r)` (uniform
      play while the top probability is at most 1/2);
    - ``"hinge"`` (a variant of Crammer and Singer's):
      :math:`\ell = \max(0, 1 - m)`, except :math:`\ell = 0` when
      :math:`y^* = y` and :math:`a(s) = 0`; :math:`\nabla_s \ell = e_c - e_y`
      when :math:`\ell > 0`; :math:`a(s) = \max(0, 1 - 2 k m^*)`;
    - ``"smooth_hinge"``: :math:`\ell = 1 - 2m` (:math:`m \le 0`),
      :math:`(1 - m)^2` (:math:`0 < m < 1`), 0 (:math:`m \ge 1`);
      :math:`\nabla_s \ell = -2 (e_y - e_c)`, :math:`-2 (1 - m)(e_y - e_c)`, 0;
      :math:`a(s) = \max(0, 1 - m^*)^2`.

    The policy is thus
    epsilon-greedy with the state-dependent rate
    :math:`\gamma + (1 - \gamma) a(s)`: the exploration rule
    ``GapMap(epsilon=gamma, loss=loss)`` (:mod:`skbandit.exploration`).

    The paper's formulas did not survive in the source this library was built
    from: **the gap maps above, the step sizes and the bandit gamma are
    reconstructions** (documented in docs/algorithms.md). They satisfy the property the
    paper's constant-regret proof needs: for every score vector and label, with
    :math:`\|x\| \le X`, the per-round surrogate gap
    :math:`E_{\tilde y \sim p}[1(\tilde y \neq y)] + \frac{\eta}{2}
    \|\nabla \ell\|^2 - \ell \le 0` with full information and :math:`\le \gamma`
    with bandit feedback, which the test suite checks on the compiled
    functions. They are plain functions of the loss in the compiled kernel
    (``skbandit.linear_model._gaptron_fast``), so another map is one more code.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``; bandit feedback only): the gradient estimate is
    importance-weighted by ``1 / p(a)`` with the logged propensity unless the
    round is the learner's own, so it stays unbiased under another logging
    policy that gives every label a positive probability. Rewards must be 0
    or 1 (the losses need the label, which only a reward of 1 reveals).

    Parameters
    ----------
    loss : {"logistic", "hinge", "smooth_hinge"}, default="logistic"
        The surrogate loss and its gap map (table above).
    feedback : {"bandit", "full"}, default="bandit"
        ``"bandit"``: the learner learns only the bit ``1[played == y]``.
        ``"full"``: it learns from the true label every round (a randomised
        full-information classifier, to compare with the Perceptron).
    exploration : str, exploration rule or None, default=None
        How a round's scores become the distribution played
        (:mod:`skbandit.exploration`). ``None``: the gap map of ``loss``,
        ``GapMap(epsilon=gamma, loss=loss)``; a rule's name: that rule with
        this learner's values (``epsilon=gamma`` for the rules with an
        ``epsilon``, ``loss`` for the gap map); an object: that rule (``None``
        parameters take this learner's values). ``gamma``, the uniform
        exploration mixed into the policy (the rule's ``epsilon``; a ``None``
        epsilon is "auto"): 0 with full information; with bandit feedback, the
        theory's :math:`\min(1, k X \sqrt{c / T})` (:math:`c = 1/(4 \ln 2), 1,
        2` for the three losses, comparator norm taken as 1) when ``n_rounds``
        (T) is given, else 0.125 (``docs/results/defaults/gaptron-step/``).
        Bandit feedback needs ``epsilon > 0`` and a rule that gives every label
        a positive probability (the importance weights ``1 / p(y)``):
        ``"greedy"`` and ``"conservative"`` are refused, and so is an
        ``epsilon`` of 0. ``step_size="constant"`` with bandit feedback needs a
        rule with an ``epsilon`` (the theory's step is
        :math:`\gamma \eta_{full} / k`).
    step_size : {"adagrad", "constant"} or step-size rule, default="adagrad"
        The step :math:`\eta_t` (:mod:`skbandit.optim`). ``"adagrad"``
        (the default; ``docs/results/defaults/gaptron-step/``):
        ``AdaGrad(learning_rate=1024.0, per_coordinate=False)``, the
        AdaGrad-norm step
        :math:`\eta_t = B / \sqrt{2 (10^{-8} + \sum_{s \le t} \|\hat g_s\|^2)}`
        with :math:`B` = ``learning_rate``, over the (importance-weighted)
        gradients used so far, the current one included; it does not depend
        on the scale of the rows or of the importance weights, and :math:`B`
        is the comparator norm :math:`\|U\|` its regret bound is stated for.
        ``"constant"``: the theory's constant step, the full-information step
        :math:`\eta_{full}` = :math:`2 \ln 2 / (k X^2)` (logistic),
        :math:`1 / (2 k X^2)` (hinge), :math:`1 / (4 k X^2)` (smooth hinge),
        and :math:`\gamma \eta_{full} / k` with bandit feedback. An object:
        that rule, ``Constant(eta)`` or ``AdaGrad(B, per_coordinate=False)``
        (the update keeps one accumulator: per-coordinate AdaGrad and
        ``Normalized`` are refused). Only ``"constant"`` is the step of the
        (reconstructed) constant-regret analysis (see Notes). The rule played
        is ``step_size_``.
    x_norm_bound : float > 0, default=1.0
        The bound :math:`X` on :math:`\|x\|` that the theory's step
        (``step_size="constant"``) and gamma (a ``None`` epsilon with ``n_rounds``)
        assume; unused otherwise. Rows are never rescaled: when it is used,
        rows whose norm exceeds it give one ``UserWarning`` per learner (the
        first call that meets such rows; ``fit`` starts a new learner and
        warns again; rows are counted in the kernel).
    n_rounds : int >= 1 or None, default=None
        The horizon T used by the "auto" gamma (a ``None`` epsilon) with
        bandit feedback.
    average : bool, default=True
        Whether ``predict``, ``decision_function`` and ``predict_proba`` use
        the averaged weights ``average_coef_`` (the mean of the weights after
        each round played so far, ``fit``'s passes and ``partial_fit``'s rounds
        alike; an online-to-batch conversion, as ``SGDClassifier(average=True)``)
        instead of the current ``coef_``. The plays, the online error and
        ``exploration_distribution`` always use ``coef_``.
    {passes}
    {random_state}

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        The current weights the learner plays with, one row per class (also
        when there are two classes).
    average_coef_ : ndarray of shape (n_classes, n_features)
        The mean of the weights after each round played so far (``coef_``
        before any round); ``predict`` uses it when ``average=True``.
    grad_sq_sum_ : ndarray of shape (1,)
        Sum of the squared norms :math:`\|\hat g\|^2 = \|\nabla_s \ell\|^2
        \|x\|^2 w^2` of the gradients used so far (the AdaGrad-norm state).
    {action_rounds}
    step_size_ : step-size rule
        The step-size rule played: ``step_size`` resolved (``"constant"``:
        ``Constant`` of the theory's step).

    See Also
    --------
    Banditron : Epsilon-greedy Perceptron with bandit feedback.
    MulticlassPerceptron : The deterministic full-information baseline.

    Notes
    -----
    **Which option the theory covers.** The constant-regret (surrogate gap)
    analysis is for ``step_size="constant"``: the step
    :math:`\gamma \eta_{full} / k` with bandit feedback, and the "auto" gamma
    with ``n_rounds`` (the reconstructions above, with :math:`\|x\| \le`
    ``x_norm_bound``). The default AdaGrad-norm step is the practical step of
    follow-up work; the surrogate gap property and the paper's bound are not
    proved for it. Use ``step_size="constant"`` (and ``n_rounds``) to run the
    analysed algorithm.

    **Defaults.** The default step (AdaGrad-norm, :math:`B = 1024`) and the
    bandit rate ``GapMap(0.125)`` were chosen on tuning streams by the rule of
    ``docs/experiments.md`` ("Defaults from evidence");
    ``docs/results/defaults/gaptron-step/`` holds the script and its report,
    with held-out streams. The last iterate of the AdaGrad-norm step is less
    stable after several passes than the averaged weights, which is why
    ``average=True`` is the default (``docs/results/defaults/averaging/``).

    References
    ----------
    .. [1] D. van der Hoeven, "Exploiting the surrogate gap in online multiclass
       classification", NeurIPS 2020 (arXiv:2007.12618).
    .. [2] K. Crammer and Y. Singer, "On the algorithmic implementation of
       multiclass kernel-based vector machines", JMLR 2, 2001 (hinge loss).
    .. [3] J. D. M. Rennie and N. Srebro, "Loss functions for preference levels",
       IJCAI workshop, 2005 (smooth hinge loss).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.preprocessing import Normalizer
    >>> from skbandit import Gaptron
    >>> X, y = load_digits(return_X_y=True)
    >>> X = Normalizer().fit_transform(X)  # ||x|| = 1 = x_norm_bound
    >>> clf = Gaptron(random_state=0).partial_fit(X, y, classes=range(10))
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")  # uniform: 0.90
    online error 0.63
    >>> theory = Gaptron(step_size="constant", random_state=0)  # the analysed step
    >>> theory = theory.partial_fit(X, y, classes=range(10))
    >>> print(f"online error {theory.n_mistakes_ / theory.t_:.2f}")
    online error 0.91
    >>> P = clf.exploration_distribution(X[:1])  # the policy of the next round
    >>> print(P.shape, f"{P.sum():.6f}")
    (1, 10) 1.000000
    >>> full = Gaptron(loss="logistic", feedback="full", random_state=0).fit(X, y)
    >>> print(f"training accuracy {full.score(X, y):.2f}")
    training accuracy 0.98
    >>> full.predict_proba(X[:2]).shape  # softmax of the scores
    (2, 10)
    """

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "loss": [StrOptions(set(LOSS_CODES))],
        "feedback": [StrOptions({"bandit", "full"})],
        "exploration": exploration_constraint(),
        "step_size": step_size_constraint(),
        "x_norm_bound": [Interval(Real, 0, None, closed="neither")],
        "n_rounds": [Interval(Integral, 1, None, closed="left"), None],
        **AveragedIterateMixin._average_constraints,
    }

    # coef_, the AdaGrad-norm sum and the accumulator of the averaged iterate
    _state_attrs = ("coef_", "grad_sq_sum_", "_average_acc")
    _feature_major = ("coef_", "_average_acc")
    # _after_block sets the flag of its warning about long rows
    _hook_rebinds = ("_x_norm_warned",)

    def __init__(
        self,
        *,
        loss: str = "logistic",
        feedback: str = "bandit",
        exploration: str | BaseExploration | None = None,
        step_size: str | BaseStepSize = "adagrad",
        x_norm_bound: float = 1.0,
        n_rounds: int | None = None,
        average: bool = True,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.loss = loss
        self.feedback = feedback
        self.exploration = exploration
        self.step_size = step_size
        self.x_norm_bound = x_norm_bound
        self.n_rounds = n_rounds
        self.average = average

    _default_exploration = "gap_map"
    _exploration_values = rule_values()
    _exploration_refusal = (
        "With feedback='bandit' the importance weights 1/p(y) need every label "
        "to be played with a positive probability."
    )

    def _exploration_defaults(self):
        values = rule_values(
            epsilon=self._auto_gamma(self.classes_.shape[0]),
            gap_map={"loss": self.loss},
        )
        if self.feedback == "bandit":
            values = {name: values[name] for name in self._bandit_rules()}
        return values

    def _validate_params(self):
        super()._validate_params()
        if self.feedback == "bandit":
            self._exploration_name(self._bandit_rules())
        if isinstance(self.exploration, BaseExploration):
            self._check_epsilon(self.exploration)

    def _bandit_rules(self):
        values = dict(self._exploration_values)
        del values["greedy"], values["conservative"]
        return values

    def _resolve_exploration(self):
        return self._check_epsilon(super()._resolve_exploration())

    def _check_epsilon(self, rule):
        """Gaptron's conditions on the rule's epsilon (None: not yet resolved)."""
        epsilon = getattr(rule, "epsilon", None)
        if self.feedback == "bandit" and epsilon == 0:
            raise InvalidParameterError(
                "The 'exploration' parameter of Gaptron must have epsilon > 0 "
                "with feedback='bandit' (importance weights 1/p(y) need every "
                f"label to be played with probability >= epsilon/k); got {rule!r}."
            )
        if (
            self.step_size == "constant"
            and self.feedback == "bandit"
            and not hasattr(rule, "epsilon")
        ):
            raise InvalidParameterError(
                "Gaptron with step_size='constant' (the theory's step) and "
                "feedback='bandit' takes the step gamma * eta_full / k: its "
                f"exploration rule needs an epsilon (gamma); got {rule!r}."
            )
        return rule

    # ------------------------------------------------------------ parameters
    def _auto_gamma(self, n_classes: int) -> float:
        """The "auto" gamma (a ``None`` epsilon): 0 with full information;
        with bandit feedback the theory's with ``n_rounds``, else 0.125."""
        if self.feedback == "full":
            return 0.0
        if self.n_rounds is None:
            return DEFAULT_BANDIT_GAMMA
        return theory_gamma(
            self.loss, n_classes, float(self.x_norm_bound), int(self.n_rounds)
        )

    def _theory_step(self, n_classes: int, gamma: float) -> float:
        """The theory's constant step: :math:`\\eta_{full}`, and
        :math:`\\gamma \\eta_{full} / k` with bandit feedback."""
        eta = full_information_step(self.loss, n_classes, float(self.x_norm_bound))
        if self.feedback == "bandit":
            eta = gamma * eta / n_classes
        return eta

    _step_size_refusal = (
        "Gaptron's update keeps one accumulator of squared gradient norms: "
        "AdaGrad needs per_coordinate=False."
    )

    def _step_size_values(self, n_classes):
        # the theory's step needs k and gamma (the resolved rule's epsilon:
        # _make_kernel resolves the exploration first; a rule without one is
        # refused with "constant"); Constant's own default stands in before
        # (only set_params reads it then)
        constant = {}
        gamma = getattr(self.__dict__.get("exploration_"), "epsilon", None)
        if n_classes is not None and (gamma is not None or self.feedback == "full"):
            constant = {"learning_rate": self._theory_step(n_classes, gamma)}
        return {
            "adagrad": {"learning_rate": 1024.0, "per_coordinate": False},
            "constant": constant,
        }

    def _step_size_accepts(self, rule):
        return not getattr(rule, "per_coordinate", False)

    # ---------------------------------------------------------------- state
    def _init_state(self, n_features, n_classes):
        super()._init_state(n_features, n_classes)
        self.grad_sq_sum_ = np.zeros(1, dtype=np.float64)

    def _make_kernel(self):
        k = self.classes_.shape[0]
        explorer = self._explorer(k)
        # rows are counted for the warning beyond rounding (relative 1e-9)
        bound_sq = float(self.x_norm_bound) ** 2 * (1.0 + 1e-9)
        kernel = GaptronKernel(
            self.coef_.T,
            LOSS_CODES[self.loss],
            self._step_rule(k),
            bound_sq,
            self.feedback == "full",
            self.grad_sq_sum_,
            self._average_acc.T,
        )
        kernel.set_explorer(explorer)
        return kernel

    # ------------------------------------------------- the x_norm_bound warning
    def _uses_x_norm_bound(self) -> bool:
        """Whether the resolved step or gamma depends on ``x_norm_bound``."""
        spec = self.exploration
        if isinstance(spec, str) or spec is None:
            epsilon = None
        else:
            epsilon = spec.get_params().get("epsilon")
        theory_gamma = (
            epsilon is None and self.feedback == "bandit" and self.n_rounds is not None
        )
        return self.step_size == "constant" or theory_gamma

    def _reset(self, classes, n_features):
        # A fresh fit is a new learner: it warns again about large rows.
        super()._reset(classes, n_features)
        self._x_norm_warned = False

    def _after_block(self, kernel) -> None:
        n_large, max_sq = kernel.n_large, kernel.max_sq_norm
        kernel.n_large, kernel.max_sq_norm = 0, 0.0
        if (
            n_large
            and not self.__dict__.get("_x_norm_warned", False)
            and self._uses_x_norm_bound()
        ):
            self._x_norm_warned = True
            warnings.warn(
                f"Gaptron: {n_large} of the rows played so far in this call have "
                f"||x|| > x_norm_bound={self.x_norm_bound!r} (largest ||x|| seen: "
                f"{math.sqrt(max_sq):.4g}). The theory's step size "
                "(step_size='constant') and gamma (exploration epsilon None with "
                "n_rounds) assume ||x|| <= "
                "x_norm_bound; rows are not rescaled. Pass a larger x_norm_bound "
                "or scale the rows (e.g. sklearn.preprocessing.Normalizer). "
                "Given once per learner (again after fit).",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )

    # ------------------------------------------------------------ prediction
    def _has_logistic_loss(self):
        return self.loss == "logistic"

    @available_if(_has_logistic_loss)
    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Softmax of the scores (``loss="logistic"`` only).

        The probability model of the logistic loss, ``softmax(W x)`` with the
        weights of ``decision_function`` (``average_coef_`` when
        ``average=True``): what probability-based scoring (``neg_log_loss``)
        uses. It is *not* the
        distribution the learner plays from (see ``exploration_distribution``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        return softmax(self._scores(X), axis=1)

    @available_if(_has_logistic_loss)
    def predict_log_proba(self, X: MatrixLike) -> np.ndarray:
        """Logarithm of ``predict_proba`` (``loss="logistic"`` only).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        # the logarithm of predict_proba, as scikit-learn's classifiers give it
        # (an underflowed probability is -inf here too)
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


# The compiled maps, re-exported for the tests and for users who study them.
gap_map = py_gap_map
surrogate_gradient = py_surrogate_gradient
surrogate_loss = py_surrogate_loss
