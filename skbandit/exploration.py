"""Exploration rules: how a learner turns a row's scores into the distribution it plays.

Every bandit learner takes ``exploration=``: ``None`` (the learner's own rule,
the default), the name of a rule (that rule with the learner's defaults for
it), or one of the objects below, whose parameters are searchable like an
estimator's (``GridSearchCV(clf, {"exploration__epsilon": [0.01, 0.1]})``; the
learner then plays its default rule with that parameter). A parameter left at
``None`` takes the learner's value for it. The resolved rule a fitted learner
plays is its ``exploration_`` attribute.

Each rule is compiled (``skbandit._core._explore``; a kernel's distribution is
one call of it) and has a NumPy twin, ``distribution``, computing the same
floating-point operations in the same order (the tests compare them bit for
bit). With scores ``s`` of the ``k`` classes, the tie-broken greedy label
``g`` (an exact maximiser of ``s``) and the 1-based round ``t``:

- ``Greedy``: ``p = e_g``.
- ``EpsilonGreedy``: ``p = (1 - e_t) e_g + (e_t / k) 1``, ``e_t = epsilon`` or,
  with ``decay > 0``, ``max(min_epsilon, epsilon t^-decay)``; SOBA's adaptive
  rate ``epsilon="adaptive"``.
- ``Softmax``: ``p = (1 - epsilon) softmax(scale s) + epsilon / k``.
- ``InverseGap``: ``p_a = 1 / (k + gamma_a (s_g - s_a))`` for ``a != g``,
  ``p_g`` the rest (Foster and Rakhlin 2020), ``gamma_a = scale t^exponent``.
- ``GapMap``: ``p = (1 - u) e_g + (u / k) 1``, ``u = epsilon + (1 - epsilon) a(s)``
  with Gaptron's gap map ``a`` of a loss.
- ``Conservative``: ``e_g`` when ``s_g >= threshold``, else uniform.

See ``docs/algorithms.md`` ("Exploration") for each rule's formula and where
it comes from.
"""

from __future__ import annotations

import math
import operator
import weakref
from abc import ABCMeta, abstractmethod
from numbers import Real
from typing import Any, ClassVar, cast

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
)

from skbandit._core._explore import (
    AdaptiveEpsilonGreedyExplorer,
    ConservativeExplorer,
    EpsilonGreedyExplorer,
    GapLoss,
    GapMapExplorer,
    GreedyExplorer,
    InverseGapExplorer,
    SoftmaxExplorer,
)

__all__ = [
    "Conservative",
    "EpsilonGreedy",
    "GapMap",
    "Greedy",
    "InverseGap",
    "Softmax",
]

GAP_LOSS_CODES = {
    "logistic": int(GapLoss.GAP_LOGISTIC),
    "hinge": int(GapLoss.GAP_HINGE),
    "smooth_hinge": int(GapLoss.GAP_SMOOTH_HINGE),
}


def _check_round(scores, t: int, greedy: int) -> tuple[np.ndarray, int]:
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.shape[0] < 1:
        raise ValueError("scores must be a non-empty 1-D array")
    k = int(s.shape[0])
    if not 0 <= greedy < k:
        raise ValueError(f"greedy={greedy} out of range for {k} classes")
    if t < 1:
        raise ValueError(f"t={t} must be >= 1")
    return s, k


def _epsilon_greedy(k: int, g: int, e: float) -> np.ndarray:
    """``p[r] = e / k``, ``p[g] = e / k + (1 - e)`` (the compiled operations)."""
    base = e / k
    p = np.full(k, base)
    p[g] = base + (1.0 - e)
    return p


class BaseExploration(BaseEstimator, metaclass=ABCMeta):
    """Base class of the exploration rules (parameter objects).

    A rule has scikit-learn's parameter interface (``get_params``,
    ``set_params``, ``clone``), validates its parameters when a learner
    resolves it, computes its distribution in NumPy (``distribution``) and
    builds the compiled explorer a learner's kernel plays (``_compile``).
    """

    #: the name a learner's ``exploration`` string uses for this rule
    name: ClassVar[str]
    #: values of the parameters a learner leaves at ``None`` when it has no
    #: value of its own for them
    _fallbacks: ClassVar[dict[str, Any]] = {}

    def _resolved(self, values: dict[str, Any]) -> BaseExploration:
        """A copy with every ``None`` parameter set: from ``values`` (the
        learner's), else the rule's fallback; then validated."""
        rule = clone(self)
        params = rule.get_params(deep=False)
        fill = {
            name: values.get(name, self._fallbacks.get(name))
            for name, value in params.items()
            if value is None
        }
        rule.set_params(**fill)
        rule._validate_params()
        return rule

    def distribution(self, scores, t: int, greedy: int, **context) -> np.ndarray:
        """The distribution of round ``t`` (NumPy twin of the compiled rule).

        Parameters
        ----------
        scores : array-like of shape (n_classes,)
            The scores of the row.
        t : int
            The 1-based global round.
        greedy : int
            The tie-broken greedy label (an exact maximiser of ``scores``).
        **context
            A rule's per-learner context (``InverseGap``: ``counts``;
            ``EpsilonGreedy(epsilon="adaptive")``: ``statistic``).

        Returns
        -------
        p : ndarray of shape (n_classes,)
        """
        self._check_resolved()
        s, k = _check_round(scores, int(t), int(greedy))
        return self._distribution(s, k, int(t), int(greedy), **context)

    def _check_resolved(self) -> None:
        missing = [n for n, v in self.get_params(deep=False).items() if v is None]
        if missing:
            raise ValueError(
                f"{type(self).__name__}: parameters {missing} are None (the "
                "learner's value); pass them, or use the learner's "
                "exploration_ (the resolved rule)"
            )

    @abstractmethod
    def _distribution(self, s, k, t, g, **context):
        """The rule's distribution (NumPy twin) for checked scores ``s`` of
        ``k`` classes, round ``t`` and greedy label ``g``."""

    @abstractmethod
    def _compile(self, n_classes: int, **context):
        """The compiled explorer for a learner with ``n_classes`` classes."""


class Greedy(BaseExploration):
    """Play the greedy label: ``p = e_g`` (no exploration).

    The full-information baseline's rule; a bandit learner playing it learns
    only from the greedy label's reward.

    Examples
    --------
    >>> from skbandit.exploration import Greedy
    >>> Greedy().distribution([0.1, 0.5, 0.2], t=1, greedy=1)
    array([0., 1., 0.])
    """

    name = "greedy"
    _parameter_constraints: dict = {}

    def _distribution(self, s, k, t, g, **context):
        p = np.zeros(k)
        p[g] = 1.0
        return p

    def _compile(self, n_classes, **context):
        return GreedyExplorer()


class EpsilonGreedy(BaseExploration):
    r"""Epsilon-greedy: the greedy label, and ``epsilon_t`` of uniform exploration.

    .. math::

        p = (1 - \epsilon_t)\, e_g + \frac{\epsilon_t}{k} \mathbf{1}, \qquad
        \epsilon_t = \max(\epsilon_{\min}, \epsilon\, t^{-\text{decay}})

    (``epsilon_t = epsilon`` when ``decay == 0``; ``max(min_epsilon, epsilon)``
    at ``t = 1``). The Banditron's and SOBA's :math:`\gamma` (Kakade,
    Shalev-Shwartz and Tewari 2008; Beygelzimer, Orabona and Zhang 2017).

    Parameters
    ----------
    epsilon : float in [0, 1], "adaptive" or None, default=None
        The exploration rate (at ``t = 1`` with a decay). ``None``: the
        learner's. ``"adaptive"``: SOBA's data-dependent rate
        :math:`\gamma_t = \min(1, \sqrt{k (1 + \sum_{s<t} n_s z_s^\top
        A_s^{-1} z_s) / t})` (Beygelzimer et al. 2017, App. A, Thm 5), read
        from SOBA's state: only :class:`~skbandit.SOBA` accepts it.
    decay : float >= 0, default=0.0
        The exponent of the schedule ``epsilon t^-decay``.
    min_epsilon : float in [0, 1], default=0.0
        The floor of the schedule.

    References
    ----------
    .. [1] S. M. Kakade, S. Shalev-Shwartz and A. Tewari, "Efficient bandit
       algorithms for online multiclass prediction", ICML 2008.
    .. [2] A. Beygelzimer, F. Orabona and C. Zhang, "Efficient online bandit
       multiclass learning with O(sqrt(T)) regret", ICML 2017.

    Examples
    --------
    >>> from skbandit.exploration import EpsilonGreedy
    >>> EpsilonGreedy(0.3).distribution([0.1, 0.5, 0.2], t=1, greedy=1)
    array([0.1, 0.8, 0.1])
    """

    name = "epsilon_greedy"
    _fallbacks = {"epsilon": 0.05}
    _parameter_constraints: dict = {
        "epsilon": [
            Interval(Real, 0, 1, closed="both"),
            StrOptions({"adaptive"}),
            None,
        ],
        "decay": [Interval(Real, 0, None, closed="left")],
        "min_epsilon": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(
        self,
        epsilon: float | str | None = None,
        *,
        decay: float = 0.0,
        min_epsilon: float = 0.0,
    ) -> None:
        self.epsilon = epsilon
        self.decay = decay
        self.min_epsilon = min_epsilon

    def _validate_params(self):
        super()._validate_params()
        if self.epsilon == "adaptive" and (self.decay != 0 or self.min_epsilon != 0):
            raise InvalidParameterError(
                "EpsilonGreedy(epsilon='adaptive') is SOBA's rate; it takes no "
                f"decay or min_epsilon (got decay={self.decay!r}, "
                f"min_epsilon={self.min_epsilon!r})"
            )

    def rate(
        self, t: int, n_classes: int | None = None, statistic: float | None = None
    ) -> float:
        """``epsilon_t`` of round ``t``; for ``epsilon="adaptive"``, with
        ``n_classes`` classes and SOBA's ``statistic``
        :math:`\\sum_{s<t} n_s z_s^\top A_s^{-1} z_s`."""
        if self.epsilon == "adaptive":
            if statistic is None or n_classes is None:
                raise ValueError(
                    "epsilon='adaptive' needs n_classes and SOBA's statistic"
                )
            g = math.sqrt(n_classes * (1.0 + float(statistic)) / float(t))
            return 1.0 if g > 1.0 else g
        e = float(cast(float, self.epsilon))  # resolved: a number here
        if self.decay == 0.0:
            return e
        if t > 1:
            e = e * math.pow(float(t), -float(self.decay))
        m = float(self.min_epsilon)
        return e if e > m else m

    def _distribution(self, s, k, t, g, statistic=None, **context):
        return _epsilon_greedy(k, g, self.rate(t, k, statistic))

    def _compile(self, n_classes, statistic=None, **context):
        if self.epsilon == "adaptive":
            if statistic is None:
                raise InvalidParameterError(
                    "EpsilonGreedy(epsilon='adaptive') is SOBA's adaptive rate: "
                    "it reads SOBA's statistic, which this learner does not have"
                )
            array, index = statistic
            return AdaptiveEpsilonGreedyExplorer(array, index)
        return EpsilonGreedyExplorer(
            float(self.epsilon), float(self.decay), float(self.min_epsilon)
        )


class Softmax(BaseExploration):
    r"""Softmax (Boltzmann) exploration mixed with uniform.

    .. math::

        p = (1 - \epsilon)\, \mathrm{softmax}(\text{scale} \cdot s)
            + \frac{\epsilon}{k} \mathbf{1}

    with ``softmax`` computed as ``exp(scale s_r - max_i scale s_i)`` over their
    sum in class order. PNewtron's policy (Hazan and Kale 2011: ``scale`` is its
    ``alpha``, ``epsilon`` its :math:`\gamma`); the greedy label plays no part.

    Parameters
    ----------
    epsilon : float in [0, 1] or None, default=None
        The uniform share. ``None``: the learner's.
    scale : float >= 0 or None, default=None
        The inverse temperature. ``None``: the learner's (PNewtron's ``alpha``;
        1 for the others).

    References
    ----------
    .. [1] E. Hazan and S. Kale, "Newtron: an efficient bandit algorithm for
       online multiclass prediction", NIPS 2011.

    Examples
    --------
    >>> from skbandit.exploration import Softmax
    >>> p = Softmax(epsilon=0.0, scale=1.0).distribution([0.0, 0.0], t=1, greedy=0)
    >>> p
    array([0.5, 0.5])
    """

    name = "softmax"
    _fallbacks = {"epsilon": 0.05, "scale": 1.0}
    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, 1, closed="both"), None],
        "scale": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(self, epsilon: float | None = None, *, scale: float | None = None):
        self.epsilon = epsilon
        self.scale = scale

    def _distribution(self, s, k, t, g, **context):
        a, eps = float(self.scale), float(self.epsilon)
        mx = a * s[0]
        for r in range(1, k):
            if a * s[r] > mx:
                mx = a * s[r]
        p = np.empty(k)
        z = 0.0
        for r in range(k):
            p[r] = math.exp(a * s[r] - mx)
            z = z + p[r]
        base = eps / k
        for r in range(k):
            p[r] = (1.0 - eps) * (p[r] / z) + base
        return p

    def _compile(self, n_classes, **context):
        return SoftmaxExplorer(float(self.epsilon), float(self.scale))


class InverseGap(BaseExploration):
    r"""Inverse gap weighting (Foster and Rakhlin 2020; SquareCB's policy).

    With the (optionally clipped) scores :math:`c_a` (``clip``:
    :math:`\min(\max(s_a, 0), 1)`, the reward range of a learner whose scores
    predict rewards), the gaps :math:`d_a = c_g - c_a \ge 0` and

    .. math::

        \gamma_{t,a} = \min\bigl(f(t),\; f(k (n_a + 1))\bigr), \qquad
        f(\tau) = \text{scale} \cdot \tau^{\text{exponent}},

    :math:`p_a = 1 / (k + \gamma_{t,a} d_a)` for :math:`a \neq g` with
    :math:`d_a > 0`, :math:`1/k` on a tie (:math:`d_a = 0`), and
    :math:`p_g = 1 - \sum_{a \neq g} p_a` (summed in class order). The
    per-class floor (a class whose model has seen :math:`n_a` updates keeps
    the exploration of round :math:`k (n_a + 1)`) applies when the learner
    counts each class's updates (:class:`~skbandit.SquareCB`); otherwise
    :math:`\gamma_{t,a} = f(t)`.

    Parameters
    ----------
    scale : float > 0 or None, default=None
        :math:`f`'s factor. ``None``: the learner's.
    exponent : float >= 0 or None, default=None
        :math:`f`'s exponent (0.5 is the theory's :math:`\sqrt{t}` for a fixed
        horizon). ``None``: the learner's.
    clip : bool or None, default=None
        Whether the gaps are taken on the scores clipped to [0, 1]. ``None``:
        the learner's (True for SquareCB, whose scores predict rewards in
        [0, 1]; False for the others, whose scores are not rewards).

    References
    ----------
    .. [1] D. Foster and A. Rakhlin, "Beyond UCB: optimal and efficient
       contextual bandits with regression oracles", ICML 2020.

    Examples
    --------
    >>> from skbandit.exploration import InverseGap
    >>> rule = InverseGap(scale=4.0, exponent=0.0, clip=False)
    >>> rule.distribution([1.0, 0.5, 1.0], t=1, greedy=0)
    array([0.46666667, 0.2       , 0.33333333])
    """

    name = "inverse_gap"
    _fallbacks = {"scale": 10.0, "exponent": 0.5, "clip": False}
    _parameter_constraints: dict = {
        "scale": [Interval(Real, 0, None, closed="neither"), None],
        "exponent": [Interval(Real, 0, None, closed="left"), None],
        "clip": ["boolean", None],
    }

    def __init__(
        self,
        scale: float | None = None,
        *,
        exponent: float | None = None,
        clip: bool | None = None,
    ) -> None:
        self.scale = scale
        self.exponent = exponent
        self.clip = clip

    def schedule(self, tau: float) -> float:
        """``f(tau) = scale * tau ** exponent``."""
        scale, exponent = cast(float, self.scale), cast(float, self.exponent)
        return float(scale) * math.pow(float(tau), float(exponent))

    def _distribution(self, s, k, t, g, counts=None, **context):
        gt = self.schedule(float(t))
        gamma = np.full(k, gt)
        if counts is not None:
            for a in range(k):
                ga = self.schedule(float(k) * (float(counts[a]) + 1.0))
                gamma[a] = gt if gt < ga else ga
        clip = bool(self.clip)

        def c(v):
            v = float(v)
            return min(max(v, 0.0), 1.0) if clip else v

        p = np.empty(k)
        total = 0.0
        best = c(s[g])
        for a in range(k):
            if a != g:
                gap = best - c(s[a])
                p[a] = 1.0 / (k + gamma[a] * gap) if gap > 0.0 else 1.0 / k
                total = total + p[a]
        p[g] = 1.0 - total
        return p

    def _compile(self, n_classes, counts=None, **context):
        return InverseGapExplorer(
            n_classes,
            float(self.scale),
            float(self.exponent),
            bool(self.clip),
            counts,
        )


class GapMap(BaseExploration):
    r"""Gaptron's gap-map policy (van der Hoeven 2020).

    .. math::

        p = (1 - u)\, e_g + \frac{u}{k} \mathbf{1}, \qquad
        u = \epsilon + (1 - \epsilon)\, a(s)

    with the loss's gap map :math:`a(s) \in [0, 1]` and the top margin
    :math:`m^* = s_g - \max_{r \neq g} s_r`: ``"logistic"``
    :math:`\min(1, \log_2 \sum_r e^{s_r - \max s})`, ``"hinge"``
    :math:`\max(0, 1 - 2 k m^*)`, ``"smooth_hinge"`` :math:`\max(0, 1 - m^*)^2`
    (reconstructions: the paper's formulas were lost; see docs/algorithms.md,
    Gaptron). Exploration shrinks as the margin grows: no exploration once the
    learner is confident. Needs ``k >= 2``.

    Parameters
    ----------
    epsilon : float in [0, 1] or None, default=None
        The uniform share added to the map (Gaptron's :math:`\gamma`).
        ``None``: the learner's.
    loss : {"logistic", "hinge", "smooth_hinge"} or None, default=None
        The loss whose map is used. ``None``: the learner's (Gaptron's
        ``loss``; ``"hinge"`` for the others).

    References
    ----------
    .. [1] D. van der Hoeven, "Exploiting the surrogate gap in online
       multiclass classification", NeurIPS 2020.

    Examples
    --------
    >>> from skbandit.exploration import GapMap
    >>> rule = GapMap(epsilon=0.0, loss="smooth_hinge")
    >>> rule.distribution([2.0, 0.0], t=1, greedy=0)  # margin 2: no exploration
    array([0., 1.])
    """

    name = "gap_map"
    _fallbacks = {"epsilon": 0.0, "loss": "hinge"}
    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, 1, closed="both"), None],
        "loss": [StrOptions(set(GAP_LOSS_CODES)), None],
    }

    def __init__(self, epsilon: float | None = None, *, loss: str | None = None):
        self.epsilon = epsilon
        self.loss = loss

    def gap(self, scores, greedy: int) -> float:
        """The gap map ``a(s)`` at greedy label ``greedy`` (NumPy twin)."""
        s = np.asarray(scores, dtype=np.float64)
        k = s.shape[0]
        if self.loss == "logistic":
            m = float(s[0])
            for r in range(1, k):
                if s[r] > m:
                    m = float(s[r])
            z = 0.0
            for r in range(k):
                z = z + math.exp(float(s[r]) - m)
            a = math.log2(z)
            return 1.0 if a > 1.0 else a
        others = [float(s[r]) for r in range(k) if r != greedy]
        best = others[0]
        for v in others[1:]:
            if v > best:
                best = v
        m = float(s[greedy]) - best
        if self.loss == "hinge":
            a = 1.0 - (2.0 * k) * m
            return a if a > 0.0 else 0.0
        if m >= 1.0:
            return 0.0
        a = 1.0 - m
        return a * a

    def _distribution(self, s, k, t, g, **context):
        if k < 2:
            raise ValueError("the gap maps need at least 2 classes")
        eps = float(self.epsilon)
        return _epsilon_greedy(k, g, eps + (1.0 - eps) * self.gap(s, g))

    def _compile(self, n_classes, **context):
        if n_classes < 2:
            raise ValueError("GapMap needs at least 2 classes")
        return GapMapExplorer(GAP_LOSS_CODES[self.loss], float(self.epsilon))


class Conservative(BaseExploration):
    """Play the greedy label if its score is at least ``threshold``, else uniform.

    One-vs-all for the separable case (Beygelzimer, Pal, Szorenyi,
    Thiruvenkatachari, Wei and Zhang 2019): the binary learners answering YES
    are those with ``s_r >= 0``; when one does, play the highest score among
    them (``e_g``), otherwise a label uniformly at random (``1 / k``).

    Parameters
    ----------
    threshold : float, default=0.0
        The score from which a class answers YES.

    References
    ----------
    .. [1] A. Beygelzimer, D. Pal, B. Szorenyi, D. Thiruvenkatachari, C.-Y. Wei
       and C. Zhang, "Bandit multiclass linear classification: efficient
       algorithms for the separable case", ICML 2019.

    Examples
    --------
    >>> from skbandit.exploration import Conservative
    >>> Conservative().distribution([-1.0, -0.5], t=1, greedy=1)
    array([0.5, 0.5])
    """

    name = "conservative"
    _parameter_constraints: dict = {
        "threshold": [Interval(Real, None, None, closed="neither")],
    }

    def __init__(self, threshold: float = 0.0) -> None:
        self.threshold = threshold

    def _distribution(self, s, k, t, g, **context):
        if s[g] >= float(self.threshold):
            p = np.zeros(k)
            p[g] = 1.0
            return p
        return np.full(k, 1.0 / k)

    def _compile(self, n_classes, **context):
        return ConservativeExplorer(float(self.threshold))


# The parameter values each rule object last passed validation with
# (``ExplorationMixin._exploration_checked``; weak keys: no rule is kept alive).
_VALIDATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

RULES: dict[str, type[BaseExploration]] = {
    cls.name: cls
    for cls in (Greedy, EpsilonGreedy, Softmax, InverseGap, GapMap, Conservative)
}


class ExplorationMixin:
    """The ``exploration`` parameter of a learner (mixed in before its base).

    A learner declares its default rule (``_default_exploration``, a rule
    name) and the rules it accepts with its values for their ``None``
    parameters (``_exploration_values``, rule name -> dict; a method of the
    same name may compute them from the learner's parameters). Its
    ``_make_kernel`` calls ``_explorer(n_classes, **context)``, which resolves
    the parameter, stores the resolved rule as ``exploration_`` and returns the
    compiled explorer.
    """

    _default_exploration: ClassVar[str]
    _exploration_values: ClassVar[dict[str, dict[str, Any]]]
    # the parameter (set by the learner's __init__)
    exploration: str | BaseExploration | None

    # why a rule is refused (the learner's docstring says it too)
    _exploration_refusal: ClassVar[str] = ""
    # whether the learner has SOBA's statistic (EpsilonGreedy("adaptive"))
    _exploration_statistic: ClassVar[bool] = False

    def _exploration_defaults(self) -> dict[str, dict[str, Any]]:
        return self._exploration_values

    def _exploration_object(self, name: str) -> BaseExploration:
        """The object of the rule ``name`` (a string ``exploration``, and
        ``None`` for the default rule): the rule with its ``None`` parameters
        left for ``_exploration_defaults``. A learner whose values for a rule
        are not ``None`` parameters of it overrides this."""
        if name not in RULES:
            raise InvalidParameterError(
                f"The 'exploration' parameter of {type(self).__name__} must "
                f"name a rule in {sorted(RULES)}; got {name!r}"
            )
        return RULES[name]()

    def _exploration_name(self, values: dict | None = None) -> str:
        """The name of the rule ``exploration`` gives, checked against the
        rules this learner accepts (the keys of ``values``, by default the
        class declaration); an object's parameters are validated (a name's
        rule has only ``None`` parameters: nothing to check). O(1) for ``None``
        and names: every ``partial_fit`` validates the parameters."""
        spec = self.exploration
        rule = spec if isinstance(spec, BaseExploration) else None
        if rule is not None:
            name = rule.name
        else:
            name = self._default_exploration if spec is None else str(spec)
        if values is None:
            values = self._exploration_values
        if name not in values:
            accepted = ", ".join(repr(n) for n in values)
            cls = type(rule) if rule is not None else RULES.get(name)
            kind = getattr(cls, "__name__", "")
            raise InvalidParameterError(
                f"The 'exploration' parameter of {type(self).__name__} does not "
                f"accept the rule {name!r} ({kind}); it accepts {accepted}. "
                f"{self._exploration_refusal}".rstrip()
            )
        if rule is not None and not self._exploration_checked(rule):
            try:
                rule._validate_params()
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"The 'exploration' parameter of {type(self).__name__}: {exc}"
                ) from exc
            if (
                getattr(rule, "epsilon", None) == "adaptive"
                and not self._exploration_statistic
            ):
                raise InvalidParameterError(
                    f"The 'exploration' parameter of {type(self).__name__}: "
                    "EpsilonGreedy(epsilon='adaptive') is SOBA's adaptive rate; "
                    "it reads SOBA's statistic, which this learner does not have."
                )
            _VALIDATED[rule] = tuple(vars(rule).values())
        return name

    @staticmethod
    def _exploration_checked(rule: BaseExploration) -> bool:
        """Whether ``rule``'s parameter values are the objects it last passed
        validation with (compared by identity, as ``_validate_params_cached``):
        a learner validates its parameters on every call, and a rule's
        scikit-learn validation costs tens of microseconds. Kept beside the
        rule (``_VALIDATED``), which is a parameter and must not change."""
        cached = _VALIDATED.get(rule)
        values = tuple(vars(rule).values())
        return (
            cached is not None
            and len(cached) == len(values)
            and all(map(operator.is_, cached, values))
        )

    def _exploration_rule(self, values: dict | None = None) -> BaseExploration:
        """The rule ``exploration`` gives (unresolved: ``None`` parameters
        left), checked (``_exploration_name``)."""
        name = self._exploration_name(values)
        spec = self.exploration
        if isinstance(spec, BaseExploration):
            return spec
        return self._exploration_object(name)

    def _validate_params(self) -> None:
        super()._validate_params()  # type: ignore[misc]  # the learner's (a mixin)
        self._exploration_name()

    def _resolve_exploration(self) -> BaseExploration:
        values = self._exploration_defaults()
        rule = self._exploration_rule(values)
        try:
            return rule._resolved(values[rule.name])
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"The 'exploration' parameter of {type(self).__name__}: {exc}"
            ) from exc

    def _explorer(self, n_classes: int, **context):
        """The compiled explorer of the resolved rule (``exploration_``)."""
        rule = self._resolve_exploration()
        old = self.__dict__.get("exploration_")
        # a kernel built for predict or exploration_distribution leaves the
        # fitted attribute as it was when the rule did not change
        if not (type(old) is type(rule) and vars(old) == vars(rule)):
            self.exploration_ = rule
        return self.exploration_._compile(n_classes, **context)

    def set_params(self, **params):
        """Set the parameters; ``exploration__<name>`` on a learner whose
        ``exploration`` is ``None`` or a rule's name first makes it that rule's
        object (the learner's default rule for ``None``)."""
        nested = any(key.startswith("exploration__") for key in params)
        if nested and "exploration" not in params:
            spec = self.exploration
            if spec is None or isinstance(spec, str):
                name = self._default_exploration if spec is None else spec
                super().set_params(exploration=self._exploration_object(name))
        return super().set_params(**params)


def rule_values(
    epsilon: float | str | None = None, **rules: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """A learner's ``_exploration_values`` accepting every rule: ``epsilon``
    for the rules with an ``epsilon`` (when given), updated by ``rules``
    (rule name -> values)."""
    shared = {} if epsilon is None else {"epsilon": epsilon}
    values = {
        name: dict(shared) if "epsilon" in cls().get_params() else {}
        for name, cls in RULES.items()
    }
    for name, extra in rules.items():
        values[name].update(extra)
    return values


def exploration_constraint() -> list:
    """The ``_parameter_constraints`` entry of ``exploration``."""
    return [None, StrOptions(set(RULES)), BaseExploration]
